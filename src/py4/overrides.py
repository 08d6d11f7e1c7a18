"""A config override: a dotted key and a typed value, and the ``key=value`` text a command line carries.

An override given as text (a campaign spec's ``stage_overrides``, ``py4 train``'s arguments) is
read once with YAML's scalar rules (`parse_value`), so ``lr=1e-5``, ``packing=true``,
``gpus=[0,1]`` and ``name=null`` mean what they mean in a config file, and the text is kept as
written. An override made in code (a campaign DAG's run folders, counts, seeds) is typed already;
its text is made for the one place that needs it, a command line (`value_text`), and is the first
of a few candidates that `parse_value` reads back as an equal value of the same type: a string
YAML would read as something else (``"1e5"`` with a dot missing is a string, ``"yes"`` a bool,
``"0x10"`` an int, ``"2024-01-01"`` a date, ``"null"`` nothing) is quoted. So a stage given the
typed values in the campaign's process loads the same config as one started from the command line.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from py4.errors import ConfigError


def parse_value(text: str) -> Any:
    """The typed value of an override's text: YAML's scalar rules; text YAML cannot read is the string."""
    try:
        return yaml.safe_load(text) if text != "" else ""
    except yaml.YAMLError:
        return text


def same_value(a: Any, b: Any) -> bool:
    """Equal and of the same type all the way down (``1 == True == 1.0`` does not count; NaN is NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    return bool(a == b)


def _plain(value: Any) -> str:
    # Python's own spelling: how override texts are written by hand (paths, counts, seeds).
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def _flow(value: Any) -> str:
    # YAML flow text with every string double-quoted (JSON's escapes are YAML's) and floats in
    # YAML 1.1's form, which wants a dot before an exponent (1.0e-05, not 1e-05).
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        return yaml.safe_dump(value).removesuffix("\n...\n").strip()
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flow(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    return _plain(value)


def value_text(value: Any) -> str:
    """The command-line text of a typed value: the first of its plain spelling and its quoted YAML
    flow text that `parse_value` reads back as `same_value`; ConfigError when neither does (a
    type a config file cannot hold, such as a set or a date object)."""
    for text in (_plain(value), _flow(value)):
        if same_value(parse_value(text), value):
            return text
    raise ConfigError("<overrides>", [f"{value!r} ({type(value).__name__}): no key=value text reads back as it"])


def _typed(value: Any) -> Any:
    # What a config file could hold: a path is its string, a tuple a list.
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, str):
        return str(value)  # a str enum's member is its string
    if isinstance(value, tuple | list):
        return [_typed(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _typed(v) for k, v in value.items()}
    return value


@dataclass(frozen=True, kw_only=True)
class Override:
    """One override of a stage's config: the dotted key, the typed value the stage is given in
    process, and the text its command line carries (``parse_value(text)`` is ``value``)."""

    key: str
    value: Any
    text: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", _typed(self.value))
        if not self.text:
            object.__setattr__(self, "text", value_text(self.value))

    @property
    def path(self) -> list[str]:
        return self.key.split(".")

    @classmethod
    def parse(cls, item: str) -> Override:
        """From ``key=value`` as written in a campaign spec or on a command line (the text is kept
        as written). Raises ConfigError naming a malformed item."""
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key or any(not part for part in key.split(".")):
            raise ConfigError("<overrides>",
                              [f"override {item!r}: expected key=value with a dotted key, e.g. train.lr=1e-5"])
        return cls(key=key, value=parse_value(text), text=text)

    def __str__(self) -> str:
        return f"{self.key}={self.text}"


def overrides(items: Mapping[str, Any] | Iterable[str | Override] = ()) -> list[Override]:
    """Overrides from a mapping (key -> typed value, in order) or from ``key=value`` strings (or
    Overrides, kept); ConfigError naming every malformed string."""
    if isinstance(items, Mapping):
        return [Override(key=k, value=v) for k, v in items.items()]
    out, problems = [], []
    for item in items:
        try:
            out.append(item if isinstance(item, Override) else Override.parse(item))
        except ConfigError as exc:
            problems += exc.problems
    if problems:
        raise ConfigError("<overrides>", problems)
    return out
