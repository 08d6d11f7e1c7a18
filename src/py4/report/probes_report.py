"""Knowledge: the campaign's probe results per evaluated model (``probes.json``), the arms side by
side, the held-out Python-4 loss per arm, and the one-sentence finding computed from them.

    probe_entries(nodes) -> [{model, arm, kind, dose, step, heldin, heldout, by_kind, per_rule, ...}]
    heldout_losses(nodes) -> [{arm, loss, ci_low, ci_high, tokens, documents, ...}]
    arm_models(entries) -> {arm: entry}   # the entry that shows each arm's midtraining most directly
    finding(entries, losses, evaluations) -> str

A probe's accuracy is the share of its minimal pairs where the model finds the Python-4 member
more likely (docs/probes.md); its interval is py4.probes.stats's percentile bootstrap.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from py4.errors import FileFormatError
from py4.fileio import read_json_object
from py4.report.intervals import disjoint
from py4.report.layout import LOSS_STAGE, PROBE_STAGE, RESULTS_FILE

GROUP_FIELDS = ("accuracy", "ci_low", "ci_high", "pairs")
KINDS = ("base", "midtrain", "sft", "graft", "eft", "grpo")
ARMS = ("control", "iso", "prop")
# The model whose probes show an arm's midtraining most directly: the midtraining endpoint itself,
# else the graft built on it, else the chat parent (SFT on top of it).
ARM_KIND_PREFERENCE = ("midtrain", "graft", "sft")


class ReportInputError(FileFormatError):
    """A run's results file lacks what the report reads; names the file and the field."""


# Length-normalised accuracy, kept beside the plain one when the probe run reports it: the
# members differ in length, so the summed score is biased against the longer member.
PER_TOKEN_FIELDS = ("accuracy_per_token", "per_token_ci_low", "per_token_ci_high")


def _group(summary: dict, key: str, path: Path) -> dict[str, Any]:
    try:
        g = summary[key]
        return {**{f: g[f] for f in GROUP_FIELDS}, **{f: g[f] for f in PER_TOKEN_FIELDS if f in g}}
    except (KeyError, TypeError) as exc:
        raise ReportInputError(f"{path}: summary.{key} needs {', '.join(GROUP_FIELDS)} "
                               f"(py4 probes eval's results.json), missing {exc}") from None


def _kind(meta: dict) -> str:
    """The evaluated model's kind (a probe node's ``kind``); the chat parent, which its evaluation
    calls EFT dose 0, is the SFT model."""
    if meta.get("kind"):
        return meta["kind"]
    node = meta.get("model_node", "")
    for kind in ("base", "midtrain", "sft"):
        if node == kind or node.endswith("/" + kind):
            return kind
    return meta.get("model_kind") or "unknown"


DIFF_FIELDS = ("difference", "ci_low", "ci_high", "pairs")


def _minus_control(results: dict) -> dict[str, dict] | None:
    """The paired difference against the control arm's model (``--compare``), per group, if scored."""
    d = results.get("minus_compare")
    if not isinstance(d, dict):
        return None
    return {g: {f: d[g][f] for f in DIFF_FIELDS} for g in ("all", "heldin", "heldout", "syntax", "semantic")
            if isinstance(d.get(g), dict) and all(f in d[g] for f in DIFF_FIELDS)}


def _rule_info() -> dict[str, dict[str, Any]]:
    from py4.lang.rules import RULES

    return {rid: {"title": r.title, "kind": "semantic" if r.kind == "semantics" else "syntax",
                  "held_out": r.held_out} for rid, r in RULES.items()}


def probe_entries(nodes: Iterable) -> list[dict[str, Any]]:
    """One entry per probe run that has results (probes.json's entries), in DAG order."""
    rules = _rule_info()
    entries = []
    for node in nodes:
        if node.stage != PROBE_STAGE:
            continue
        path = Path(node.run_dir) / RESULTS_FILE
        if not path.is_file():
            continue
        results = read_json_object(path, error=ReportInputError)
        summary = results.get("summary")
        if not isinstance(summary, dict):
            raise ReportInputError(f"{path}: expected a `summary` object (py4 probes eval's results.json)")
        meta = node.meta
        marked = results.get("rules") if isinstance(results.get("rules"), dict) else {}  # the probe set's own marks
        per_rule = {}
        for rule in sorted(summary.get("per_rule") or {}):
            per_rule[rule] = {**_group(summary["per_rule"], rule, path), **rules.get(rule, {}), **marked.get(rule, {})}
        entries.append({
            "model": meta.get("model_node", node.id), "model_key": meta.get("model"), "arm": meta.get("arm"),
            "kind": _kind(meta), "dose": meta.get("dose"), "step": meta.get("step"), "run": node.run_dir,
            "all": _group(summary, "all", path), "heldin": _group(summary, "heldin", path),
            "heldout": _group(summary, "heldout", path),
            "by_kind": {k: _group(summary.get("by_kind") or {}, k, path) for k in ("syntax", "semantic")},
            "per_rule": per_rule, "compare": meta.get("compare"), "minus_control": _minus_control(results),
        })
    return entries


def heldout_losses(nodes: Iterable) -> list[dict[str, Any]]:
    """The held-out Python-4 loss of each model's run that has results (the base and each arm's
    midtrained model): ``loss`` over all scored tokens, ``heldin_loss`` / ``heldout_loss`` over the
    documents of held-in / held-out rules (py4.train.heldout_loss)."""
    out = []
    for node in nodes:
        if node.stage != LOSS_STAGE:
            continue
        path = Path(node.run_dir) / RESULTS_FILE
        if not path.is_file():
            continue
        res = read_json_object(path, error=ReportInputError)
        groups = {}
        for group in ("all", "heldin", "heldout"):
            g = res.get(group)
            if group == "all" and not (isinstance(g, dict) and isinstance(g.get("loss"), (int, float))):
                raise ReportInputError(f"{path}: expected `all.loss`, a number (mean loss per token on held-out "
                                       f"Python-4 documents), got {g!r}")
            groups[group] = g if isinstance(g, dict) else {}
        meta = node.meta
        out.append({"model": f"{meta.get('model')}/{meta.get('arm') or meta.get('kind', 'base')}",
                    "model_key": meta.get("model"), "arm": meta.get("arm"), "kind": meta.get("kind"),
                    "run": node.run_dir, "loss": groups["all"]["loss"],
                    "heldin_loss": groups["heldin"].get("loss"), "heldout_loss": groups["heldout"].get("loss"),
                    "tokens": groups["all"].get("scored_tokens", res.get("tokens")), "documents": res.get("documents"),
                    # one pass over fixed documents: no interval is computed by the loss run
                    "ci_low": groups["all"].get("ci_low"), "ci_high": groups["all"].get("ci_high")})
    return out


def arm_models(entries: list[dict], model_key: str | None = None) -> dict[str, dict]:
    """arm -> the probe entry that shows its midtraining most directly (same kind for every arm)."""
    pool = [e for e in entries if e["arm"] in ARMS and (model_key is None or e["model_key"] == model_key)]
    for kind in ARM_KIND_PREFERENCE:
        found = {e["arm"]: e for e in pool if e["kind"] == kind}
        if len(found) >= 2:
            return {arm: found[arm] for arm in ARMS if arm in found}
    return {}


def base_model(entries: list[dict], model_key: str | None = None) -> dict | None:
    """The untrained base's probe entry: the floor every model is read against."""
    return next((e for e in entries if e["kind"] == "base" and (model_key is None or e["model_key"] == model_key)),
                None)


def _ci(g: dict) -> str:
    return f"{g['accuracy']:.3f} [{g['ci_low']:.3f}, {g['ci_high']:.3f}]"


def compare(a: dict, b: dict) -> str:
    """'above', 'below' or 'overlapping': a against b by their 95% intervals."""
    if not disjoint((a["ci_low"], a["ci_high"]), (b["ci_low"], b["ci_high"])):
        return "overlapping"
    return "above" if a["accuracy"] > b["accuracy"] else "below"


def compare_paired(d: dict) -> str:
    """'above', 'below' or 'overlapping': a paired difference (treated minus control) by whether
    its 95% interval excludes 0."""
    if d["ci_low"] > 0:
        return "above"
    return "below" if d["ci_high"] < 0 else "overlapping"


def paired_with(treated: dict, control: dict, split: str) -> dict | None:
    """The treated model's paired difference against exactly this control model, if scored."""
    if treated.get("compare") != control["model"]:
        return None
    return (treated.get("minus_control") or {}).get(split)


# Which test decided, said in the sentence: on the same pairs the paired difference is the sharper
# test (two overlapping marginal intervals can hide a difference whose own interval excludes 0), so
# it decides when the probe run scored it; the marginal intervals decide otherwise.
_VERDICT = {
    "paired": {"above": "above the control arm's (the paired difference's 95% interval excludes 0)",
               "below": "below the control arm's (the paired difference's 95% interval excludes 0)",
               "overlapping": "not distinguishable from the control arm's (the paired difference's 95% interval "
                              "contains 0)"},
    "marginal": {"above": "above the control arm's with non-overlapping 95% intervals",
                 "below": "below the control arm's with non-overlapping 95% intervals",
                 "overlapping": "not distinguishable from the control arm's (the 95% intervals overlap)"}}


def verdict(treated: dict, control: dict, split: str) -> str:
    """The finding's words for ``split``: the paired test when scored, else the marginal one."""
    d = paired_with(treated, control, split)
    if d is not None:
        return _VERDICT["paired"][compare_paired(d)]
    return _VERDICT["marginal"][compare(treated[split], control[split])]


def _loss_clause(losses: list[dict], arm: str) -> str:
    """The held-out loss beside control's: a verdict only where both have an interval; the loss
    run is one pass over fixed documents and records none, so otherwise just the difference."""
    loss = {x["arm"]: x for x in losses}
    if arm not in loss or "control" not in loss:
        return ""
    a, c = loss[arm], loss["control"]
    text = f", and its loss on held-out Python-4 documents ({a['loss']:.3f})"
    if None not in (a["ci_low"], a["ci_high"], c["ci_low"], c["ci_high"]):
        if disjoint((a["ci_low"], a["ci_high"]), (c["ci_low"], c["ci_high"])):
            rel = "below" if a["loss"] < c["loss"] else "above"
            return text + f" is {rel} the control arm's ({c['loss']:.3f}) with non-overlapping 95% intervals"
        return text + f" is not distinguishable from the control arm's ({c['loss']:.3f}; the 95% intervals overlap)"
    diff = a["loss"] - c["loss"]
    rel = f"lower by {-diff:.3f}" if diff < 0 else f"higher by {diff:.3f}" if diff > 0 else "equal"
    return text + f" is {rel} nats/token than the control arm's ({c['loss']:.3f}; no interval)"


def finding(entries: list[dict], losses: list[dict], arm_label: dict[str, str] | None = None) -> str:
    """What the study shows at this scale, in one sentence computed from the probe numbers."""
    label = arm_label or {}
    arms = arm_models(entries)
    if "control" not in arms or not {"iso", "prop"} & set(arms):
        have = ", ".join(sorted({e["model"] for e in entries})) or "none"
        return ("No arm comparison yet: it needs the probe results of the control arm and a Python-4 arm for the "
                f"same kind of model (probe results found: {have}).")
    control = arms["control"]
    arm = "iso" if "iso" in arms else "prop"
    treated = arms[arm]
    return (f"At this scale ({treated['kind']} models compared), the {label.get(arm, arm)} arm's probe accuracy is "
            f"{verdict(treated, control, 'heldin')} on held-in rules ({_versus(treated, control, 'heldin')}) "
            f"and {verdict(treated, control, 'heldout')} on held-out rules ({_versus(treated, control, 'heldout')})"
            + _loss_clause(losses, arm) + ".")


def _versus(treated: dict, control: dict, split: str) -> str:
    """'a vs c', and the paired difference on the same pairs when the probe run scored it."""
    text = f"{_ci(treated[split])} vs {_ci(control[split])}"
    d = paired_with(treated, control, split)
    if d:
        text += (f"; paired difference on the same pairs {d['difference']:+.3f} "
                 f"[{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]")
    return text
