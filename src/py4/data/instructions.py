"""Instruction (chat) data: ``allenai/Dolci-Instruct-SFT`` from the Hub, or a local folder in
the same format, with the strict user/assistant alternation filter.

Format (what ``datasets.load_dataset("allenai/Dolci-Instruct-SFT", split="train")`` yields,
as far as this code relies on it): one row per conversation with a ``messages`` list of
``{"role": str, "content": str}`` dicts; other row fields (``id``, ``source`` ...) are
ignored. A local folder holds the same rows as ``*.jsonl[.gz]`` or ``*.parquet`` files.
An optional ``tools`` field (a list of JSON schemas, or that list as JSON text, which is decoded
as TRL's SFT trainer decodes it) is passed to the chat template; any other ``tools`` value is
a DataError naming the row. Null values
inside messages and tools are dropped at every depth before rendering (Arrow fills keys
absent from a row with null), so a template's ``is defined`` tests see them as absent.

The strict filter (the campaign's; 1,923,659 of 2,152,112 rows at revision bd3c8f3a):
an optional leading ``system`` message; then ``user``, ``assistant``, ``user``, ...
strictly alternating; the last message is ``assistant``; every content a non-empty
(not whitespace-only) string.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import pydantic

from py4.data.sources import _RowSource, open_rows
from py4.data.tokens import DataError

__all__ = ["Conversation", "InstructionSourceSpec", "InstructionSource", "load_instruction_source",
           "strict_alternation_problem", "DOLCI_HUB_ID", "DOLCI_REVISION", "DOLCI_ROWS_TOTAL", "DOLCI_ROWS_KEPT"]

DOLCI_HUB_ID = "allenai/Dolci-Instruct-SFT"
DOLCI_REVISION = "bd3c8f3a"  # the campaign's pin (abbreviated in the reference table)
DOLCI_ROWS_TOTAL = 2_152_112
DOLCI_ROWS_KEPT = 1_923_659


@dataclass(frozen=True)
class Conversation:
    """One kept row: its messages, and its tool schemas when the row has a ``tools`` field."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    has_tools: bool = False
    """The row has a non-empty ``tools`` field, valid or not (what a tool-free prompt pool skips)."""


class InstructionSourceSpec(_RowSource):
    """A chat dataset: Hub id at a revision, or a local folder of rows with ``messages``."""

    messages_field: str = "messages"
    filter: Literal["strict_alternation", "none"] = pydantic.Field(
        "strict_alternation", description="'none' keeps tool turns (smoke tool-call transcripts)")
    max_rows: int | None = pydantic.Field(None, ge=1, description="read at most this many source rows")


def strict_alternation_problem(messages: Any) -> str | None:
    """Why ``messages`` fails the strict filter (a short reason), or None when it passes."""
    if not isinstance(messages, list) or not messages:
        return "no messages"
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            return "content not a string"
        if not message["content"].strip():
            return "empty content"
    roles = [m.get("role") for m in messages]
    if roles[0] == "system":
        roles = roles[1:]
    if not roles:
        return "system only"
    if roles[0] != "user":
        return "first turn not user"
    for i, role in enumerate(roles):
        expected = "user" if i % 2 == 0 else "assistant"
        if role != expected:
            return f"role {role!r} where {expected!r} expected"
    if roles[-1] != "assistant":
        return "last turn not assistant"
    return None


def _drop_nulls(value: Any) -> Any:
    # Arrow unifies the struct keys of all rows and fills the missing ones with null, so
    # a tool call's arguments may come back as {"code": "...", "answer": None}. Nulls are
    # therefore read as "absent", at every depth (a genuine null argument is lost too).
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _tools(value: Any, where: str) -> list[dict[str, Any]] | None:
    """A row's ``tools`` as a list of tool schemas (None when absent or empty).

    JSON text is decoded first, as TRL's SFT trainer does (``json.loads`` when it is a
    string), so ``py4 data pack`` and ``py4 train sft`` read the same rows the same way.
    """
    if isinstance(value, str) and not value.strip():
        return None  # blank text: no tools, like an empty list
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise DataError(f"{where}: 'tools' is text but not JSON ({exc}); expected a list of tool schemas "
                            "(JSON objects) or that list as JSON text") from None
    value = _drop_nulls(value)
    if not value:
        return None  # TRL's `tools or None`: an empty list renders as no tools
    if not isinstance(value, list) or not all(isinstance(tool, dict) for tool in value):
        got = type(value).__name__ if not isinstance(value, list) else "a list with a non-object item"
        raise DataError(f"{where}: 'tools' must be a list of tool schemas (JSON objects) or that list as "
                        f"JSON text; got {got}")
    return value


def _clean(messages: list[Any], where: str) -> list[dict[str, Any]]:
    cleaned = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise DataError(f"{where}: message {i}: expected an object with a string 'role'")
        cleaned.append(_drop_nulls(message))
    return cleaned


class InstructionSource:
    """Iterates the kept rows as :class:`Conversation`; ``stats`` counts as it goes."""

    def __init__(self, spec: InstructionSourceSpec, check_tools: bool = True):
        self.spec = spec
        self.check_tools = check_tools
        """False: ``tools`` is only noted (``has_tools``), not read, so a malformed one is no error
        (a reader that skips rows with tools, such as EFT's replay prompts, needs no more)."""
        self.rows_total = 0
        self.rows_kept = 0
        self.rejected: Counter[str] = Counter()

    @property
    def stats(self) -> dict[str, Any]:
        return {"filter": self.spec.filter, "rows_total": self.rows_total, "rows_kept": self.rows_kept,
                "rejected_by_reason": dict(sorted(self.rejected.items()))}

    def __iter__(self) -> Iterator[Conversation]:
        where = self.spec.hub_id or self.spec.path
        field = self.spec.messages_field
        for index, row in enumerate(open_rows(self.spec)):
            if self.spec.max_rows is not None and index >= self.spec.max_rows:
                break
            self.rows_total += 1
            if field not in row:
                raise DataError(f"{where}: row {index}: no {field!r} field (fields: {sorted(row)})")
            messages = row[field]
            if self.spec.filter == "strict_alternation":
                problem = strict_alternation_problem(messages)
                if problem is not None:
                    self.rejected[problem] += 1
                    continue
            elif not isinstance(messages, list) or not messages:
                raise DataError(f"{where}: row {index}: {field!r} must be a non-empty list of messages")
            self.rows_kept += 1
            raw = row.get("tools")
            has_tools = bool(raw.strip()) if isinstance(raw, str) else bool(_drop_nulls(raw))
            tools = _tools(raw, f"{where}: row {index}") if self.check_tools else None
            yield Conversation(_clean(messages, f"{where}: row {index}"), tools, has_tools)


def load_instruction_source(spec: InstructionSourceSpec | dict[str, Any],
                            check_tools: bool = True) -> InstructionSource:
    """Open an instruction source (Hub id + revision, streamed; or a local folder).

    Nothing is read until iteration. Raises pydantic.ValidationError on a bad spec dict;
    iteration raises DataError on a row without messages, or (``check_tools``) with a
    ``tools`` field that is not a list of tool schemas.
    """
    if isinstance(spec, dict):
        spec = InstructionSourceSpec.model_validate(spec)
    return InstructionSource(spec, check_tools)
