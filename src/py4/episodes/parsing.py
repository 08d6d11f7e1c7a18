"""Reading tool calls out of a policy's turn; malformed calls are kept and counted.

Two readers give the same :class:`ParsedTurn`:

- :func:`parse_with_tokenizer` uses the tokenizer's response schema
  (``tokenizer.parse_response``, transformers >= 5.13), as TRL does. That parser fails
  the whole turn when one ``<tool_call>`` block is not JSON; we then fall back to
- :func:`parse_tool_blocks`, which reads each ``<tool_call>…</tool_call>`` block on its
  own, so that the good calls of a turn still run and the bad one is reported.

A call is *malformed* when its text is not a JSON object, names no known tool, or its
arguments are not exactly ``{"code": <string>}``. TRL would silently treat such a call
as plain text; here it is counted and shown in the transcript.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from py4.episodes.episode import TOOL_NAMES

TOOL_CALL_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
THINK_BLOCK = re.compile(r"^\s*<think>(.*?)(?:</think>|$)", re.DOTALL)
END_MARKERS = re.compile(r"(?:<end_of_turn>|<eos>)\s*$")


@dataclass
class ToolCall:
    """One tool call as the policy wrote it; ``error`` is None when it is well formed."""

    name: str | None
    arguments: dict[str, Any] | None
    raw: str
    error: str | None = None
    id: str | None = None

    @property
    def malformed(self) -> bool:
        return self.error is not None

    def to_json(self) -> dict[str, Any]:
        out = {"name": self.name, "arguments": self.arguments, "id": self.id}
        if self.error is not None:
            out.update(raw=self.raw, error=self.error)
        return out


@dataclass
class ParsedTurn:
    """An assistant turn: free text, optional reasoning, and tool calls in order."""

    content: str
    reasoning: str | None = None
    calls: list[ToolCall] = field(default_factory=list)

    @property
    def valid_calls(self) -> list[ToolCall]:
        return [c for c in self.calls if not c.malformed]


def check_call(name: Any, arguments: Any, raw: str, call_id: str | None = None) -> ToolCall:
    """A :class:`ToolCall`, malformed unless ``name`` is a tool and ``arguments`` is ``{"code": str}``."""
    if isinstance(arguments, str):  # some models write the arguments as a JSON string
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return ToolCall(name if isinstance(name, str) else None, None, raw, "arguments are not JSON", call_id)
    if not isinstance(name, str) or name not in TOOL_NAMES:
        return ToolCall(name if isinstance(name, str) else None, None, raw,
                        f"unknown tool {name!r}; the tools are {', '.join(TOOL_NAMES)}", call_id)
    if not isinstance(arguments, dict) or set(arguments) != {"code"} or not isinstance(arguments["code"], str):
        return ToolCall(name, None, raw, f'{name} takes exactly one string argument "code"', call_id)
    return ToolCall(name, {"code": arguments["code"]}, raw, None, call_id)


def call_from_json_text(text: str, call_id: str | None = None) -> ToolCall:
    """Parse one ``{"name": …, "arguments": {…}}`` text."""
    raw = text.strip()
    try:
        obj = json.loads(raw)
    except ValueError as exc:
        return ToolCall(None, None, raw, f"not JSON: {exc.msg} at character {exc.pos}", call_id)
    if not isinstance(obj, dict):
        return ToolCall(None, None, raw, "a tool call must be a JSON object with name and arguments", call_id)
    return check_call(obj.get("name"), obj.get("arguments"), raw, call_id)


def parse_tool_blocks(text: str) -> ParsedTurn:
    """Read a turn written in the ``<think>…</think>`` / ``<tool_call>{json}</tool_call>`` format."""
    reasoning = None
    think = THINK_BLOCK.match(text)
    if think:
        reasoning = think.group(1).strip() or None
        text = text[think.end():]
    calls = [call_from_json_text(m.group(1)) for m in TOOL_CALL_BLOCK.finditer(text)]
    content = END_MARKERS.sub("", TOOL_CALL_BLOCK.sub("", text)).strip()
    return ParsedTurn(content, reasoning, calls)


def parse_with_tokenizer(tokenizer: Any, completion: str | list[int], prefix: str) -> ParsedTurn:
    """Parse with the tokenizer's response schema; fall back to :func:`parse_tool_blocks`.

    ``prefix`` is the rendered prompt (the schema needs it to know what the template
    pre-filled). A tokenizer without a response schema goes straight to the fallback.
    """
    text = completion if isinstance(completion, str) else tokenizer.decode(completion)
    if getattr(tokenizer, "response_template", None) is None:
        return parse_tool_blocks(text)
    try:
        message = tokenizer.parse_response(text, prefix=prefix)
    except ValueError:  # one block is not JSON: the schema parser gives up on the turn
        return parse_tool_blocks(text)
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function", call) if isinstance(call, dict) else {}
        if not isinstance(function, dict):
            calls.append(ToolCall(None, None, json.dumps(call, default=str), "not a function call"))
            continue
        raw = json.dumps({"name": function.get("name"), "arguments": function.get("arguments")},
                         ensure_ascii=False, default=str)
        calls.append(check_call(function.get("name"), function.get("arguments"), raw))
    content = message.get("content") or ""
    return ParsedTurn(content.strip(), message.get("reasoning_content") or None, calls)
