"""The campaign report's figures (matplotlib, Agg). Each builder returns its Figure; ``save`` writes it.

Honesty rules every figure follows (issue 19):
- every rate carries its 95% interval (certified rates: Wilson, from k of n episodes; probe
  accuracies: the probes' bootstrap) and the n it stands on is written on the figure;
- rate axes span [0, 1]; the GRPO reward axis spans the reward's whole range (the episode reward
  table's lowest to highest outcome), so that a band of noise is not stretched into a trend;
- step and dose axes have whole-number ticks; points of different arms at one dose are set side
  by side (dodged), so that three arms at one rate are seen as three.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ARM_STYLE = {"control": ("s", "tab:gray"), "iso": ("o", "tab:blue"), "prop": ("^", "tab:orange")}
DODGE = 0.12  # x offset between arms at one dose (in dose positions)
RATE_LIMITS = (-0.03, 1.03)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: Path) -> Path:
    fig.savefig(path, dpi=120)
    _plt().close(fig)
    return path


def _yerr(points: list[dict]) -> list[list[float]]:
    """Asymmetric error bars (below, above) from each point's rate and interval."""
    return [[max(p["rate"] - p["ci_low"], 0.0) for p in points], [max(p["ci_high"] - p["rate"], 0.0) for p in points]]


def _n_note(points: list[dict]) -> str:
    ns = sorted({p["n"] for p in points if p.get("n")})
    if not ns:
        return "n unknown"
    return f"n = {ns[0]} episodes per point" if len(ns) == 1 else f"n = {ns[0]}–{ns[-1]} episodes per point"


def reward_range() -> tuple[float, float]:
    """Lowest and highest reward an episode can get (py4.episodes.config.RewardTable defaults)."""
    from py4.episodes.config import RewardTable

    values = list(RewardTable().model_dump().values())
    return min(values), max(values)


def _rate_point(e: dict) -> dict:
    return {"rate": e["certified_rate"], "ci_low": e["ci_low"], "ci_high": e["ci_high"], "n": e["episodes"]}


def dose_response(data: dict[str, Any]):
    """Certified rate vs EFT dose, one panel per split, one interval series per (model, arm), arms dodged."""
    from py4.report.layout import split_key

    plt = _plt()
    es = [e for e in data["entries"] if e["kind"] == "eft" and not e["matrix"] and e["certified_rate"] is not None]
    splits = sorted({e["split"] for e in es}, key=split_key)
    doses = sorted({e["dose"] for e in es})
    pos = {d: i for i, d in enumerate(doses)}
    fig, axes = plt.subplots(1, max(len(splits), 1), figsize=(4.4 * max(len(splits), 1), 3.6), squeeze=False)
    models = sorted({e["model"] for e in es})
    arms = [a for a in ARM_STYLE if any(e["arm"] == a for e in es)]
    calibration = data.get("calibration") or []
    for ax, split in zip(axes[0], splits, strict=False):  # no splits still make one (empty) axis
        panel = [e for e in es if e["split"] == split]
        series = [(m, a) for m in models for a in arms]
        for si, (model, arm) in enumerate(series):
            pts = sorted((e for e in panel if e["arm"] == arm and e["model"] == model), key=lambda e: e["dose"])
            if not pts:
                continue
            offset = (si - (len(series) - 1) / 2) * DODGE
            marker, color = ARM_STYLE[arm]
            label = pts[0]["arm_label"] if len(models) == 1 else f"{pts[0]['model_label']} {pts[0]['arm_label']}"
            rp = [_rate_point(e) for e in pts]
            ax.errorbar([pos[e["dose"]] + offset for e in pts], [p["rate"] for p in rp], yerr=_yerr(rp),
                        marker=marker, color=color, capsize=3, lw=1, alpha=0.9, label=label)
        _calibration_lines(ax, [c for c in calibration if c["split"] == split])
        ax.set_xticks(range(len(doses)), [f"{d:,}" for d in doses])
        ax.set_title(f"{split}\n{_n_note([_rate_point(e) for e in panel])}, 95% Wilson", fontsize=9)
        ax.set_xlabel("EFT dose (rows)")
        ax.set_ylabel("certified rate")
        ax.set_ylim(*RATE_LIMITS)
        ax.grid(alpha=0.3)
    _legend(axes[0][0], fontsize=8)
    fig.suptitle(f"{data['campaign']}: dose-response")
    fig.tight_layout()
    return fig


def _legend(ax, **kwargs) -> None:
    """A legend when the axes has labelled artists (an empty campaign draws none)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


def _calibration_lines(ax, rows: list[dict]) -> None:
    """The scripted policies' rates on this split as labelled reference lines (one label per rate)."""
    at: dict[float, list[str]] = {}
    for row in rows:
        if row["certified_rate"] is not None:
            at.setdefault(row["certified_rate"], []).append(f"{row['policy']} {row['certified']}/{row['episodes']}")
    for rate, labels in at.items():
        ax.axhline(rate, color="black", lw=0.6, ls=":", alpha=0.5)
        ax.annotate(", ".join(labels), (1.0, rate), xycoords=("axes fraction", "data"), fontsize=6, ha="right",
                    va="bottom", alpha=0.7)


def grpo_ladder(data: dict[str, Any]):
    """Certified rate per GRPO step (intervals, n) and the mean training reward on the reward's full range."""
    from matplotlib.ticker import MaxNLocator

    from py4.report.layout import split_key

    plt = _plt()
    es = [e for e in data["entries"] if e["kind"] == "grpo" and e["certified_rate"] is not None]
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    splits = sorted({e["split"] for e in es}, key=split_key)
    for i, split in enumerate(splits):
        pts = sorted((e for e in es if e["split"] == split), key=lambda e: e["step"])
        rp = [_rate_point(e) for e in pts]
        offset = (i - (len(splits) - 1) / 2) * 0.06
        ax.errorbar([e["step"] + offset for e in pts], [p["rate"] for p in rp], yerr=_yerr(rp), marker="o",
                    capsize=3, label=f"certified, {split} ({_n_note(rp)})")
    ax.set_xlabel("GRPO step (0 = warm start)")
    ax.set_ylabel("certified rate (95% Wilson)")
    ax.set_ylim(*RATE_LIMITS)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    rewards = [r for r in data["grpo_reward_per_step"] if r["reward"] is not None]
    if rewards:
        ax2 = ax.twinx()
        ax2.plot([r["step"] for r in rewards], [r["reward"] for r in rewards], color="gray", ls="--",
                 marker=".", label="mean training reward")
        lo, hi = reward_range()
        lo, hi = min(lo, *(r["reward"] for r in rewards)), max(hi, *(r["reward"] for r in rewards))
        pad = 0.03 * (hi - lo)
        ax2.set_ylim(lo - pad, hi + pad)
        ax2.set_ylabel(f"mean reward (full range {lo:g}…{hi:g})")
        ax2.legend(loc="upper right", fontsize=8)
    _legend(ax, loc="upper left", fontsize=7)
    if not es:
        ax.text(0.5, 0.5, "no GRPO evaluations yet", ha="center", va="center", transform=ax.transAxes)
    ax.set_title(f"{data['campaign']}: GRPO ladder")
    fig.tight_layout()
    return fig


def probe_heatmap(probes: list[dict]):
    """Probe accuracy per rule (rows) x evaluated model (columns), on a fixed 0..1 colour scale."""
    plt = _plt()
    rules = sorted({r for e in probes for r in e["per_rule"]})
    info = {r: g for e in probes for r, g in e["per_rule"].items()}
    fig, ax = plt.subplots(figsize=(max(7.0, 0.55 * len(probes) + 4.0), max(4.0, 0.28 * len(rules) + 1.8)))
    grid = [[e["per_rule"].get(r, {}).get("accuracy", float("nan")) for e in probes] for r in rules]
    im = ax.imshow(grid, vmin=0.0, vmax=1.0, cmap="RdBu", aspect="auto")
    for i, r in enumerate(rules):
        for j, e in enumerate(probes):
            g = e["per_rule"].get(r)
            if g:
                ax.text(j, i, f"{g['accuracy']:.2f}", ha="center", va="center", fontsize=5)
    ax.set_xticks(range(len(probes)), [e["model"] for e in probes], rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(rules)), [
        f"{r} {info[r].get('kind', '?')}{' (held-out)' if info[r].get('held_out') else ''} n={_pairs(probes, r)}"
        for r in rules], fontsize=6)
    fig.colorbar(im, ax=ax, label="probe accuracy")
    ax.set_title("Share of pairs where the Python-4 member is more likely\n(0.5 = no preference; n = pairs per rule)",
                 fontsize=9)
    fig.tight_layout()
    return fig


def _pairs(probes: list[dict], rule: str) -> str:
    """The rule's pair count, or its range when models were scored on different subsets."""
    ns = sorted({e["per_rule"][rule]["pairs"] for e in probes if rule in e["per_rule"]})
    return str(ns[0]) if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"


def arm_comparison(arms: dict[str, dict], base: dict | None, losses: list[dict], arm_label: dict[str, str]):
    """Probe accuracy per arm (held-in, held-out, syntax, semantic) with intervals, the untrained
    base beside them as the floor; next to it the held-out Python-4 loss per arm (and base)."""
    plt = _plt()
    groups = [("held-in", lambda e: e["heldin"]), ("held-out", lambda e: e["heldout"]),
              ("syntax", lambda e: e["by_kind"]["syntax"]), ("semantic", lambda e: e["by_kind"]["semantic"])]
    fig, (ax, lax) = plt.subplots(1, 2, figsize=(9.5, 3.9), gridspec_kw={"width_ratios": [3, 1.3]})
    series = [("base", base)] if base else []
    series += list(arms.items())
    for si, (arm, e) in enumerate(series):
        pts = [g(e) for _, g in groups]
        offset = (si - (len(series) - 1) / 2) * 0.18
        marker, color = ARM_STYLE.get(arm, ("D", "black"))
        rp = [{"rate": p["accuracy"], "ci_low": p["ci_low"], "ci_high": p["ci_high"]} for p in pts]
        label = "untrained base (floor)" if arm == "base" else f"{arm_label.get(arm, arm)} ({e['model']})"
        ax.errorbar([i + offset for i in range(len(groups))], [p["rate"] for p in rp], yerr=_yerr(rp), ls="none",
                    marker=marker, color=color, capsize=3, label=label)
    ref = next(iter(arms.values()), base)
    kind = ref["kind"] if ref else "?"
    ax.set_xticks(range(len(groups)), [f"{name}\nn={g(ref)['pairs']} pairs" if ref else name for name, g in groups])
    ax.axhline(0.5, color="black", lw=0.6, ls=":")
    ax.set_ylim(*RATE_LIMITS)
    ax.set_ylabel("probe accuracy (95% bootstrap)")
    ax.set_title(f"Probe accuracy by arm ({kind} models)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    loss = {x["arm"] or "base": x for x in losses}
    shown = [a for a in ("base", *ARM_STYLE) if a in loss]
    for i, arm in enumerate(shown):
        x = loss[arm]
        err = None
        if x.get("ci_low") is not None and x.get("ci_high") is not None:
            err = [[x["loss"] - x["ci_low"]], [x["ci_high"] - x["loss"]]]
        lax.bar(i, x["loss"], color=ARM_STYLE.get(arm, ("D", "black"))[1], yerr=err, capsize=3)
        lax.text(i, x["loss"], f"{x['loss']:.3f}", ha="center", va="bottom", fontsize=7)
    lax.set_xticks(range(len(shown)), [arm_label.get(a, a) for a in shown], fontsize=8, rotation=20)
    lax.set_ylabel("loss on held-out Python-4 docs (nats/token)")
    tokens = sorted({loss[a]["tokens"] for a in shown if loss[a].get("tokens")})
    lax.set_title("Held-out Python-4 loss" + (f"\nn = {tokens[0]:,} tokens" if len(tokens) == 1 else ""), fontsize=9)
    if not shown:
        lax.text(0.5, 0.5, "no held-out loss runs", ha="center", va="center", transform=lax.transAxes)
    fig.tight_layout()
    return fig
