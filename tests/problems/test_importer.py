"""Import of MBPP / HumanEval records from local files in those formats."""

import ast
import json
from pathlib import Path

import pytest

from py4.problems.importer import ProblemImportError, import_file, parse_assert

FIXTURES = Path(__file__).parent / "fixtures"


def test_parse_assert_accepts_literal_calls_only():
    name, call, expected = parse_assert(ast.parse("assert f(1, [2, 3], k='x') == (4, 5)").body[0], None)
    assert (name, call.args, call.kwargs, expected) == ("f", [1, [2, 3]], {"k": "x"}, [4, 5])
    assert "literal" in parse_assert(ast.parse("assert f(y) == 1").body[0], None)
    assert "single ==" in parse_assert(ast.parse("assert abs(f(1) - 2) < 1e-6").body[0], None)
    assert "not candidate" in parse_assert(ast.parse("assert g(1) == 1").body[0], "candidate")


def test_import_mbpp_keeps_discriminative_problems(tmp_path):
    out = tmp_path / "imported.jsonl"
    result = import_file(FIXTURES / "mbpp_small.jsonl", "mbpp", out, workers=1)
    assert result["read"] == 5
    assert set(result["ids"]) == {"mbpp/11", "mbpp/900"}
    reasons = {s["task_id"]: s["reason"] for s in result["skipped"]}
    assert reasons["17"].startswith("not discriminative")
    assert reasons["901"].startswith("reference fails")
    assert reasons["2"].startswith("no structured test")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    last = next(r for r in rows if r["id"] == "mbpp/900")
    assert last["rules"] == ["P4-14"] and last["split"] == "imported"
    assert last["provenance"]["task_id"] == "900" and last["tests"][0]["expected"] == 3


def test_import_humaneval_uses_check_asserts(tmp_path):
    result = import_file(FIXTURES / "humaneval_small.jsonl", "humaneval", tmp_path / "he.jsonl", workers=1)
    assert "humaneval/HumanEval_0" in result["ids"]
    reasons = {s["task_id"]: s["reason"] for s in result["skipped"]}
    assert "single ==" in reasons["HumanEval/4"]


def test_import_rejects_bad_input(tmp_path):
    with pytest.raises(ProblemImportError, match="unknown format"):
        import_file(FIXTURES / "mbpp_small.jsonl", "apps", tmp_path / "x.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": 1}\n')
    with pytest.raises(ProblemImportError, match="lacks"):
        import_file(bad, "mbpp", tmp_path / "x.jsonl")


def test_import_cli_needs_exactly_one_source(tmp_path):
    from typer.testing import CliRunner

    from py4.problems.cli import app

    runner = CliRunner()
    assert runner.invoke(app, ["import", "--format", "mbpp"]).exit_code == 2
    ok = runner.invoke(app, ["import", str(FIXTURES / "mbpp_small.jsonl"), "--format", "mbpp",
                             "--out", str(tmp_path / "o.jsonl"), "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["kept"] == 2
