"""Result tables and figures of a campaign, read from its evaluation runs and GRPO manifest.

    write_results(spec, out_dir) -> [results.json, results.md, dose_response.png, grpo_ladder.png]

- results.json: one entry per (evaluated model, split): model, arm, kind (eft | graft | grpo),
  dose, step, certified rate, pass@k, outcomes, per-rule breakdown; plus the GRPO reward
  per step (the grpo run's manifest `reward_log`).
- results.md: certified rate (and pass@k) per model x arm x dose x split; the grafts; the
  GRPO ladder; per-rule certified rates.
- Figures (matplotlib, Agg): dose-response (certified rate vs EFT dose per arm, one panel
  per split) and the GRPO ladder (certified rate vs step, with the mean training reward).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from py4.campaign.dag import build_dag
from py4.campaign.spec import CampaignSpec
from py4.runs import atomic_write_json, atomic_write_text, read_manifest


def collect(spec: CampaignSpec) -> dict[str, Any]:
    """Everything the reports show, from the runs on disk (missing runs are listed, not invented)."""
    entries, missing = [], []
    reward_log: list[dict[str, Any]] = []
    for node in build_dag(spec):
        if node.stage == "grpo" and not node.meta.get("segment_end") or node.id.endswith("/grpo") and node.stage == "grpo":
            m = read_manifest(node.run_dir) or {}
            reward_log = m.get("reward_log") or reward_log
        if node.stage != "eval":
            continue
        path = Path(node.run_dir) / "results.json"
        if not path.is_file():
            missing.append(node.id)
            continue
        res = json.loads(path.read_text(encoding="utf-8"))
        meta = node.meta
        for split, s in res.get("splits", {}).items():
            entries.append({
                "model": meta["model"], "model_label": spec.models[meta["model"]].label, "arm": meta["arm"],
                "arm_label": spec.arms.get(meta["arm"], meta["arm"]), "kind": meta["model_kind"],
                "dose": meta.get("dose"), "matrix": bool(meta.get("matrix")), "step": meta.get("step"),
                "run": meta["model_node"], "split": split, "certified_rate": s.get("certified_rate"),
                "pass_at_k": s.get("pass_at_k", {}), "outcomes": s.get("outcomes", {}),
                "problems": s.get("problems"), "episodes": s.get("episodes"), "mean_reward": s.get("mean_reward"),
                "per_rule": {r: v.get("certified_rate") for r, v in (s.get("per_rule") or {}).items()},
            })
    return {"campaign": spec.name, "scale": spec.scale, "entries": entries, "missing_evaluations": missing,
            "grpo_reward_per_step": [{"step": h.get("step"), "reward": h.get("reward")} for h in reward_log
                                     if "reward" in h]}


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _pass(e: dict) -> str:
    return ", ".join(f"@{k} {v:.3f}" for k, v in sorted(e["pass_at_k"].items(), key=lambda kv: int(kv[0])))


def render_markdown(data: dict[str, Any]) -> str:
    es = data["entries"]
    out = [f"# Results: {data['campaign']} ({data['scale']} scale)", ""]
    eft = sorted((e for e in es if e["kind"] == "eft"),
                 key=lambda e: (e["model"], e["arm"], e["matrix"], e["dose"], e["split"]))
    out += ["## Certified rate by model x arm x EFT dose x split", "",
            "| model | arm | EFT dose | split | certified | pass@k | problems x samples |", "|---|---|---|---|---|---|---|"]
    for e in eft:
        dose = f"{e['dose']:,}" + (" (+EFT matrix)" if e["matrix"] else "")
        out.append(f"| {e['model_label']} | {e['arm_label']} | {dose} | {e['split']} | {_fmt(e['certified_rate'])} | "
                   f"{_pass(e)} | {e['problems']} x {(e['episodes'] or 0) // max(e['problems'] or 1, 1)} |")
    grafts = [e for e in es if e["kind"] == "graft"]
    if grafts:
        out += ["", "## Grafts (no EFT)", "", "| model | arm | split | certified | pass@k |", "|---|---|---|---|---|"]
        out += [f"| {e['model_label']} | {e['arm_label']} | {e['split']} | {_fmt(e['certified_rate'])} | {_pass(e)} |"
                for e in sorted(grafts, key=lambda e: (e["model"], e["arm"], e["split"]))]
    ladder = sorted((e for e in es if e["kind"] == "grpo"), key=lambda e: (e["step"], e["split"]))
    if ladder:
        out += ["", "## GRPO ladder (step 0 = the warm start)", "", "| step | split | certified | pass@k |",
                "|---|---|---|---|"]
        out += [f"| {e['step']} | {e['split']} | {_fmt(e['certified_rate'])} | {_pass(e)} |" for e in ladder]
    if data["grpo_reward_per_step"]:
        out += ["", "## GRPO mean reward per training step", "", "| step | reward |", "|---|---|"]
        out += [f"| {r['step']} | {_fmt(r['reward'])} |" for r in data["grpo_reward_per_step"]]
    out += ["", "## Per-rule certified rate", ""]
    for split in sorted({e["split"] for e in es}):
        rows = [e for e in eft if e["split"] == split]
        rules = sorted({r for e in rows for r in e["per_rule"]})
        if not rules:
            continue
        cols = [f"{e['arm']}/{e['dose']}" for e in rows]
        out += [f"### {split}", "", "| rule | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
        out += ["| " + " | ".join([r, *(_fmt(e["per_rule"].get(r)) for e in rows)]) + " |" for r in rules]
        out.append("")
    if data["missing_evaluations"]:
        out += ["", "Not evaluated yet: " + ", ".join(f"`{m}`" for m in data["missing_evaluations"])]
    return "\n".join(out) + "\n"


def dose_response_figure(data: dict[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    es = [e for e in data["entries"] if e["kind"] == "eft" and not e["matrix"]]
    splits = sorted({e["split"] for e in es}, key=lambda s: ("test_heldin", "test_heldout").index(s)
                    if s in ("test_heldin", "test_heldout") else 9)
    fig, axes = plt.subplots(1, max(len(splits), 1), figsize=(4.2 * max(len(splits), 1), 3.4), squeeze=False)
    styles = ["-", "--", ":"]
    models = sorted({e["model"] for e in es})
    for ax, split in zip(axes[0], splits):
        for mi, model in enumerate(models):
            for arm, marker in (("control", "s"), ("iso", "o"), ("prop", "^")):
                pts = sorted((e["dose"], e["certified_rate"]) for e in es
                             if e["split"] == split and e["arm"] == arm and e["model"] == model)
                if pts:
                    label = next(e["arm_label"] for e in es if e["arm"] == arm)
                    if len(models) > 1:
                        label = f"{next(e['model_label'] for e in es if e['model'] == model)} {label}"
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], styles[mi % 3], marker=marker, alpha=0.8,
                            markersize=7 if arm == "control" else 5, label=label)
        ax.set_title(split)
        ax.set_xlabel("EFT dose (rows)")
        ax.set_ylabel("certified rate")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"{data['campaign']}: dose-response")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def grpo_ladder_figure(data: dict[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    es = [e for e in data["entries"] if e["kind"] == "grpo"]
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for split in sorted({e["split"] for e in es}):
        pts = sorted((e["step"], e["certified_rate"]) for e in es if e["split"] == split)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"certified, {split}")
    ax.set_xlabel("GRPO step (0 = warm start)")
    ax.set_ylabel("certified rate")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    rewards = [r for r in data["grpo_reward_per_step"] if r["reward"] is not None]
    if rewards:
        ax2 = ax.twinx()
        ax2.plot([r["step"] for r in rewards], [r["reward"] for r in rewards], color="gray", ls="--",
                 marker=".", label="mean training reward")
        ax2.set_ylabel("mean reward")
        ax2.legend(loc="upper right", fontsize=8)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title(f"{data['campaign']}: GRPO ladder")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_results(spec: CampaignSpec, out_dir: str | Path, figures: bool = True) -> list[Path]:
    """Write results.json, results.md and (with `figures`) the two PNGs into out_dir."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = collect(spec)
    paths = [atomic_write_json(out / "results.json", data), atomic_write_text(out / "results.md", render_markdown(data))]
    if figures:
        paths.append(dose_response_figure(data, out / "dose_response.png"))
        paths.append(grpo_ladder_figure(data, out / "grpo_ladder.png"))
    return paths
