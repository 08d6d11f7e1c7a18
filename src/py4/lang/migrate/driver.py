"""`migrate`: run the fixers over a Python 3 program and render the Python-4 program."""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterable

from py4.lang.migrate import (
    fix_annotations, fix_bounds, fix_builtins, fix_compare, fix_defaults, fix_dicts,
    fix_fstrings, fix_keywords, fix_let, fix_methods, fix_names, fix_numbers,
)
from py4.lang.migrate.context import Context
from py4.lang.migrate.model import FIXABLE_RULES, CannotConvert, MigrationResult
from py4.lang.migrate.patches import PatchConflict

# Renames run first: later fixers (let hoisting) read the rename table.
FIXERS = (fix_names, fix_keywords, fix_let, fix_bounds, fix_dicts, fix_methods, fix_builtins,
          fix_numbers, fix_compare, fix_defaults, fix_annotations)
# Statement-level fixers that make no sense inside an f-string field.
_FRAGMENT_SKIPS = frozenset({"P4-02", "P4-05", "P4-26"})


class MigrationError(ValueError):
    """Bad arguments to `migrate` (an unknown rule id)."""


def resolve_rules(only_rules: Iterable[str] | None, skip_rules: Iterable[str] | None) -> frozenset[str]:
    """The enabled rule ids. Raises MigrationError naming unknown ids and the valid ones."""
    only = None if only_rules is None else {r.strip().upper() for r in only_rules if r.strip()}
    skip = {r.strip().upper() for r in (skip_rules or ()) if r.strip()}
    unknown = sorted(((only or set()) | skip) - set(FIXABLE_RULES))
    if unknown:
        raise MigrationError(f"unknown rule id(s) {', '.join(unknown)}; "
                             f"expected ids P4-01 … P4-30")
    enabled = set(FIXABLE_RULES) if only is None else only
    return frozenset(enabled - skip)


def _compiles_as_python4(source: str) -> bool:
    from py4.lang.compile import compile_py4
    return compile_py4(source).ok


def _refusals(source: str, result: MigrationResult) -> list[CannotConvert]:
    """Why a migration the fixers call complete does not compile, at Python 3 lines.

    The fixers rewrite what Python-4 spells differently; what it does not have at all
    (dynamic code such as `eval`, modules and attributes outside its closed world) only
    the compiler knows. Its errors become `cannot_convert` entries, so "complete" always
    means "compiles".
    """
    from py4.lang.compile import compile_py4
    errors = [d for d in compile_py4(result.source).diagnostics if d.severity == "error"]
    line_of = _source_lines(source, result.source)
    return [CannotConvert(line_of(d.line), d.col, f"Python-4 has no equivalent: {d.message}")
            for d in errors]


def _source_lines(before: str, after: str):
    """Map a line of the migrated text to the Python 3 line it came from."""
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    table: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for offset, j in enumerate(range(j1, j2)):
            table[j + 1] = min(i1 + offset, max(i2 - 1, i1)) + 1 if tag != "insert" else i1 + 1
    return lambda line: table.get(line, line)


def migrate(source: str, *, only_rules: Iterable[str] | None = None,
            skip_rules: Iterable[str] | None = None,
            assume_python3: bool = False) -> MigrationResult:
    """Migrate a Python 3 program to Python-4, preserving its behaviour.

    Input that already compiles as Python-4 is returned unchanged (so migration is
    idempotent), unless `assume_python3` is set: a program valid in both languages
    (no assignment, def, import, None/True/False, …) is then treated as Python 3.
    Input that is neither valid Python 3 nor Python-4 comes back unchanged with one
    `cannot_convert` entry at the syntax error.

    Raises:
        MigrationError: an unknown rule id in `only_rules` / `skip_rules`.
    """
    enabled = resolve_rules(only_rules, skip_rules)
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        if _compiles_as_python4(source):
            return MigrationResult(source)
        return MigrationResult(source, [], [CannotConvert(
            exc.lineno or 1, max((exc.offset or 1) - 1, 0),
            f"not valid Python 3 (nor Python-4): {exc.msg}")])
    except (ValueError, RecursionError, MemoryError) as exc:
        return MigrationResult(source, [], [CannotConvert(1, 0, f"cannot parse: {exc}")])
    if not assume_python3 and _compiles_as_python4(source):
        return MigrationResult(source)
    result = _run(source, tree, enabled)
    if result.ok and enabled == frozenset(FIXABLE_RULES):  # only a full migration must compile
        result.cannot_convert.extend(_refusals(source, result))
    return result


def _run(source: str, tree: ast.Module, enabled: frozenset[str],
         renames: dict | None = None, external_types: dict | None = None,
         parent: Context | None = None) -> MigrationResult:
    ctx = Context(source, tree, enabled, external_types)
    if renames:
        ctx.renames.update(renames)
    if parent is not None:  # a fragment's temporaries must not clash with the program's
        ctx.used_names |= parent.used_names
        ctx._temp_counter = parent._temp_counter
    try:
        for fixer in FIXERS:
            fixer.fix(ctx)
        fix_fstrings.fix(ctx, _migrate_fragment)
        text = ctx.patches.render()
        if parent is not None:
            parent.used_names |= ctx.used_names
            parent._temp_counter = ctx._temp_counter
    except (PatchConflict, RecursionError) as exc:
        return MigrationResult(source, [], [CannotConvert(1, 0, f"internal migrator conflict: {exc}")])
    hits = sorted(set(ctx.hits), key=lambda h: (h.line, h.col, h.rule))
    cannot = sorted(set(ctx.cannot), key=lambda c: (c.line, c.col, c.reason))
    module = id(ctx.scopes.module)
    renamed = {name: new for (owner, name), new in ctx.renames.items() if owner == module}
    return MigrationResult(text, hits, cannot, renamed)


def _migrate_fragment(text: str, scope, outer: Context) -> tuple[str, list, list]:
    """Migrate the expression of one f-string field, as seen from `scope`."""
    wrapped = "(" + text + "\n)"
    try:
        tree = ast.parse(wrapped)
    except SyntaxError:
        return text, [], []
    renames, types = {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            owner = outer.scopes.resolve(scope, node.id)
            new = outer.renames.get((id(owner) if owner is not None else None, node.id))
            if new:
                renames[(None, node.id)] = new
            if owner is not None:
                types[node.id] = outer.types.var_type(scope, node.id) or "unknown"
    result = _run(wrapped, tree, outer.enabled_rules - _FRAGMENT_SKIPS, renames, types, outer)
    out = result.source
    if not (out.startswith("(") and out.endswith("\n)")):
        return text, [], []
    return out[1:-2], result.rules_applied, result.cannot_convert
