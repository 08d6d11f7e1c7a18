"""A small, flow-insensitive type inference for the decisions fixers make.

A name's type is the join of the types of every value bound to it in its scope
(least fixpoint), so a fact holds for every value the name can ever have. Types are
strings; "nnint" is an int known to be >= 0. Anything not provable is "unknown",
which makes the fixers choose a form that is correct whatever the type.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from py4.lang.migrate.scopes import Scope, ScopeTable

UNKNOWN = "unknown"
# "posint" (an int >= 1) is internal: it lets `i - 1` stay >= 0 for `i` in `range(1, n)`.
INTS = frozenset({"posint", "nnint", "int"})
NONNEG = frozenset({"posint", "nnint"})
NUMBERS = frozenset({"posint", "nnint", "int", "float", "num"})
SEQUENCES = frozenset({"list", "tuple", "str", "bytes"})
# Iterables whose iteration Python-4 does not change (everything but dicts).
PLAIN_ITERABLES = frozenset({"list", "tuple", "str", "bytes", "set", "range", "iter", "deque"})
MAPPINGS = frozenset({"dict", "mapping"})

_BUILTIN_RESULTS = {
    "len": "nnint", "ord": "nnint", "int": "int", "float": "float", "hash": "int",
    "str": "str", "repr": "str", "chr": "str", "format": "str", "hex": "str", "bin": "str",
    "oct": "str", "ascii": "str", "input": "str",
    "bool": "bool", "isinstance": "bool", "issubclass": "bool", "callable": "bool",
    "hasattr": "bool", "all": "bool", "any": "bool",
    "list": "list", "sorted": "list", "tuple": "tuple", "set": "set", "frozenset": "set",
    "dict": "dict", "range": "range", "divmod": "tuple", "bytes": "bytes",
    "enumerate": "iter", "zip": "iter", "map": "iter", "filter": "iter", "reversed": "iter",
    "iter": "iter", "open": "iter", "type": "class", "vars": "mapping", "globals": "mapping",
    "locals": "mapping",
}
_FACTORY_RESULTS = {"Counter": "mapping", "defaultdict": "mapping", "OrderedDict": "mapping",
                    "deque": "deque"}
_STR_TO_STR = frozenset({
    "lower", "upper", "strip", "lstrip", "rstrip", "replace", "format", "join", "title",
    "capitalize", "casefold", "center", "ljust", "rjust", "zfill", "expandtabs", "swapcase",
    "translate", "removeprefix", "removesuffix", "format_map",
})
_STR_TO_BOOL = frozenset({
    "startswith", "endswith", "isdigit", "isalpha", "isalnum", "isspace", "islower",
    "isupper", "istitle", "isdecimal", "isnumeric", "isidentifier", "isprintable", "isascii",
})
_STR_TO_LIST = frozenset({"split", "rsplit", "splitlines"})
_VIEW_METHODS = frozenset({"keys", "values", "items"})


_ANNOTATION_TYPES = {
    "int": "int", "float": "float", "str": "str", "bool": "bool", "bytes": "bytes",
    "list": "list", "List": "list", "tuple": "tuple", "Tuple": "tuple", "set": "set",
    "Set": "set", "frozenset": "set", "dict": "dict", "Dict": "dict",
}


def annotation_type(annotation: ast.AST | None) -> str:
    """The type a parameter annotation promises (`list[int]` → list); UNKNOWN if none.

    Annotations are taken at their word (docs/migrate.md). A `dict` parameter may hold
    a Python 3 or a Python-4 dict; both iterate correctly as `d.keys()`.
    """
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    if isinstance(annotation, ast.Attribute) and isinstance(annotation.value, ast.Name) \
            and annotation.value.id == "typing":
        return _ANNOTATION_TYPES.get(annotation.attr, UNKNOWN)
    if isinstance(annotation, ast.Name):
        return _ANNOTATION_TYPES.get(annotation.id, UNKNOWN)
    return UNKNOWN


def join(a: str | None, b: str | None) -> str | None:
    if a is None:
        return b
    if b is None or a == b:
        return a
    if {a, b} <= NONNEG:
        return "nnint"
    if {a, b} <= INTS:
        return "int"
    if {a, b} <= NUMBERS:
        return "num"
    return UNKNOWN


def own_nodes(func: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """Nodes of a function body, not descending into nested functions, classes, lambdas."""
    stack: list[ast.AST] = list(func.body)
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def _public(t: str) -> str:
    return "nnint" if t == "posint" else t


class TypeInfo:
    """Types of names (per binding scope) and expressions."""

    def __init__(self, scopes: ScopeTable, external: dict[str, str] | None = None):
        self.scopes = scopes
        # Types of names bound outside this source (an f-string field's enclosing scope).
        self.external = external or {}
        self._evaluating: set[int] = set()  # functions whose return type is being computed
        self.var_types: dict[tuple[int, str], str | None] = {}
        self._solve()

    def _solve(self) -> None:
        all_scopes = self.scopes.all_scopes()
        tainted = set()
        for scope in all_scopes:
            tainted |= scope.globals | scope.nonlocals
        for _ in range(12):
            changed = False
            for scope in all_scopes:
                for name in scope.local_names:
                    new = UNKNOWN if name in tainted else self._name_type(scope, name)
                    key = (id(scope), name)
                    if self.var_types.get(key) != new:
                        self.var_types[key] = new
                        changed = True
            if not changed:
                break
        else:  # did not converge: give up on everything still moving
            self.var_types = {key: UNKNOWN for key in self.var_types}

    def _name_type(self, scope: Scope, name: str) -> str | None:
        result = None
        for binding in scope.bindings_of(name):
            kind = binding.kind
            if kind in ("del", "annotation"):
                continue
            if kind in ("assign", "walrus"):
                t = self.type_of(binding.value, scope) if binding.value is not None else UNKNOWN
            elif kind == "augassign":
                aug = binding.value
                assert isinstance(aug, ast.AugAssign)  # an augassign binding's value is its statement
                t = self._binop(self.var_type(scope, name), aug.op,
                                self.type_of(aug.value, scope), aug.value)
            elif kind in ("for", "comp") and binding.position is not None:
                t = self._item_type(binding.value, binding.position, scope)
            elif kind in ("for", "comp"):
                t = self._element_type(binding.value, scope) if binding.value is not None else UNKNOWN
            elif kind == "param":
                assert isinstance(binding.node, ast.arg)  # a parameter is bound by its ast.arg
                t = annotation_type(binding.node.annotation)
            elif kind == "def":
                t = "func"
            elif kind == "class":
                t = "class"
            elif kind == "import":
                t = "module"
            else:
                t = UNKNOWN
            result = join(result, t)
        return result

    # -- queries ---------------------------------------------------------------------
    def var_type(self, scope: Scope, name: str) -> str | None:
        owner = self.scopes.resolve(scope, name)
        if owner is None:
            return self.external.get(name, UNKNOWN)
        return self.var_types.get((id(owner), name))

    def of(self, node: ast.AST) -> str:
        """The type of an expression node (UNKNOWN when not provable)."""
        return _public(self.type_of(node, self.scopes.scope_at(node)) or UNKNOWN)

    def is_builtin(self, node: ast.AST, name: str) -> bool:
        """`node` is a Name that refers to the builtin `name` (not rebound anywhere)."""
        if not (isinstance(node, ast.Name) and node.id == name):
            return False
        # A star import is assumed not to rebind builtin names (docs/migrate.md).
        return self.scopes.resolve(self.scopes.scope_at(node), name) is None \
            and name not in self.external

    def type_of(self, node: ast.AST | None, scope: Scope) -> str | None:
        if node is None:
            return UNKNOWN
        method = getattr(self, "_t_" + type(node).__name__, None)
        return method(node, scope) if method else UNKNOWN

    def element_type(self, iterable: ast.AST, scope: Scope) -> str:
        """Type of the items that iterating `iterable` yields in Python 3."""
        return _public(self._element_type(iterable, scope))

    def _returned_type(self, scope: Scope, name: str) -> str | None:
        """What calling the program's own function `name` returns (join of its returns)."""
        owner = self.scopes.resolve(scope, name)
        bindings = owner.bindings_of(name) if owner is not None else []
        if len(bindings) != 1 or bindings[0].kind != "def" \
                or not isinstance(bindings[0].node, ast.FunctionDef) \
                or bindings[0].node.decorator_list:
            return UNKNOWN
        func = bindings[0].node
        if id(func) in self._evaluating:
            return UNKNOWN  # recursion: no sound answer without iterating
        inner = self.scopes.owned_scope(func)
        assert inner is not None  # every def opens a scope
        self._evaluating.add(id(func))
        try:
            result = None
            for node in own_nodes(func):
                if isinstance(node, (ast.Yield, ast.YieldFrom)):
                    return "iter"
                if isinstance(node, ast.Return):
                    value = node.value
                    result = join(result, self.type_of(value, inner) if value is not None else "none")
            if not func.body or not isinstance(func.body[-1], (ast.Return, ast.Raise)):
                result = join(result, "none")
            return result
        finally:
            self._evaluating.discard(id(func))

    def _item_type(self, iterable: ast.AST | None, position: int, scope: Scope) -> str:
        """Type of item `position` of the tuples that iterating `iterable` yields."""
        if not isinstance(iterable, ast.Call) or iterable.keywords and not \
                self.is_builtin(iterable.func, "enumerate"):
            return UNKNOWN
        args = iterable.args
        if self.is_builtin(iterable.func, "enumerate") and args and not isinstance(args[0], ast.Starred):
            if position == 1:
                return self._element_type(args[0], scope)
            start = args[1] if len(args) > 1 else next(
                (k.value for k in iterable.keywords if k.arg == "start"), None)
            if position == 0 and not any(k.arg != "start" for k in iterable.keywords):
                if start is None:
                    return "nnint"
                start_type = self.type_of(start, scope)
                return start_type if start_type is not None and start_type in NONNEG else "int"
            return UNKNOWN
        if self.is_builtin(iterable.func, "zip") and position < len(args) \
                and not any(isinstance(a, ast.Starred) for a in args):
            return self._element_type(args[position], scope)
        return UNKNOWN

    def _element_type(self, iterable: ast.AST, scope: Scope) -> str:
        t = self.type_of(iterable, scope)
        if t == "str":
            return "str"
        if t == "range" and isinstance(iterable, ast.Call):
            args = iterable.args
            if len(args) == 1:
                return "nnint"
            start = self.type_of(args[0], scope)
            if len(args) == 2 and start in NONNEG:
                return start
            if (len(args) == 3 and start in NONNEG and isinstance(args[2], ast.Constant)
                    and type(args[2].value) is int and args[2].value > 0):
                return start
            return "int"
        if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute)
                and iterable.func.attr in _STR_TO_LIST
                and self.type_of(iterable.func.value, scope) == "str"):
            return "str"
        if isinstance(iterable, ast.Call) and self.is_builtin(iterable.func, "enumerate"):
            return "tuple"
        return UNKNOWN

    # -- expression rules ---------------------------------------------------------------
    def _t_Constant(self, node, scope):
        value = node.value
        if isinstance(value, bool):
            return "bool"
        if isinstance(value, int):
            return "posint" if value >= 1 else ("nnint" if value == 0 else "int")
        return {float: "float", str: "str", bytes: "bytes", type(None): "none"}.get(type(value), UNKNOWN)

    def _t_JoinedStr(self, node, scope):
        return "str"

    def _t_List(self, node, scope):
        return "list"

    _t_ListComp = _t_List

    def _t_Tuple(self, node, scope):
        return "tuple"

    def _t_Set(self, node, scope):
        return "set"

    _t_SetComp = _t_Set

    def _t_Dict(self, node, scope):
        return "dict"

    _t_DictComp = _t_Dict

    def _t_GeneratorExp(self, node, scope):
        return "iter"

    def _t_Lambda(self, node, scope):
        return "func"

    def _t_Compare(self, node, scope):
        return "bool"

    def _t_Name(self, node, scope):
        return self.var_type(scope, node.id)

    def _t_IfExp(self, node, scope):
        return join(self.type_of(node.body, scope), self.type_of(node.orelse, scope))

    def _t_BoolOp(self, node, scope):
        result = None
        for value in node.values:
            result = join(result, self.type_of(value, scope))
        return result

    def _t_NamedExpr(self, node, scope):
        return self.type_of(node.value, scope)

    def _t_UnaryOp(self, node, scope):
        if isinstance(node.op, ast.Not):
            return "bool"
        t = self.type_of(node.operand, scope)
        if isinstance(node.op, ast.USub):
            return {"posint": "int", "nnint": "int", "int": "int", "bool": "int", "float": "float",
                    "num": "num"}.get(t, UNKNOWN if t else None)
        if isinstance(node.op, ast.UAdd):
            return {"bool": "int"}.get(t, t)
        return "int" if t in INTS | {"bool"} else UNKNOWN

    def _t_Subscript(self, node, scope):
        t = self.type_of(node.value, scope)
        if t == "str":
            return "str"
        if isinstance(node.slice, ast.Slice) and t in ("list", "tuple", "bytes"):
            return t
        return UNKNOWN if t else None

    def _t_BinOp(self, node, scope):
        return self._binop(self.type_of(node.left, scope), node.op,
                           self.type_of(node.right, scope), node.right)

    def _binop(self, left, op, right, right_node) -> str | None:
        if left is None or right is None:
            return None
        num_like = NUMBERS | {"bool"}
        if isinstance(op, ast.Add) and left == right and left in ("str", "list", "tuple", "bytes"):
            return left
        if isinstance(op, ast.Mult) and "str" in (left, right) and ({left, right} - {"str"}) <= INTS:
            return "str"
        if isinstance(op, ast.Mod) and left == "str":
            return "str"
        if left not in num_like or right not in num_like:
            return UNKNOWN
        ints = INTS | {"bool"}
        if isinstance(op, ast.Div):
            return "float"
        if left == "float" or right == "float":
            return "float" if not isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)) else UNKNOWN
        if left == "num" or right == "num":
            return "num"
        nonneg = left in NONNEG | {"bool"} and right in NONNEG | {"bool"}
        if isinstance(op, ast.Add) and nonneg:
            return "posint" if "posint" in (left, right) else "nnint"
        if isinstance(op, ast.Mult) and nonneg:
            return "posint" if left == right == "posint" else "nnint"
        if isinstance(op, (ast.Add, ast.Mult)):
            return "int"
        if isinstance(op, ast.Sub):
            one = isinstance(right_node, ast.Constant) and type(right_node.value) is int \
                and right_node.value == 1
            return "nnint" if left == "posint" and one else "int"
        if isinstance(op, (ast.FloorDiv, ast.Mod)):
            return "nnint" if nonneg else "int"
        if isinstance(op, ast.Pow):
            return "nnint" if nonneg else "num"
        if left in ints and right in ints:
            if left == right == "bool" and isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
                return "bool"
            return "nnint" if nonneg and isinstance(op, (ast.BitAnd, ast.BitOr, ast.RShift, ast.LShift)) else "int"
        return UNKNOWN

    def _t_Call(self, node, scope):
        func = node.func
        if isinstance(func, ast.Name):
            if self.scopes.resolve(scope, func.id) is None:
                if func.id == "abs" and node.args:
                    t = self.type_of(node.args[0], scope)
                    return {"posint": "posint", "nnint": "nnint", "int": "nnint", "bool": "nnint",
                            "float": "float"}.get(t, UNKNOWN if t else None)
                if func.id in ("min", "max") and len(node.args) >= 2 and not node.keywords:
                    result = None
                    for arg in node.args:
                        result = join(result, self.type_of(arg, scope))
                    return result
                if func.id == "round" and len(node.args) == 1:
                    return "int"
                return _BUILTIN_RESULTS.get(func.id, UNKNOWN)
            if func.id in _FACTORY_RESULTS and self.var_type(scope, func.id) == "module":
                return _FACTORY_RESULTS[func.id]
            return self._returned_type(scope, func.id)
        if isinstance(func, ast.Attribute):
            if func.attr in _FACTORY_RESULTS and isinstance(func.value, ast.Name) \
                    and func.value.id == "collections":
                return _FACTORY_RESULTS[func.attr]
            if func.attr in _VIEW_METHODS and not node.args and not node.keywords:
                return "iter"  # assumed a mapping view (docs/migrate.md)
            receiver = self.type_of(func.value, scope)
            if receiver == "str":
                if func.attr in _STR_TO_STR:
                    return "str"
                if func.attr in _STR_TO_BOOL:
                    return "bool"
                if func.attr in _STR_TO_LIST:
                    return "list"
                if func.attr == "count":
                    return "nnint"
                if func.attr in ("find", "rfind", "index", "rindex"):
                    return "int"
            if receiver == "list" and func.attr == "copy":
                return "list"
            if receiver == "list" and func.attr in ("count",):
                return "nnint"
        return UNKNOWN
