"""The rule registry and the diagnostics table (the one source of rule metadata)."""

import re
from pathlib import Path
from typing import get_args

import pytest

from py4.lang import CORE_RULES, DEFAULT_HELD_OUT, RULES, get_rule
from py4.lang.diagnostics import MESSAGES, Diagnostic, MessageKind, make_diagnostic

DOC = Path(__file__).resolve().parents[2] / "docs" / "dev" / "diagnostics.md"


def test_thirty_rules_with_stable_ids_and_kinds():
    assert list(RULES) == [f"P4-{n:02d}" for n in range(1, 31)]
    assert CORE_RULES == {"P4-01", "P4-02", "P4-03", "P4-04", "P4-05"}
    kinds = {rule.kind for rule in RULES.values()}
    assert kinds == {"core", "syntax", "semantics", "lint"}
    assert {r.id for r in RULES.values() if r.kind == "lint"} == {f"P4-{n}" for n in range(25, 31)}


def test_default_held_out_set_is_the_briefs():
    assert DEFAULT_HELD_OUT == {"P4-09", "P4-11", "P4-13", "P4-19", "P4-20", "P4-22", "P4-24", "P4-30"}
    assert {r.id for r in RULES.values() if r.held_out} == DEFAULT_HELD_OUT
    assert not DEFAULT_HELD_OUT & CORE_RULES


def test_every_rule_has_text_and_json_shape():
    for rule in RULES.values():
        assert rule.title and rule.summary and rule.fix and rule.python3_form
        assert rule.example and rule.python3_example
        assert set(rule.to_json()) == {"id", "kind", "title", "summary", "held_out"}


def test_get_rule_suggests_close_ids():
    assert get_rule("p4-07").id == get_rule("P4-7").id == get_rule("7").id == "P4-07"
    with pytest.raises(KeyError, match="did you mean .*P4-07"):
        get_rule("P4-O7")
    with pytest.raises(KeyError, match="unknown rule id 'P4-31'"):
        get_rule("P4-31")
    with pytest.raises(KeyError, match="unknown rule id"):
        get_rule("nonsense")


def test_renderings():
    diag = make_diagnostic("def", 3, 0)
    assert diag.render("verbatim") == ("line 3, col 0: error P4-01: `def` is not Python-4: "
                                       "functions are defined with `fn`. Fix: replace `def` with `fn`")
    assert diag.render("generic") == "SyntaxError at line 3"
    assert make_diagnostic("bare_catch", 5, 0).render("generic") == "warning at line 5"
    assert diag.to_json() == {"rule": "P4-01", "severity": "error", "line": 3, "col": 0,
                              "message": diag.message}
    with pytest.raises(ValueError, match="verbatim"):
        diag.render("loud")


def test_message_kinds_are_the_message_table():
    """MessageKind (what the type checker holds every report to) names exactly the table's kinds."""
    assert list(get_args(MessageKind)) == list(MESSAGES)


def test_generic_rendering_leaks_no_words():
    for kind, (_rule, _, _, _) in MESSAGES.items():
        fields = {name: "x" for name in re.findall(r"{(\w+)}", "".join(MESSAGES[kind][2:]))}
        text = make_diagnostic(kind, 2, 1, **fields).render("generic")
        assert text in ("SyntaxError at line 2", "warning at line 2")


def test_message_table_names_known_rules():
    for rule, severity, _, fix in MESSAGES.values():
        assert rule == "P4-00" or rule in RULES
        assert severity in ("error", "warning") and fix
    lint_rules = {rule for rule, severity, _, _ in MESSAGES.values() if severity == "warning"}
    # P4-00's one warning is the "too many diagnostics" note when only warnings are left out.
    assert lint_rules - {"P4-00"} == {"P4-05", "P4-25", "P4-26", "P4-27", "P4-28", "P4-29", "P4-30"}


def test_diagnostics_doc_quotes_every_message_exactly():
    text = DOC.read_text(encoding="utf-8")
    for kind, (rule, severity, message, fix) in MESSAGES.items():
        row = f"| {kind} | {rule} | {severity} | {message.replace('|', chr(92) + '|')} | "
        assert row in text, f"docs/dev/diagnostics.md is stale for {kind!r}"
        assert fix.replace("|", "\\|") in text


def test_diagnostic_is_a_frozen_value():
    diag = Diagnostic("P4-02", "error", 1, 0, "m", "f")
    with pytest.raises(AttributeError):
        diag.line = 2
