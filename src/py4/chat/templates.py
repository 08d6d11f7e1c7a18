"""Chat-template families: which training template and which tool-call parser a tokenizer needs.

Assistant-only loss needs ``{% generation %}`` markers in the chat template; the Hub
templates of the campaign's models have none. Each family here names

- the inference templates it is recognised by (exact text, as TRL's ``trl/chat_templates``
  ships them: the same identity test TRL itself uses),
- the training template that renders the same text with generation blocks around what
  the model writes (shipped in ``py4/chat/training_templates``; the smoke template has its own),
- the tool-call format (:func:`py4.episodes.parsing.parse_assistant_text` reads it).

Families: ``smoke`` (our own format, :mod:`py4.chat.smoke_format`), ``gemma4`` (Gemma-4 -it,
``<|tool_call>call:NAME{…}<tool_call|>``), ``glm4moe`` (GLM-4.5 / GLM-4.5-Air,
``<tool_call>NAME<arg_key>…</arg_key><arg_value>…</arg_value></tool_call>``).

:func:`resolve_training_template` is the one entry point training code calls: the
tokenizer's own template when it already has generation markers, else its family's
training template. A tokenizer is matched by its template text; when the text is not a
known revision, an explicit family name (config ``chat_template_family``) vouches for it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from py4.errors import Py4Error

__all__ = ["ChatFamily", "ChatTemplateError", "TrainingTemplate", "FAMILIES", "family_names", "get_family",
           "template_text", "identify_family", "family_of_tokenizer", "has_generation_markers",
           "resolve_training_template", "use_training_template", "restore_tool_arguments"]

TEMPLATES_DIR = Path(__file__).parent / "training_templates"
_GENERATION = re.compile(r"{%-?\s*generation\s*-?%}")


class ChatTemplateError(Py4Error, ValueError):
    """A chat template that cannot give assistant-only labels, or an unknown family name (a user
    error: one line, exit 2; still a ValueError for callers that catch that)."""


@dataclass(frozen=True)
class ChatFamily:
    name: str
    description: str
    inference_templates: tuple[str, ...]
    """TRL template files (``trl/chat_templates/NAME``) whose exact text identifies the family."""
    training_template: str | None
    """File in ``py4/chat/training_templates`` (None: the smoke template, which carries its own markers)."""
    base_template: str | None
    """The inference template the training template renders identically to."""
    signature: tuple[str, ...]
    """Strings a template of this family contains (to recognise a revision we do not know)."""
    aliases: tuple[str, ...] = ()


FAMILIES: dict[str, ChatFamily] = {f.name: f for f in (
    ChatFamily("smoke", "py4's smoke chat format (py4.chat.smoke_format)", (), None, None,
               ("<start_of_turn>model", '<tool_call>{"name": ')),
    ChatFamily("gemma4", "Gemma-4 -it (google/gemma-4-*-it)",
               ("gemma4.jinja", "gemma4_v2.jinja", "gemma4_v3.jinja", "gemma4_v4.jinja", "gemma4_v5.jinja"),
               "gemma4_v5_training.jinja", "gemma4_v5.jinja", ("<|turn>", "<|tool_call>call:")),
    ChatFamily("glm4moe", "GLM-4.5 / GLM-4.5-Air (zai-org/GLM-4.5*)", ("glm4moe.jinja",),
               "glm4moe_training.jinja", "glm4moe.jinja", ("<|assistant|>", "<arg_key>"),
               aliases=("glm45", "glm4_moe")),
)}


def family_names() -> list[str]:
    return list(FAMILIES)


def get_family(name: str) -> ChatFamily:
    """The family called ``name`` (or one of its aliases); ChatTemplateError lists the names."""
    for family in FAMILIES.values():
        if name == family.name or name in family.aliases:
            return family
    raise ChatTemplateError(f"unknown chat template family {name!r}; families: {', '.join(FAMILIES)}")


@lru_cache(maxsize=None)
def _trl_template(file_name: str) -> str:
    import trl

    return (Path(trl.__file__).parent / "chat_templates" / file_name).read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def template_text(family: str | ChatFamily) -> str:
    """The training template of a family (text with generation markers)."""
    family = get_family(family) if isinstance(family, str) else family
    if family.training_template is None:
        from py4.chat.smoke_format import CHAT_TEMPLATE

        return CHAT_TEMPLATE
    return (TEMPLATES_DIR / family.training_template).read_text(encoding="utf-8")


def _template_of(tokenizer_or_template: Any) -> str | None:
    template = (tokenizer_or_template if isinstance(tokenizer_or_template, str) or tokenizer_or_template is None
                else getattr(tokenizer_or_template, "chat_template", None))
    if isinstance(template, dict):
        template = template.get("default")
    return template or None


def identify_family(tokenizer_or_template: Any) -> tuple[ChatFamily, bool] | None:
    """``(family, exact)`` for a tokenizer or template text; None when no family matches.

    ``exact`` is True when the text is one of the family's known templates (inference or
    training), False when only its signature strings match (an unknown revision).
    """
    text = _template_of(tokenizer_or_template)
    if text is None:
        return None
    for family in FAMILIES.values():
        known = [template_text(family)] + [_trl_template(f) for f in family.inference_templates]
        if text in known:
            return family, True
    for family in FAMILIES.values():
        if all(s in text for s in family.signature):
            return family, False
    return None


def family_of_tokenizer(tokenizer: Any, family: str | None = None) -> ChatFamily | None:
    """The family named explicitly, else the one the tokenizer's template belongs to (None: unknown)."""
    if family is not None:
        return get_family(family)
    found = identify_family(tokenizer)
    return found[0] if found else None


def has_generation_markers(template: str | None) -> bool:
    return bool(template) and bool(_GENERATION.search(template))


@dataclass(frozen=True)
class TrainingTemplate:
    """The template to render training rows with, and where it came from (for manifests)."""

    text: str
    family: str | None
    source: str
    """``tokenizer`` (its own template has markers) or ``py4:<file>`` (a shipped training template)."""
    inference_template_match: bool
    """True when the tokenizer's own template is the one ``text`` renders identically to."""

    def describe(self) -> dict[str, Any]:
        return {"family": self.family, "source": self.source,
                "inference_template_match": self.inference_template_match,
                "sha256": hashlib.sha256(self.text.encode()).hexdigest()}


def resolve_training_template(tokenizer: Any, family: str | None = None) -> TrainingTemplate:
    """The template that gives assistant-only labels for ``tokenizer``.

    - The tokenizer's template has generation markers: it is used as it is.
    - Its text is the inference template a family's training template was derived from:
      that training template (``inference_template_match`` True).
    - ``family`` names a family explicitly: its training template, whatever the tokenizer
      carries; when that is not the matching inference template, the result says so
      (``inference_template_match`` False) and a warning is logged — the caller vouched.
    - Otherwise ChatTemplateError: for another revision of a known family (say Gemma-4's
      gemma4.jinja) it names the family to set; for an unknown template, all families.
    """
    own = _template_of(tokenizer)
    if own is None and family is None:
        raise ChatTemplateError("the tokenizer has no chat template and no chat_template_family is set; "
                                f"families: {', '.join(FAMILIES)}")
    if own is not None and has_generation_markers(own) and family is None:
        found = identify_family(own)
        return TrainingTemplate(own, found[0].name if found else None, "tokenizer", True)
    chosen = get_family(family) if family is not None else None
    if chosen is None:
        found = identify_family(own)
        if found is None:
            raise ChatTemplateError(
                "the tokenizer's chat template has no {% generation %} ... {% endgeneration %} markers and is no known "
                f"family's template: assistant-only labels are impossible. Families: {', '.join(FAMILIES)} "
                "(set chat_template_family: NAME), or give chat_template: FILE.jinja with the markers")
        chosen = found[0]
        if not _matches(own, chosen):
            raise ChatTemplateError(
                f"the tokenizer's chat template is a {chosen.name} template but not the revision py4's training "
                f"template renders identically to ({chosen.base_template}); it has no {{% generation %}} markers, so "
                f"assistant-only labels need one. Set chat_template_family: {chosen.name} to use py4's "
                f"{chosen.training_template} anyway, or chat_template: FILE.jinja")
    text = template_text(chosen)
    match = _matches(own, chosen)
    if not match:
        logging.getLogger(__name__).warning(
            "chat_template_family %s: the tokenizer's own template is not %s; training renders with %s, whose text "
            "may differ from what the model sees at inference", chosen.name, chosen.base_template,
            chosen.training_template)
    source = "tokenizer" if own == text else f"py4:{chosen.training_template or 'smoke_format.CHAT_TEMPLATE'}"
    return TrainingTemplate(text, chosen.name, source, match)


def _matches(own: str | None, family: ChatFamily) -> bool:
    """Whether ``own`` is the text the family's training template renders identically to."""
    if own is None:
        return False
    return own == template_text(family) or (family.base_template is not None
                                            and own == _trl_template(family.base_template))


def use_training_template(tokenizer: Any, family: str | None = None) -> TrainingTemplate:
    """Resolve the training template and set it on ``tokenizer`` (returns what was set)."""
    chosen = resolve_training_template(tokenizer, family)
    tokenizer.chat_template = chosen.text
    return chosen


def restore_tool_arguments(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages whose tool-call arguments are mappings again (JSON strings decoded).

    The Gemma-4 and GLM templates read ``arguments`` as a mapping (Gemma-4 v5 raises on a
    string, GLM calls ``.items()``); OpenAI-style rows and Arrow storage carry JSON text.
    Raises ChatTemplateError when a string is not a JSON object.
    """
    out = []
    for message in messages:
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        if not calls:
            out.append(message)
            continue
        restored = []
        for call in calls:
            call = dict(call)
            function = dict(call.get("function", call))
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments) if arguments.strip() else {}
                except ValueError as exc:
                    raise ChatTemplateError(
                        f"tool call {function.get('name')!r}: arguments are not JSON: {exc}") from None
                if not isinstance(arguments, dict):
                    raise ChatTemplateError(f"tool call {function.get('name')!r}: arguments must be a JSON object, "
                                            f"got {type(arguments).__name__}")
                function["arguments"] = arguments
            if "function" in call:
                call["function"] = function
            else:
                call = function
            restored.append(call)
        out.append({**message, "tool_calls": restored})
    return out
