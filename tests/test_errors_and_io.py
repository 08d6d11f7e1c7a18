"""One error base (py4.errors) and one JSON/JSONL reader (py4.fileio) for the whole toolkit.

A user error prints one line and exits 2; a bug keeps its traceback (a ValueError caught around a
whole stage would hide one as a user's error).
"""

from __future__ import annotations

import gzip
import json

import pytest
from typer.testing import CliRunner

from py4.errors import FileFormatError, Py4Error
from py4.fileio import iter_jsonl, read_json_object


def test_jsonl_errors_name_file_line_and_field(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"id": "a", "text": "x"}\n\n{"id": 3, "text": "y"}\n', encoding="utf-8")
    rows = iter_jsonl(path, fields={"id": str, "text": str})
    assert next(rows) == (1, {"id": "a", "text": "x"})
    with pytest.raises(FileFormatError, match=rf"^{path}:3: field 'id': expected str, got int$"):
        next(rows)


@pytest.mark.parametrize(("line", "message"), [
    ("{oops", r":1: invalid JSON: Expecting property name enclosed in double quotes \(column 2\)"),
    ("[1, 2]", r":1: expected a JSON object, got list"),
])
def test_jsonl_malformed_lines(tmp_path, line, message):
    path = tmp_path / "rows.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(line + "\n")
    with pytest.raises(FileFormatError, match=message):
        list(iter_jsonl(path))


def test_json_object_reader_says_what_is_missing_and_keeps_the_callers_error_type(tmp_path):
    class CorpusLikeError(Py4Error, ValueError):
        pass

    with pytest.raises(CorpusLikeError, match=r"manifest\.json: no manifest here \(run X first\)$"):
        read_json_object(tmp_path / "manifest.json", missing="no manifest here (run X first)", error=CorpusLikeError)
    (tmp_path / "bad.json").write_text('{\n  "a": 1,\n}', encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"bad\.json:3: invalid JSON"):
        read_json_object(tmp_path / "bad.json")
    (tmp_path / "list.json").write_text(json.dumps([1]), encoding="utf-8")
    with pytest.raises(FileFormatError, match="expected a JSON object, got list"):
        read_json_object(tmp_path / "list.json")


def test_subsystem_user_errors_share_the_base():
    from py4.config import ConfigError
    from py4.corpus.output import CorpusError
    from py4.data.tokens import DataError
    from py4.problems.bank import BankError
    from py4.problems.importer import ProblemImportError

    for error in (ConfigError, CorpusError, DataError, BankError, ProblemImportError):
        assert issubclass(error, Py4Error) and issubclass(error, ValueError), error


def _mix_config(tmp_path):
    config = tmp_path / "mix.yaml"
    config.write_text("arm: control\ncontrol_target_tokens: 1000\n", encoding="utf-8")
    return config


def test_data_command_shows_a_user_error_as_one_line(tmp_path, monkeypatch):
    import py4.data.mix
    from py4.data.errors import DataError
    from py4.data.cli import app

    def user_error(config):
        raise DataError("corpus x: manifest.json is missing")

    monkeypatch.setattr(py4.data.mix, "run_mix", user_error)
    monkeypatch.setattr("py4.data.cli._load", lambda *a, **k: None)
    result = CliRunner().invoke(app, ["mix", "--config", str(_mix_config(tmp_path))])
    assert result.exit_code == 2
    assert result.output.strip() == "error: corpus x: manifest.json is missing"


def test_data_command_keeps_a_bugs_traceback(tmp_path, monkeypatch):
    """A ValueError that is not a user error is a bug: it must not become 'error: …' and exit 2."""
    import py4.data.mix
    from py4.data.cli import app

    def bug(config):
        raise ValueError("operands could not be broadcast together")

    monkeypatch.setattr(py4.data.mix, "run_mix", bug)
    monkeypatch.setattr("py4.data.cli._load", lambda *a, **k: None)
    result = CliRunner().invoke(app, ["mix", "--config", str(_mix_config(tmp_path))])
    assert isinstance(result.exception, ValueError) and not isinstance(result.exception, Py4Error)
    assert "error: operands" not in result.output


def test_an_eof_error_in_a_command_keeps_its_traceback():
    """click reads an EOFError as the end of a prompt's input: 'Aborted.', exit 1, no traceback.
    Raised by a command (torch.load of a file cut short), it is a bug like any other."""
    import typer

    from py4.errors import cli_errors

    @cli_errors
    def load() -> None:
        raise EOFError("Ran out of input")

    app = typer.Typer()
    app.command()(load)
    result = CliRunner().invoke(app, [])
    assert isinstance(result.exception, RuntimeError) and isinstance(result.exception.__cause__, EOFError)
    assert "Aborted" not in result.output and "Ran out of input" in str(result.exception)


def test_problem_files_report_file_and_line(tmp_path):
    from py4.problems.schema import load_problem, load_problems

    path = tmp_path / "problems.jsonl"
    path.write_text('\n{"id": "x"}\n', encoding="utf-8")
    with pytest.raises(FileFormatError, match=rf"^{path}:2: invalid problem: .*family: Field required"):
        load_problems(path)
    with pytest.raises(FileFormatError, match="no such problem file"):
        load_problem(tmp_path / "missing.json")


def test_unreadable_files_are_user_errors_not_tracebacks(tmp_path):
    """Bytes that are not UTF-8, a folder given as a file, a truncated .gz: FileFormatError naming the file."""
    binary = tmp_path / "rows.jsonl"
    binary.write_bytes(b'{"id": "a"}\n\xff\xfe\n')
    with pytest.raises(FileFormatError, match=rf"^{binary}:.*not UTF-8"):
        list(iter_jsonl(binary))
    (tmp_path / "manifest.json").write_bytes(b"\xff{}")
    with pytest.raises(FileFormatError, match="not UTF-8"):
        read_json_object(tmp_path / "manifest.json")
    folder = tmp_path / "a_folder.jsonl"
    folder.mkdir()
    with pytest.raises(FileFormatError, match="cannot read"):
        list(iter_jsonl(folder))
    with pytest.raises(FileFormatError, match="cannot read"):
        read_json_object(folder)
    truncated = tmp_path / "rows.jsonl.gz"
    truncated.write_bytes(gzip.compress(b'{"id": "a"}\n' * 1000)[:-30])
    with pytest.raises(FileFormatError, match=rf"^{truncated}:\d+: cannot read"):
        list(iter_jsonl(truncated))
