"""Every example of docs/python4.md, compiled and run by Boa: the spec cannot drift from Boa.

Each test id is the example's line in the spec and its rule, e.g. `line 412 (P4-12)`.
"""
import re
from pathlib import Path

import pytest

from py4.lang.spec_examples import (
    SpecFormatError, check_example, parse_examples, read_blocks,
)

SPEC = Path(__file__).resolve().parents[2] / "docs" / "python4.md"
EXAMPLES = parse_examples(SPEC)
ALL_RULES = [f"P4-{n:02d}" for n in range(1, 31)]
SEMANTIC_RULES = ["P4-12", "P4-13"] + [f"P4-{n:02d}" for n in range(15, 25)]
SYNTAX_AND_LINT_RULES = [r for r in ALL_RULES if r not in SEMANTIC_RULES]


# Examples on which Boa and the spec disagree, keyed by the example's first line; each is
# described in docs/dev/spec-mismatches.md. Not strict, so that a fix made in the
# translator does not turn the suite red: `-ra` lists it as XPASS, and then its entry goes.
KNOWN_MISMATCHES: dict[str, str] = {}


def _by_kind(kind):
    params = []
    for e in EXAMPLES:
        if e.kind != kind:
            continue
        reason = KNOWN_MISMATCHES.get(e.source.splitlines()[0] if e.source else "")
        marks = [pytest.mark.xfail(reason=reason, strict=False)] if reason else []
        params.append(pytest.param(e, id=e.name, marks=marks))
    return params


def test_known_mismatches_are_still_in_the_spec():
    first_lines = {e.source.splitlines()[0] for e in EXAMPLES if e.source}
    assert set(KNOWN_MISMATCHES) <= first_lines


@pytest.mark.parametrize("example", _by_kind("python"))
def test_python3_example(example):
    assert check_example(example) == []


@pytest.mark.parametrize("example", _by_kind("py4") + _by_kind("py4-diag"))
def test_python4_example(example):
    pytest.importorskip("py4.lang.compile", reason="the translator is not in the tree yet")
    problems = check_example(example)
    assert not problems, f"{SPEC.name}:{example.line}:\n" + "\n".join(problems) + \
        f"\n--- source ---\n{example.source}"


@pytest.mark.parametrize("rule", ALL_RULES)
def test_every_rule_has_a_section_with_a_valid_example(rule):
    examples = [e for e in EXAMPLES if e.rule == rule]
    assert any(e.kind == "py4" and e.raises is None for e in examples), \
        f"{rule}: no valid Python-4 example"


@pytest.mark.parametrize("rule", ALL_RULES)
def test_every_rule_section_has_statement_rationale_and_edge_cases(rule):
    text = SPEC.read_text(encoding="utf-8")
    start = text.index(f"### {rule} ")
    end = text.find("\n### ", start + 1)
    section = text[start:end if end > 0 else len(text)]
    for part in ("**Statement.**", "**Rationale.**", "**Edge cases.**"):
        assert part in section, f"{rule}: no {part}"


@pytest.mark.parametrize("rule", SYNTAX_AND_LINT_RULES)
def test_every_syntax_and_lint_rule_shows_its_diagnostic(rule):
    examples = [e for e in EXAMPLES if e.rule == rule and e.kind == "py4-diag"]
    assert any(rule in line for e in examples for line in e.diagnostics), \
        f"{rule}: no example of the Python 3 form's diagnostic"
    assert any(line.startswith("line ") and rule in line
               for e in examples for line in e.diagnostics), \
        f"{rule}: the verbatim message is not quoted"


@pytest.mark.parametrize("rule", SEMANTIC_RULES)
def test_every_semantic_rule_shows_what_a_python3_habit_runs_into(rule):
    examples = [e for e in EXAMPLES if e.rule == rule and e.kind == "py4"]
    assert len(examples) >= 2, f"{rule}: needs a valid example and a Python 3 habit example"


def test_the_spec_has_its_sections():
    text = SPEC.read_text(encoding="utf-8")
    for heading in ("## Lexical summary", "## Scopes and `let`", "## Bounds, decided",
                    "## Values keep their Python 3 faces", "## Builtins",
                    "## Dicts made outside Python-4 code", "## Migration helpers",
                    "## Diagnostics and their renderings", "## Non-goals"):
        assert heading in text, heading


def test_rules_exercised_table_is_the_analysers():
    """The spec's table of constructs is py4.lang.analyze.EXERCISED_BY, row for row."""
    analyze = pytest.importorskip("py4.lang.analyze")
    text = SPEC.read_text(encoding="utf-8")
    table = text[text.index("| rule | construct |"):]
    rows = []
    for line in table.splitlines()[2:]:
        if not line.startswith("| P4-"):
            break
        rule, construct = (cell.strip() for cell in line.strip("|").split(" | ", 1))
        rows.append((rule, construct))
    assert rows == [(rule, construct) for rule, _, construct in analyze.EXERCISED_BY]


def test_parser_rejects_malformed_specs(tmp_path):
    bad = tmp_path / "spec.md"
    bad.write_text("```py4-diag\nx\n```\n\n```output\n1\n```\n")
    with pytest.raises(SpecFormatError, match="takes a diagnostics block"):
        parse_examples(bad)
    bad.write_text("```py4\nx\n")
    with pytest.raises(SpecFormatError, match="never closed"):
        parse_examples(bad)
    bad.write_text("```py5\nx\n```\n")
    with pytest.raises(SpecFormatError, match="unknown code block tag"):
        parse_examples(bad)
    bad.write_text("```py4-diag\nx\n```\n```diagnostics\nP4-1 error 1:0\n```\n")
    with pytest.raises(SpecFormatError, match="neither"):
        parse_examples(bad)



# How the spec reads fences where corpus documents read them otherwise (py4.lang.fences, not
# strict): these pin the spec's side of each difference.
def test_spec_fence_syntax_is_lenient(tmp_path):
    spec = tmp_path / "spec.md"
    # a "```" line that opens no block is text; a closing fence may carry trailing spaces;
    # a fence-like line inside a block is its body (blocks do not nest)
    spec.write_text("```py4 extra\n```py4\n```text\nprint(1)\n```  \n```output\n1\n```\n")
    blocks, _, _ = read_blocks(spec.read_text(), str(spec))
    assert [(b.tag, b.line) for b in blocks] == [("py4", 2), ("output", 6)]
    (example,) = parse_examples(spec)
    assert (example.source, example.output) == ("```text\nprint(1)\n", "1\n")


def test_spec_fence_errors_name_file_and_line(tmp_path):
    spec = tmp_path / "spec.md"
    spec.write_text("# intro\n\n```py4\nprint(1)\n")
    with pytest.raises(SpecFormatError, match=rf"^{re.escape(str(spec))}:3: code block is never closed$"):
        parse_examples(spec)
    # the tag is checked when the fence opens, before looking for its end
    spec.write_text("# intro\n```py5\nx\n")
    with pytest.raises(SpecFormatError, match=rf"^{re.escape(str(spec))}:2: unknown code block tag 'py5' "
                                              r"\(known: py4, py4-diag"):
        parse_examples(spec)


def test_spec_headings_inside_blocks_are_not_sections(tmp_path):
    spec = tmp_path / "spec.md"
    spec.write_text("### P4-07 throw\n```text\n# not a heading\n```\n```py4\nprint(1)\n```\n")
    (example,) = parse_examples(spec)
    assert (example.section, example.rule) == ("P4-07 throw", "P4-07")

def test_parser_reads_results_and_rules(tmp_path):
    spec = tmp_path / "spec.md"
    spec.write_text("### P4-07 throw\n\n```py4\nprint(1)\n```\n\n```output\n1\n```\n\n"
                    "```raises\nValueError: x\n```\n")
    (example,) = parse_examples(spec)
    assert (example.rule, example.output, example.raises) == ("P4-07", "1\n", "ValueError: x")
    blocks, _, _ = read_blocks(spec.read_text())
    assert [b.tag for b in blocks] == ["py4", "output", "raises"]
