"""Bootstrap intervals cover the true rate on synthetic data; paired differences see a real gap."""

from __future__ import annotations

import random

import pytest

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


# --- clustered data: rules x templates x contexts, as the shipped probe set is laid out ---

def _clustered(rule_wins: list[list[bool]], contexts: int = 3) -> tuple[list[dict], list[dict]]:
    """Probes and scores where every context of template t of rule r wins iff rule_wins[r][t]
    (on both scores): pairs as correlated within a template as they can be."""
    probes, scores = [], []
    for r, templates in enumerate(rule_wins):
        rule = f"P4-{r + 1:02d}"
        for t, win in enumerate(templates):
            for c in range(contexts):
                pid = f"{rule}/{t:02d}/c{c}"
                probes.append({"id": pid, "rule": rule, "held_out": r % 2 == 1, "kind": "syntax"})
                scores.append({"id": pid, "p4_logprob": -1.0 if win else -3.0, "py3_logprob": -2.0,
                               "p4_tokens": 1, "py3_tokens": 1})
    return probes, scores


def test_interval_widens_with_the_rules_a_pair_bootstrap_ignores():
    # 10 rules of 14 templates x 3 contexts: five rules win every pair, five lose every pair. The
    # mean is 0.5, but it rests on 10 rules: its standard error is sqrt(0.25 / 10) = 0.16, so a 95%
    # interval spans about +-0.3. Resampling the 420 pairs as if independent gives +-0.05.
    probes, scores = _clustered([[r < 5] * 14 for r in range(10)])
    s = summarize(scores, probes, b=1000)["all"]
    assert s["accuracy"] == 0.5 and s["ci_method"] == "cluster_bootstrap"
    assert s["ci_low"] < 0.3 and s["ci_high"] > 0.7
    assert s["per_token_ci_low"] < 0.3 and s["per_token_ci_high"] > 0.7
    # the pair bootstrap on the same values is the narrow interval this test refuses
    lo, hi = bootstrap_ci([float(x["p4_logprob"] > x["py3_logprob"]) for x in scores], b=1000)
    assert lo > 0.4 and hi < 0.6


def test_one_rules_interval_resamples_its_templates_not_its_pairs():
    # One rule, 14 templates x 3 contexts, 7 templates won: 0.5 +- 1.96 sqrt(0.25 / 14) = +-0.26;
    # resampling the 42 pairs gives +-0.15.
    probes, scores = _clustered([[t < 7 for t in range(14)]])
    g = summarize(scores, probes, b=1000)["per_rule"]["P4-01"]
    assert g["pairs"] == 42 and g["templates"] == 14
    assert g["ci_high"] - g["ci_low"] > 0.4


def test_cluster_interval_covers_the_mean_of_the_rules_about_95_percent_of_the_time():
    # 30 rules, each mostly won or mostly lost (0.05 or 0.95 per template, by a fair coin): the
    # population mean is 0.5. Deterministic seeds; the pair bootstrap covers 0.5 far less often.
    import numpy as np

    from py4.probes.stats import cluster_resample_means

    covered = pair_covered = 0
    for trial in range(100):
        rng = np.random.default_rng(trial)
        rates = rng.choice([0.05, 0.95], size=30)
        wins = [[bool(rng.random() < p) for _ in range(14)] for p in rates]
        probes, scores = _clustered(wins)
        values = [float(x["p4_logprob"] > x["py3_logprob"]) for x in scores]
        rules = [p["rule"] for p in probes]
        templates = [p["id"].rsplit("/", 1)[0] for p in probes]
        lo, hi = np.quantile(cluster_resample_means([values], rules, templates, 400, trial)[0], [0.025, 0.975])
        covered += lo <= 0.5 <= hi
        plo, phi = bootstrap_ci(values, b=400, seed=trial)
        pair_covered += plo <= 0.5 <= phi
    assert covered >= 88
    assert pair_covered < 60


@pytest.mark.parametrize(("won", "expect_low", "expect_high"), [(False, 0.0, None), (True, None, 1.0)])
def test_a_rule_at_none_or_all_of_its_pairs_has_a_wilson_interval_over_its_templates(won, expect_low, expect_high):
    from py4.binomial import wilson

    probes, scores = _clustered([[won] * 14])
    g = summarize(scores, probes, b=200)["per_rule"]["P4-01"]
    assert g["accuracy"] == float(won) and g["ci_method"] == "wilson" and g["per_token_ci_method"] == "wilson"
    assert (g["ci_low"], g["ci_high"]) == wilson(14 if won else 0, 14)
    assert g["ci_high"] - g["ci_low"] > 0.2  # not [0.000, 0.000]: 0/42 pairs is not an exact zero
    if expect_low is not None:
        assert g["ci_low"] == expect_low
    if expect_high is not None:
        assert g["ci_high"] == expect_high


def test_per_token_score_and_margins_beside_the_summed_ones():
    # The Python-4 span is one token longer: summed it loses (-3 < -2), per token it wins (-1.5 > -2).
    probes = [{"id": f"P4-01/{t:02d}/bare", "rule": "P4-01", "held_out": False, "kind": "syntax"} for t in range(6)]
    scores = [{"id": p["id"], "p4_logprob": -3.0, "py3_logprob": -2.0, "p4_tokens": 2, "py3_tokens": 1}
              for p in probes]
    s = summarize(scores, probes, b=100)
    assert s["primary"] == "per_token"
    g = s["all"]
    assert g["accuracy"] == 0.0 and g["accuracy_per_token"] == 1.0 and g["length_matched"] == 0
    assert g["mean_margin"] == -1.0 and g["mean_margin_per_token"] == 0.5
    base = [{**x, "p4_logprob": -4.0} for x in scores]  # margin -2 summed, -2 + 2 = 0 per token
    d = paired_difference(scores, base, probes, b=100)["P4-01"]
    assert d["margin_difference"] == 1.0 and d["per_token_margin_difference"] == 0.5
    assert d["per_token_margin_ci_low"] == d["per_token_margin_ci_high"] == 0.5


def test_excluded_rules_leave_the_pooled_groups_and_keep_their_own_row():
    probes, scores = _clustered([[True] * 4, [False] * 4, [t < 2 for t in range(4)]])
    s = summarize(scores, probes, b=100, exclude_rules=["P4-01", "P4-02"])
    assert s["excluded_rules"] == ["P4-01", "P4-02"]
    assert s["all"]["pairs"] == 12 and s["all"]["accuracy"] == 0.5
    assert set(s["per_rule"]) == {"P4-01", "P4-02", "P4-03"}
    d = paired_difference(scores, scores, probes, b=100, exclude_rules=["P4-01"])
    assert d["all"]["pairs"] == 24 and d["P4-01"]["pairs"] == 12


def test_accuracy_text_puts_the_primary_score_first():
    from py4.probes.stats import accuracy_text

    probes, scores = _clustered([[True, False]] * 2)
    text = accuracy_text(summarize(scores, probes, b=50))
    assert text.startswith("per-token accuracy 0.500 [") and "; summed accuracy 0.500 [" in text
