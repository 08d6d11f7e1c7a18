"""`boa check`, `boa translate`, `boa rules`: output shapes and exit codes."""

import json

from typer.testing import CliRunner

from py4.boa.cli import app

runner = CliRunner()


def invoke(*args, input=None):
    return runner.invoke(app, list(args), input=input)


def write(tmp_path, text, name="prog.py4"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_check_clean_program_exits_0(tmp_path):
    res = invoke("check", write(tmp_path, "let x = 1\nprint(x)\n"))
    assert res.exit_code == 0 and res.stdout.strip().endswith(": ok")


def test_check_json_shape(tmp_path):
    path = write(tmp_path, "def f(x):\n    return range(1, x)\n")
    res = invoke("check", path, "--json")
    assert res.exit_code == 1
    payload = json.loads(res.stdout)
    assert set(payload) == {"file", "ok", "diagnostics", "rules_exercised"}
    assert payload["file"] == path and payload["ok"] is False
    assert payload["diagnostics"][0] == {
        "rule": "P4-01", "severity": "error", "line": 1, "col": 0,
        "message": "`def` is not Python-4: functions are defined with `fn`"}
    assert payload["diagnostics"][1]["rule"] == "P4-05"
    assert payload["rules_exercised"] == ["P4-01", "P4-05", "P4-12"]


def test_check_warnings_only_is_ok_but_exit_1(tmp_path):
    res = invoke("check", write(tmp_path, "fn f(x) -> int:\n    return 1\n"), "--json")
    payload = json.loads(res.stdout)
    assert res.exit_code == 1 and payload["ok"] is True
    assert [d["severity"] for d in payload["diagnostics"]] == ["warning"]


def test_check_generic_hides_the_words(tmp_path):
    path = write(tmp_path, "let x = 1\nprint(x == nil)\nlet y = xs[-1]\n")
    res = invoke("check", path, "--diagnostics", "generic")
    assert res.exit_code == 1
    assert res.stdout.splitlines() == [f"{path}: warning at line 2", f"{path}: SyntaxError at line 3"]
    payload = json.loads(invoke("check", path, "--json", "--diagnostics", "generic").stdout)
    assert [d["message"] for d in payload["diagnostics"]] == ["warning at line 2",
                                                               "SyntaxError at line 3"]


def test_check_reads_stdin():
    res = invoke("check", "-", "--json", input="let x = 1\n")
    assert res.exit_code == 0
    assert json.loads(res.stdout)["file"] == "<stdin>"


def test_unreadable_file_exits_2(tmp_path):
    res = invoke("check", str(tmp_path / "missing.py4"))
    assert res.exit_code == 2
    assert "cannot read" in res.output and "missing.py4" in res.output
    assert invoke("translate", str(tmp_path)).exit_code == 2


def test_bad_diagnostics_mode_is_usage_error(tmp_path):
    assert invoke("check", write(tmp_path, "let x = 1\n"), "--diagnostics", "loud").exit_code == 2


def test_translate(tmp_path):
    res = invoke("translate", write(tmp_path, "let d = {:}\nprint(d, 7 // 2)\n"))
    assert res.exit_code == 0
    assert res.stdout == "d = __p4__.Dict()\nprint(d, __p4__.floordiv(7, 2))\n"
    bad = invoke("translate", write(tmp_path, "def f(): pass\n", "bad.py4"))
    assert bad.exit_code == 1 and "P4-01" in bad.output


def test_rules_json():
    res = invoke("rules", "--json")
    assert res.exit_code == 0
    rules = json.loads(res.stdout)
    assert len(rules) == 30
    assert rules[8] == {"id": "P4-09", "kind": "syntax", "title": "fun replaces lambda",
                        "summary": "`fun` replaces `lambda`: `fun x: x + 1`.", "held_out": True}
    text = invoke("rules")
    assert text.exit_code == 0 and len(text.stdout.splitlines()) == 30
