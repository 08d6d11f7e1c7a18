"""`boa check`, `boa translate` and `boa migrate` through the `boa` console script: a user error is one
line, ``error: …``, exit 2 (py4.errors.cli_errors); a bug keeps its traceback.

`boa run` and `boa certify` are checked the same way in test_boa_cli_exec.py.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from py4.boa_cli import app  # the `boa` console script

runner = CliRunner()


@pytest.mark.parametrize("command", ["check", "translate", "migrate"])
def test_an_unreadable_file_is_named(tmp_path, command):
    missing = str(tmp_path / "nope.p4")
    result = runner.invoke(app, [command, missing])
    assert result.exit_code == 2
    assert result.stderr == f"error: cannot read {missing!r}: No such file or directory\n"


def test_migrate_names_a_file_that_is_not_utf8(tmp_path):
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"print('caf\xe9')\n")
    result = runner.invoke(app, ["migrate", str(latin)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {latin} is not UTF-8 text: 'utf-8' codec can't decode byte 0xe9")
    assert result.stderr.count("\n") == 1


def test_migrate_names_an_unknown_rule(tmp_path):
    program = tmp_path / "p.py"
    program.write_text("print(1)\n")
    result = runner.invoke(app, ["migrate", str(program), "--only-rules", "P4-77"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "P4-77" in result.stderr and result.stderr.count("\n") == 1


def test_migrate_names_an_output_it_cannot_write(tmp_path):
    program = tmp_path / "p.py"
    program.write_text("print(1)\n")
    output = str(tmp_path / "no-such-folder" / "p.p4")
    result = runner.invoke(app, ["migrate", str(program), "-o", output])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: cannot write {output!r}: [Errno 2] No such file or directory")


def _bug(*args, **kwargs):
    raise RuntimeError("a bug, not the user's input")


@pytest.mark.parametrize("command", ["check", "translate"])
def test_a_bug_in_boa_check_keeps_its_traceback(tmp_path, monkeypatch, command):
    import py4.boa.cli_lang

    monkeypatch.setattr(py4.boa.cli_lang, "compile_py4", _bug)
    program = tmp_path / "p.p4"
    program.write_text('print("hi")\n')
    result = runner.invoke(app, [command, str(program)])
    assert isinstance(result.exception, RuntimeError) and result.exit_code == 1
    assert "error:" not in result.output


def test_a_bug_in_boa_migrate_keeps_its_traceback(tmp_path, monkeypatch):
    import py4.lang.migrate

    monkeypatch.setattr(py4.lang.migrate, "migrate", _bug)  # cli_migrate imports it when the command runs
    program = tmp_path / "p.py"
    program.write_text("print(1)\n")
    result = runner.invoke(app, ["migrate", str(program)])
    assert isinstance(result.exception, RuntimeError) and result.exit_code == 1
    assert "error:" not in result.output
