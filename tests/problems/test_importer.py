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


def _mbpp(tmp_path, records):
    path = tmp_path / "mbpp.jsonl"
    path.write_text("".join(json.dumps({"task_id": i, "text": f"Task {i}.", "test_setup_code": "",
                                        "challenge_test_list": [], **r}) + "\n"
                            for i, r in enumerate(records, 1)))
    return import_file(path, "mbpp", tmp_path / "out.jsonl", workers=1)


# References that need their tuple inputs to stay tuples: concatenated, hashed, type-checked.
TUPLE_REFERENCES = [
    {"code": "def add_last(t, x):\n    return t[-1:] + (x,)",
     "test_list": ["assert add_last((1, 2), 3) == (2, 3)", "assert add_last((5,), 1) == (5, 1)"]},
    {"code": "def distinct_pairs(pairs):\n    seen = {}\n    for p in pairs:\n        seen[p] = 1\n"
             "    return len(seen) - 1 + pairs[-1][0]",
     "test_list": ["assert distinct_pairs([(1, 2), (1, 2), (3, 4)]) == 4"]},
    {"code": "def depth(t):\n    if not isinstance(t, tuple):\n        return 0\n"
             "    return 1 + max([depth(x) for x in t[-2:]] + [0])",
     "test_list": ["assert depth((1, (2, (3,)))) == 3"]},
]


def test_tuple_inputs_stay_tuples_for_the_reference_and_for_certification(tmp_path):
    result = _mbpp(tmp_path, TUPLE_REFERENCES)
    assert result["skipped"] == [] and result["kept"] == 3
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert rows[0]["tests"][0]["args"] == [{"__tuple__": [1, 2]}, 3]


def test_a_reference_returning_1_for_true_fails_its_test_as_certification_would(tmp_path):
    result = _mbpp(tmp_path, [{"code": "def is_even(n):\n    return 1 if n % 2 == 0 else 0",
                               "test_list": ["assert is_even(4) == True", "assert is_even(3) == False"]}])
    assert [s["reason"] for s in result["skipped"]] == ["reference fails its own test"]


@pytest.mark.parametrize("name", ["count", "sum", "first", "last"])
def test_an_entry_point_named_like_a_builtin_is_renamed_with_the_function(tmp_path, name):
    code = f"def {name}(xs):\n    return len([i for i in range(len(xs)) if xs[i] > 0])"
    result = _mbpp(tmp_path, [{"code": code, "test_list": [f"assert {name}([1, -2, 3]) == 2"]}])
    assert result["kept"] == 1, result["skipped"]
    row = json.loads((tmp_path / "out.jsonl").read_text())
    assert row["entry_point"] == f"{name}_" and f"fn {name}_(" in row["gold"]
    assert row["signature"].startswith(f"fn {name}_(")


def test_a_gold_that_needs_a_migration_helper_is_marked_and_no_eft_target(tmp_path):
    import random

    from py4.problems.schema import Problem
    from py4.train.eft_data import select_gold

    result = _mbpp(tmp_path, [{"code": "def halves(xs):\n    return [x // 2 for x in xs[1:]]",
                               "test_list": ["assert halves([4, -3, 9]) == [-2, 4]"]}])
    assert result["kept"] == 1, result["skipped"]
    problem = Problem.model_validate(json.loads((tmp_path / "out.jsonl").read_text()))
    assert "py3_floordiv" in problem.gold and problem.provenance["gold_idiomatic"] is False
    rows, skipped = select_gold([problem], 0, set(), True, random.Random(0))
    assert rows == [] and skipped["not_idiomatic"] == 1
