"""Static analysis of a Python-4 program: compile-time errors, lints, rules exercised.

A separate ``ast.NodeVisitor`` pass over the program as parsed (Python 3 spelling,
before the semantic transform), so it sees what the programmer wrote.

Errors: P4-02 (assignment to a name not declared earlier in the same scope; scopes are
Python's: module, fn, class, lambda, comprehension), P4-11 (chained comparison), P4-14
(negative numeric literal as an index or slice bound; a negative *step* is allowed),
names reserved for the runtime (``__p4…``, ``py3_…``; P4-00), and what would run code
the analyser never saw or reach the interpreter's internals (P4-00, see internals.py):
``exec``/``eval``/``compile``/``__import__``/``breakpoint`` (unless the program binds the
name itself), ``__builtins__`` and the other refused names, dunder attributes outside the
data model's ordinary ones and frame/code attributes (also as ``from m use __x__`` and in
class patterns), and denied or private modules (``use marshal``, ``use _imp``).
Warnings: P4-05, P4-25, P4-26, P4-27, P4-28, P4-29, P4-30 (see docs/dev/diagnostics.md).

The walk also records *construct tags* (see exercised.py, the table from tags to the
rules they exercise) and the *rewrite sites* that translate.py rewrites in place.
Dict inference for P4-16 is local and shallow: a dict display or comprehension, ``{:}``,
a ``dict(…)`` call, a name bound to one of those anywhere in an enclosing scope, or a
parameter annotated ``dict``/``dict[…]``/``Dict[…]``.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from typing import Literal

from py4.lang.diagnostics import MessageKind
from py4.lang.exercised import EXERCISED_BY, rules_for_tags  # noqa: F401 - re-exported
from py4.lang.internals import (
    DYNAMIC_CODE_BUILTINS, REFUSED_NAMES, attribute_refused, member_refusal, module_refusal,
)
from py4.lang.limits import MAX_CALL_ARGUMENTS, MAX_CODE_OBJECTS, MAX_PATTERN_CAPTURES
from py4.lang.positions import node_start
from py4.lang.walk import FastVisitor

PY4_EXTRA_BUILTINS = frozenset({"indices", "first", "last", "zip_shortest", "count"})
BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_")) | PY4_EXTRA_BUILTINS
RESERVED_PREFIXES = ("__p4", "py3_")  # the runtime helpers and the migration helpers
_CALL_TAGS = {
    "range": "range_call", "indices": "range_call", "first": "first_last_call",
    "last": "first_last_call", "set": "set_call", "enumerate": "enumerate_call",
    "zip": "zip_call", "zip_shortest": "zip_call", "sum": "sum_count_call",
    "count": "sum_count_call", "round": "round_call", "divmod": "int_division",
    "isinstance": "type_check",
}
_ITERATING_CALLS = frozenset({"list", "sorted", "tuple", "set", "iter", "frozenset"})
_STRIP_NAMES = frozenset({"strip", "lstrip", "rstrip", "trim", "trim_start", "trim_end"})
_MUTABLE_DISPLAYS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_MUTABLE_CALLS = frozenset({"list", "dict", "set", "bytearray"})
_DICT_ANNOTATIONS = frozenset({"dict", "Dict", "defaultdict", "OrderedDict"})
_REFUSED_CALLEES = DYNAMIC_CODE_BUILTINS | REFUSED_NAMES
# Names worth visiting every Name node for (most programs contain none of them).
_NAME_HINT = re.compile(r"\b(?:" + "|".join(sorted(_REFUSED_CALLEES)) + r"|__p4\w*)\b")


@dataclass
class RawDiagnostic:
    """A finding at a Python 3 position (line, UTF-8 byte column), before mapping."""

    kind: MessageKind
    line: int
    col: int
    fields: dict = field(default_factory=dict)


ScopeKind = Literal["module", "fn", "class", "comp"]


class _Scope:
    """Names of one scope. (A plain class: made for every fn, lambda and comprehension.)"""

    __slots__ = ("kind", "declared", "reported", "dict_names")

    def __init__(self, kind: ScopeKind):
        self.kind = kind
        self.declared: set[str] = set()
        self.reported: set[str] = set()
        self.dict_names: set[str] = set()


@dataclass
class Analysis:
    findings: list[RawDiagnostic]
    tags: set[str]
    sites: list[tuple[ast.AST, bool]] = field(default_factory=list)  # see translate.py


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    return None


def _is_negative_literal(node: ast.AST | None) -> bool:
    return (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) in (int, float, complex))


def _is_len_minus(node: ast.AST | None) -> bool:
    """`len(…) - k`: counting from the end, the Python-4 way."""
    return (node.__class__ is ast.BinOp and node.op.__class__ is ast.Sub
            and _call_name(node.left) == "len")


def _same_operand(a: ast.AST, b: ast.AST) -> bool:
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        return a.id == b.id
    if type(a) is not type(b):
        return False
    return ast.dump(a) == ast.dump(b)


def _is_nil(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_str_literal(node: ast.AST) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)) or isinstance(
        node, ast.JoinedStr)


class Py4Analyzer(FastVisitor):
    """Walks a module once; collects RawDiagnostics and construct tags."""

    skip_types = frozenset({ast.Name, ast.Constant})  # leaves: nothing to check

    def __init__(self, let_positions: set[tuple[int, int]], empty_dicts: set[tuple[int, int]]):
        self.let_positions = let_positions
        self.empty_dicts = empty_dicts
        self.used_lets: set[tuple[int, int]] = set()
        self.findings: list[RawDiagnostic] = []
        self.tags: set[str] = set()
        self.scopes: list[_Scope] = [_Scope("module")]
        # Rewrite sites for translate.py, with whether a walrus may be placed there
        # (not in a comprehension, including its first iterable, nor in a class body).
        self.sites: list[tuple[ast.AST, bool]] = []
        self.walrus_ok: list[bool] = [True]
        self.in_annotation = False
        self.bound: set[str] = set()  # every name the program binds, in any scope
        self.dynamic_loads: list[ast.Name] = []  # `exec` & co. read (refused unless bound)
        self.code_objects = 0  # functions, lambdas, classes, comprehensions (limits.py)
        # Names bound by `use` (in any scope) -> the module's dotted name, so that
        # `sys.modules` or `typing._GenericAlias` is refused where it is written.
        self.module_names: dict[str, str] = {}
        self.first_code_object_over: ast.AST | None = None

    # -- bookkeeping -------------------------------------------------------------
    def report(self, kind: MessageKind, node: ast.AST, **fields) -> None:
        self.findings.append(RawDiagnostic(kind, *node_start(node), fields))

    @property
    def scope(self) -> _Scope:
        return self.scopes[-1]

    def declare(self, name: str, node: ast.AST, scope: _Scope | None = None) -> None:
        scope = scope or self.scope
        scope.declared.add(name)
        self.bound.add(name)
        self._check_binding_name(name, node, scope)

    def assign(self, name: str, node: ast.AST) -> None:
        """A plain (re)binding: the name must be declared earlier in this scope."""
        scope = self.scope
        if name not in scope.declared and name not in scope.reported:
            scope.reported.add(name)
            self.report("undeclared", node, name=name)
        self.bound.add(name)
        self._check_binding_name(name, node, scope)

    def _check_binding_name(self, name: str, node: ast.AST, scope: _Scope) -> None:
        if name.startswith(RESERVED_PREFIXES):
            self.report("reserved_name", node, name=name)
        elif name in REFUSED_NAMES:
            self.report("internal_name", node, name=name)
        elif name in BUILTIN_NAMES and scope.kind != "class":
            self.tags.add("builtin_binding")
            self.report("shadow_builtin", node, name=name)

    def bind_target(self, target: ast.AST, declaring: bool, is_let: bool = False) -> None:
        """Bind every name in an assignment target (tuples, lists, starred)."""
        if isinstance(target, ast.Name):
            (self.declare if declaring else self.assign)(target.id, target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.bind_target(elt, declaring, is_let)
        elif isinstance(target, ast.Starred):
            self.bind_target(target.value, declaring, is_let)
        elif is_let:
            self.report("let_target", target, target=ast.unparse(target))

    def _is_let(self, node: ast.stmt) -> bool:
        key = (node.lineno, node.col_offset)
        if key in self.let_positions:
            self.used_lets.add(key)
            return True
        return False

    def finish(self) -> Analysis:
        for line, col in sorted(self.let_positions - self.used_lets):
            self.findings.append(RawDiagnostic("let_statement", line, col))
        for node in self.dynamic_loads:
            if node.id not in self.bound:  # a program's own `fn compile` is only P4-29's
                self.report("dynamic_code", node, name=node.id)
        if self.first_code_object_over is not None:
            self.report("too_many_functions", self.first_code_object_over,
                        count=self.code_objects, limit=MAX_CODE_OBJECTS)
        return Analysis(self.findings, self.tags, self.sites)

    # -- what leads out of Python-4 (internals.py) ----------------------------------
    def _refused_name(self, node: ast.Name) -> None:
        """A name read (or called) that may lead out of Python-4."""
        name = node.id
        if name in DYNAMIC_CODE_BUILTINS:
            self.dynamic_loads.append(node)
        elif name in REFUSED_NAMES:
            self.report("internal_name", node, name=name)
        elif name.startswith("__p4"):  # the translator's helpers, called by the program
            self.report("reserved_name", node, name=name)

    def _check_attribute(self, node: ast.Attribute) -> None:
        if attribute_refused(node.attr):
            self.report("internal_attribute", node, name=node.attr)

    # -- rewrite sites (collected here so that translation needs no second walk) ----
    def site(self, node: ast.AST) -> None:
        if not self.in_annotation:  # annotations stay Python 3 (`list[int]` is a type)
            self.sites.append((node, self.walrus_ok[-1]))

    def visit_annotation(self, node: ast.AST | None) -> None:
        if node is not None:
            saved, self.in_annotation = self.in_annotation, True
            self.visit(node)
            self.in_annotation = saved

    def _in_context(self, walrus_ok: bool, visit, *args) -> None:
        self.walrus_ok.append(walrus_ok)
        try:
            visit(*args)
        finally:
            self.walrus_ok.pop()

    def visit_Dict(self, node: ast.Dict) -> None:
        self.site(node)
        self.generic_visit(node)

    # -- dict inference (P4-16) ---------------------------------------------------
    def _is_dict_expr(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Dict):
            return bool(node.keys) or (node.lineno, node.col_offset) in self.empty_dicts
        if isinstance(node, ast.DictComp) or _call_name(node) == "dict":
            return True
        if isinstance(node, ast.Name):
            return any(node.id in scope.dict_names for scope in self.scopes)
        return False

    def _note_iteration(self, node: ast.AST) -> None:
        if self._is_dict_expr(node):
            self.tags.add("dict_iteration")

    def _track_dict_binding(self, target: ast.AST, value: ast.AST | None) -> None:
        if isinstance(target, ast.Name):
            if value is not None and self._is_dict_expr(value):
                self.scope.dict_names.add(target.id)
            else:
                self.scope.dict_names.discard(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)) and value is not None:
            self._note_iteration(value)

    # -- statements that bind ------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        is_let = self._is_let(node)
        self.visit(node.value)
        for target in node.targets:
            self._visit_target_parts(target)
            self.bind_target(target, declaring=is_let, is_let=is_let)
            self._track_dict_binding(target, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        is_let = self._is_let(node)
        if node.value is not None:
            self.visit(node.value)
        self.visit_annotation(node.annotation)
        self._visit_target_parts(node.target)
        if is_let or node.value is not None:
            self.bind_target(node.target, declaring=is_let, is_let=is_let)
        self._track_dict_binding(node.target, node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        target = node.target
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            self.tags.add("int_division")
            self.site(node)  # the whole statement is rewritten, target included
            if isinstance(target, ast.Subscript):
                self.visit(target.value)
                self._check_subscript(target)
                self.visit(target.slice)
            elif isinstance(target, ast.Attribute):
                self._check_attribute(target)
                self.visit(target.value)
        else:
            self._visit_target_parts(target)
        if isinstance(node.target, ast.Name):
            self.assign(node.target.id, node.target)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._visit_target_parts(target)
            if isinstance(target, ast.Name):
                self.assign(target.id, target)

    def _visit_target_parts(self, target: ast.AST) -> None:
        """Visit the expressions inside a target (subscripts, attributes), not its names."""
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            self.visit(target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._visit_target_parts(elt)
        elif isinstance(target, ast.Starred):
            self._visit_target_parts(target.value)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self._note_iteration(node.iter)
        self._visit_target_parts(node.target)
        self.bind_target(node.target, declaring=True)
        self._track_dict_binding(node.target, None)
        for stmt in node.body + node.orelse:
            self.visit(stmt)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._visit_target_parts(item.optional_vars)
                self.bind_target(item.optional_vars, declaring=True)
        for stmt in node.body:
            self.visit(stmt)

    visit_AsyncWith = visit_With

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self.tags.add("catch")
        if node.type is None:
            self.report("bare_catch", node)
        else:
            self.visit(node.type)
        if node.name:
            self.declare(node.name, node)
        for stmt in node.body:
            self.visit(stmt)

    def visit_Import(self, node: ast.Import) -> None:
        self.tags.add("use")
        for alias in node.names:
            self._check_module(alias.name, node)
            bound = alias.asname or alias.name.split(".")[0]
            self.module_names[bound] = alias.name if alias.asname else bound
            self.declare(bound, node)

    def _check_module(self, name: str, node: ast.AST) -> None:
        why = module_refusal(name)
        if why is not None:
            self.report("module_unavailable", node, name=name, why=why)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.tags.add("use")
        if node.level == 0 and node.module:  # (a relative import fails at run time: no package)
            self._check_module(node.module, node)
        for alias in node.names:
            if attribute_refused(alias.name):  # `from json use __builtins__` reads an attribute
                self.report("internal_attribute", node, name=alias.name)
            elif node.level == 0 and node.module and member_refusal(node.module, alias.name):
                self.report("internal_attribute", node, name=f"{node.module}.{alias.name}")
            if alias.name != "*":
                self.declare(alias.asname or alias.name, node)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        for name in node.names:
            self.declare(name, node)

    visit_Nonlocal = visit_Global

    def visit_Raise(self, node: ast.Raise) -> None:
        self.tags.add("throw")
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.declare(node.name, node)
        self.generic_visit(node)

    def visit_match_case(self, node: ast.match_case) -> None:
        # The compiler checks each name a pattern binds against all earlier ones
        # (quadratic): bounded per pattern (limits.py). Patterns are rare: walking is cheap.
        captures = len({name for sub in ast.walk(node.pattern)
                        for name in (getattr(sub, "name", None), getattr(sub, "rest", None))
                        if name})
        if captures > MAX_PATTERN_CAPTURES:
            self.report("too_many_captures", node.pattern, count=captures,
                        limit=MAX_PATTERN_CAPTURES)
        self.generic_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        self._count_arguments(node, "class pattern", len(node.patterns) + len(node.kwd_patterns))
        for name in node.kwd_attrs:  # `case object(__globals__=g)` reads the attribute
            if attribute_refused(name):
                self.report("internal_attribute", node, name=name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.declare(node.name, node)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.declare(node.rest, node)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        owner = next((s for s in reversed(self.scopes) if s.kind != "comp"), self.scopes[0])
        self.declare(node.target.id, node.target, owner)
        self.scope.declared.add(node.target.id)

    # -- scopes ----------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.tags.add("fn")
        for decorator in node.decorator_list:
            self.visit(decorator)
        self._visit_defaults(node.args)
        self._visit_annotations(node)
        in_class = self.scope.kind == "class"
        self.declare(node.name, node)
        self._check_annotations(node, in_class)
        self._count_code_object(node)
        self.scopes.append(_Scope("fn"))
        self._declare_params(node.args)
        self._in_context(True, self._visit_statements, node.body)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _visit_statements(self, body: list) -> None:
        for stmt in body:
            self.visit(stmt)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.tags.add("fun")
        self._visit_defaults(node.args)
        self._count_code_object(node)
        self.scopes.append(_Scope("fn"))
        self._declare_params(node.args)
        # CPython refuses a walrus in a lambda inside a comprehension's iterable: a
        # lambda keeps its surroundings' answer (conservative in class bodies, too).
        self._in_context(self.walrus_ok[-1], self.visit, node.body)
        self.scopes.pop()

    def _count_code_object(self, node: ast.AST) -> None:
        # Each scope is a code object; CPython merges equal ones with a quadratic search
        # (8,000 `fun: 1` take 1 s to compile): bounded per program (limits.py).
        self.code_objects += 1
        if self.code_objects > MAX_CODE_OBJECTS and self.first_code_object_over is None:
            self.first_code_object_over = node

    def _count_arguments(self, node: ast.AST, what: str, count: int) -> None:
        # The compiler checks keyword names pairwise (quadratic): bounded (limits.py).
        if count > MAX_CALL_ARGUMENTS:
            self.report("too_many_arguments", node, what=what, count=count,
                        limit=MAX_CALL_ARGUMENTS)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._count_arguments(node, "class statement", len(node.bases) + len(node.keywords))
        for expr in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(expr)
        self.declare(node.name, node)
        self._count_code_object(node)
        self.scopes.append(_Scope("class"))
        self._in_context(False, self._visit_statements, node.body)
        self.scopes.pop()

    def _comprehension(self, node, parts: list[ast.AST]) -> None:
        self._in_context(False, self._comprehension_body, node, parts)

    def _comprehension_body(self, node, parts: list[ast.AST]) -> None:
        generators = node.generators
        self.visit(generators[0].iter)  # evaluated in the enclosing scope
        self._count_code_object(node)
        self.scopes.append(_Scope("comp"))
        for i, gen in enumerate(generators):
            if i:
                self.visit(gen.iter)
            self._note_iteration(gen.iter)
            self._visit_target_parts(gen.target)
            self.bind_target(gen.target, declaring=True)
            for cond in gen.ifs:
                self.visit(cond)
        for part in parts:
            self.visit(part)
        self.scopes.pop()

    def visit_ListComp(self, node):
        self._comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node):
        self.site(node)
        self._comprehension(node, [node.key, node.value])

    def _all_params(self, args: ast.arguments) -> list[ast.arg]:
        params = [*args.posonlyargs, *args.args]
        if args.vararg:
            params.append(args.vararg)
        params.extend(args.kwonlyargs)
        if args.kwarg:
            params.append(args.kwarg)
        return params

    def _declare_params(self, args: ast.arguments) -> None:
        for param in self._all_params(args):
            self.declare(param.arg, param)
            if self._is_dict_annotation(param.annotation):
                self.scope.dict_names.add(param.arg)

    @staticmethod
    def _is_dict_annotation(annotation: ast.AST | None) -> bool:
        if isinstance(annotation, ast.Subscript):
            annotation = annotation.value
        if isinstance(annotation, ast.Attribute):
            return annotation.attr in _DICT_ANNOTATIONS
        return isinstance(annotation, ast.Name) and annotation.id in _DICT_ANNOTATIONS

    def _visit_defaults(self, args: ast.arguments) -> None:
        positional = [*args.posonlyargs, *args.args]
        pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True))
        pairs += [(p, d) for p, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
        for param, default in pairs:
            self.tags.add("param_default")
            if isinstance(default, _MUTABLE_DISPLAYS) or _call_name(default) in _MUTABLE_CALLS:
                self.report("mutable_default", default, name=param.arg)
            self.visit(default)

    def _visit_annotations(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for param in self._all_params(node.args):
            self.visit_annotation(param.annotation)
        self.visit_annotation(node.returns)

    def _check_annotations(self, node: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> None:
        params = self._all_params(node.args)
        positional = [*node.args.posonlyargs, *node.args.args]
        missing = []
        for param in params:
            exempt = in_class and positional and param is positional[0] and param.arg in ("self", "cls")
            if param.annotation is None and not exempt:
                missing.append(f"parameter `{param.arg}`")
        if node.returns is None:
            missing.append("return type")
        if missing:
            self.report("annotations", node, name=node.name, missing=", ".join(missing))

    # -- expressions --------------------------------------------------------------------
    def visit_Constant(self, node: ast.Constant) -> None:
        pass  # a leaf; NodeVisitor's own visit_Constant probes deprecated handlers (slow)

    def visit_Name(self, node: ast.Name) -> None:
        pass  # a leaf (its ctx needs no visit)

    def visit_Compare(self, node: ast.Compare) -> None:
        if len(node.ops) > 1:
            self.tags.add("chained_comparison")
            self.report("chained", node)
        operands = [node.left, *node.comparators]
        for left, op, right in zip(operands, node.ops, operands[1:], strict=False):  # operands: one more than ops
            if _is_nil(left) or _is_nil(right):
                self.tags.add("nil_comparison")
                if isinstance(op, (ast.Eq, ast.NotEq)):
                    self.report("nil_compare", node, op="==" if isinstance(op, ast.Eq) else "!=")
            if _call_name(left) == "type" or _call_name(right) == "type":
                self.tags.add("type_check")
                if isinstance(op, (ast.Eq, ast.NotEq)):
                    self.report("type_compare", node, op="==" if isinstance(op, ast.Eq) else "!=")
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        if isinstance(node.op, ast.And):
            values = node.values
            for a, b in zip(values, values[1:], strict=False):  # neighbours
                if (isinstance(a, ast.Compare) and isinstance(b, ast.Compare)
                        and len(a.ops) == 1 and len(b.ops) == 1
                        and _same_operand(a.comparators[0], b.left)):
                    self.tags.add("comparison_pair")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.Mod) and _is_str_literal(node.left):
            self.tags.add("percent_format")
            self.report("percent_format", node)
        elif isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            self.tags.add("int_division")
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            self.site(node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        # The hottest visit (every `print(...)`): children are dispatched inline.
        func = node.func
        args = node.args
        if len(args) + len(node.keywords) > MAX_CALL_ARGUMENTS:
            self._count_arguments(node, "call", len(args) + len(node.keywords))
        if func.__class__ is ast.Name:
            name = func.id
            tag = _CALL_TAGS.get(name)
            if tag:
                self.tags.add(tag)
            if name in _ITERATING_CALLS and args:
                self._note_iteration(args[0])
            elif name in _REFUSED_CALLEES:
                self._refused_name(func)
        else:
            if func.__class__ is ast.Attribute:
                self._method_call(node, func.attr, args)
            self.visit(func)
        table, skip = self._table, self.skip_types
        for arg in args:
            if arg.__class__ not in skip:
                table[arg.__class__](self, arg)
        for keyword in node.keywords:
            value = keyword.value
            if value.__class__ not in skip:
                table[value.__class__](self, value)

    def _method_call(self, node: ast.Call, attr: str, args: list) -> None:
        if attr == "pop":
            # `.pop()` and the rule's own fix `.pop(len(xs) - 1)` both exercise P4-17.
            if not node.keywords and (not args or (len(args) == 1 and _is_len_minus(args[0]))):
                self.tags.add("pop_no_args" if not args else "pop_from_end")
            self.site(node)
        elif attr == "join":
            self.tags.add("join_call")
            self.site(node)
        elif attr == "keys":
            self.tags.add("keys_call")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if attribute_refused(node.attr):
            self.report("internal_attribute", node, name=node.attr)
        elif self.module_names:
            module = self._module_of(node.value)
            if module is not None and member_refusal(module, node.attr):
                self.report("internal_attribute", node, name=f"{module}.{node.attr}")
        if node.attr in _STRIP_NAMES:
            self.tags.add("trim_strip_attr")
            if isinstance(node.ctx, ast.Load):
                self.site(node)
        self.generic_visit(node)

    def _module_of(self, node: ast.AST) -> str | None:
        """The dotted module name an expression written as `m` or `m.sub` stands for,
        when `m` was bound by `use` (else None)."""
        if node.__class__ is ast.Name:
            return self.module_names.get(node.id)
        if node.__class__ is ast.Attribute:
            module = self._module_of(node.value)
            return None if module is None else f"{module}.{node.attr}"
        return None

    def visit_Starred(self, node: ast.Starred) -> None:
        if isinstance(node.ctx, ast.Load):
            self._note_iteration(node.value)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self.site(node)
        self._check_subscript(node)
        self.generic_visit(node)

    def _check_subscript(self, node: ast.Subscript) -> None:
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        for part in parts:
            if isinstance(part, ast.Slice):
                if part.upper is not None:
                    self.tags.add("slice_upper")
                for bound in (part.lower, part.upper):
                    self._check_negative_index(bound)
                if _is_len_minus(part.lower) or _is_len_minus(part.upper):
                    self.tags.add("len_minus_index")
            else:
                self._check_negative_index(part)
                if _is_len_minus(part):
                    self.tags.add("len_minus_index")

    def _check_negative_index(self, node: ast.AST | None) -> None:
        # In an annotation a subscript is a type (`Literal[-1]`), not an index.
        if _is_negative_literal(node) and not self.in_annotation:
            assert isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant)  # said so
            self.tags.add("negative_index")
            self.report("negative_index", node, literal=f"-{node.operand.value!r}")


class Py4NameAnalyzer(Py4Analyzer):
    """The analysis with every Name visited, for the (few) programs whose text mentions a
    refused name: see ``analyze``."""

    skip_types = frozenset({ast.Constant})

    def visit_Name(self, node: ast.Name) -> None:
        if node.ctx.__class__ is ast.Load:
            self._refused_name(node)


def analyze(tree: ast.Module, let_positions: set[tuple[int, int]],
            empty_dicts: set[tuple[int, int]], source: str | None = None) -> Analysis:
    """Analyse a parsed (untransformed) module; positions are Python 3 (line, byte col).

    ``source`` is the text that was parsed: when it mentions none of the refused names
    (``exec``, ``__builtins__``, …) Name nodes need no visit, and the faster walk is used.
    """
    needs_names = source is None or _NAME_HINT.search(source) is not None
    analyzer = (Py4NameAnalyzer if needs_names else Py4Analyzer)(let_positions, empty_dicts)
    analyzer.visit(tree)
    return analyzer.finish()
