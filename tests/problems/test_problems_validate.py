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


def test_validate_checks_the_probe_set_it_is_given(tmp_path):
    """`py4 problems validate --probes DIR` (a campaign's pinned probe set): a problem holding the text of
    one of its pairs fails the no_probe_text gate, while the shipped set finds nothing in the same family."""
    import json

    from typer.testing import CliRunner

    from py4.problems.cli import app
    from py4.problems.probe_set.build import load_probes, write_probes

    family = "prefix_sums"
    problem = next(p for p in load_bank() if p.family == family)
    pairs = [dict(p) for p in load_probes()]
    pairs[0] = {**pairs[0], "prefix": "", "p4": problem.prompt.strip(), "suffix": ""}  # a pair only the pinned set has
    write_probes(pairs, tmp_path / "pinned")

    def gates(*extra):
        result = CliRunner().invoke(app, ["validate", "--json", "--family", family, "--workers", "1",
                                          "--run-dir", str(tmp_path / "run"), *extra])
        failures = json.loads(result.stdout)["failures"]
        return result.exit_code, {(f["id"], f["gate"]) for f in failures}

    assert gates() == (0, set())
    code, failed = gates("--probes", str(tmp_path / "pinned"))
    assert code == 1 and (problem.id, "no_probe_text") in failed
    manifest = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    assert manifest["inputs"]["probes"]["path"] == str(tmp_path / "pinned")
