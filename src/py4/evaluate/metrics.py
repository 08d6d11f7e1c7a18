"""Evaluation metrics: certified rate, unbiased pass@k, outcomes, rewards, per-rule breakdowns.

pass@k is Chen et al.'s (2021) unbiased estimator: with n samples of a problem of which
c certified, pass@k = 1 - C(n-c, k) / C(n, k), averaged over problems.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Iterable

from py4.episodes.config import OUTCOMES


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one problem; raises ValueError unless 0 <= c <= n and 1 <= k <= n."""
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (got n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):  # C(n-c, k)/C(n, k) as a stable product
        product *= 1.0 - k / i
    return 1.0 - product


def ks_for(samples: int) -> list[int]:
    """The k reported for ``samples`` per problem: 1, 2, 4, … up to and including ``samples``."""
    ks, k = [], 1
    while k < samples:
        ks.append(k)
        k *= 2
    return ks + [samples]


def summarize(records: Iterable[dict[str, Any]], samples: int) -> dict[str, Any]:
    """Metrics of a set of episode records (``EpisodeRun.record()`` dicts).

    Returns ``certified_rate``, ``pass_at_k`` ({k: value}), ``outcomes`` (count of every
    outcome), ``mean_reward``, ``problems``, ``episodes``, ``malformed_calls``,
    ``mean_tool_calls`` and ``per_rule`` ({rule: {problems, episodes, certified_rate,
    pass_at_k}}) — a problem counts for each rule it targets.
    """
    records = list(records)
    by_problem: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        by_problem[r["problem_id"]].append(r)
    outcomes = {o: 0 for o in OUTCOMES}
    for r in records:
        outcomes[r["outcome"]] += 1
    episodes = len(records)
    summary = {
        "problems": len(by_problem),
        "episodes": episodes,
        "certified_rate": outcomes["certified"] / episodes if episodes else 0.0,
        "pass_at_k": _pass_at_ks(by_problem, samples),
        "outcomes": outcomes,
        "mean_reward": sum(r["reward"] for r in records) / episodes if episodes else 0.0,
        "malformed_calls": sum(r["malformed_calls"] for r in records),
        "mean_tool_calls": sum(r["tool_calls"] for r in records) / episodes if episodes else 0.0,
    }
    per_rule: dict[str, dict[str, list[dict]]] = defaultdict(dict)
    for pid, rs in by_problem.items():
        for rule in rs[0]["rules"]:
            per_rule[rule][pid] = rs
    summary["per_rule"] = {rule: _rule_summary(problems, samples) for rule, problems in sorted(per_rule.items())}
    return summary


def _pass_at_ks(by_problem: dict[str, list[dict]], samples: int) -> dict[str, float]:
    if not by_problem:
        return {str(k): 0.0 for k in ks_for(samples)}
    out = {}
    for k in ks_for(samples):
        values = [pass_at_k(len(rs), sum(r["outcome"] == "certified" for r in rs), k) for rs in by_problem.values()]
        out[str(k)] = sum(values) / len(values)
    return out


def _rule_summary(problems: dict[str, list[dict]], samples: int) -> dict[str, Any]:
    episodes = [r for rs in problems.values() for r in rs]
    certified = sum(r["outcome"] == "certified" for r in episodes)
    return {"problems": len(problems), "episodes": len(episodes),
            "certified_rate": certified / len(episodes) if episodes else 0.0,
            "pass_at_k": _pass_at_ks(problems, samples)}


def markdown_table(results: dict[str, Any]) -> str:
    """results.md: one row per split, then one row per rule and split."""
    splits = results["splits"]
    ks = next(iter(splits.values()))["pass_at_k"].keys() if splits else []
    lines = [f"# Evaluation: policy `{results['policy']['name']}`", "",
             f"bank {results['bank']['version']} (`{results['bank']['sha256'][:12]}`), "
             f"Boa {results['boa']['version']}, "
             f"samples {results['sampling']['samples']}, temperature {results['sampling']['temperature']}, "
             f"thinking {'on' if results['episode']['enable_thinking'] else 'off'}, "
             f"diagnostics {results['episode']['diagnostics']}", "",
             "| split | problems | episodes | certified rate | " + " | ".join(f"pass@{k}" for k in ks)
             + " | " + " | ".join(OUTCOMES) + " | mean reward | malformed calls |",
             "|---|---:|---:|---:|" + "---:|" * len(ks) + "---:|" * len(OUTCOMES) + "---:|---:|"]
    for name, s in splits.items():
        lines.append(f"| {name} | {s['problems']} | {s['episodes']} | {s['certified_rate']:.3f} | "
                     + " | ".join(f"{v:.3f}" for v in s["pass_at_k"].values()) + " | "
                     + " | ".join(str(s["outcomes"][o]) for o in OUTCOMES)
                     + f" | {s['mean_reward']:+.3f} | {s['malformed_calls']} |")
    lines += ["", "## Per rule", "", "| split | rule | problems | episodes | certified | pass@1 |",
              "|---|---|---:|---:|---:|---:|"]
    for name, s in splits.items():
        for rule, r in s["per_rule"].items():
            lines.append(f"| {name} | {rule} | {r['problems']} | {r['episodes']} | {r['certified_rate']:.3f} | "
                         f"{r['pass_at_k']['1']:.3f} |")
    return "\n".join(lines) + "\n"


def split_summaries(results: dict[str, Any]) -> list[str]:
    """One line per split of an evaluation's results (``py4 eval``'s output; a campaign's stage log)."""
    return [f"{name}: certified {s['certified_rate']:.3f}, pass@k {json.dumps(s['pass_at_k'])}, "
            f"outcomes {json.dumps(s['outcomes'])}, mean reward {s['mean_reward']:+.3f}"
            for name, s in results["splits"].items()]
