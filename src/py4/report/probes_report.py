"""Knowledge: the campaign's probe results per evaluated model (``probes.json``), the arms side by
side, the held-out Python-4 loss per arm, the one-sentence finding computed from them, and what
the campaign's scale can and cannot show.

    probe_entries(nodes) -> [{model, arm, kind, dose, step, heldin, heldout, by_kind, per_rule, ...}]
    heldout_losses(nodes) -> [{arm, loss, ci_low, ci_high, tokens, documents, ...}]
    arm_models(entries) -> {arm: entry}   # the entry that shows each arm's midtraining most directly
    finding(entries, losses, arm_label) -> str
    scale_statement(entries, evaluations, calibration) -> {shows, cannot_show, text}

A probe's accuracy is the share of its minimal pairs where the model finds the Python-4 member
more likely (docs/probes.md). Two scores are kept side by side, the per-token one primary
(py4.probes.stats.PRIMARY: the summed one is length-biased); intervals are py4.probes.stats's
cluster bootstrap over rules and templates (Wilson's where a rate is 0 or 1). Rules whose probes
cannot discriminate are flagged and left out of the pooled groups (`non_discriminating_rules`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from py4.campaign.node_meta import HeldoutLossMeta, ProbeMeta
from py4.errors import FileFormatError
from py4.fileio import read_json_object
from py4.probes.stats import B_DEFAULT, DIFF_COLUMNS, PRIMARY
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


# Both scores of a group (py4.probes.stats): the per-token one is the primary metric; the summed
# one (length-biased) is kept beside it. Margins: mean log-probability differences.
PER_TOKEN_FIELDS = ("accuracy_per_token", "per_token_ci_low", "per_token_ci_high")
EXTRA_FIELDS = (*PER_TOKEN_FIELDS, "ci_method", "per_token_ci_method", "wins", "wins_per_token", "templates",
                "rules", "length_matched", "mean_margin", "margin_ci_low", "margin_ci_high", "mean_margin_per_token",
                "margin_per_token_ci_low", "margin_per_token_ci_high")
# The fields of each metric: (rate, low, high) of a group; (difference, low, high) of a paired difference.
METRIC_FIELDS = {"per_token": ("accuracy_per_token", "per_token_ci_low", "per_token_ci_high"),
                 "summed": ("accuracy", "ci_low", "ci_high")}
DIFF_METRIC_FIELDS = {"per_token": ("per_token_difference", "per_token_ci_low", "per_token_ci_high"),
                      "summed": ("difference", "ci_low", "ci_high")}
METRIC_WORDS = {"per_token": "per-token", "summed": "summed"}
DIFF_FIELDS = ("difference", "ci_low", "ci_high", "pairs")
DIFF_EXTRA = tuple(f for cols in DIFF_COLUMNS for f in cols if f not in DIFF_FIELDS) + ("templates", "rules")


def _group(summary: dict, key: str, path: Path) -> dict[str, Any]:
    try:
        g = summary[key]
        return {**{f: g[f] for f in GROUP_FIELDS}, **{f: g[f] for f in EXTRA_FIELDS if f in g}}
    except (KeyError, TypeError) as exc:
        raise ReportInputError(f"{path}: summary.{key} needs {', '.join(GROUP_FIELDS)} "
                               f"(py4 probes eval's results.json), missing {exc}") from None


def metric(g: dict | None, name: str = PRIMARY) -> tuple[float, float, float] | None:
    """(value, low, high) of a group (or of a paired difference) on metric ``name``; None when
    there is no such score (a results file made before the per-token score existed)."""
    if not g:
        return None
    fields = (DIFF_METRIC_FIELDS if "difference" in g else METRIC_FIELDS)[name]
    if any(g.get(f) is None for f in fields):
        return None
    return (g[fields[0]], g[fields[1]], g[fields[2]])


def _diffs(d: Any) -> dict[str, dict] | None:
    """A paired difference per group (``minus_compare`` / ``minus_base``), with the fields it has."""
    if not isinstance(d, dict):
        return None
    return {g: {f: v[f] for f in (*DIFF_FIELDS, *DIFF_EXTRA) if f in v} for g, v in d.items()
            if isinstance(v, dict) and all(f in v for f in DIFF_FIELDS)}


def _rule_info() -> dict[str, dict[str, Any]]:
    from py4.lang.rules import RULES

    return {rid: {"title": r.title, "kind": "semantic" if r.kind == "semantics" else "syntax",
                  "held_out": r.held_out} for rid, r in RULES.items()}


def _probes_of(scores: list[dict], rules: dict[str, dict], marked: dict) -> list[dict]:
    """The probe records `summarize` needs (id, rule, held_out, kind) for the pairs scored; a
    pair's rule is its id's first part (``P4-NN/variant/context``)."""
    out = []
    for row in scores:
        rule = str(row["id"]).split("/")[0]
        info = {**rules.get(rule, {}), **(marked.get(rule) or {})}
        out.append({"id": row["id"], "rule": rule, "held_out": bool(info.get("held_out")),
                    "kind": info.get("kind", "syntax")})
    return out


def _read_probe_runs(nodes: Iterable) -> list[dict[str, Any]]:
    runs = []
    for node in nodes:
        if node.stage != PROBE_STAGE or not isinstance(node.meta, ProbeMeta):
            continue
        path = Path(node.run_dir) / RESULTS_FILE
        if not path.is_file():
            continue
        results = read_json_object(path, error=ReportInputError)
        summary = results.get("summary")
        if not isinstance(summary, dict):
            raise ReportInputError(f"{path}: expected a `summary` object (py4 probes eval's results.json)")
        for key in ("all", "heldin", "heldout"):
            _group(summary, key, path)  # the fields the report reads are there
        runs.append({"node": node, "path": path, "results": results})
    return runs


def _scores(results: dict) -> list[dict] | None:
    scores = results.get("scores")
    ok = isinstance(scores, list) and scores and all(isinstance(r, dict) and "id" in r for r in scores)
    return scores if ok else None


def _constant_rules(runs: list[dict], rules: dict[str, dict], field: str) -> dict[str | None, dict[str, str]]:
    """Per model (key): the rules that the base and every trained model probed score at exactly 0
    (or exactly 1) on ``field``, each with the words saying so; nothing without the base's probes."""
    from py4.probes.stats import summarize

    by_model: dict[str | None, dict[str, list[float]]] = {}
    has_base: dict[str | None, bool] = {}
    for run in runs:
        meta, results = run["node"].meta, run["results"]
        key = meta.model
        scores = _scores(results)
        per_rule = (summarize(scores, _probes_of(scores, rules, results.get("rules") or {}), b=1)["per_rule"]
                    if scores else (results["summary"].get("per_rule") or {}))
        has_base[key] = has_base.get(key, False) or meta.kind == "base"
        for rule, g in per_rule.items():
            value = g.get(field) if isinstance(g, dict) else None
            if value is not None:
                by_model.setdefault(key, {}).setdefault(rule, []).append(value)
    out: dict[str | None, dict[str, str]] = {}
    words = "per-token" if field == "accuracy_per_token" else "summed"
    for key, per_rule in by_model.items():
        if not has_base.get(key):
            continue
        for rule, values in sorted(per_rule.items()):
            if len(values) >= 2 and (all(v == 0.0 for v in values) or all(v == 1.0 for v in values)):
                out.setdefault(key, {})[rule] = (f"{words} accuracy {values[0]:.0f} for the base and all "
                                                 f"{len(values) - 1} trained models probed")
    return out


def non_discriminating_rules(runs: list[dict], rules: dict[str, dict]) -> dict[str | None, dict[str, str]]:
    """Per model (key): the rules whose probes cannot show learning, each with why.

    A rule cannot discriminate when the untrained base and every trained model probed score it
    at exactly 0 (or exactly 1) on the primary (per-token) metric: no training moved a single
    pair across, so its accuracy says nothing about the training. Such rules stay in the per-rule
    tables, flagged, and are left out of the pooled groups (held-in, held-out, by kind) and so
    out of the finding. Without the base's probes nothing is decided."""
    return _constant_rules(runs, rules, "accuracy_per_token")


def length_decided_rules(runs: list[dict], rules: dict[str, dict]) -> dict[str | None, dict[str, str]]:
    """Per model (key): the rules whose *summed* accuracy is the same 0 or 1 for the base and every
    trained model: the members' lengths decide the summed score there, whatever the model knows
    (the reason the summed score is not the primary). Flagged beside the summed numbers."""
    return _constant_rules(runs, rules, "accuracy")


def probe_entries(nodes: Iterable, bootstrap: int = B_DEFAULT) -> list[dict[str, Any]]:
    """One entry per probe run that has results (probes.json's entries), in DAG order.

    Where the results file has its per-pair scores, the summaries are computed here again over
    the rules that can discriminate (`non_discriminating_rules`), with the base's and the control
    arm's scores for the paired differences (``minus_base``, ``minus_control``); otherwise the
    file's own summaries are shown."""
    from py4.probes.stats import paired_difference, summarize

    rules = _rule_info()
    runs = _read_probe_runs(nodes)
    flagged = non_discriminating_rules(runs, rules)
    by_length = length_decided_rules(runs, rules)
    scores_of = {r["node"].meta.model_node: _scores(r["results"]) for r in runs}
    entries = []
    for run in runs:
        node, path, results = run["node"], run["path"], run["results"]
        meta = node.meta
        marked = results.get("rules") if isinstance(results.get("rules"), dict) else {}  # the probe set's own marks
        excluded = flagged.get(meta.model, {})
        scores = _scores(results)
        summary, minus_base = results["summary"], _diffs(results.get("minus_base"))
        minus_control = _diffs(results.get("minus_compare"))
        if scores:
            probes = _probes_of(scores, rules, marked)
            summary = summarize(scores, probes, b=bootstrap, exclude_rules=excluded)
            base_scores = _scores(results.get("base") or {})
            if base_scores:
                minus_base = paired_difference(scores, base_scores, probes, b=bootstrap, exclude_rules=excluded)
            control_scores = scores_of.get(meta.compare) if meta.compare else None
            if control_scores:
                minus_control = paired_difference(scores, control_scores, probes, b=bootstrap,
                                                  exclude_rules=excluded)
        per_rule = {}
        for rule in sorted(summary.get("per_rule") or {}):
            per_rule[rule] = {**_group(summary["per_rule"], rule, path), **rules.get(rule, {}),
                              **marked.get(rule, {}), "discriminates": rule not in excluded,
                              "flag": excluded.get(rule), "vs_base": (minus_base or {}).get(rule),
                              "summed_flag": by_length.get(meta.model, {}).get(rule)}
        entries.append({
            "model": meta.model_node, "model_key": meta.model, "arm": meta.arm,
            "kind": meta.kind, "dose": meta.dose, "step": meta.step, "run": node.run_dir,
            "primary": PRIMARY, "excluded_rules": sorted(excluded),
            "all": _group(summary, "all", path), "heldin": _group(summary, "heldin", path),
            "heldout": _group(summary, "heldout", path),
            "by_kind": {k: _group(summary.get("by_kind") or {}, k, path) for k in ("syntax", "semantic")},
            "per_rule": per_rule, "compare": meta.compare, "minus_control": minus_control,
            "minus_base": minus_base,
        })
    return entries


def heldout_losses(nodes: Iterable) -> list[dict[str, Any]]:
    """The held-out Python-4 loss of each model's run that has results (the base and each arm's
    midtrained model): ``loss`` over all scored tokens, ``heldin_loss`` / ``heldout_loss`` over the
    documents of held-in / held-out rules (py4.train.heldout_loss)."""
    out = []
    for node in nodes:
        if node.stage != LOSS_STAGE or not isinstance(node.meta, HeldoutLossMeta):
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
        out.append({"model": f"{meta.model}/{meta.arm or meta.kind}",
                    "model_key": meta.model, "arm": meta.arm, "kind": meta.kind,
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


def _ci(g: dict, name: str = PRIMARY) -> str:
    m = metric(g, name)
    return "—" if m is None else f"{m[0]:.3f} [{m[1]:.3f}, {m[2]:.3f}]"


def compare(a: dict, b: dict, name: str = PRIMARY) -> str:
    """'above', 'below' or 'overlapping': a against b by their 95% intervals on metric ``name``."""
    ma, mb = metric(a, name), metric(b, name)
    if ma is None or mb is None or not disjoint(ma[1:], mb[1:]):
        return "overlapping"
    return "above" if ma[0] > mb[0] else "below"


def compare_paired(d: dict, name: str = PRIMARY) -> str:
    """'above', 'below' or 'overlapping': a paired difference (treated minus control) on metric
    ``name`` by whether its 95% interval excludes 0."""
    m = metric(d, name)
    if m is None:
        return "overlapping"
    if m[1] > 0:
        return "above"
    return "below" if m[2] < 0 else "overlapping"


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


def verdict(treated: dict, control: dict, split: str, name: str = PRIMARY) -> str:
    """The finding's words for ``split``: the paired test when scored, else the marginal one."""
    d = paired_with(treated, control, split)
    if d is not None and metric(d, name) is not None:
        return _VERDICT["paired"][compare_paired(d, name)]
    return _VERDICT["marginal"][compare(treated[split], control[split], name)]


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


def _excluded_note(entries: list[dict]) -> str:
    excluded = sorted({r for e in entries for r in e.get("excluded_rules") or []})
    if not excluded:
        return ""
    return (f"; {len(excluded)} rule{'' if len(excluded) == 1 else 's'} whose probes cannot discriminate (the same "
            "0 or 1 for the base and every "
            f"trained model) left out: {', '.join(excluded)}")


def finding(entries: list[dict], losses: list[dict], arm_label: dict[str, str] | None = None) -> str:
    """What the study shows at this scale, in one sentence computed from the probe numbers: every
    Python-4 arm against control on the primary (per-token) score, the summed score beside."""
    label = arm_label or {}
    arms = arm_models(entries)
    if "control" not in arms or not {"iso", "prop"} & set(arms):
        have = ", ".join(sorted({e["model"] for e in entries})) or "none"
        return ("No arm comparison yet: it needs the probe results of the control arm and a Python-4 arm for the "
                f"same kind of model (probe results found: {have}).")
    control = arms["control"]
    name = PRIMARY if all(metric(e["heldin"], PRIMARY) for e in arms.values()) else "summed"
    words = METRIC_WORDS[name]
    clauses = []
    for arm in ("iso", "prop"):
        if arm not in arms:
            continue
        treated = arms[arm]
        clauses.append(
            f"the {label.get(arm, arm)} arm's {words} probe accuracy is {verdict(treated, control, 'heldin', name)} "
            f"on held-in rules ({_versus(treated, control, 'heldin', name)}) and "
            f"{verdict(treated, control, 'heldout', name)} on held-out rules "
            f"({_versus(treated, control, 'heldout', name)})" + _loss_clause(losses, arm))
    secondary = _summed_clause(arms, control, label) if name == PRIMARY else ""
    return (f"At this scale ({control['kind']} models compared; {words} score, the primary metric, 95% cluster-"
            f"bootstrap intervals over rules and templates{_excluded_note(list(arms.values()))}), the "
            f"{label.get('control', 'control')} arm scores {_ci(control['heldin'], name)} on held-in and "
            f"{_ci(control['heldout'], name)} on held-out rules; " + "; ".join(clauses) + secondary + ".")


def _summed_clause(arms: dict[str, dict], control: dict, label: dict[str, str]) -> str:
    """The summed (length-biased) score's paired differences, beside the primary verdicts."""
    parts = []
    for arm in ("iso", "prop"):
        if arm not in arms:
            continue
        diffs = [(split, paired_with(arms[arm], control, split)) for split in ("heldin", "heldout")]
        if all(d for _, d in diffs):
            parts.append(f"{label.get(arm, arm)} " + ", ".join(
                f"{'held-in' if s == 'heldin' else 'held-out'} {d['difference']:+.3f} "
                f"[{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]" for s, d in diffs))
    return f" (summed score, length-biased, minus control: {'; '.join(parts)})" if parts else ""


def _versus(treated: dict, control: dict, split: str, name: str = PRIMARY) -> str:
    """'a vs c', and the paired difference on the same pairs when the probe run scored it."""
    text = f"{_ci(treated[split], name)} vs {_ci(control[split], name)}"
    d = paired_with(treated, control, split)
    m = metric(d, name) if d else None
    if m:
        text += f"; paired difference on the same pairs {m[0]:+.3f} [{m[1]:+.3f}, {m[2]:+.3f}]"
    return text


def scale_statement(entries: list[dict], evaluations: list[dict], calibration: list[dict] | None = None,
                    arm_label: dict[str, str] | None = None) -> dict[str, Any]:
    """What this campaign's numbers can show and what they cannot, computed from them.

    Knowledge (probes, held-in and held-out) and syntax (the syntax probes) count as shown where a
    Python-4 arm's paired per-token difference from control (or, without one, from the base)
    excludes 0; use (certified rates) cannot be shown where every model's certified rate on the
    test splits is 0: with no model certifying anything, no arm can rise above another. The
    chat parents (EFT dose 0) at 0 say why: they cannot write a certified program at all."""
    label = arm_label or {}
    arms = arm_models(entries)
    control = arms.get("control")
    shows, cannot = [], []
    for arm in ("iso", "prop"):
        e = arms.get(arm)
        if e is None:
            continue
        for group, what in (("heldin", "knowledge of the held-in rules"), ("heldout", "knowledge of held-out rules"),
                            ("syntax", "syntax")):
            d = None
            if control is not None and paired_with(e, control, group):
                d, against = paired_with(e, control, group), "control"
            elif (e.get("minus_base") or {}).get(group):
                d, against = e["minus_base"][group], "the base"
            m = metric(d, PRIMARY) if d else None
            if m and m[1] > 0:
                shows.append(f"{what} ({label.get(arm, arm)} minus {against}, per-token accuracy "
                             f"{m[0]:+.3f} [{m[1]:+.3f}, {m[2]:+.3f}])")
    tests = [e for e in evaluations if e.get("certified") is not None and e["split"].startswith("test_")]
    if tests:
        k = sum(e["certified"] for e in tests)
        n = sum(e["episodes"] or 0 for e in tests)
        models = len({e["run"] for e in tests})
        if k == 0:
            parents = [e for e in tests if e["kind"] == "eft" and e.get("dose") == 0]
            why = (f": the chat parents (EFT dose 0) certify 0 of {sum(p['episodes'] or 0 for p in parents)} "
                   "episodes, so the models cannot write a certified program at this scale, Python-4 or not"
                   if parents else "")
            gold = [c for c in calibration or [] if c["policy"] == "gold" and c["split"].startswith("test_")]
            harness = (f" (the gold policy certifies {sum(c['certified'] or 0 for c in gold)}/"
                       f"{sum(c['episodes'] or 0 for c in gold)} on the same problems: the harness can certify)"
                       if gold else "")
            sanity = [e for e in evaluations if e.get("certified") and e["split"] == "train_sanity"]
            memorised = (f"; only memorised answers certify (train_sanity, the gold problems an EFT dose trained "
                         f"on: {sum(e['certified'] for e in sanity)}/{sum(e['episodes'] or 0 for e in sanity)} "
                         f"episodes in the runs that certify any: {len(sanity)})" if sanity else "")
            cannot.append(f"use: every certified rate on the test splits is 0 ({models} models, 0/{n} episodes)"
                          f"{why}{harness}{memorised}")
        else:
            shows.append(f"use, measurably: {k}/{n} certified episodes on the test splits over {models} models")
    text = []
    if shows:
        text.append("This scale shows " + "; ".join(shows) + ".")
    elif entries:
        text.append("This scale shows no probe difference between the Python-4 arms and control or the base "
                    "(no per-token interval excludes 0).")
    if cannot:
        text.append("It cannot show " + "; ".join(cannot) + ".")
    return {"shows": shows, "cannot_show": cannot, "text": " ".join(text)}
