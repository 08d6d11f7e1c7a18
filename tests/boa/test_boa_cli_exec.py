"""`boa run` and `boa certify` on the command line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from problems_for_tests import Case, Task
from py4.boa_cli import app  # the `boa` console script: every command, certify with the bank's reader

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
    result = runner.invoke(app, ["run", str(files / "nope.p4")])
    assert result.exit_code == 2
    assert result.stderr == f"error: cannot read program {str(files / 'nope.p4')!r}: No such file or directory\n"


def _sandbox_cannot_start(monkeypatch):
    import py4.boa.executor
    from py4.boa.executor import WorkerError

    def refuse(**kwargs):
        raise WorkerError("seccomp is not available")

    monkeypatch.setattr(py4.boa.executor, "Executor", refuse)


def test_run_and_certify_say_when_the_sandbox_cannot_start(files, monkeypatch):
    _sandbox_cannot_start(monkeypatch)
    for args in (["run", str(files / "ok.p4")],
                 ["certify", "--problem-file", str(files / "p.json"), "--solution", str(files / "sol.p4")]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2
        assert result.stderr == "error: cannot start the sandbox: seccomp is not available\n"


def test_a_bug_in_boa_run_keeps_its_traceback(files, monkeypatch):
    """Only user errors (py4.errors.Py4Error) become one line and exit 2; anything else is a bug."""
    import py4.boa.executor

    def bug(**kwargs):
        raise RuntimeError("a bug in starting the executor")

    monkeypatch.setattr(py4.boa.executor, "Executor", bug)
    result = runner.invoke(app, ["run", str(files / "ok.p4")])
    assert isinstance(result.exception, RuntimeError) and result.exit_code == 1
    assert "error:" not in result.output


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
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {files / 'broken.json'}: invalid problem: ")
    assert result.stderr.count("\n") == 1  # pydantic's report, its first lines joined on one


def test_certify_unreadable_input_is_named(files):
    no_problem = runner.invoke(app, ["certify", "--problem-file", str(files / "nope.json"), "--solution",
                                     str(files / "sol.p4")])
    assert no_problem.exit_code == 2
    assert no_problem.stderr == (f"error: cannot read problem file {str(files / 'nope.json')!r}: "
                                 "No such file or directory\n")
    no_solution = runner.invoke(app, ["certify", "--problem-file", str(files / "p.json"), "--solution",
                                      str(files / "nope.p4")])
    assert no_solution.exit_code == 2
    assert no_solution.stderr == f"error: cannot read solution {str(files / 'nope.p4')!r}: No such file or directory\n"
    both_stdin = runner.invoke(app, ["certify", "--problem-file", "-", "--solution", "-"], input="{}")
    assert both_stdin.exit_code == 2
    assert both_stdin.stderr == "error: --problem-file and --solution cannot both be - (stdin)\n"


def test_a_bug_in_boa_certify_keeps_its_traceback(files, monkeypatch):
    import importlib

    certify_module = importlib.import_module("py4.boa.certify")  # py4.boa.certify, the attribute, is the function

    def bug(*args, **kwargs):
        raise RuntimeError("a bug in certification")

    monkeypatch.setattr(certify_module, "certify", bug)
    result = runner.invoke(app, ["certify", "--problem-file", str(files / "p.json"), "--solution",
                                 str(files / "sol.p4")])
    assert isinstance(result.exception, RuntimeError) and result.exit_code == 1
    assert "error:" not in result.output


def test_certify_reads_problems_with_the_reader_it_is_given(files):
    """Boa's own app knows no problem bank: `boa certify` reads problem files with the reader passed in."""
    from py4.boa.certify import CertifiableProblem
    from py4.boa.cli import app as boa_only, make_app

    read: list[bytes] = []

    def read_problem(raw: bytes) -> CertifiableProblem:
        read.append(raw)
        if raw.startswith(b"not"):
            raise ValueError("not a problem\nsecond line")
        return Task("plain/add", "add", [Case([1, 2], {}, 3), Case([5, 6], {}, 11)])

    (files / "task.txt").write_bytes(b"add two ints")
    (files / "nonsense.txt").write_bytes(b"not a problem")
    app_with_reader = make_app(read_problem)
    result = runner.invoke(app_with_reader, ["certify", "--problem-file", str(files / "task.txt"), "--solution",
                                             str(files / "sol.p4")])
    assert result.exit_code == 0 and "plain/add: certified: 2/2 tests passed" in result.stdout
    bad = runner.invoke(app_with_reader, ["certify", "--problem-file", str(files / "nonsense.txt"), "--solution",
                                          str(files / "sol.p4")])
    assert bad.exit_code == 2
    assert bad.stderr == f"error: {files / 'nonsense.txt'}: invalid problem: not a problem; second line\n"
    assert read == [b"add two ints", b"not a problem"]
    assert runner.invoke(boa_only, ["certify", "--help"]).exit_code == 2  # no reader, no certify
