"""Where the code is inside an i-string: the expressions of its replacement fields.

``i"total {xs[0]:>{width}} {name!r}"`` holds three expressions: ``xs[0]``, ``width``
(nested in the format spec) and ``name``. The token pass (tokens.py) rewrites Python-4
words there as anywhere else, so ``i"{nil}"`` and ``i"{ {:} }"`` mean what they say and
``i"{None}"`` is reported. The rules are Python 3.11's f-string rules: ``{{`` and ``}}``
are literal braces; an expression ends at ``}``, at ``!`` (a conversion, not ``!=``) or at
``:`` (the format spec) outside brackets; strings inside an expression are skipped; a
format spec may hold nested fields. Malformed fields are left for the parser to report:
this only has to find the code, never to judge it.
"""

from __future__ import annotations

_OPEN = "([{"
_CLOSE = ")]}"


def field_regions(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """(start, end) offsets of each field expression in ``text[start:end]`` (a string body)."""
    regions: list[tuple[int, int]] = []
    i = start
    while True:
        i = text.find("{", i, end)
        if i < 0:
            return regions
        if text.startswith("{", i + 1):  # `{{`: a literal brace
            i += 2
            continue
        i = _field(text, i + 1, end, regions)


def _field(text: str, i: int, end: int, regions: list[tuple[int, int]]) -> int:
    """Scan one field whose expression starts at ``i``; returns the offset after it."""
    expr_end = _expression_end(text, i, end)
    regions.append((i, expr_end))
    i = expr_end
    if i < end and text[i] == "!":  # conversion: `!r`, `!s`, `!a`
        while i < end and text[i] not in ":}":
            i += 1
    if i < end and text[i] == ":":  # format spec, with nested fields
        i += 1
        while i < end and text[i] != "}":
            if text[i] == "{":
                i = _field(text, i + 1, end, regions)
            else:
                i += 1
    return i + 1 if i < end else end


def _expression_end(text: str, i: int, end: int) -> int:
    depth = 0
    while i < end:
        char = text[i]
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            if depth == 0:
                return i
            depth -= 1
        elif char == "'" or char == '"':
            i = _string_end(text, i, end)
            continue
        elif depth == 0 and (char == ":" or (char == "!" and not text.startswith("=", i + 1))):
            return i
        i += 1
    return end


def _string_end(text: str, i: int, end: int) -> int:
    """The offset after the string literal starting at ``i`` (``end`` if unterminated)."""
    quote = text[i] * 3 if text.startswith(text[i] * 3, i) else text[i]
    close = text.find(quote, i + len(quote), end)
    return end if close < 0 else close + len(quote)
