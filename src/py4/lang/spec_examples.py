"""The code examples of the Python-4 spec (docs/python4.md), parsed and checkable.

The spec tags its fenced code blocks (see its section "How to read the examples"):
`py4` programs with an expected `output` and/or `raises` block, `py4-diag` programs with
an expected `diagnostics` block, `python` (Python 3) programs with an optional `output`,
and unchecked `text`. `parse_examples` turns a spec file into `Example`s; `check_example`
compiles and runs one and returns what differs from the spec (an empty list when it
agrees). Tests, `make demo` and benchmarks share this module.

Running an example executes its code in this process: only for the trusted spec.
"""
from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeGuard, get_args

from py4.lang.fences import FenceError, FencedBlock, fenced_blocks

ExampleKind = Literal["py4", "py4-diag", "python"]
PROGRAM_TAGS: tuple[ExampleKind, ...] = get_args(ExampleKind)
RESULT_TAGS = ("output", "raises", "diagnostics", "generic", "rules")
KNOWN_TAGS = PROGRAM_TAGS + RESULT_TAGS + ("text", "")

_RULE_HEADING = re.compile(r"^#+\s+(P4-\d\d)\b")
_HEADING = re.compile(r"^#+\s+(.*)$")
_SHORT_DIAGNOSTIC = re.compile(r"^(P4-\d\d) (error|warning) (\d+):(\d+)$")
_VERBATIM_DIAGNOSTIC = re.compile(r"^line (\d+), col (\d+): (error|warning) (P4-\d\d): ")


class SpecFormatError(ValueError):
    """The spec's blocks do not follow the convention (names the file and line)."""


@dataclass(kw_only=True)
class Example:
    """One program of the spec and what the spec says Boa does with it."""

    kind: ExampleKind
    source: str
    line: int                      # line of the program's fence in the spec
    section: str                   # the nearest heading above it
    rule: str | None               # the rule id of the enclosing rule section, if any
    output: str | None = None      # expected stdout (py4/python); None: not given
    raises: str | None = None      # expected "ExceptionType: message"
    diagnostics: list[str] = field(default_factory=list)  # expected lines (py4-diag)
    rules: list[str] | None = None  # expected rules_exercised (py4); None: not stated
    generic: list[str] | None = None  # expected generic renderings (py4-diag); None: not stated

    @property
    def name(self) -> str:
        return f"line {self.line} ({self.rule or self.section})"


def _is_program_tag(tag: str) -> TypeGuard[ExampleKind]:
    return tag in PROGRAM_TAGS


def read_blocks(text: str, filename: str = "<spec>") -> tuple[list[FencedBlock], dict[int, str], dict[int, str | None]]:
    """The fenced blocks of a markdown text, with the heading and rule id above each line.

    Raises:
        SpecFormatError: an unclosed fence or an unknown tag.
    """
    blocks: list[FencedBlock] = []
    section_at: dict[int, str] = {}
    rule_at: dict[int, str | None] = {}
    section, rule = "", None
    lines = text.splitlines()
    after_previous = 0  # index of the first line after the previous block
    try:
        for block in fenced_blocks(lines, tags=KNOWN_TAGS):
            for line in lines[after_previous:block.line - 1]:  # headings inside blocks do not count
                section, rule = _heading(line, section, rule)
            blocks.append(block)
            section_at[block.line], rule_at[block.line] = section, rule
            after_previous = block.end
    except FenceError as exc:
        raise SpecFormatError(f"{filename}:{exc.line}: {exc.reason}") from exc
    return blocks, section_at, rule_at


def _heading(line: str, section: str, rule: str | None) -> tuple[str, str | None]:
    """The section and rule id in force after `line` (a "### " heading keeps the rule above)."""
    heading = _HEADING.match(line)
    if heading is None:
        return section, rule
    rule_match = _RULE_HEADING.match(line)
    if rule_match:
        rule = rule_match.group(1)
    elif not line.startswith("### "):
        rule = None
    return heading.group(1).strip(), rule


def parse_examples(path: str | Path) -> list[Example]:
    """Every checkable example of the spec at `path`, in document order.

    Raises:
        OSError: the file cannot be read.
        SpecFormatError: a result block without its program, a `py4-diag` without a
            `diagnostics` block, or a malformed diagnostics line.
    """
    path = Path(path)
    blocks, section_at, rule_at = read_blocks(path.read_text(encoding="utf-8"), str(path))
    examples: list[Example] = []
    current: Example | None = None
    for block in blocks:
        where = f"{path}:{block.line}"
        if _is_program_tag(block.tag):
            current = Example(kind=block.tag, source=block.body, line=block.line,
                              section=section_at[block.line], rule=rule_at[block.line])
            examples.append(current)
        elif block.tag in RESULT_TAGS:
            _attach_result(current, block, where)
        else:
            current = None
    for example in examples:
        if example.kind == "py4-diag" and not example.diagnostics:
            raise SpecFormatError(f"{path}:{example.line}: py4-diag block without a "
                                  "diagnostics block after it")
    return examples


def _attach_result(example: Example | None, block: FencedBlock, where: str) -> None:
    if example is None:
        raise SpecFormatError(f"{where}: {block.tag} block does not follow a program block")
    if block.tag == "rules":
        if example.kind != "py4" or example.rules is not None:
            raise SpecFormatError(f"{where}: a rules block belongs after one py4 block")
        example.rules = block.body.split()
        if not all(re.fullmatch(r"P4-\d\d", rule) for rule in example.rules):
            raise SpecFormatError(f"{where}: a rules block lists rule ids P4-NN, "
                                  "separated by spaces")
    elif block.tag == "generic":
        if example.kind != "py4-diag" or not example.diagnostics or example.generic is not None:
            raise SpecFormatError(f"{where}: a generic block follows a py4-diag program's "
                                  "diagnostics block")
        example.generic = [line for line in block.body.splitlines() if line.strip()]
    elif block.tag == "diagnostics":
        if example.kind != "py4-diag" or example.diagnostics:
            raise SpecFormatError(f"{where}: a diagnostics block belongs after one py4-diag block")
        lines = [line for line in block.body.splitlines() if line.strip()]
        for line in lines:
            if not (_SHORT_DIAGNOSTIC.match(line) or _VERBATIM_DIAGNOSTIC.match(line)):
                raise SpecFormatError(f"{where}: diagnostics line {line!r} is neither "
                                      "'P4-NN SEVERITY L:C' nor a verbatim rendering")
        example.diagnostics = lines
    elif example.kind == "py4-diag":
        raise SpecFormatError(f"{where}: a py4-diag program takes a diagnostics block, "
                              f"not {block.tag}")
    elif block.tag == "output":
        if example.output is not None or example.raises is not None:
            raise SpecFormatError(f"{where}: output block must come once, before raises")
        example.output = block.body
    else:
        lines = block.body.strip().splitlines()
        if example.raises is not None or len(lines) != 1:
            raise SpecFormatError(f"{where}: a raises block holds one line, once per program")
        example.raises = lines[0]


def _run(code, globals_: dict) -> tuple[str, str | None]:
    """Run `code`, returning (stdout, "Type: message" of the exception or None)."""
    stdout = io.StringIO()
    raised = None
    with contextlib.redirect_stdout(stdout):
        try:
            exec(code, globals_)
        except Exception as error:  # noqa: BLE001 - the spec states which one is expected
            raised = f"{type(error).__name__}: {error}"
    return stdout.getvalue(), raised


def _diagnostic_matches(expected: str, diag) -> bool:
    short = _SHORT_DIAGNOSTIC.match(expected)
    if short:
        rule, severity, line, col = short.groups()
        return (diag.rule, diag.severity, diag.line, diag.col) == (rule, severity, int(line), int(col))
    return diag.render("verbatim") == expected


def check_example(example: Example) -> list[str]:
    """What Boa does differently from what the spec says of `example` ([] when it agrees)."""
    if example.kind == "python":
        return _check_run(compile(example.source, f"<spec line {example.line}>", "exec"),
                          {"__name__": "__main__"}, example)
    from py4.lang import compile_py4
    from py4.lang.runtime import new_globals

    result = compile_py4(example.source, f"<spec line {example.line}>")
    if example.kind == "py4-diag":
        got = [d.render("verbatim") for d in result.diagnostics]
        problems = []
        if len(got) != len(example.diagnostics) or not all(
                _diagnostic_matches(want, diag)
                for want, diag in zip(example.diagnostics, result.diagnostics, strict=True)):
            problems.append(f"diagnostics differ:\n  spec: {example.diagnostics}\n  boa:  {got}")
        generic = [d.render("generic") for d in result.diagnostics]
        if example.generic is not None and generic != example.generic:
            problems.append(f"generic renderings differ:\n  spec: {example.generic}\n"
                            f"  boa:  {generic}")
        return problems
    if result.diagnostics:
        return ["a py4 example must compile without diagnostics, Boa says:\n  "
                + "\n  ".join(d.render("verbatim") for d in result.diagnostics)]
    problems = []
    if example.rules is not None and list(result.rules_exercised) != example.rules:
        problems.append(f"rules exercised differ:\n  spec: {example.rules}\n"
                        f"  boa:  {list(result.rules_exercised)}")
    return problems + _check_run(result.code, new_globals(), example)


def _check_run(code, globals_: dict, example: Example) -> list[str]:
    stdout, raised = _run(code, globals_)
    problems = []
    expected_output = example.output or ""
    if stdout != expected_output:
        problems.append(f"output differs:\n  spec: {expected_output!r}\n  got:  {stdout!r}")
    if raised != example.raises:
        problems.append(f"exception differs:\n  spec: {example.raises!r}\n  got:  {raised!r}")
    return problems


def summarize(path: str | Path) -> tuple[int, list[tuple[Example, list[str]]]]:
    """Check every example of the spec at `path`: (number checked, [(example, problems)]).

    Raises:
        OSError, SpecFormatError: as `parse_examples`.
    """
    examples = parse_examples(path)
    disagreements = []
    for example in examples:
        problems = check_example(example)
        if problems:
            disagreements.append((example, problems))
    return len(examples), disagreements


def main(argv: list[str] | None = None) -> int:
    """`python -m py4.lang.spec_examples [SPEC]`: check the spec's examples against Boa."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else Path("docs/python4.md")
    total, disagreements = summarize(path)
    for example, problems in disagreements:
        print(f"{path}:{example.line}: {example.rule or example.section}")
        for problem in problems:
            print("  " + problem.replace("\n", "\n  "))
    print(f"{total - len(disagreements)} of {total} examples in {path} agree with Boa")
    return 1 if disagreements else 0


if __name__ == "__main__":
    raise SystemExit(main())
