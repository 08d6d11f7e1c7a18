"""The `migrate` API contract and the `boa migrate` command."""

import json

import pytest
from typer.testing import CliRunner

from py4.boa.cli import app
from py4.lang.migrate import MigrationError, migrate, resolve_rules

runner = CliRunner()
SOURCE = "def f(xs):\n    return xs[-1]\nprint(f([1, 2]))\n"


def test_result_shape_and_positions():
    result = migrate(SOURCE)
    assert result.source.startswith("fn f(xs: object) -> object:")
    rules = [(h.rule, h.line, h.col) for h in result.rules_applied]
    assert ("P4-01", 1, 0) in rules and ("P4-14", 2, 14) in rules
    assert result.to_json()["rules_applied"][0] == {"rule": "P4-01", "line": 1, "col": 0}


def test_unknown_rule_ids_are_rejected():
    with pytest.raises(MigrationError, match="P4-99"):
        migrate(SOURCE, skip_rules={"P4-99"})
    assert resolve_rules(["p4-01"], None) == frozenset({"P4-01"})


def test_invalid_input_is_reported_not_raised():
    result = migrate("def (:\n")
    assert result.source == "def (:\n" and "not valid Python 3" in result.cannot_convert[0].reason


def test_cli_json_shape(tmp_path):
    path = tmp_path / "p.py"
    path.write_text(SOURCE)
    out = runner.invoke(app, ["migrate", str(path), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert set(data) == {"source", "rules_applied", "cannot_convert"}
    assert set(data["rules_applied"][0]) == {"rule", "line", "col"}


def test_cli_output_file_and_rule_selection(tmp_path):
    path, target = tmp_path / "p.py", tmp_path / "p.py4"
    path.write_text(SOURCE)
    out = runner.invoke(app, ["migrate", str(path), "-o", str(target), "--skip-rules", "P4-14,P4-05"])
    assert out.exit_code == 0 and target.read_text() == "fn f(xs):\n    return xs[-1]\nprint(f([1, 2]))\n"


def test_cli_exit_codes(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x=[]):\n    x.append(1)\n")
    result = runner.invoke(app, ["migrate", str(bad)])
    assert result.exit_code == 1 and "cannot convert" in result.stderr
    assert runner.invoke(app, ["migrate", str(tmp_path / "missing.py")]).exit_code == 2
    assert runner.invoke(app, ["migrate", str(bad), "--only-rules", "P4-77"]).exit_code == 2


def test_cli_reads_stdin():
    result = runner.invoke(app, ["migrate", "-"], input="x = None\n")
    assert result.exit_code == 0 and result.stdout == "let x = nil\n"


def test_cli_unreadable_and_non_utf8_input_say_which_file(tmp_path):
    missing = runner.invoke(app, ["migrate", str(tmp_path / "missing.py")])
    assert missing.exit_code == 2 and "cannot read" in missing.stderr and "missing.py" in missing.stderr
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"x = '\xe9'\n")
    result = runner.invoke(app, ["migrate", str(latin)])
    assert result.exit_code == 2 and "latin.py is not UTF-8" in result.stderr
