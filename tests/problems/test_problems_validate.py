"""Validation gates on a sample of the shipped bank (whole bank: -m slow)."""

import random

import pytest

from py4.problems.bank import load_bank, load_manifest
from py4.problems.validate import validate_problems

HELD_OUT = load_manifest()["config"]["held_out"]


def _sample(n, seed=0):
    bank = load_bank()
    return sorted(random.Random(seed).sample(bank, n), key=lambda p: p.id)


def test_sample_passes_every_gate():
    report = validate_problems(_sample(25), held_out=HELD_OUT, workers=2, check_coverage=False)
    assert report.failures == [], report.failures[:3]
    assert report.migrator == "present"


def test_broken_problems_are_caught():
    good = _sample(3, seed=1)
    wrong_gold = good[0].model_copy(update={"gold": good[0].gold.replace("return ", "return 0 * 0 + ", 1) + "\n"})
    helper = good[1].model_copy(update={"gold": good[1].gold + "\nlet unused = py3_range(3)\n"})
    no_canary = good[2].model_copy(update={"canary": "x"})
    report = validate_problems([wrong_gold, helper, no_canary], held_out=HELD_OUT, workers=1, check_coverage=False)
    gates = {(f["id"], f["gate"]) for f in report.failures}
    assert (good[0].id, "gold_certifies") in gates
    assert (good[1].id, "gold_idiomatic") in gates
    assert (good[2].id, "canary") in gates


@pytest.mark.slow
def test_whole_bank_passes():
    report = validate_problems(load_bank(), held_out=HELD_OUT)
    assert report.failures == [], report.to_json()["failure_counts"]
