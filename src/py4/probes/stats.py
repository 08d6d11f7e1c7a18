"""Summaries of probe scores: accuracy, length-normalised accuracy, mean margin, bootstrap CIs.

``summarize(scores, probes)`` groups by rule, held-in / held-out and syntax / semantic
(``by_kind``); ``paired_difference(a, b, probes)`` is model a minus model b on the same pairs,
with a paired bootstrap interval (pairs resampled together, so the shared variance cancels).
"""

from __future__ import annotations

B_DEFAULT = 1000


def _wins(row: dict) -> tuple[float, float, float]:
    margin = row["p4_logprob"] - row["py3_logprob"]
    norm = row["p4_logprob"] / max(row["p4_tokens"], 1) - row["py3_logprob"] / max(row["py3_tokens"], 1)
    return float(margin > 0), float(norm > 0), margin


def _resample_means(columns: list[list[float]], b: int, seed: int):
    """Means of ``b`` bootstrap resamples of each column, the same resampled rows for all columns
    (numpy: a (b, n) index draw; 1,000 resamples of 1,260 pairs in milliseconds)."""
    import numpy as np

    n = len(columns[0])
    idx = np.random.default_rng(seed).integers(0, n, size=(b, n))
    return [np.asarray(c, dtype=float)[idx].mean(axis=1) for c in columns]


def _interval(means, level: float) -> tuple[float, float]:
    ordered = sorted(float(m) for m in means)
    b = len(ordered)
    return ordered[int((1 - level) / 2 * b)], ordered[min(b - 1, int((1 + level) / 2 * b))]


def bootstrap_ci(values: list[float], b: int = B_DEFAULT, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values``."""
    if not values:
        return (float("nan"), float("nan"))
    return _interval(_resample_means([values], b, seed)[0], level)


def _group(rows: list[dict], b: int, seed: int) -> dict:
    wins = [_wins(r) for r in rows]
    acc, norm, margin = ([w[i] for w in wins] for i in range(3))
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
    nan = (float("nan"), float("nan"))
    (lo, hi), (nlo, nhi), (mlo, mhi) = ([_interval(m, 0.95) for m in _resample_means([acc, norm, margin], b, seed)]
                                        if rows else [nan, nan, nan])
    return {"pairs": len(rows), "accuracy": mean(acc), "ci_low": lo, "ci_high": hi,
            "accuracy_per_token": mean(norm), "per_token_ci_low": nlo, "per_token_ci_high": nhi,
            "mean_margin": mean(margin), "margin_ci_low": mlo, "margin_ci_high": mhi}


def _groups(probes: list[dict]) -> dict[str, set[str]]:
    by: dict[str, set[str]] = {"heldin": set(), "heldout": set(), "syntax": set(), "semantic": set()}
    for p in probes:
        by["heldout" if p["held_out"] else "heldin"].add(p["id"])
        by[p["kind"]].add(p["id"])
        by.setdefault(p["rule"], set()).add(p["id"])
    return by


def summarize(scores: list[dict], probes: list[dict], b: int = B_DEFAULT, seed: int = 0) -> dict:
    by = _groups(probes)
    pick = lambda ids: [s for s in scores if s["id"] in ids]
    rules = sorted(k for k in by if k.startswith("P4-"))
    return {"all": _group(scores, b, seed),
            "heldin": _group(pick(by["heldin"]), b, seed), "heldout": _group(pick(by["heldout"]), b, seed),
            "by_kind": {k: _group(pick(by[k]), b, seed) for k in ("syntax", "semantic")},
            "per_rule": {r: _group(pick(by[r]), b, seed) for r in rules if pick(by[r])}}


def accuracy_text(summary: dict) -> str:
    """A `summarize` result in words: accuracy with its interval, held-in and held-out accuracy
    (``py4 eval probes``' lines and a campaign run's stage log)."""
    a = summary["all"]
    return (f"accuracy {a['accuracy']:.3f} [{a['ci_low']:.3f}, {a['ci_high']:.3f}], held-in "
            f"{summary['heldin']['accuracy']:.3f}, held-out {summary['heldout']['accuracy']:.3f}")


def paired_difference(a: list[dict], b_scores: list[dict], probes: list[dict], b: int = B_DEFAULT,
                      seed: int = 0) -> dict:
    """Accuracy and per-token accuracy of model a minus model b, per group, with paired bootstrap CIs."""
    other = {s["id"]: s for s in b_scores}
    by = _groups(probes)
    out = {}
    for name, ids in [("all", {s["id"] for s in a}), *sorted(by.items())]:
        rows = [(s, other[s["id"]]) for s in a if s["id"] in ids and s["id"] in other]
        diffs = [_wins(x)[0] - _wins(y)[0] for x, y in rows]
        ndiffs = [_wins(x)[1] - _wins(y)[1] for x, y in rows]
        if not rows:
            continue
        (lo, hi), (nlo, nhi) = (_interval(m, 0.95) for m in _resample_means([diffs, ndiffs], b, seed))
        out[name] = {"pairs": len(rows), "difference": sum(diffs) / len(rows), "ci_low": lo, "ci_high": hi,
                     "per_token_difference": sum(ndiffs) / len(rows), "per_token_ci_low": nlo,
                     "per_token_ci_high": nhi}
    return out
