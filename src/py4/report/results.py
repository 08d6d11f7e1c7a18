"""Result tables and figures of a campaign, read from its runs (py4.report.layout says where).

    write_results(spec, out_dir) -> [results.json, results.md, probes.json, dose_response.png,
                                     grpo_ladder.png, probe_heatmap.png, arm_comparison.png, index.html]

- results.json: one entry per (evaluated model, split): model, arm, kind (eft | graft | grpo),
  dose, step, certified rate with the certified count, n episodes and its Wilson 95% interval,
  pass@k, outcomes, per-rule breakdown (each with k / n); the GRPO reward log per step; the
  scripted calibration rows; the probe entries, the held-out Python-4 loss per arm, knowledge
  beside use, and the finding sentence.
- probes.json: the probe entries alone (py4.report.probes_report).
- results.md: the finding, calibration, certified rates, grafts, the GRPO ladder and reward log,
  knowledge beside use, the arms side by side, per-rule probe accuracy and certified rates.
- Figures: py4.report.figures.
- index.html: all of it on one page, with each evaluation's transcripts (py4.report.html_page).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from py4.campaign.dag import build_dag
from py4.campaign.node_meta import EvalMeta
from py4.campaign.spec import CampaignSpec
from py4.fileio import read_json_object
from py4.report import figures as figs
from py4.report.calibration import calibration_rows, run_calibration
from py4.binomial import wilson
from py4.report.intervals import certified_count
from py4.report.html_page import write_index
from py4.report.layout import (
    EVAL_STAGE,
    LOSS_STAGE,
    PROBE_STAGE,
    RESULTS_FILE,
    split_key,
)
from py4.report.probes_report import (
    ReportInputError,
    arm_models,
    base_model,
    finding,
    heldout_losses,
    metric,
    probe_entries,
    scale_statement,
)
from py4.report.training_logs import training_logs, training_logs_md
from py4.report.training_report import UNIFORM_SHARE, midtraining_rows
from py4.runs import atomic_write_json, atomic_write_text, provenance_fields, read_manifest


def _rate(rate: float | None, episodes: int | None) -> dict[str, Any]:
    """A certified rate with what it stands on: certified count, episodes, Wilson 95% interval."""
    k = certified_count(rate, episodes)
    lo, hi = wilson(k, episodes) if k is not None else (None, None)
    return {"certified_rate": rate, "certified": k, "episodes": episodes, "ci_low": lo, "ci_high": hi}


def _grpo_reward_log(nodes: list) -> list[dict[str, Any]]:
    """The final GRPO segment's reward log (segments share one run folder; the last one's manifest
    holds the whole history)."""
    log: list[dict[str, Any]] = []
    for node in nodes:
        if node.stage == "grpo":
            log = (read_manifest(node.run_dir) or {}).get("reward_log") or log
    keep = ("step", "reward", "reward_std", "frac_reward_zero_std")
    return [{k: h[k] for k in keep if k in h} for h in log if "reward" in h]


def _eval_entries(spec: CampaignSpec, nodes: list) -> tuple[list[dict], list[str]]:
    entries, missing = [], []
    for node in nodes:
        meta = node.meta
        if node.stage != EVAL_STAGE or not isinstance(meta, EvalMeta):
            continue
        path = Path(node.run_dir) / RESULTS_FILE
        if not path.is_file():
            missing.append(node.id)
            continue
        res = read_json_object(path, error=ReportInputError)
        for split, s in res.get("splits", {}).items():
            per_rule = {r: _rate(v.get("certified_rate"), v.get("episodes"))
                        for r, v in (s.get("per_rule") or {}).items()}
            entries.append({
                "model": meta.model, "model_label": spec.models[meta.model or ""].label, "arm": meta.arm,
                "arm_label": spec.arms.get(meta.arm or "", meta.arm), "kind": meta.model_kind,
                "dose": meta.dose, "matrix": meta.matrix, "step": meta.step,
                "run": meta.model_node, "split": split, **_rate(s.get("certified_rate"), s.get("episodes")),
                "pass_at_k": s.get("pass_at_k", {}), "outcomes": s.get("outcomes", {}),
                "problems": s.get("problems"), "mean_reward": s.get("mean_reward"), "per_rule": per_rule,
            })
    return entries, missing


def knowledge_and_use(probes: list[dict], entries: list[dict]) -> list[dict[str, Any]]:
    """Per evaluated model: probe accuracy (knowledge) beside its certified rate per split (use)."""
    rows = []
    for p in probes:
        use = {e["split"]: {k: e[k] for k in ("certified_rate", "certified", "episodes", "ci_low", "ci_high")}
               for e in entries if e["run"] == p["model"]}
        rows.append({"model": p["model"], "arm": p["arm"], "kind": p["kind"], "dose": p["dose"], "step": p["step"],
                     "heldin": p["heldin"], "heldout": p["heldout"], "certified": use})
    return rows


def _missing(nodes: list, stage: str) -> list[str]:
    """Runs of ``stage`` whose results file is not there yet."""
    return [n.id for n in nodes if n.stage == stage and not (Path(n.run_dir) / RESULTS_FILE).is_file()]


def collect(spec: CampaignSpec, nodes: list | None = None) -> dict[str, Any]:
    """Everything the reports show, from the runs on disk (missing runs are listed, not invented)."""
    nodes = build_dag(spec, check=False) if nodes is None else nodes
    entries, missing = _eval_entries(spec, nodes)
    probes = probe_entries(nodes)
    losses = heldout_losses(nodes)
    calibration = calibration_rows(spec)
    return {"campaign": spec.name, "scale": spec.scale, "entries": entries, "missing_evaluations": missing,
            "missing_probes": _missing(nodes, PROBE_STAGE), "missing_heldout_loss": _missing(nodes, LOSS_STAGE),
            "grpo_reward_per_step": _grpo_reward_log(nodes), "calibration": calibration,
            "midtraining": midtraining_rows(nodes), "out_dir": spec.out_dir,
            "training_logs": training_logs(spec.out_dir, nodes),
            "probes": probes, "heldout_loss": losses, "knowledge_and_use": knowledge_and_use(probes, entries),
            "finding": finding(probes, losses, dict(spec.arms)),
            "scale_statement": scale_statement(probes, entries, calibration, dict(spec.arms))}


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _ci(e: dict) -> str:
    return "—" if e.get("ci_low") is None else f"[{e['ci_low']:.3f}, {e['ci_high']:.3f}]"


def _kn(e: dict) -> str:
    return "—" if e.get("certified") is None else f"{e['certified']}/{e['episodes']}"


def _rate_cells(e: dict) -> str:
    """certified | 95% CI | k/n (three table cells)."""
    return f"{_fmt(e['certified_rate'])} | {_ci(e)} | {_kn(e)}"


def _pass(e: dict) -> str:
    return ", ".join(f"@{k} {v:.3f}" for k, v in sorted(e["pass_at_k"].items(), key=lambda kv: int(kv[0])))


def _acc(g: dict | None) -> str:
    """A probe group: the per-token accuracy (primary) and the summed one, each with its 95%
    interval, and the pairs it stands on."""
    if not g:
        return "—"
    tok = metric(g, "per_token")
    summed = f"{g['accuracy']:.3f} [{g['ci_low']:.3f}, {g['ci_high']:.3f}]"
    head = f"**{tok[0]:.3f}** [{tok[1]:.3f}, {tok[2]:.3f}] / " if tok else ""
    return f"{head}{summed} (n={g['pairs']})"


PROBE_CELL = ("probe cells: **per-token accuracy** (primary) [95% CI] / summed accuracy (length-biased) [95% CI] "
              "(n pairs); intervals: cluster bootstrap over rules and templates, Wilson's over templates where "
              "a rate is 0 or 1")


RATE_HEAD = "certified | 95% CI | certified/episodes"


def _calibration_md(rows: list[dict]) -> list[str]:
    out = ["## Calibration (scripted policies, same splits and n as the models)", ""]
    if not rows:
        return out + ["Not run (`py4 report results` runs them unless `--no-calibration`).", ""]
    out += [f"| policy | split | {RATE_HEAD} |", "|---|---|---|---|---|"]
    out += [f"| {r['policy']} | {r['split']} | {_rate_cells(r)} |"
            for r in sorted(rows, key=lambda r: (split_key(r["split"]), r["policy"]))]
    return out + ["", "gold submits the reference solution (should be 1.0), python3 the Python 3 reference "
                  "unchanged (0.0), migrated the migrator's output, core-only the reference migrated with the core "
                  "rules only (a model that learned the syntax and nothing else).", ""]


def _midtraining_md(rows: list[dict]) -> list[str]:
    """Each arm's midtraining loss beside ln(vocab), the loss of a uniform guess."""
    if not rows:
        return []
    loss = lambda x, step=None: "—" if x is None else f"{x:.3f}" + (f" (step {step})" if step else "")
    out = ["## Midtraining: did it learn?", "",
           "| arm | steps | tokens | first logged loss | last logged loss | mean train loss "
           "| ln(vocab) = uniform guess |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        tokens = "—" if r["tokens"] is None else f"{r['tokens']:,}"
        out.append(f"| {r['arm']} | {r['steps'] or '—'} | {tokens} | {loss(r['first_loss'], r['first_step'])} | "
                   f"{loss(r['last_loss'], r['last_step'])} | {loss(r['train_loss'])} | {loss(r['uniform_loss'])} |")
    stuck = [r["arm"] for r in rows if r["learned"] is False]
    if stuck:
        out += ["", f"**Midtraining did not learn** ({', '.join(stuck)}): the loss stays within "
                f"{100 - 100 * UNIFORM_SHARE:.0f}% of ln(vocab), the loss of guessing every token uniformly; those "
                "arms' models are the base again."]
    return out + [""]


def _probe_md(data: dict[str, Any]) -> list[str]:
    probes, losses = data["probes"], data["heldout_loss"]
    out = ["## Knowledge beside use", ""]
    if not probes:
        return out + ["No probe results in this campaign's runs (probe evaluations: none found).", ""]
    splits = sorted({s for r in data["knowledge_and_use"] for s in r["certified"]}, key=split_key)
    out += ["Knowledge: probe accuracy (share of minimal pairs where the Python-4 member is more likely); "
            f"{PROBE_CELL}. Use: certified rate (95% Wilson, certified/episodes).", "",
            "| " + " | ".join(["model", "arm", "kind", "probes held-in", "probes held-out",
                               *(f"certified {s}" for s in splits)]) + " |", "|---" * (5 + len(splits)) + "|"]
    for r in data["knowledge_and_use"]:
        use = [f"{_fmt(u['certified_rate'])} {_ci(u)} ({_kn(u)})" if (u := r["certified"].get(s)) else "—"
               for s in splits]
        out.append("| " + " | ".join([f"`{r['model']}`", r["arm"] or "—", r["kind"], _acc(r["heldin"]),
                                      _acc(r["heldout"]), *use]) + " |")
    arms = arm_models(probes)
    if arms:
        out += _arms_md(arms, base_model(probes), losses)
    elif losses:
        out += ["", "Held-out Python-4 loss: " + ", ".join(f"{x['model']} {x['loss']:.3f}" for x in losses)]
    return out + [""]


def _diff(d: dict | None) -> str:
    """A paired difference: per-token (primary) and summed, each with its 95% interval."""
    if not d:
        return "—"
    tok = metric(d, "per_token")
    head = f"**{tok[0]:+.3f}** [{tok[1]:+.3f}, {tok[2]:+.3f}] / " if tok else ""
    return f"{head}{d['difference']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]"


def _margin_change(d: dict | None) -> str:
    """A rule's change in mean per-token log-probability margin against the base (nats/token)."""
    if not d or d.get("per_token_margin_difference") is None:
        return "—"
    return (f"{d['per_token_margin_difference']:+.3f} [{d['per_token_margin_ci_low']:+.3f}, "
            f"{d['per_token_margin_ci_high']:+.3f}]")


def _loss_cell(x: dict | None) -> str:
    if not x:
        return "—"
    parts = [f"{x['loss']:.3f}"]
    if x.get("heldin_loss") is not None and x.get("heldout_loss") is not None:
        parts.append(f"(held-in rules {x['heldin_loss']:.3f}, held-out rules {x['heldout_loss']:.3f})")
    if x.get("tokens"):
        parts.append(f"n={x['tokens']:,} tokens")
    return " ".join(parts)


def _arms_md(arms: dict[str, dict], base: dict | None, losses: list[dict]) -> list[str]:
    """The arms (and the untrained base, the floor) side by side: probes, paired difference from
    control, held-out loss; then probe accuracy per rule."""
    loss = {x["arm"] or "base": x for x in losses}
    rows = ([("base", base)] if base else []) + list(arms.items())
    out = ["", f"## The arms side by side ({next(iter(arms.values()))['kind']} models; the base is the floor)", "",
           "| arm | model | held-in | held-out | syntax | semantic | minus control, held-in (paired) | "
           "minus control, held-out (paired) | held-out Python-4 loss |", "|---|---|---|---|---|---|---|---|---|"]
    for arm, e in rows:
        mc = e.get("minus_control") or {}
        out.append(f"| {arm} | `{e['model']}` | {_acc(e['heldin'])} | {_acc(e['heldout'])} | "
                   f"{_acc(e['by_kind']['syntax'])} | {_acc(e['by_kind']['semantic'])} | {_diff(mc.get('heldin'))} | "
                   f"{_diff(mc.get('heldout'))} | {_loss_cell(loss.get(arm))} |")
    out += _identical_note(rows)
    rules = sorted({r for _, e in rows for r in e["per_rule"]})
    info = {r: g for _, e in rows for r, g in e["per_rule"].items()}
    trained = [(a, e) for a, e in rows if a != "base"]
    out += ["", "### Probe accuracy per rule", "",
            "Per rule: " + PROBE_CELL + ". Δ margin: the change against the untrained base in the mean per-token "
            "log-probability margin (Python-4 member minus Python 3 member, nats/token; 95% cluster bootstrap over "
            "templates): it moves even where an accuracy cannot. `no` under discriminates: the base and every "
            "trained model score the rule at the same 0 or 1, so it is left out of every pooled number above.", "",
            "| rule | kind | held-out | discriminates | " + " | ".join(a for a, _ in rows) + " | "
            + " | ".join(f"Δ margin {a} − base" for a, _ in trained) + " |",
            "|---" * (4 + len(rows) + len(trained)) + "|"]
    out += [f"| {r} | {info[r].get('kind', '?')} | {'yes' if info[r].get('held_out') else 'no'} | "
            f"{'no' if info[r].get('discriminates') is False else 'yes'} | "
            + " | ".join(_acc(e["per_rule"].get(r)) for _, e in rows) + " | "
            + " | ".join(_margin_change((e["per_rule"].get(r) or {}).get("vs_base")) for _, e in trained) + " |"
            for r in rules]
    by_length = [r for r in rules if info[r].get("summed_flag")]
    if by_length:
        out += ["", f"**On the summed score, length decides {len(by_length)} of {len(rules)} rules**: the base and "
                "every trained model score them at the same 0 or 1 (the shorter member always wins): "
                + ", ".join(by_length) + ". That is why the per-token score is the primary one; the summed "
                "numbers above include these rules."]
    flagged = {r: info[r]["flag"] for r in rules if info[r].get("discriminates") is False}
    if flagged:
        out += ["", f"**{len(flagged)} of {len(rules)} rules cannot discriminate** and are left out of the pooled "
                "numbers and the finding: " + "; ".join(f"{r} ({why})" for r, why in flagged.items()) + "."]
    return out


def render_markdown(data: dict[str, Any]) -> str:
    es = data["entries"]
    out = [f"# Results: {data['campaign']} ({data['scale']} scale)", "", f"**Finding.** {data['finding']}", ""]
    if (data.get("scale_statement") or {}).get("text"):
        out += [f"**What this scale can and cannot show.** {data['scale_statement']['text']}", ""]
    out += _calibration_md(data["calibration"])
    out += _midtraining_md(data.get("midtraining") or [])
    eft = sorted((e for e in es if e["kind"] == "eft"),
                 key=lambda e: (e["model"], e["arm"], e["matrix"], e["dose"], split_key(e["split"])))
    out += ["## Certified rate by model x arm x EFT dose x split", "",
            f"| model | arm | EFT dose | split | {RATE_HEAD} | pass@k | problems x samples |",
            "|---|---|---|---|---|---|---|---|---|"]
    for e in eft:
        dose = f"{e['dose']:,}" + (" (+EFT matrix)" if e["matrix"] else "")
        out.append(f"| {e['model_label']} | {e['arm_label']} | {dose} | {e['split']} | {_rate_cells(e)} | "
                   f"{_pass(e)} | {e['problems']} x {(e['episodes'] or 0) // max(e['problems'] or 1, 1)} |")
    grafts = [e for e in es if e["kind"] == "graft"]
    if grafts:
        out += ["", "## Grafts (no EFT)", "", f"| model | arm | split | {RATE_HEAD} | pass@k |",
                "|---|---|---|---|---|---|---|"]
        out += [f"| {e['model_label']} | {e['arm_label']} | {e['split']} | {_rate_cells(e)} | {_pass(e)} |"
                for e in sorted(grafts, key=lambda e: (e["model"], e["arm"], split_key(e["split"])))]
    ladder = sorted((e for e in es if e["kind"] == "grpo"), key=lambda e: (e["step"], split_key(e["split"])))
    if ladder:
        out += ["", "## GRPO ladder (step 0 = the warm start)", "", f"| step | split | {RATE_HEAD} | pass@k |",
                "|---|---|---|---|---|---|"]
        out += [f"| {e['step']} | {e['split']} | {_rate_cells(e)} | {_pass(e)} |" for e in ladder]
    if data["grpo_reward_per_step"]:
        out += ["", "## GRPO mean reward per training step", "",
                "frac_reward_zero_std = 1.0 means every group's rewards were equal: no gradient from that step.", "",
                "| step | reward | reward std | frac_reward_zero_std |", "|---|---|---|---|"]
        out += [f"| {r['step']} | {_fmt(r['reward'])} | {_fmt(r.get('reward_std'))} | "
                f"{_fmt(r.get('frac_reward_zero_std'))} |"
                for r in data["grpo_reward_per_step"]]
        out += _zero_gradient_note(data["grpo_reward_per_step"])
    out += [""] + _probe_md(data)
    out += ["## Per-rule certified rate (certified/episodes)", ""]
    for split in sorted({e["split"] for e in es}, key=split_key):
        rows = [e for e in eft if e["split"] == split]
        rules = sorted({r for e in rows for r in e["per_rule"]})
        if not rules:
            continue
        cols = [f"{e['arm']}/{e['dose']}" for e in rows]
        out += [f"### {split}", "", "| rule | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
        out += ["| " + " | ".join([r, *(_rule_cell(e["per_rule"].get(r)) for e in rows)]) + " |" for r in rules]
        out.append("")
    out += training_logs_md(data.get("training_logs") or [], data.get("out_dir") or ".")
    for key, words in (("missing_evaluations", "Not evaluated yet"), ("missing_probes", "Not probed yet"),
                       ("missing_heldout_loss", "Held-out loss not measured yet")):
        if data.get(key):
            out += ["", f"{words}: " + ", ".join(f"`{m}`" for m in data[key])]
    return "\n".join(out) + "\n"


def _zero_gradient_note(log: list[dict]) -> list[str]:
    """Say so when GRPO had no gradient: every group's rewards were equal on every (or some) step."""
    zero = [r["step"] for r in log if r.get("frac_reward_zero_std") == 1.0]
    if not zero:
        return []
    if len(zero) == len(log):
        return ["", f"**No learning signal:** frac_reward_zero_std is 1.0 on all {len(log)} steps — every group's "
                "rewards were equal, so GRPO's advantages and gradient were zero throughout."]
    return ["", f"frac_reward_zero_std is 1.0 (zero gradient) on steps {', '.join(map(str, zero))} of {len(log)}."]


def _identical_note(rows: list[tuple[str, dict]]) -> list[str]:
    """Say so when the arms' probe results are identical: the midtraining did not tell them apart."""
    arms = [(a, e) for a, e in rows if a != "base"]
    if len(arms) < 2:
        return []
    first = arms[0][1]
    same = all(e["all"] == first["all"] and e["per_rule"] == first["per_rule"] for _, e in arms[1:])
    return ["", f"**The arms are indistinguishable:** {', '.join(a for a, _ in arms)} have identical probe results "
            "(every rule); their models do not differ in what the probes measure."] if same else []


def _rule_cell(r: dict | None) -> str:
    return "—" if not r else f"{_fmt(r['certified_rate'])} ({_kn(r)})"


def write_results(spec: CampaignSpec, out_dir: str | Path, figures: bool = True, calibration: bool = True,
                  nodes: list | None = None, log: Callable[[str], None] = print) -> list[Path]:
    """Write results.json, results.md, probes.json, (with ``figures``) the PNGs and index.html, the
    page that shows them all with links to each evaluation's transcripts, into out_dir.

    ``calibration``: first run the scripted calibration evaluations that are missing or stale
    (py4.report.calibration); without it, only those already on disk are shown.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if calibration:
        run_calibration(spec, log=log)
    nodes = build_dag(spec, check=False) if nodes is None else nodes
    data = collect(spec, nodes)
    markdown = render_markdown(data)
    paths = [atomic_write_json(out / "results.json", {**data, **provenance_fields()}),
             atomic_write_text(out / "results.md", markdown),
             atomic_write_json(out / "probes.json", data["probes"])]
    if figures:
        paths.append(figs.save(figs.dose_response(data), out / "dose_response.png"))
        paths.append(figs.save(figs.grpo_ladder(data), out / "grpo_ladder.png"))
        if data["probes"]:
            paths.append(figs.save(figs.probe_heatmap(data["probes"]), out / "probe_heatmap.png"))
        arms = arm_models(data["probes"])
        if arms or data["heldout_loss"]:
            fig = figs.arm_comparison(arms, base_model(data["probes"]), data["heldout_loss"], dict(spec.arms))
            paths.append(figs.save(fig, out / "arm_comparison.png"))
    paths.append(write_index(data, markdown, [p for p in paths if p.suffix == ".png"], nodes, out))
    return paths
