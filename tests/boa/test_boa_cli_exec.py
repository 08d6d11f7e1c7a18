"""`boa run` and `boa certify` on the command line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from py4.boa.cli import app

runner = CliRunner()

PROBLEM = {"id": "t/add", "family": "t", "title": "add", "prompt": "add two ints", "entry_point": "add",
           "tests": [{"args": [1, 2], "expected": 3}, {"args": [2, 2], "expected": 4}]}


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "ok.p4").write_text('print("hello")\n')
    (tmp_path / "fail.p4").write_text("let xs = [1]\nprint(xs[3])\n")
    (tmp_path / "exit.p4").write_text("use sys\nsys.exit(4)\n")
    (tmp_path / "loop.p4").write_text("while true:\n    pass\n")
    (tmp_path / "bad.p4").write_text("def f():\n    pass\n")
    (tmp_path / "sol.p4").write_text("fn add(a: int, b: int) -> int:\n    return a + b\n")
    (tmp_path / "wrong.p4").write_text("fn add(a: int, b: int) -> int:\n    return a * b\n")
    (tmp_path / "p.json").write_text(json.dumps(PROBLEM))
    (tmp_path / "broken.json").write_text('{"id": "x"}')
    return tmp_path


def test_run_like_an_interpreter(files):
    result = runner.invoke(app, ["run", str(files / "ok.p4")])
    assert result.exit_code == 0 and result.stdout == "hello\n"


def test_run_runtime_error_exit_status(files):
    result = runner.invoke(app, ["run", str(files / "fail.p4")])
    assert result.exit_code == 1
    assert "IndexError" in result.stderr and "fail.p4" in result.stderr


def test_run_program_exit_status_and_timeout(files):
    assert runner.invoke(app, ["run", str(files / "exit.p4")]).exit_code == 4
    assert runner.invoke(app, ["run", str(files / "loop.p4"), "--timeout", "0.3"]).exit_code == 124


def test_run_json_shape(files):
    result = runner.invoke(app, ["run", str(files / "fail.p4"), "--json", "--diagnostics", "generic"])
    payload = json.loads(result.stdout)
    assert set(payload) == {"status", "exit_code", "stdout", "stderr", "diagnostics", "duration_s"}
    assert payload["status"] == "runtime_error" and payload["stderr"] == "IndexError at line 2\n"
    assert result.exit_code == 1


def test_run_output_cap_and_stdin(files):
    result = runner.invoke(app, ["run", "-", "--output-cap", "3", "--json"], input='print("abcdef")\n')
    payload = json.loads(result.stdout)
    assert payload["status"] == "output_limit" and payload["stdout"] == "abc…[output truncated]"


def test_run_compile_error(files):
    result = runner.invoke(app, ["run", str(files / "bad.p4"), "--json"])
    payload = json.loads(result.stdout)
    assert payload["status"] == "compile_error" and payload["exit_code"] is None
    assert payload["diagnostics"][0]["rule"] == "P4-01"


def test_run_missing_file(files):
    assert runner.invoke(app, ["run", str(files / "nope.p4")]).exit_code == 2


def test_certify_json_and_exit_codes(files):
    ok = runner.invoke(app, ["certify", "--problem-file", str(files / "p.json"), "--solution",
                             str(files / "sol.p4"), "--json"])
    payload = json.loads(ok.stdout)
    assert ok.exit_code == 0 and payload["certified"] is True
    assert set(payload) >= {"certified", "compiled", "tests_passed", "tests_total", "warnings",
                            "diagnostics", "rules_exercised"}
    wrong = runner.invoke(app, ["certify", "--problem-file", str(files / "p.json"), "--solution",
                                str(files / "wrong.p4")])
    assert wrong.exit_code == 1 and "NOT certified" in wrong.stdout and "1/2" in wrong.stdout


def test_certify_solution_from_stdin(files):
    result = runner.invoke(app, ["certify", "--problem-file", str(files / "p.json"), "--solution", "-",
                                 "--json"], input="fn add(a: int, b: int) -> int:\n    return a + b\n")
    assert result.exit_code == 0 and json.loads(result.stdout)["tests_passed"] == 2


def test_certify_bad_problem_file(files):
    result = runner.invoke(app, ["certify", "--problem-file", str(files / "broken.json"), "--solution",
                                 str(files / "sol.p4")])
    assert result.exit_code == 2 and "broken.json" in result.stderr
