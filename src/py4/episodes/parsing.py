"""Reading tool calls out of a policy's turn; malformed calls are kept and counted.

Every reader gives the same :class:`ParsedTurn`:

- :func:`parse_with_tokenizer` uses the tokenizer's response schema
  (``tokenizer.parse_response``, transformers >= 5.13), as TRL does. That parser fails
  the whole turn when one ``<tool_call>`` block is not JSON; we then fall back to the
  block reader. A tokenizer without a response schema is read in its chat family's
  format (:func:`py4.chat.templates.family_of_tokenizer`).
- :func:`parse_assistant_text` (text, family) reads one family's format, each call on its
  own, so that the good calls of a turn still run and the bad one is reported:

  - ``smoke`` (and unknown families): ``<think>…</think>`` then
    ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` blocks (:func:`parse_tool_blocks`);
  - ``gemma4``: ``<|channel>thought\n…<channel|>`` then
    ``<|tool_call>call:NAME{key:VALUE,…}<tool_call|>``, strings between ``<|"|>`` marks and
    written raw, numbers/booleans/null bare, nested ``{…}``/``[…]`` (the Gemma-4 template's
    ``format_argument``); the turn ends at ``<|tool_response>`` or ``<turn|>``;
  - ``glm4moe``: ``<think>…</think>`` then ``<tool_call>NAME\n<arg_key>K</arg_key>\n
    <arg_value>V</arg_value>…</tool_call>``; the template writes strings raw and other
    values as JSON, so a value is JSON-decoded unless the tool's parameter is a string
    (the tool schema decides, as vLLM's GLM-4.5 parser does); the turn ends at
    ``<|observation|>`` or ``<|user|>``.

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


# --- Gemma-4: <|tool_call>call:NAME{key:VALUE,...}<tool_call|> -------------------------------------------

GEMMA4_QUOTE = '<|"|>'
GEMMA4_CHANNEL = re.compile(r"<\|channel>thought\n?(.*?)(?:<channel\|>|$)", re.DOTALL)
GEMMA4_CHANNEL_CLOSE = "<channel|>"
GEMMA4_CALL_OPEN = re.compile(r"<\|tool_call>call:([^{<]*)")
GEMMA4_CALL_CLOSE = "<tool_call|>"
GEMMA4_END_MARKERS = re.compile(r"(?:<turn\|>|<\|tool_response>|<eos>)")
_GEMMA4_KEY = re.compile(r"\s*([^:{}\[\],]+?)\s*:")
_GEMMA4_SCALAR = re.compile(r"[^,}\]]*")


class _GemmaSyntaxError(ValueError):
    pass


def read_gemma4_arguments(text: str) -> dict[str, Any]:
    """The mapping a Gemma-4 call writes between ``call:NAME`` and ``<tool_call|>`` (``{…}``).

    Raises ValueError when ``text`` is not exactly one such mapping.
    """
    reader = _GemmaValueReader(text, 0)
    if not text.startswith("{"):
        raise _GemmaSyntaxError("expected '{'")
    out = reader.mapping()
    if reader.pos != len(text):
        raise _GemmaSyntaxError(f"unexpected text after the arguments at character {reader.pos}")
    return out


class _GemmaValueReader:
    """Reads the template's ``format_argument`` output back into Python values."""

    def __init__(self, text: str, pos: int):
        self.text, self.pos = text, pos

    def value(self) -> Any:
        text = self.text
        if text.startswith(GEMMA4_QUOTE, self.pos):
            start = self.pos + len(GEMMA4_QUOTE)
            end = text.find(GEMMA4_QUOTE, start)
            if end < 0:
                raise _GemmaSyntaxError(f'a string opened with {GEMMA4_QUOTE} at character {self.pos} is not closed')
            self.pos = end + len(GEMMA4_QUOTE)
            return text[start:end]
        if text.startswith("{", self.pos):
            return self.mapping()
        if text.startswith("[", self.pos):
            return self.sequence()
        token = _GEMMA4_SCALAR.match(text, self.pos).group(0)
        self.pos += len(token)
        return _gemma4_scalar(token.strip())

    def mapping(self) -> dict[str, Any]:
        self.pos += 1  # "{"
        out: dict[str, Any] = {}
        if self.text.startswith("}", self.pos):
            self.pos += 1
            return out
        while True:
            if self.text.startswith(GEMMA4_QUOTE, self.pos):  # keys written with escape_keys=True
                key = self.value()
                if not self.text.startswith(":", self.pos):
                    raise _GemmaSyntaxError(f"expected ':' after key {key!r} at character {self.pos}")
                self.pos += 1
            else:
                match = _GEMMA4_KEY.match(self.text, self.pos)
                if match is None:
                    raise _GemmaSyntaxError(f"expected KEY: at character {self.pos}")
                key, self.pos = match.group(1), match.end()
            out[key] = self.value()
            self.pos = self._after_item("}")
            if self.text[self.pos - 1] == "}":
                return out

    def sequence(self) -> list[Any]:
        self.pos += 1  # "["
        out: list[Any] = []
        if self.text.startswith("]", self.pos):
            self.pos += 1
            return out
        while True:
            out.append(self.value())
            self.pos = self._after_item("]")
            if self.text[self.pos - 1] == "]":
                return out

    def _after_item(self, closer: str) -> int:
        if self.pos < len(self.text) and self.text[self.pos] in (",", closer):
            return self.pos + 1
        raise _GemmaSyntaxError(f"expected ',' or '{closer}' at character {self.pos}")


def _gemma4_scalar(token: str) -> Any:
    """A bare value: null/None, true/false (and Python's True/False), a number, else the text."""
    if token in ("null", "None"):
        return None
    if token in ("true", "True", "false", "False"):
        return token in ("true", "True")
    for kind in (int, float):
        try:
            return kind(token)
        except ValueError:
            pass
    return token


def parse_gemma4_turn(text: str) -> ParsedTurn:
    """Read a turn in Gemma-4's format (thinking channel, ``<|tool_call>call:…<tool_call|>`` blocks)."""
    reasoning = None
    channel = GEMMA4_CHANNEL.search(text)
    if channel:
        reasoning = channel.group(1).strip() or None
        text = text[:channel.start()] + text[channel.end():]
    elif GEMMA4_CHANNEL_CLOSE in text:  # the prompt pre-filled "<|channel>thought\n" (thinking after a tool response)
        end = text.index(GEMMA4_CHANNEL_CLOSE)
        reasoning = text[:end].strip() or None
        text = text[end + len(GEMMA4_CHANNEL_CLOSE):]
    calls, kept, pos = [], [], 0
    for match in GEMMA4_CALL_OPEN.finditer(text):
        if match.start() < pos:
            continue  # inside the previous call's arguments
        kept.append(text[pos:match.start()])
        name = match.group(1).strip()
        reader = _GemmaValueReader(text, match.end())
        try:
            if not text.startswith("{", reader.pos):
                raise _GemmaSyntaxError(f"expected '{{' after call:{name}")
            arguments = reader.mapping()
            if not text.startswith(GEMMA4_CALL_CLOSE, reader.pos):
                raise _GemmaSyntaxError(f"expected {GEMMA4_CALL_CLOSE} at character {reader.pos}")
            pos = reader.pos + len(GEMMA4_CALL_CLOSE)
            calls.append(check_call(name, arguments, text[match.start():pos]))
        except _GemmaSyntaxError as exc:
            end = text.find(GEMMA4_CALL_CLOSE, match.end())
            pos = len(text) if end < 0 else end + len(GEMMA4_CALL_CLOSE)
            calls.append(ToolCall(name or None, None, text[match.start():pos], f"not a Gemma-4 tool call: {exc}"))
    kept.append(text[pos:])
    content = GEMMA4_END_MARKERS.sub("", "".join(kept)).strip()
    return ParsedTurn(content, reasoning, calls)


# --- GLM-4.5: <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>...</tool_call> ----------------

GLM_TOOL_CALL_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
GLM_ARGUMENT = re.compile(r"<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>", re.DOTALL)
GLM_END_MARKERS = re.compile(r"(?:<\|observation\|>|<\|user\|>|<\|endoftext\|>)")
# The parameters our tools declare as strings (py4.episodes.environment.TOOL_SCHEMAS): the GLM
# template writes a string raw, so the text "42" could be a number or a string: the schema decides.
STRING_PARAMETERS: dict[str, frozenset[str]] = {name: frozenset({"code"}) for name in TOOL_NAMES}


def read_glm4moe_call(body: str, string_parameters: dict[str, frozenset[str]] | None = None
                      ) -> tuple[str, dict[str, Any]]:
    """``(name, arguments)`` of one GLM call's body (the text between ``<tool_call>`` and
    ``</tool_call>``); values are JSON-decoded unless ``string_parameters[name]`` lists them.

    Raises ValueError when there is no name or text outside the key/value pairs.
    """
    head = re.match(r"\s*([^\s<]*)", body)
    name = head.group(1)
    rest = body[head.end():]
    if not name:
        raise ValueError("a GLM tool call starts with the tool's name")
    arguments: dict[str, Any] = {}
    strings = (STRING_PARAMETERS if string_parameters is None else string_parameters).get(name, frozenset())
    for match in GLM_ARGUMENT.finditer(rest):
        key, value = match.group(1).strip(), match.group(2)
        if key not in strings:
            try:
                value = json.loads(value)
            except ValueError:
                pass  # the template writes strings raw
        arguments[key] = value
    leftover = GLM_ARGUMENT.sub("", rest).strip()
    if leftover:
        raise ValueError(f"{name}: text outside <arg_key>/<arg_value> pairs: {leftover[:80]!r}")
    return name, arguments


def _glm_call(body: str, raw: str, string_parameters: dict[str, frozenset[str]]) -> ToolCall:
    try:
        name, arguments = read_glm4moe_call(body, string_parameters)
    except ValueError as exc:
        head = re.match(r"\s*([^\s<]*)", body).group(1)
        return ToolCall(head or None, None, raw, f"not a GLM tool call: {exc}")
    return check_call(name, arguments, raw)


def parse_glm4moe_turn(text: str, string_parameters: dict[str, frozenset[str]] | None = None) -> ParsedTurn:
    """Read a turn in GLM-4.5's format (``<think>`` block, XML-style ``<tool_call>`` blocks)."""
    strings = STRING_PARAMETERS if string_parameters is None else string_parameters
    reasoning = None
    think = THINK_BLOCK.match(text)
    if think:
        reasoning = think.group(1).strip() or None
        text = text[think.end():]
    calls = [_glm_call(m.group(1), m.group(0), strings) for m in GLM_TOOL_CALL_BLOCK.finditer(text)]
    content = GLM_END_MARKERS.sub("", GLM_TOOL_CALL_BLOCK.sub("", text)).strip()
    return ParsedTurn(content, reasoning, calls)


_PARSERS = {"smoke": parse_tool_blocks, "gemma4": parse_gemma4_turn, "glm4moe": parse_glm4moe_turn}


def parse_assistant_text(text: str, family: str | None = None) -> ParsedTurn:
    """Read an assistant turn (the text after the prompt) in ``family``'s tool-call format.

    ``family``: a name or alias from :mod:`py4.chat.templates` (``smoke``, ``gemma4``,
    ``glm4moe``/``glm45``); None reads the smoke JSON-block format. An unknown name raises
    ValueError listing the families.
    """
    if family is None:
        return parse_tool_blocks(text)
    from py4.chat.templates import get_family

    return _PARSERS[get_family(family).name](text)


def family_parser(tokenizer: Any):
    """The text parser for ``tokenizer``'s chat family (the smoke block reader when unknown)."""
    from py4.chat.templates import family_of_tokenizer

    family = family_of_tokenizer(tokenizer)
    return _PARSERS[family.name] if family is not None else parse_tool_blocks


def parse_with_tokenizer(tokenizer: Any, completion: str | list[int], prefix: str) -> ParsedTurn:
    """Parse with the tokenizer's response schema; else in the tokenizer's family format.

    ``prefix`` is the rendered prompt (the schema needs it to know what the template
    pre-filled). A tokenizer without a response schema is read by its chat family's
    parser (:func:`parse_assistant_text`; the JSON-block reader when no family matches).
    """
    text = completion if isinstance(completion, str) else tokenizer.decode(completion)
    if getattr(tokenizer, "response_template", None) is None:
        return family_parser(tokenizer)(text)
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
