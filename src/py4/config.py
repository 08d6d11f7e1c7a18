"""Strict YAML configs with ``key=value`` overrides.

Every stage, generator and campaign has a frozen pydantic model as its config type.
Defaults live in that type only. Loading is strict: unknown keys are errors, every
problem is collected and reported at once with the file, the dotted field path, what
was given and what was expected.

    cfg = load_config(MidtrainConfig, "configs/train/smoke_midtrain.yaml", ["lr=2e-5"])
    write_resolved_config(run_dir, cfg)
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

import pydantic
import yaml

from py4.errors import ConfigError
from py4.fileio import atomic_write_text
from py4.overrides import Override, overrides

__all__ = [
    "ConfigError",
    "ReferenceNotFound",
    "StrictModel",
    "reference_parts",
    "resolve_reference",
    "load_config",
    "read_config_mapping",
    "apply_overrides",
    "dump_config",
    "write_resolved_config",
]


class ReferenceNotFound(ConfigError, ImportError):
    """A ``module:name`` a config names that cannot be imported (an ImportError too, for the
    callers that import it). Its message is one line: the field, the reference and the file."""

    def __init__(self, source: str, problems: list[str]):
        super().__init__(source, problems)
        where = "" if source == "<config>" else f" (in {source})"
        self.args = ("; ".join(problems) + where,)
        self.msg = self.args[0]


def reference_parts(reference: str, kind: str = "name") -> tuple[str, str]:
    """``module:name`` as (module, name); ValueError ``expected 'module:<kind>'`` for anything else
    (what a field validator raises, so pydantic names the field)."""
    module, sep, name = reference.partition(":") if isinstance(reference, str) else ("", "", "")
    if not (sep and module and name.isidentifier()):
        raise ValueError(f"expected 'module:{kind}', got {reference!r}")
    return module, name


def resolve_reference(reference: str, field: str, source: str = "<config>", *, kind: str = "name") -> Any:
    """The object a ``module:name`` reference names, its module imported on the way.

    ``field``: the config field that holds it and ``source``: its file, when known; both are in
    the ReferenceNotFound raised for a malformed reference, a module or name that is not there,
    and (``kind="function"``) an object that is not callable.
    """
    import importlib

    try:
        module_name, name = reference_parts(reference, kind)
    except ValueError as exc:
        raise ReferenceNotFound(source, [f"{field}: {exc}"]) from None
    try:
        value = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise ReferenceNotFound(source, [f"{field}: {reference!r} not found ({exc})"]) from None
    if kind == "function" and not callable(value):
        raise ReferenceNotFound(source, [f"{field}: {reference!r} is not callable"])
    return value


class StrictModel(pydantic.BaseModel):
    """Base of every config type: frozen, unknown keys rejected."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, validate_default=True)


HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
"""A Hub repository id as the Hub spells one: ``owner/name`` of letters, digits, ``_ . -``."""


def is_hub_id(value: str) -> bool:
    """Whether ``value`` names a Hub repository: exactly ``owner/name`` (`HUB_ID`), and not a
    folder (one that exists here; one a campaign writes, ``{out}/…``, does not match)."""
    return HUB_ID.match(value) is not None and not Path(value).expanduser().exists()


def unpinned_hub_reference(value: str | None, revision: str | None) -> bool:
    """Whether ``value`` names a Hub repository (:func:`is_hub_id`) without a ``revision``: every
    Hub reference of a config is pinned, or a re-run may read other files than the run it repeats
    (a tokenizer's template changes between revisions)."""
    return value is not None and not revision and is_hub_id(value)


def require_pinned(value: str | None, revision: str | None, field: str, revision_field: str) -> None:
    """Raise ValueError (a validation problem naming both fields) for an unpinned Hub reference."""
    if unpinned_hub_reference(value, revision):
        raise ValueError(f"{field} {value!r} is a Hub id without a pinned revision: set {revision_field} "
                         "to the commit the run used")


T = TypeVar("T", bound=pydantic.BaseModel)


def apply_overrides(data: dict[str, Any], items: Iterable[str | Override]) -> dict[str, Any]:
    """Return a copy of ``data`` with dotted ``key=value`` overrides applied: strings are read with
    YAML's scalar rules, an `Override` gives its typed value as it is; a malformed string is a
    ConfigError naming it (`py4.overrides.overrides`)."""
    import copy

    out = copy.deepcopy(data)
    for override in overrides(items):
        path, value = override.path, override.value
        node = out
        for part in path[:-1]:
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            if not isinstance(child, dict):
                raise ConfigError("<overrides>", [f"{'.'.join(path)}: {part!r} is not a mapping"])
            node = child
        node[path[-1]] = copy.deepcopy(value)  # an Override's value is shared by every load of its call
    return out


def _walk(model: type[pydantic.BaseModel], loc: tuple[Any, ...]) -> tuple[list[str], Any]:
    """``loc`` as a config spells it and the model it leads to (None when unknown).

    pydantic puts a discriminated union's tag into the path (``policy.gold.model``); the config
    has no such level (``policy.model``), so the tag only picks the union's member.
    """
    path: list[str] = []
    current: Any = model
    union: tuple[str, tuple[Any, ...]] | None = None  # (discriminator, members) awaiting the tag
    for part in loc:
        if union is not None:
            key, members = union
            current, union = next((m for m in members if part in _tags(m, key)), None), None
            continue
        path.append(str(part))
        if isinstance(part, int):
            continue
        info = (getattr(current, "model_fields", None) or {}).get(part)
        if info is None:
            current = None
            continue
        members = tuple(m for m in getattr(info.annotation, "__args__", ()) if _model_in(m) is not None)
        if isinstance(info.discriminator, str) and members:
            union, current = (info.discriminator, members), None
        else:
            current = _model_in(info.annotation)
    return path, current


def _tags(model: Any, discriminator: str) -> tuple[Any, ...]:
    field = getattr(model, "model_fields", {}).get(discriminator)
    return getattr(field.annotation, "__args__", ()) if field is not None else ()


def _model_in(annotation: Any) -> type[pydantic.BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _describe(err: Mapping[str, Any], model: type[pydantic.BaseModel]) -> str:
    loc = tuple(err.get("loc", ()))
    parts, _ = _walk(model, loc)
    path = ".".join(parts) or "<root>"
    if err.get("type") == "extra_forbidden":
        _, holder = _walk(model, loc[:-1])
        choices = list(getattr(holder, "model_fields", {}) or {})
        hint = difflib.get_close_matches(parts[-1], choices, n=1) if parts else []
        did_you_mean = f"; did you mean {hint[0]!r}?" if hint else ""
        allowed = f" (allowed: {', '.join(sorted(choices))})" if choices else ""
        return f"{path}: unknown key{did_you_mean}{allowed}"
    if err.get("type") == "union_tag_invalid":  # a discriminated union's key names no member
        ctx = err.get("ctx") or {}
        key = str(ctx.get("discriminator", "")).strip("'")
        return f"{path}.{key}: unknown {ctx.get('tag')!r}; expected one of {ctx.get('expected_tags')}"
    given = err.get("input")
    given_text = repr(given)
    if len(given_text) > 80:
        given_text = given_text[:77] + "..."
    return f"{path}: {err.get('msg')} (given {given_text})"


def validate_config(model: type[T], data: Any, source: str = "<config>") -> T:
    """Validate a mapping against ``model``; raises ConfigError listing every problem."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(source, [f"<root>: expected a mapping, got {type(data).__name__}"])
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise ConfigError(source, [_describe(e, model) for e in exc.errors()]) from None


def read_yaml(path: str | Path) -> Any:
    """Read a YAML file; raises ConfigError with the file and line on a parse error."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(str(path), ["file not found"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), [f"cannot read: {exc}"]) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ConfigError(str(path), [f"{where}YAML syntax error: {getattr(exc, 'problem', exc)}"]) from None


def read_config_mapping(path: str | Path | None, source: str, what: str = "a mapping") -> dict[str, Any]:
    """The top-level mapping of a YAML config file: empty for no file or an empty one; ConfigError
    naming ``source`` when the file holds something else (``what`` says what was expected)."""
    data = read_yaml(path) if path is not None else None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(source, [f"<root>: expected {what}, got {type(data).__name__}"])
    return data


def load_config(model: type[T], path: str | Path | None = None, overrides: Iterable[str | Override] = ()) -> T:
    """Load ``path`` (or the model's defaults when None), apply overrides, validate strictly.

    Raises ConfigError (a ValueError) listing every problem found.
    """
    source = str(path) if path is not None else f"<defaults of {model.__name__}>"
    data = apply_overrides(read_config_mapping(path, source), overrides)
    return validate_config(model, data, source)


def dump_config(config: pydantic.BaseModel) -> str:
    """The resolved config as YAML (every field, defaults included)."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True)


def write_resolved_config(run_dir: str | Path, config: pydantic.BaseModel, name: str = "resolved_config.yaml") -> Path:
    """Write the resolved config next to a run's outputs (atomically)."""
    return atomic_write_text(Path(run_dir) / name, dump_config(config))
