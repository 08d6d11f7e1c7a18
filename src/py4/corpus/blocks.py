"""Tagged code blocks: how a document states what each program does, mechanically.

Every fenced block in a corpus document carries a tag in its info string (tag: what it is; what
validation checks):

- `py4`: a Python-4 program the document presents as correct; Boa compiles it with no diagnostic at
  all and runs it; stdout equals the `output` block after it (none: prints nothing); it raises
  exactly the `raises` line, or nothing.
- `py3`: a Python 3 habit (a counter-example); Boa's diagnostics equal the `diagnostics` block, or,
  when it compiles without errors, the `output`/`raises` blocks say what it does under Python-4.
- `python`: plain Python 3, for comparison; CPython (Boa's python3 dialect) prints the `output`
  block / raises the `raises` line.
- `output`: exact stdout of the program above; character for character.
- `raises`: one line `ExceptionType: message`; the program's uncaught exception.
- `diagnostics`: Boa's verbatim diagnostics, one a line; equal, in order, to Boa's.

The convention is the spec's (docs/python4.md), with `py3` in place of `py4-diag`.
"""

from __future__ import annotations

from dataclasses import dataclass

from py4.lang.fences import FenceError, fenced_blocks

PROGRAM_TAGS = ("py4", "py3", "python")
CLAIM_TAGS = ("output", "raises", "diagnostics")
_TAG = r"[A-Za-z0-9_-]*"  # the tags above and nothing that could be mistaken for one


class BlockFormatError(ValueError):
    """A document's fenced blocks break the convention (message names the line)."""


@dataclass(frozen=True)
class Program:
    """A program block and the claims made about it."""

    tag: str
    source: str
    line: int
    output: str | None = None
    raises: str | None = None
    diagnostics: tuple[str, ...] | None = None


def fence(tag: str, body: str) -> str:
    """One fenced block; `body` ends with a newline or is empty."""
    if body and not body.endswith("\n"):
        body += "\n"
    return f"```{tag}\n{body}```\n"


def parse_programs(text: str) -> list[Program]:
    """The programs of a document with their claims, in order.

    Raises:
        BlockFormatError: an untagged or unknown block, a malformed or unclosed fence, a claim without
            a program, a repeated claim, or a `py3` block that claims nothing.
    """
    programs: list[dict] = []
    try:
        # strict: a machine-written document has exact fences; "\n" only, as documents are written
        for block in fenced_blocks(text.split("\n"), tag_pattern=_TAG, strict=True):
            _attach(programs, block.tag, block.body, block.line)
    except FenceError as exc:
        raise BlockFormatError(str(exc)) from exc
    for program in programs:
        if program["tag"] == "py3" and not _claims(program):
            raise BlockFormatError(f"line {program['line']}: a py3 block must be followed by "
                                   "diagnostics, output or raises (what Boa does with it)")
    return [Program(**p) for p in programs]


def has_py4_program(text: str) -> bool:
    """Whether the document shows at least one ``py4`` program (False too when its fences are malformed)."""
    try:
        return any(p.tag == "py4" for p in parse_programs(text))
    except BlockFormatError:
        return False


def _claims(program: dict) -> bool:
    return any(program.get(k) is not None for k in CLAIM_TAGS)


def _attach(programs: list[dict], tag: str, body: str, line: int) -> None:
    if tag in PROGRAM_TAGS:
        programs.append({"tag": tag, "source": body, "line": line})
        return
    if tag not in CLAIM_TAGS:
        known = ", ".join(PROGRAM_TAGS + CLAIM_TAGS)
        raise BlockFormatError(f"line {line}: code block tag {tag!r} is not one of {known}")
    if not programs:
        raise BlockFormatError(f"line {line}: a {tag} block must follow a program block")
    program = programs[-1]
    if program.get(tag) is not None:
        raise BlockFormatError(f"line {line}: a second {tag} block for the program at line {program['line']}")
    if tag == "output":
        if program.get("raises") is not None or program.get("diagnostics") is not None:
            raise BlockFormatError(f"line {line}: output comes before raises, and not with diagnostics")
        program["output"] = body
    elif tag == "raises":
        rows = body.strip().splitlines()
        if len(rows) != 1 or program.get("diagnostics") is not None:
            raise BlockFormatError(f"line {line}: a raises block holds one line `Type: message`")
        program["raises"] = rows[0]
    else:
        if program["tag"] == "python" or _claims(program):
            raise BlockFormatError(f"line {line}: diagnostics belong right after a py4/py3 program")
        program["diagnostics"] = tuple(row for row in body.splitlines() if row.strip())
