"""Summaries of probe scores: accuracy on two scores, mean margins, cluster-bootstrap intervals.

Two scores per pair, reported side by side everywhere:
- ``per_token`` (the PRIMARY metric, the one findings are decided on): each span's mean
  log-probability per token; the member with the higher mean wins. The members of a pair differ
  in length (an inserted ``let``, a longer output), and a summed log-probability falls with every
  token, so the summed score's winner is often decided by length: an untrained model scores far
  below 0.5 on such pairs. Normalising by length removes most of that bias.
- ``summed``: each span's summed log-probability (``accuracy``, ``mean_margin``: the fields the
  results files have always carried).

Intervals: pairs are not independent. A rule's pairs are 14 templates x 3 contexts, and a
template's three renderings (and a rule's templates) share most of what decides them. The
bootstrap therefore resamples clusters: the rules of a group with replacement, then within each
drawn rule its templates with replacement (all contexts of a template together); a one-rule group
resamples its templates. Resampling pairs instead would treat 42 correlated pairs as 42
independent ones and give intervals far too narrow (tests/probes/test_stats.py). An accuracy at
exactly 0 or 1 (every pair lost or won) has a bootstrap interval of one point; there the interval
is Wilson's for 0 (or all) of the group's templates (py4.binomial), the independent units.

``summarize(scores, probes)`` groups by rule, held-in / held-out and syntax / semantic
(``by_kind``); ``paired_difference(a, b, probes)`` is model a minus model b on the same pairs,
with the same cluster bootstrap applied to both (so the shared variance cancels).
"""

from __future__ import annotations

from collections.abc import Iterable

from py4.binomial import wilson

B_DEFAULT = 1000
PRIMARY = "per_token"
"""The metric findings are decided on (docs/probes.md "Which score decides")."""
LEVEL = 0.95


def pair_values(row: dict) -> dict[str, float]:
    """One scored pair's wins (1.0 or 0.0) and margins on both scores."""
    margin = row["p4_logprob"] - row["py3_logprob"]
    norm = row["p4_logprob"] / max(row["p4_tokens"], 1) - row["py3_logprob"] / max(row["py3_tokens"], 1)
    return {"win": float(margin > 0), "win_per_token": float(norm > 0), "margin": margin, "margin_per_token": norm}


def template_of(pair_id: str) -> str:
    """The template a pair was rendered from: ``P4-NN/variant`` of ``P4-NN/variant/context``
    (an id without that shape is its own template)."""
    return pair_id.rsplit("/", 1)[0] if pair_id.count("/") == 2 else pair_id


def _interval(means, level: float = LEVEL) -> tuple[float, float]:
    ordered = sorted(float(m) for m in means)
    b = len(ordered)
    return ordered[int((1 - level) / 2 * b)], ordered[min(b - 1, int((1 + level) / 2 * b))]


def _resample_means(columns: list[list[float]], b: int, seed: int):
    """Means of ``b`` resamples of rows (each row its own unit), the same rows for all columns."""
    import numpy as np

    n = len(columns[0])
    idx = np.random.default_rng(seed).integers(0, n, size=(b, n))
    return [np.asarray(c, dtype=float)[idx].mean(axis=1) for c in columns]


def bootstrap_ci(values: list[float], b: int = B_DEFAULT, seed: int = 0, level: float = LEVEL) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of independent ``values``."""
    if not values:
        return (float("nan"), float("nan"))
    return _interval(_resample_means([values], b, seed)[0], level)


def cluster_resample_means(columns: list[list[float]], rules: list[str], templates: list[str], b: int,
                           seed: int):
    """Means of ``b`` two-stage cluster resamples: rules with replacement, then within each drawn
    rule its templates with replacement (a rule drawn twice draws its templates twice,
    independently). Row i belongs to ``rules[i]`` and ``templates[i]``; every column shares the
    resamples. Returns one array of ``b`` means per column (numpy, vectorised over resamples)."""
    import numpy as np

    cluster_of: dict[tuple[str, str], int] = {}
    ids = [cluster_of.setdefault((r, t), len(cluster_of)) for r, t in zip(rules, templates, strict=True)]
    n_clusters = len(cluster_of)
    counts = np.bincount(ids, minlength=n_clusters).astype(float)
    sums = [np.bincount(ids, weights=np.asarray(c, dtype=float), minlength=n_clusters) for c in columns]
    by_rule: dict[str, list[int]] = {}
    for (rule, _), c in cluster_of.items():
        by_rule.setdefault(rule, []).append(c)
    rng = np.random.default_rng(seed)
    rule_names = sorted(by_rule)
    drawn = rng.multinomial(len(rule_names), [1 / len(rule_names)] * len(rule_names), size=b)  # (b, rules)
    weights = np.zeros((b, n_clusters))
    for j, rule in enumerate(rule_names):
        members = by_rule[rule]
        # each draw of the rule resamples its templates: the sum of those draws is one multinomial
        weights[:, members] = rng.multinomial(drawn[:, j] * len(members), [1 / len(members)] * len(members))
    total = weights @ counts
    return [(weights @ s) / total for s in sums]


def _clusters(rows: list[dict], probes_by_id: dict[str, dict]) -> tuple[list[str], list[str]]:
    rules = [probes_by_id[r["id"]]["rule"] if r["id"] in probes_by_id else r["id"] for r in rows]
    return rules, [template_of(r["id"]) for r in rows]


def _rate_interval(values: list[float], boot: tuple[float, float], templates: int) -> tuple[tuple[float, float], str]:
    """The interval of a rate: the bootstrap's, or Wilson's over templates where every pair agrees."""
    k = sum(values)
    if k == 0 or k == len(values):
        return wilson(0 if k == 0 else templates, templates), "wilson"
    return boot, "cluster_bootstrap"


def _nan() -> tuple[float, float]:
    return (float("nan"), float("nan"))


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def _group(rows: list[dict], probes_by_id: dict[str, dict], b: int, seed: int) -> dict:
    values = [pair_values(r) for r in rows]
    cols = {k: [v[k] for v in values] for k in ("win", "win_per_token", "margin", "margin_per_token")}
    rules, templates = _clusters(rows, probes_by_id)
    n_templates = len(set(zip(rules, templates, strict=True)))
    boot = ([_interval(m) for m in cluster_resample_means(list(cols.values()), rules, templates, b, seed)]
            if rows else [_nan()] * 4)
    (lo, hi), method = _rate_interval(cols["win"], boot[0], n_templates) if rows else (_nan(), "none")
    (nlo, nhi), nmethod = _rate_interval(cols["win_per_token"], boot[1], n_templates) if rows else (_nan(), "none")
    return {"pairs": len(rows), "templates": n_templates, "rules": len(set(rules)),
            "length_matched": sum(r["p4_tokens"] == r["py3_tokens"] for r in rows),
            "wins": int(sum(cols["win"])), "accuracy": _mean(cols["win"]), "ci_low": lo, "ci_high": hi,
            "ci_method": method,
            "wins_per_token": int(sum(cols["win_per_token"])), "accuracy_per_token": _mean(cols["win_per_token"]),
            "per_token_ci_low": nlo, "per_token_ci_high": nhi, "per_token_ci_method": nmethod,
            "mean_margin": _mean(cols["margin"]), "margin_ci_low": boot[2][0], "margin_ci_high": boot[2][1],
            "mean_margin_per_token": _mean(cols["margin_per_token"]),
            "margin_per_token_ci_low": boot[3][0], "margin_per_token_ci_high": boot[3][1]}


def _groups(probes: Iterable[dict]) -> dict[str, set[str]]:
    by: dict[str, set[str]] = {"heldin": set(), "heldout": set(), "syntax": set(), "semantic": set()}
    for p in probes:
        by["heldout" if p["held_out"] else "heldin"].add(p["id"])
        by[p["kind"]].add(p["id"])
        by.setdefault(p["rule"], set()).add(p["id"])
    return by


def summarize(scores: list[dict], probes: list[dict], b: int = B_DEFAULT, seed: int = 0,
              exclude_rules: Iterable[str] = ()) -> dict:
    """Every group's accuracy and margins on both scores with cluster-bootstrap intervals.

    ``exclude_rules``: rules left out of the pooled groups (all, held-in, held-out, by kind) —
    rules whose probes cannot discriminate (py4.report.probes_report); they keep their own
    ``per_rule`` entry, and ``excluded_rules`` lists them."""
    excluded = set(exclude_rules)
    by_id = {p["id"]: p for p in probes}
    by = _groups(probes)
    pooled = {p["id"] for p in probes if p["rule"] not in excluded}
    pick = lambda ids: [s for s in scores if s["id"] in ids]
    rules = sorted(k for k in by if k.startswith("P4-"))
    return {"primary": PRIMARY, "excluded_rules": sorted(excluded),
            "all": _group(pick(pooled), by_id, b, seed),
            "heldin": _group(pick(by["heldin"] & pooled), by_id, b, seed),
            "heldout": _group(pick(by["heldout"] & pooled), by_id, b, seed),
            "by_kind": {k: _group(pick(by[k] & pooled), by_id, b, seed) for k in ("syntax", "semantic")},
            "per_rule": {r: _group(pick(by[r]), by_id, b, seed) for r in rules if pick(by[r])}}


def accuracy_text(summary: dict) -> str:
    """A `summarize` result in words: the per-token (primary) accuracy with its interval, held-in and
    held-out, then the summed one likewise (``py4 eval probes``' lines and a campaign run's stage
    log); a summary without the per-token score gives the summed one alone."""
    a, heldin, heldout = summary["all"], summary["heldin"], summary["heldout"]
    summed = (f"accuracy {a['accuracy']:.3f} [{a['ci_low']:.3f}, {a['ci_high']:.3f}], held-in "
              f"{heldin['accuracy']:.3f}, held-out {heldout['accuracy']:.3f}")
    if a.get("accuracy_per_token") is None:
        return summed
    return (f"per-token accuracy {a['accuracy_per_token']:.3f} [{a['per_token_ci_low']:.3f}, "
            f"{a['per_token_ci_high']:.3f}], held-in {heldin['accuracy_per_token']:.3f}, held-out "
            f"{heldout['accuracy_per_token']:.3f}; summed {summed}")


DIFF_COLUMNS = (("difference", "ci_low", "ci_high"),
                ("per_token_difference", "per_token_ci_low", "per_token_ci_high"),
                ("margin_difference", "margin_ci_low", "margin_ci_high"),
                ("per_token_margin_difference", "per_token_margin_ci_low", "per_token_margin_ci_high"))


def _difference(rows: list[tuple[dict, dict]], probes_by_id: dict[str, dict], b: int, seed: int) -> dict:
    a = [pair_values(x) for x, _ in rows]
    o = [pair_values(y) for _, y in rows]
    cols = [[x[k] - y[k] for x, y in zip(a, o, strict=True)]
            for k in ("win", "win_per_token", "margin", "margin_per_token")]
    rules, templates = _clusters([x for x, _ in rows], probes_by_id)
    boot = cluster_resample_means(cols, rules, templates, b, seed)
    out: dict = {"pairs": len(rows), "templates": len(set(zip(rules, templates, strict=True))),
                 "rules": len(set(rules))}
    for (name, lo_name, hi_name), col, means in zip(DIFF_COLUMNS, cols, boot, strict=True):
        out[name] = _mean(col)
        out[lo_name], out[hi_name] = _interval(means)
    return out


def paired_difference(a: list[dict], b_scores: list[dict], probes: list[dict], b: int = B_DEFAULT,
                      seed: int = 0, exclude_rules: Iterable[str] = ()) -> dict:
    """Model a minus model b on the same pairs, per group (all, held-in, held-out, syntax,
    semantic, each rule): accuracy and margin differences on both scores, with cluster-bootstrap
    intervals (the same resamples for both models). ``exclude_rules`` as in `summarize`."""
    excluded = set(exclude_rules)
    other = {s["id"]: s for s in b_scores}
    by_id = {p["id"]: p for p in probes}
    by = _groups(probes)
    pooled = {p["id"] for p in probes if p["rule"] not in excluded}
    out = {}
    for name, ids in [("all", {s["id"] for s in a}), *sorted(by.items())]:
        if not name.startswith("P4-"):
            ids = ids & pooled
        rows = [(s, other[s["id"]]) for s in a if s["id"] in ids and s["id"] in other]
        if rows:
            out[name] = _difference(rows, by_id, b, seed)
    return out
