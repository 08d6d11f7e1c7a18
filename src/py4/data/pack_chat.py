"""SFT packing: chat conversations rendered with the tokenizer's template, assistant-only
labels, packed first-fit into rows of at most ``seq_len`` tokens.

- Template: the tokenizer's own when it has ``{% generation %}`` markers; otherwise its chat
  family's training template (:mod:`py4.chat.templates`: Gemma-4, GLM-4.5 — the same
  text as the model's own template, with generation blocks), found by the template's text
  or named by the config (``chat_template_family``). :func:`check_chat_template` sets it on
  the tokenizer and says which one it used (the pack manifest's ``chat_template``). A
  template without markers that no family claims is refused, naming the families.
- Rendering: ``tokenizer.apply_chat_template(messages, tokenize=True,
  return_assistant_tokens_mask=True, return_dict=True)``; a token is supervised exactly
  when the template's ``{% generation %}`` block produced it. Tool-call arguments given as
  JSON text are decoded first (the family templates read them as mappings).
- Too long (> ``seq_len``): with ``split``, the conversation is cut *between turns* (a
  turn starts at a ``user`` message; a leading system message is repeated in every
  piece) into the fewest greedy pieces that fit; a single turn that alone exceeds
  ``seq_len`` is dropped and counted. With ``drop`` the whole conversation is dropped.
  Pieces without any supervised token are dropped and counted. Nothing is truncated.
- Packing: first-fit over ``open_bins`` open rows, in stream order; when a conversation
  fits no open row and all are open, the fullest row (oldest on ties) is written.
  ``position_ids`` restart at 0 for every conversation; padding (to ``seq_len``, labels
  -100) is a segment of its own with positions 0 .. pad-1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from py4.chat.templates import ChatTemplateError, restore_tool_arguments, use_training_template
from py4.data.instructions import Conversation
from py4.data.packed_io import IGNORE_INDEX, PackedDatasetWriter
from py4.data.tokens import DataError

__all__ = ["Rendered", "ChatPackStats", "check_chat_template", "render_conversations", "fit_conversation",
           "FirstFitPacker", "turn_groups"]

@dataclass(frozen=True)
class Rendered:
    input_ids: np.ndarray  # int32
    labels: np.ndarray  # int32, IGNORE_INDEX where not supervised

    def __len__(self) -> int:
        return len(self.input_ids)

    @property
    def supervised(self) -> int:
        return int((self.labels != IGNORE_INDEX).sum())


@dataclass
class ChatPackStats:
    conversations: int = 0
    conversations_fitting: int = 0
    conversations_split: int = 0
    conversations_dropped: int = 0
    pieces_from_splits: int = 0
    turns_dropped_too_long: int = 0
    pieces_dropped_unsupervised: int = 0
    rows: int = 0
    conversation_tokens: int = 0
    supervised_tokens: int = 0
    padding_tokens: int = 0
    segments: int = 0
    reasons: dict[str, int] = field(default_factory=dict)


def check_chat_template(tokenizer: Any, family: str | None = None) -> dict[str, Any]:
    """Give ``tokenizer`` a template that marks assistant tokens; return which one (for the manifest).

    ``family``: the config's ``chat_template_family`` (None: recognise it by the template).
    Raises DataError when no template with generation markers can be had.
    """
    try:
        chosen = use_training_template(tokenizer, family)
    except ChatTemplateError as exc:
        raise DataError(str(exc)) from None
    return chosen.describe()


def render_conversations(tokenizer: Any, conversations: Sequence[Conversation],
                         template_kwargs: dict[str, Any] | None = None, first_index: int = 0) -> list[Rendered]:
    """Render conversations with the chat template; labels are the assistant tokens only.

    Raises DataError naming the conversation (``first_index`` + its position) when the
    template fails on it (e.g. a role the template does not know: jinja's TemplateError, which
    ``raise_exception`` in a template raises), its tool-call arguments are not a JSON object, or
    ``apply_chat_template`` refuses its input (the ValueError/TypeError transformers raises for a
    message or tool it cannot take). Any other error is a bug and keeps its traceback.
    """
    from jinja2 import TemplateError

    try:
        return _render(tokenizer, conversations, template_kwargs)
    except (TemplateError, ChatTemplateError, _InputRefused) as batch_error:  # find the conversation that broke it
        if len(conversations) == 1:
            raise DataError(f"conversation {first_index}: the chat template failed: {batch_error} "
                            f"(roles: {[m.get('role') for m in conversations[0].messages]})") from None
        for i, conversation in enumerate(conversations):
            render_conversations(tokenizer, [conversation], template_kwargs, first_index + i)
        raise


class _InputRefused(Exception):
    """transformers' apply_chat_template refused a conversation it was given (bad data, not a bug)."""


def _apply_template(tokenizer: Any, conversation: Any, **kwargs: Any) -> Any:
    # transformers checks messages and tools itself and raises a plain ValueError or TypeError
    # (e.g. "Tools should either be a JSON schema ...", "Chat messages should be dicts ...").
    # Only this call's are the data's fault; the same types raised by our code stay bugs.
    try:
        return tokenizer.apply_chat_template(conversation, tokenize=True, return_assistant_tokens_mask=True,
                                             return_dict=True, **kwargs)
    except (ValueError, TypeError) as exc:
        raise _InputRefused(str(exc)) from exc


def _render(tokenizer: Any, conversations: Sequence[Conversation],
            template_kwargs: dict[str, Any] | None) -> list[Rendered]:
    kwargs = dict(template_kwargs or {})
    rendered: list[Rendered] = []
    plain = [c for c in conversations if not c.tools]
    # Batched rendering when no row carries tools (the common case); per row otherwise.
    if len(plain) == len(conversations) and conversations:
        out = _apply_template(tokenizer, [restore_tool_arguments(c.messages) for c in conversations], **kwargs)
        pairs: list[tuple[Any, Any]] = list(zip(out["input_ids"], out["assistant_masks"], strict=True))
    else:
        pairs = []
        for c in conversations:
            out = _apply_template(tokenizer, restore_tool_arguments(c.messages), tools=c.tools, **kwargs)
            pairs.append((out["input_ids"], out["assistant_masks"]))
    for ids, mask in pairs:
        ids_arr = np.asarray(ids, dtype=np.int32)
        mask_arr = np.asarray(mask, dtype=bool)
        rendered.append(Rendered(ids_arr, np.where(mask_arr, ids_arr, IGNORE_INDEX).astype(np.int32)))
    return rendered


def turn_groups(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """(leading system messages, turns); a turn starts at each ``user`` message."""
    start = 0
    while start < len(messages) and messages[start].get("role") == "system":
        start += 1
    system, rest = messages[:start], messages[start:]
    groups: list[list[dict[str, Any]]] = []
    for message in rest:
        if message.get("role") == "user" or not groups:
            groups.append([])
        groups[-1].append(message)
    return system, groups


def _render_one(tokenizer: Any, messages: list[dict[str, Any]], tools: Any, kwargs: dict[str, Any]) -> Rendered:
    return render_conversations(tokenizer, [Conversation(messages, tools)], kwargs)[0]


def fit_conversation(tokenizer: Any, conversation: Conversation, rendered: Rendered, seq_len: int,
                     policy: Literal["split", "drop"], stats: ChatPackStats,
                     template_kwargs: dict[str, Any] | None = None) -> list[Rendered]:
    """The pieces of one conversation that go into rows (counting what is split or dropped)."""
    stats.conversations += 1
    if len(rendered) <= seq_len:
        stats.conversations_fitting += 1
        return _supervised_only([rendered], stats)
    if policy == "drop":
        stats.conversations_dropped += 1
        return []
    kwargs = template_kwargs or {}
    system, groups = turn_groups(conversation.messages)
    pieces: list[Rendered] = []
    current: list[list[dict[str, Any]]] = []
    current_render: Rendered | None = None
    for group in groups:
        candidate = _render_one(tokenizer, system + [m for g in current + [group] for m in g], conversation.tools,
                                kwargs)
        if len(candidate) <= seq_len:
            current, current_render = current + [group], candidate
            continue
        if current_render is not None:
            pieces.append(current_render)
        alone = _render_one(tokenizer, system + group, conversation.tools, kwargs)
        if len(alone) <= seq_len:
            current, current_render = [group], alone
        else:
            stats.turns_dropped_too_long += 1
            current, current_render = [], None
    if current_render is not None:
        pieces.append(current_render)
    pieces = _supervised_only(pieces, stats)
    if pieces:
        stats.conversations_split += 1
        stats.pieces_from_splits += len(pieces)
    else:
        stats.conversations_dropped += 1
    return pieces


def _supervised_only(pieces: list[Rendered], stats: ChatPackStats) -> list[Rendered]:
    kept = [p for p in pieces if p.supervised > 0]
    stats.pieces_dropped_unsupervised += len(pieces) - len(kept)
    return kept


class FirstFitPacker:
    """First-fit packing over a bounded number of open rows (memory: ``open_bins`` rows)."""

    def __init__(self, seq_len: int, writer: PackedDatasetWriter, stats: ChatPackStats, *, pad_id: int,
                 pad_to_seq_len: bool = True, open_bins: int = 64, rows_per_batch: int = 64):
        self.seq_len, self.writer, self.stats = seq_len, writer, stats
        self.pad_id, self.pad_to_seq_len = pad_id, pad_to_seq_len
        self.open_bins, self.rows_per_batch = open_bins, rows_per_batch
        self._bins: list[list[Rendered]] = []
        self._used: list[int] = []
        self._pending: list[dict[str, np.ndarray]] = []

    def add(self, piece: Rendered) -> None:
        for i, used in enumerate(self._used):
            if used + len(piece) <= self.seq_len:
                self._bins[i].append(piece)
                self._used[i] += len(piece)
                return
        if len(self._bins) >= self.open_bins:
            fullest = max(range(len(self._used)), key=lambda i: (self._used[i], -i))
            self._emit(self._bins.pop(fullest))
            self._used.pop(fullest)
        self._bins.append([piece])
        self._used.append(len(piece))

    def _emit(self, pieces: list[Rendered]) -> None:
        ids = [p.input_ids for p in pieces]
        labels = [p.labels for p in pieces]
        positions = [np.arange(len(p), dtype=np.int32) for p in pieces]
        used = sum(len(p) for p in pieces)
        self.stats.segments += len(pieces)
        self.stats.conversation_tokens += used
        self.stats.supervised_tokens += sum(p.supervised for p in pieces)
        pad = self.seq_len - used if self.pad_to_seq_len else 0
        if pad:
            ids.append(np.full(pad, self.pad_id, dtype=np.int32))
            labels.append(np.full(pad, IGNORE_INDEX, dtype=np.int32))
            positions.append(np.arange(pad, dtype=np.int32))
            self.stats.padding_tokens += pad
        self._pending.append({"input_ids": np.concatenate(ids), "labels": np.concatenate(labels),
                              "position_ids": np.concatenate(positions)})
        self.stats.rows += 1
        if len(self._pending) >= self.rows_per_batch:
            self.flush()

    def flush(self) -> None:
        self.writer.write_rows(self._pending)
        self._pending = []

    def finish(self, max_rows: int | None = None) -> int:
        """Write the open rows (in the order they were opened), up to ``max_rows`` rows in
        all; return how many conversation pieces were left unwritten by that limit."""
        unwritten = 0
        for pieces in self._bins:
            if max_rows is not None and self.stats.rows >= max_rows:
                unwritten += len(pieces)
                continue
            self._emit(pieces)
        self._bins, self._used = [], []
        self.flush()
        return unwritten
