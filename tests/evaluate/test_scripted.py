"""Scripted policies give exact, known results on every split.

Default run: a seeded sample of each split; ``-m slow``: every problem of every split.
"""

from __future__ import annotations

import pytest

from py4.boa.certify import certify_many
from py4.episodes import EpisodeConfig, run_episodes, shared_executor
from py4.evaluate.harness import select_problems
from py4.evaluate.scripted import ScriptedPolicy
from py4.lang.migrate import CORE_RULES, migrate
from py4.problems.bank import load_bank

SPLITS = ("eft_pool", "grpo", "test_heldin", "test_heldout", "eft_large")
SAMPLE = 6


@pytest.fixture(scope="module")
def bank():
    return load_bank()


def problems_of(bank, split, whole):
    chosen = select_problems(bank, split, None if whole else SAMPLE, seed=7)
    assert chosen, f"split {split} is empty"
    return chosen


def outcomes(problems, name, config=None, samples=1):
    runs = run_episodes(problems, ScriptedPolicy(name), config or EpisodeConfig(), samples=samples)
    return runs


def check_split(bank, split, whole):
    problems = problems_of(bank, split, whole)
    gold = outcomes(problems, "gold", samples=2)
    assert [r.episode.outcome for r in gold] == ["certified"] * len(gold), split
    assert all(r.episode.reward == 1.0 for r in gold)

    py3 = outcomes(problems, "python3")
    assert {r.episode.outcome for r in py3} == {"uncertified"}, split

    core = outcomes(problems, "core-only")
    assert all(any(rule not in CORE_RULES for rule in p.rules) for p in problems)  # each targets a non-core rule
    not_zero = [r.problem.id for r in core if r.episode.outcome != "uncertified"]
    assert not_zero == [], f"core-only certified on {not_zero}"

    # migrated == the migrator's fidelity, measured independently of the episode machinery
    expected = certify_many([(p, migrate(p.reference_py3).source) for p in problems], executor=shared_executor())
    migrated = outcomes(problems, "migrated")
    assert [r.episode.outcome == "certified" for r in migrated] == [c.certified for c in expected]

    silent = outcomes(problems, "silent")
    assert {r.episode.outcome for r in silent} == {"no_submission"}
    assert all(r.episode.reward == pytest.approx(-0.10) and r.episode.calls == 0 for r in silent)

    tiny = outcomes(problems, "gold", EpisodeConfig(token_budget=8))
    assert {r.episode.outcome for r in tiny} == {"truncated"}
    assert all(r.episode.reward == pytest.approx(-0.25) and r.episode.certificate is None for r in tiny)


@pytest.mark.parametrize("split", SPLITS)
def test_scripted_policies_on_a_sample_of_each_split(bank, split):
    check_split(bank, split, whole=False)


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("split", SPLITS)
def test_scripted_policies_on_every_problem(bank, split):
    check_split(bank, split, whole=True)


def test_unknown_scripted_policy_lists_the_choices():
    with pytest.raises(ValueError, match="gold, python3, migrated, core-only, silent"):
        ScriptedPolicy("oracle")
