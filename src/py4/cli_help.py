"""`--help` in the words of a command line, not of Python's type annotations.

typer 0.29 prints each parameter's annotation (``<bool>`` beside a flag, ``<list[str]>``
beside ``key=value`` overrides, ``<str>``). :func:`install` replaces that column, for every
py4 and boa command, with click's usual metavars: nothing for a flag, ``TEXT``,
``INTEGER``, ``FLOAT``, ``PATH``, a choice's values, ``KEY=VALUE...`` for overrides, and
an explicit ``metavar=`` where a command gives one. Defaults are shown as before
(``[default: …]``); a default that lives in a config type is written in the help text.
"""

from __future__ import annotations

from typing import Any

_NAMES = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "Path": "PATH", "bool": "BOOLEAN"}
_INSTALLED = False


def _words(param: Any, ctx: Any, original) -> str | None:
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return None  # a flag takes no value
    if param.metavar is not None:  # an argument shows its metavar as its name already
        return None if param.param_type_name == "argument" else param.metavar
    shown = original(param, ctx)
    if shown is None:
        return None
    text = str(shown).replace("<", "").replace(">", "")  # typer writes <str>, <list[str]>...
    many = text.endswith("...") or text.startswith("list[")
    inner = text.removesuffix("...").removeprefix("list[").removesuffix("]")
    if param.name in ("overrides", "overrides_"):
        return "KEY=VALUE..."
    if "|" in inner:  # a choice: its values
        word = inner
    else:
        word = _NAMES.get(inner, inner.upper())
    return word + ("..." if many else "")


def install() -> None:
    """Patch typer's help rendering once (idempotent; imported by py4.cli and boa.cli)."""
    global _INSTALLED
    if _INSTALLED:
        return
    from typer import core

    for cls in (core.TyperOption, core.TyperArgument):
        original = cls.display_type_rich

        def display_type_rich(self, ctx, _original=original):
            return _words(self, ctx, _original)

        cls.display_type_rich = display_type_rich
    _INSTALLED = True
