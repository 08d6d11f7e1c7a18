"""A command's options declared once, on a pydantic model: the typer command is built from it, and a
command line is written from it.

Each field of the model is one option: its flag is ``--`` and the field's name with dashes for
underscores (a trailing ``_`` dropped: ``lambda_`` is ``--lambda``), its type, default and
``Field(description=…)`` are the option's type, default and help. A bool field is a switch that turns
its default (``--no-progress`` for a field defaulting to True, ``--force`` for one defaulting to
False). ``Annotated[…, Cli(…)]`` adds what a name cannot say: short names (``-c``), a flag written
otherwise (``--progress/--no-progress``), a list written once comma-joined, a metavar.

:func:`options_command` turns ``def cmd(options: Model, …)`` into the typer command whose options are
the model's fields (values reach ``cmd`` as one validated ``Model``); :func:`command_words` writes the
flags of given values in field order (what a campaign's DAG node runs).

Deviations from TRL's ``TrlParser`` (dataclass fields -> argparse): the model is pydantic and the
command typer's (so ``--help``, the usage errors and the ``key=value`` overrides are the other
commands'), a value that parses but does not validate (a ``Literal``, a length) is a
:class:`~py4.config.ConfigError` naming the field, and no YAML file fills the options.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import pydantic
import typer
from pydantic.fields import FieldInfo

from py4.config import validate_config

M = TypeVar("M", bound=pydantic.BaseModel)


@dataclass(frozen=True)
class Cli:
    """How an option is written where its field's name does not say it (``Annotated`` metadata)."""

    short: tuple[str, ...] = ()
    """Other names of the flag: ``("-c",)``."""
    flag: str | None = None
    """The flag itself, when not ``--<name>``; a bool may name both forms: ``--progress/--no-progress``."""
    joined: bool = False
    """A list written once, comma-joined (``--split a,b``); the command takes it repeated too."""
    metavar: str | None = None


def cli_of(info: FieldInfo) -> Cli:
    return next((m for m in info.metadata if isinstance(m, Cli)), Cli())


def _is_switch(info: FieldInfo) -> bool:
    return info.annotation is bool


def flag_of(name: str, info: FieldInfo) -> str:
    """The flag a field is written as (``--no-progress``, ``--max-tokens``, ``--lambda``)."""
    cli = cli_of(info)
    if cli.flag:
        return cli.flag
    word = name.rstrip("_").replace("_", "-")
    return f"--no-{word}" if _is_switch(info) and info.default is True else f"--{word}"


def _param_name(name: str, info: FieldInfo) -> str:
    """The parameter's name in the command: a ``--no-x`` switch holds ``no_x`` (click names a
    parameter after its flag in usage errors)."""
    flag = flag_of(name, info)
    if _is_switch(info) and "/" not in flag and flag.startswith("--no-"):
        return "no_" + name
    return name


def _parameter(name: str, info: FieldInfo) -> inspect.Parameter:
    cli = cli_of(info)
    flag = flag_of(name, info)
    annotation: Any = info.annotation
    if typing.get_origin(annotation) is typing.Literal:  # typer takes no Literal: the model checks it
        annotation = str
    if _is_switch(info) and "/" not in flag:
        default: Any = False  # the switch is present or not; the field is its default turned
    else:
        default = ... if info.is_required() else info.default
    option = typer.Option(default, flag, *cli.short, help=_help(info.description), metavar=cli.metavar)
    return inspect.Parameter(_param_name(name, info), inspect.Parameter.KEYWORD_ONLY, default=option,
                             annotation=annotation)


def _help(description: str | None) -> str | None:
    """The help as written: typer renders help as rich markup, where ``py4[inspect]`` would lose
    its brackets."""
    from rich.markup import escape

    return None if description is None else escape(description)


def _field_value(name: str, info: FieldInfo, value: Any) -> Any:
    flag = flag_of(name, info)
    if _is_switch(info) and "/" not in flag:
        return (not value) if info.default is True else bool(value)
    if value is not None and cli_of(info).joined:  # --split a,b --split c: one list
        return [part.strip() for item in value for part in str(item).split(",") if part.strip()]
    return value


def _param_names(model: type[pydantic.BaseModel]) -> set[str]:
    return {_param_name(name, info) for name, info in model.model_fields.items()}


def options_from_params(model: type[M], params: Mapping[str, Any], source: str = "options") -> M:
    """The options a command built by :func:`options_command` hands its body, from the values click
    parsed (``params``, by parameter name: a ``--no-x`` switch as ``no_x``)."""
    values = {name: _field_value(name, info, params[_param_name(name, info)])
              for name, info in model.model_fields.items()}
    return validate_config(model, values, source)


def overrides_argument(help_text: str) -> Any:
    """The ``key=value`` overrides a config-file command ends with."""
    return typer.Argument(None, help=help_text)


def options_command(model: type[pydantic.BaseModel], *, overrides: str | None = None,
                    source: str = "options") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate ``cmd(…, options: Model[, overrides: list[str]])``: the result is a typer command whose
    parameters are ``cmd``'s own (where they stand), one option per field of ``model`` (in field
    order, where ``options`` stands) and, with ``overrides`` (its help), the trailing ``key=value``
    arguments. A value typer parses but the model refuses is a ConfigError naming the field
    (``source``: where the message says it is from)."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        hints = typing.get_type_hints(command, include_extras=True)
        skip = {"options", *(["overrides"] if overrides is not None else [])}
        names = list(inspect.signature(command).parameters)
        own = [p.replace(annotation=hints.get(p.name, p.annotation), kind=inspect.Parameter.KEYWORD_ONLY)
               for p in inspect.signature(command).parameters.values() if p.name not in skip]
        before = [p for p in own if names.index(p.name) < names.index("options")]
        fields = list(model.model_fields.items())
        params = [*before, *(_parameter(name, info) for name, info in fields), *own[len(before):]]
        if overrides is not None:
            params.append(inspect.Parameter("overrides", inspect.Parameter.KEYWORD_ONLY,
                                            default=overrides_argument(overrides), annotation=list[str] | None))

        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            options = options_from_params(model, kwargs, source)
            kwargs = {k: v for k, v in kwargs.items() if k not in _param_names(model)}
            if overrides is not None:
                kwargs["overrides"] = list(kwargs.pop("overrides", None) or [])
            return command(*args, options=options, **kwargs)

        run.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in params}
        return run

    return decorate


def command_words(model: type[pydantic.BaseModel], values: Mapping[str, Any]) -> list[str]:
    """The flags of ``values`` (field -> value, as given) in the model's field order: None and a
    switch at its default are not written, a list is a repeated flag (or one comma-joined)."""
    words: list[str] = []
    for name, info in model.model_fields.items():
        value = values.get(name)
        if value is None:
            continue
        flag = flag_of(name, info)
        if isinstance(value, bool):
            if value != info.default:
                on, _, off = flag.partition("/")
                words.append(on if value or not off else off)
        elif isinstance(value, (list, tuple)):
            joined = cli_of(info).joined
            words += [flag, ",".join(map(str, value))] if joined else [w for v in value for w in (flag, str(v))]
        else:
            words += [flag, str(value)]
    return words


def described(model: type[pydantic.BaseModel]) -> dict[str, str]:
    """flag -> help of every option of ``model`` (what its command's ``--help`` lists)."""
    return {flag_of(name, info): info.description or "" for name, info in model.model_fields.items()}
