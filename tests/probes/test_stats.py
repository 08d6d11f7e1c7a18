"""Bootstrap intervals cover the true rate on synthetic data; paired differences see a real gap."""

from __future__ import annotations

import random

from py4.probes.stats import bootstrap_ci, paired_difference, summarize


def _probes(n):
    return [{"id": f"p{i}", "rule": "P4-01" if i % 2 else "P4-12", "held_out": i % 3 == 0,
             "kind": "syntax" if i % 2 else "semantic"} for i in range(n)]


def _scores(probes, rate, seed):
    rng = random.Random(seed)
    return [{"id": p["id"], "p4_logprob": -1.0 if rng.random() < rate else -3.0, "py3_logprob": -2.0,
             "p4_tokens": 1, "py3_tokens": 2} for p in probes]


def test_95_percent_interval_covers_the_true_rate_about_95_percent_of_the_time():
    covered = 0
    for trial in range(100):
        rng = random.Random(trial)
        values = [float(rng.random() < 0.3) for _ in range(80)]
        lo, hi = bootstrap_ci(values, b=300, seed=trial)
        covered += lo <= 0.3 <= hi
    assert 85 <= covered <= 100


def test_summary_groups_and_paired_difference():
    probes = _probes(400)
    strong, weak = _scores(probes, 0.9, 1), _scores(probes, 0.2, 2)
    s = summarize(strong, probes, b=200)
    assert s["all"]["pairs"] == 400 and set(s["per_rule"]) == {"P4-01", "P4-12"}
    assert s["heldin"]["pairs"] + s["heldout"]["pairs"] == 400
    assert s["by_kind"]["syntax"]["pairs"] == 200
    assert s["all"]["ci_low"] <= s["all"]["accuracy"] <= s["all"]["ci_high"]
    d = paired_difference(strong, weak, probes, b=200)
    assert d["all"]["ci_low"] > 0.5 and d["all"]["ci_low"] <= d["all"]["difference"] <= d["all"]["ci_high"]
    same = paired_difference(strong, strong, probes, b=200)
    assert same["all"]["difference"] == 0 and same["all"]["ci_low"] == same["all"]["ci_high"] == 0
