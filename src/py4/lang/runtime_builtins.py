"""The vetted builtins of a Python-4 program, and the guards among them.

A program's ``__builtins__`` is a table built here from an explicit list (the functions,
types and constants below, and Python's exception classes), not a copy of the
``builtins`` module's namespace: it holds no ``exec``, ``eval``, ``compile`` or
``breakpoint``, no ``__loader__``/``__spec__`` (which lead to the import machinery) and
none of ``site``'s helpers (``help`` starts pydoc), and a builtin a later Python adds is
not in it until it is listed. The entries that could reach past the analyser by a
computed name are guarded versions (see internals.py for what is refused):

- ``getattr``, ``hasattr``, ``setattr``, ``delattr`` refuse the attributes the analyser
  refuses (``getattr(f, "__glo" + "bals__")`` raises AttributeError);
- ``vars(x)`` of a module or a class is a copy of its namespace without the entries the
  analyser refuses (a module's ``__builtins__`` is the real builtins;
  ``vars(type)["__subclasses__"]``);
- ``__import__`` (what ``use`` calls) refuses the modules the analyser refuses, and hands
  out a *view* of each module it allows: a module object of the module's own, holding its
  public names less the members the analyser refuses (``sys.modules``, private names), with
  every module it holds replaced by that module's view or left out when the module is
  outside the capability set (``dataclasses.inspect``); ``operator.attrgetter``/``methodcaller``
  and ``string.Formatter``, which reach attributes by name, are guarded versions.
  Setting an attribute of a view sets it on the module too (``sys.stdout = …``).

These guards are the first run-time line; the last is the code gate (code_gate.py),
which Boa installs in every run process.
"""

from __future__ import annotations

import builtins as _builtins
import operator as _operator
import string as _string
import sys as _sys
import types as _types
from _string import formatter_field_name_split as _split_field

from py4.lang.internals import attribute_refused, is_dunder, member_refusal, module_refusal

_real_getattr, _real_import = _builtins.getattr, _builtins.__import__
_str_value = str.__str__
_getframe = _sys._getframe

# Python 3.11's builtins a program gets, besides the exception classes (the guarded ones
# are replaced below). Not listed: exec, eval, compile, breakpoint (internals.py), and
# site's help (pydoc), copyright, credits, license; exit and quit are made here.
PROGRAM_BUILTINS = (
    "Ellipsis", "False", "None", "NotImplemented", "True", "abs", "aiter", "all", "anext",
    "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr", "classmethod",
    "complex", "delattr", "dict", "dir", "divmod", "enumerate", "filter", "float", "format",
    "frozenset", "getattr", "globals", "hasattr", "hash", "hex", "id", "input", "int",
    "isinstance", "issubclass", "iter", "len", "list", "locals", "map", "max", "memoryview",
    "min", "next", "object", "oct", "open", "ord", "pow", "print", "property", "range",
    "repr", "reversed", "round", "set", "setattr", "slice", "sorted", "staticmethod", "str",
    "sum", "super", "tuple", "type", "vars", "zip",
)
# Objects whose namespace (vars) holds entries that lead out: copied without them.
_NAMESPACES_FILTERED = (_types.ModuleType, type)


def _refused(name) -> str | None:
    """The attribute name as a plain str when a program may not reach it, else None."""
    if isinstance(name, str):
        name = _str_value(name)  # a str subclass cannot lie about its own text
        if attribute_refused(name):
            return name
    return None


def _refusal(name: str) -> AttributeError:
    return AttributeError(f"attribute `{name}` reaches the interpreter's internals: it is not "
                          "available to Python-4 programs")


def py4_getattr(obj, name, *default):
    """``getattr`` without the attributes that lead out of Python-4 (a default is returned
    for them as for a missing attribute)."""
    refused = _refused(name)
    if refused is not None:
        if default:
            return default[0]
        raise _refusal(refused)
    return _real_getattr(obj, name, *default)


def py4_hasattr(obj, name) -> bool:
    return _refused(name) is None and hasattr(obj, name)


def py4_setattr(obj, name, value) -> None:
    refused = _refused(name)
    if refused is not None:
        raise _refusal(refused)
    setattr(obj, name, value)


def py4_delattr(obj, name) -> None:
    refused = _refused(name)
    if refused is not None:
        raise _refusal(refused)
    delattr(obj, name)


def py4_vars(*args):
    """``vars()``: the caller's locals; ``vars(x)``: ``x.__dict__``, except that for a
    module or a class it is a copy without the names a program may not reach."""
    if not args:
        return _getframe(1).f_locals
    if len(args) == 1 and isinstance(args[0], _NAMESPACES_FILTERED):
        return {k: v for k, v in vars(args[0]).items()
                if not (isinstance(k, str) and attribute_refused(k))}
    return vars(*args)


def py4_import(name, globals=None, locals=None, fromlist=(), level=0):
    """What ``use`` calls: the real import, for the modules a program may use.

    Raises:
        ImportError: a relative import (a program is never in a package), or a module the
            analyser refuses (reached here by a computed name).
    """
    if level:
        raise ImportError("attempted relative import with no known parent package")
    why = module_refusal(name) if isinstance(name, str) else "its name is not a str"
    if why is not None:
        raise ImportError(f"module `{name}` is not available to Python-4 programs: {why}", name=name)
    module = _real_import(name, globals, locals, fromlist, 0)
    return module_view(module)


# ----------------------------------------------------------------------------- module views

def _checked_path(dotted: str) -> str:
    if isinstance(dotted, str):
        for part in _str_value(dotted).split("."):
            if attribute_refused(part):
                raise _refusal(part)
    return dotted


def attrgetter(attr, *attrs):
    """``operator.attrgetter`` without the attributes that lead out of Python-4."""
    for dotted in (attr, *attrs):
        _checked_path(dotted)
    return _operator.attrgetter(attr, *attrs)


def methodcaller(name, /, *args, **kwargs):
    """``operator.methodcaller`` without the methods that lead out of Python-4."""
    _checked_path(name)
    return _operator.methodcaller(name, *args, **kwargs)


class Formatter(_string.Formatter):
    """``string.Formatter`` whose ``get_field`` (which returns the object a field names)
    reaches attributes through the guarded getattr."""

    def get_field(self, field_name, args, kwargs):
        first, rest = _split_field(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            obj = py4_getattr(obj, key) if is_attr else obj[key]
        return obj, first


class ModuleView(_types.ModuleType):
    """What ``use`` binds: see the module doc. A miss names what is refused."""

    def __setattr__(self, name, value):
        real = _REAL_MODULES.get(self.__name__)
        if real is not None and not (isinstance(name, str) and (
                attribute_refused(name) or member_refusal(self.__name__, name))):
            setattr(real, name, value)
        _types.ModuleType.__setattr__(self, name, value)


_REAL_MODULES: dict[str, _types.ModuleType] = {}
_VIEWS: dict[str, tuple[int, ModuleView]] = {}  # name -> (size of its namespace, view)
_REPLACEMENTS: dict[str, dict[str, object]] = {
    "operator": {"attrgetter": attrgetter, "methodcaller": methodcaller},
    "string": {"Formatter": Formatter},
}


# Members a module rebinds while a program runs (the harness swaps sys's streams after a
# view may have been made, contextlib.redirect_stdout rebinds them): never copied into a
# view, read from the module at each access (through the view's __getattr__).
LIVE_MEMBERS = {"sys": frozenset({"stdin", "stdout", "stderr"})}


def _fallback(module: _types.ModuleType):
    """A view's ``__getattr__`` (called only for names its namespace lacks): a live member
    or one the module gained since, read from the module; else an AttributeError naming
    what is refused."""
    module_name = module.__name__

    def __getattr__(name):
        if not isinstance(name, str):
            raise AttributeError(name)
        why = "it reaches the interpreter's internals" if attribute_refused(name) else member_refusal(
            module_name, name)
        if why is None:
            try:
                value = _real_getattr(module, name)
            except AttributeError:
                raise AttributeError(f"module `{module_name}` has no attribute `{name}`",
                                     name=name) from None
            if not isinstance(value, _types.ModuleType):
                return value
            if module_refusal(value.__name__) is None or module_refusal(f"{module_name}.{name}") is None:
                view = module_view(value)  # (os.path is posixpath: allowed by that name)
                owner = _VIEWS.get(module_name)
                if owner is not None:  # kept in the view: the next read is a plain lookup
                    owner[1].__dict__[name] = view
                return view
            why = "the module is outside Python-4's capability set"
        raise AttributeError(f"`{module_name}.{name}` is not available to Python-4 programs: {why}",
                             name=name)
    return __getattr__


def module_view(module: _types.ModuleType) -> _types.ModuleType:
    """The view of ``module`` (made once per module and process, again when the module's
    namespace has grown, e.g. by a submodule imported since). The modules it holds are
    not copied: the view's ``__getattr__`` gives their views when they are read, so a
    view costs one copy of one namespace (``use typing``: ~60 us, not ~20 views)."""
    name = module.__name__
    namespace = vars(module)
    cached = _VIEWS.get(name)
    if cached is not None and cached[0] == len(namespace):
        return cached[1]
    view = ModuleView(name, module.__doc__)
    _VIEWS[name] = (len(namespace), view)
    _REAL_MODULES[name] = module
    members: dict[str, object] = {}
    for key, value in list(namespace.items()):
        if (not isinstance(key, str) or is_dunder(key) or member_refusal(name, key)
                or key in LIVE_MEMBERS.get(name, ())):
            continue
        if isinstance(value, _types.ModuleType):
            continue  # made into a view when first read (the view's __getattr__)
        members[key] = value
    members.update(_REPLACEMENTS.get(name, {}))
    names = namespace.get("__all__")
    if isinstance(names, (list, tuple)):
        members["__all__"] = [n for n in names if n in members]
    members["__getattr__"] = _fallback(module)
    view.__dict__.update(members)
    return view


# ----------------------------------------------------------------------------- the table

_GUARDED = {
    "getattr": py4_getattr, "hasattr": py4_hasattr, "setattr": py4_setattr,
    "delattr": py4_delattr, "vars": py4_vars, "__import__": py4_import,
}


class _Exit:
    """``exit``/``quit`` as ``site`` makes them, for interpreters started without ``site``
    (Boa's workers): a program's builtins do not depend on how its interpreter started."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Use {self.name}() or Ctrl-D (i.e. EOF) to exit"

    def __call__(self, code=None):
        raise SystemExit(code)


def vetted_builtins() -> dict:
    """The builtins a Python-4 program gets (before the Python-4 overrides): Python 3's
    public names less those that run text or start helpers, with the guards above, and
    the two dunders that compiled code needs (`__build_class__` for `class`, `__debug__`)."""
    table = {name: getattr(_builtins, name) for name in PROGRAM_BUILTINS}
    table.update({name: value for name, value in vars(_builtins).items()
                  if isinstance(value, type) and issubclass(value, BaseException)})
    table["exit"], table["quit"] = _Exit("exit"), _Exit("quit")
    table["__build_class__"] = _builtins.__build_class__
    table["__debug__"] = __debug__
    table.update(_GUARDED)
    return table
