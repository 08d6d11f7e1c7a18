"""The shipped bank: hash, schema, coverage, determinism, CLI shapes."""

import gzip
import json
import shutil

import pytest
from typer.testing import CliRunner

from py4.problems.bank import BankError, bank_paths, load_bank, load_manifest
from py4.problems.build import BuildConfig, build_bank, write_bank
from py4.problems.cli import app
from py4.problems.schema import CANARY

runner = CliRunner()


@pytest.fixture(scope="module")
def bank():
    return load_bank()


def test_shipped_bank_meets_the_issue_minima(bank):
    per_split = {}
    for p in bank:
        per_split[p.split] = per_split.get(p.split, 0) + 1
    assert len(bank) >= 3000
    assert per_split["eft_pool"] >= 1100 and per_split["grpo"] == 512
    assert per_split["test_heldin"] >= 250 and per_split["test_heldout"] >= 250
    assert per_split["eft_large"] >= 1843
    per_rule = {}
    for p in bank:
        for r in p.rules:
            per_rule[r] = per_rule.get(r, 0) + 1
    assert all(per_rule.get(f"P4-{n:02d}", 0) >= 40 for n in range(6, 31)), per_rule
    assert len({p.id for p in bank}) == len(bank)
    assert all(p.canary == CANARY and "py3_" not in p.gold for p in bank)


def test_held_out_problems_target_a_held_out_rule(bank):
    held_out = set(load_manifest()["config"]["held_out"])
    assert all(held_out & set(p.rules) for p in bank if p.split == "test_heldout")


def test_tampered_bank_is_rejected(tmp_path):
    src, manifest = bank_paths()
    shutil.copy(manifest, tmp_path / manifest.name)
    raw = gzip.decompress(src.read_bytes())
    first_id = json.loads(raw.split(b"\n", 1)[0])["id"].encode()
    raw = raw.replace(first_id, b"py4/99999", 1)
    (tmp_path / src.name).write_bytes(gzip.compress(raw))
    with pytest.raises(BankError, match="content hash"):
        load_bank(data_dir=tmp_path)


def test_build_is_byte_identical(tmp_path):
    cfg = BuildConfig(families=("series_sum", "frequent_keys", "round_each", "clean_lines"), per_family=10,
                      grpo=5, eft_pool=5, test_min=5, test_cap_per_family=5)
    a, b = tmp_path / "a", tmp_path / "b"
    write_bank(build_bank(cfg), cfg, a)
    write_bank(build_bank(cfg), cfg, b)
    for name in ("bank-v1.jsonl.gz", "bank-v1.manifest.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
    assert len(load_bank(data_dir=a)) > 0


@pytest.mark.slow
def test_rebuild_reproduces_the_shipped_bank(tmp_path):
    cfg = BuildConfig()
    write_bank(build_bank(cfg), cfg, tmp_path)
    assert (tmp_path / "bank-v1.jsonl.gz").read_bytes() == bank_paths()[0].read_bytes()


def test_cli_stats_list_show_json(bank):
    stats = json.loads(runner.invoke(app, ["stats", "--json"]).stdout)
    assert set(stats) == {"problems", "families", "per_split", "per_rule", "per_family"}
    assert stats["problems"] == len(bank)
    listed = json.loads(runner.invoke(app, ["list", "--json", "--split", "test_heldout"]).stdout)
    assert len(listed) == stats["per_split"]["test_heldout"] and listed[0]["split"] == "test_heldout"
    one = json.loads(runner.invoke(app, ["show", bank[0].id, "--json"]).stdout)
    assert one["id"] == bank[0].id and one["gold"] == bank[0].gold
    bad = runner.invoke(app, ["show", "py4/0000001"])
    assert bad.exit_code == 2


def test_cli_list_rejects_unknown_split():
    assert runner.invoke(app, ["list", "--split", "nope"]).exit_code == 2


def test_cli_build_into_a_run_dir(tmp_path):
    result = runner.invoke(app, ["build", "families=[series_sum,clean_lines]", "per_family=6", "grpo=2", "eft_pool=2",
                                 "test_min=2", "test_cap_per_family=3",
                                 "--data-dir", str(tmp_path / "bank"), "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    assert manifest["status"] == "done" and "bank" in manifest["outputs"]
    assert (tmp_path / "run" / "resolved_config.yaml").exists()
    stats = json.loads(runner.invoke(app, ["stats", "--json", "--data-dir", str(tmp_path / "bank")]).stdout)
    assert stats["families"] == 2


def test_cli_build_reports_bad_override(tmp_path):
    result = runner.invoke(app, ["build", "per_familly=3", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2


def test_cli_try_runs_the_gates_on_fresh_variants():
    ok = runner.invoke(app, ["try", "frequent_keys", "--count", "3", "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["problems"] == 3
    assert runner.invoke(app, ["try", "no_such_family"]).exit_code == 1
