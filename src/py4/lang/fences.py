"""Fenced code blocks of a markdown text: the one scanner behind the spec's examples
(`py4.lang.spec_examples`) and the corpus documents (`py4.corpus.blocks`).

A block opens at a line "```TAG" and closes at the next line that is "```"; blocks do not
nest (a fence-like line inside a block belongs to its body). The two readers differ on purpose,
and each difference is an argument:

| | the spec (default) | corpus documents |
|---|---|---|
| tag (`tag_pattern`) | `\\S*` | `[A-Za-z0-9_-]*` |
| a "```" line that opens no block ("```py4 x") | text (`strict=False`) | an error (`strict=True`) |
| closing fence "```  " (trailing spaces) | closes | does not close |
| tag checked when the fence opens (`tags`) | yes, against the spec's tags | no: the caller checks it |

The corpus is machine-written and then machine-checked, so anything fence-like that is not
exactly a fence is a generation bug worth reporting; the spec is hand-written prose.
Callers split the text into lines themselves (the spec with `str.splitlines`, the corpus on
"\\n" only), so each keeps its own line ends.
"""
from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class FencedBlock:
    tag: str   # the info string after the opening "```" ("" when none)
    body: str  # the lines between the fences, each ending in "\n" ("" when there are none)
    line: int  # 1-based line of the opening fence
    end: int   # 1-based line of the closing fence


class FenceError(ValueError):
    """A fence breaks the syntax; `line` is the 1-based line, `reason` says what is wrong."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


def fenced_blocks(lines: Sequence[str], *, tag_pattern: str = r"\S*", strict: bool = False,
                  tags: Collection[str] | None = None) -> Iterator[FencedBlock]:
    """The fenced blocks of `lines`, in order (module docstring: the arguments).

    Raises:
        FenceError: a block that is never closed; with `strict`, a "```" line outside a block
            that is no opening fence; with `tags`, a tag not among them (when the fence opens).
    """
    opening = re.compile(rf"^```({tag_pattern})\s*$")
    i = 0
    while i < len(lines):
        match = opening.match(lines[i])
        if match is None:
            if strict and lines[i].startswith("```"):
                raise FenceError(i + 1, f"malformed fence {lines[i][:40]!r}")
            i += 1
            continue
        tag, start = match.group(1), i + 1
        if tags is not None and tag not in tags:
            known = ", ".join(t for t in tags if t)
            raise FenceError(start, f"unknown code block tag {tag!r} (known: {known})")
        end = i + 1
        while end < len(lines) and not _closes(lines[end], strict):
            end += 1
        if end == len(lines):
            raise FenceError(start, "code block is never closed")
        body = "\n".join(lines[i + 1:end]) + ("\n" if end > i + 1 else "")
        yield FencedBlock(tag, body, start, end + 1)
        i = end + 1


def _closes(line: str, strict: bool) -> bool:
    return line == "```" if strict else line.rstrip() == "```"
