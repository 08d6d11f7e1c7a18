"""pass@k against brute force; summaries count what they say."""

from __future__ import annotations

import itertools
import math

import pytest

from py4.evaluate.metrics import ks_for, markdown_table, pass_at_k, summarize


def brute_pass_at_k(n: int, c: int, k: int) -> float:
    samples = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(samples[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n, c, k", [(n, c, k) for n in range(1, 8) for c in range(n + 1) for k in range(1, n + 1)])
def test_pass_at_k_is_the_unbiased_estimator(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(brute_pass_at_k(n, c, k))
    assert pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k))


def test_pass_at_k_rejects_impossible_counts():
    for n, c, k in [(3, 4, 1), (3, 1, 0), (3, 1, 4), (2, -1, 1)]:
        with pytest.raises(ValueError):
            pass_at_k(n, c, k)


def test_ks():
    assert ks_for(1) == [1]
    assert ks_for(8) == [1, 2, 4, 8]
    assert ks_for(5) == [1, 2, 4, 5]


def record(pid, outcome, reward, rules=("P4-12",), calls=1, malformed=0):
    return {"problem_id": pid, "outcome": outcome, "reward": reward, "rules": list(rules),
            "tool_calls": calls, "malformed_calls": malformed}


def test_summarize_counts_and_breaks_down_by_rule():
    records = [record("a", "certified", 1.0), record("a", "uncertified", 0.0),
               record("b", "no_submission", -0.1, rules=("P4-12", "P4-13"), calls=0),
               record("b", "truncated", -0.25, rules=("P4-12", "P4-13"), calls=17, malformed=2)]
    s = summarize(records, samples=2)
    assert s["problems"] == 2 and s["episodes"] == 4
    assert s["certified_rate"] == 0.25
    assert s["outcomes"] == {"certified": 1, "uncertified": 1, "no_submission": 1, "truncated": 1}
    assert s["mean_reward"] == pytest.approx((1.0 + 0 - 0.1 - 0.25) / 4)
    assert s["pass_at_k"] == {"1": pytest.approx(0.25), "2": pytest.approx(0.5)}
    assert s["malformed_calls"] == 2 and s["mean_tool_calls"] == pytest.approx((1 + 1 + 0 + 17) / 4)
    assert s["per_rule"]["P4-12"]["problems"] == 2 and s["per_rule"]["P4-12"]["certified_rate"] == 0.25
    assert s["per_rule"]["P4-13"] == {"problems": 1, "episodes": 2, "certified_rate": 0.0,
                                      "pass_at_k": {"1": 0.0, "2": 0.0}}


def test_markdown_table_has_a_row_per_split_and_rule():
    s = summarize([record("a", "certified", 1.0)], samples=1)
    results = {"policy": {"name": "gold"}, "bank": {"version": "v1", "sha256": "ab" * 32},
               "boa": {"version": "0.1.0"}, "sampling": {"samples": 1, "temperature": 0.7},
               "episode": {"enable_thinking": True, "diagnostics": "generic"}, "splits": {"test_heldin": s}}
    table = markdown_table(results)
    assert "| test_heldin | 1 | 1 | 1.000 | 1.000 |" in table
    assert "| test_heldin | P4-12 | 1 | 1 | 1.000 | 1.000 |" in table
