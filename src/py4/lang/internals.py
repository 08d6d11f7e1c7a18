"""What a Python-4 program may reach: the one table of names, attributes and modules that
the analyser refuses at compile time and the runtime refuses again at run time.

Python-4 programs run only code that went through Python-4 compilation and analysis
(docs/python4.md, "Dynamic code"). Python 3 offers many ways around a compiler: the
builtins that run strings (``exec``, ``eval``, ``compile``, ``__import__``), modules
whose purpose is to make or load code (``marshal``, ``types``, ``importlib``, ``code``,
``pickle``, ``ctypes``, …), and introspection that leads back to the real builtins
(``__globals__``, ``__self__`` of a builtin function, ``__subclasses__``, frames). This
module says which of those a program may not name:

- ``DYNAMIC_CODE_BUILTINS``: not in a program's builtins at all;
- ``REFUSED_NAMES``: names that lead to the runtime's own tables;
- ``attribute_refused(name)``: dunder attributes outside a short list of the data
  model's ordinary ones, and the attributes that reach frames and code objects;
- ``module_refusal(name)``: why ``use name`` is refused (None when it is allowed). The
  modules a program may use are a closed, stated set (``ALLOWED_MODULES``: what the
  bank's gold solutions, the docs' examples and a reasonable solver need); every other
  module is refused, with the reason: it makes, loads or runs code (``DENIED_MODULES``),
  it is private to the interpreter (``_imp``, ``_posixsubprocess``), or it is outside
  the capability set (``gc``, ``weakref``, ``threading``, ``inspect``, ``ctypes``, …);
- ``member_refusal(module, name)``: why ``module.name`` is refused: a module's private
  names (``typing._GenericAlias``, ``dataclasses._create_fn``) and the public ones that
  reach the interpreter's internals (``MODULE_INTERNALS``: ``sys.modules``,
  ``sys.settrace``, ``typing.ForwardRef``, …).

The analyser checks these at compile time; the runtime's ``use`` hands a program a *view*
of each module (runtime_builtins.py) that holds none of the refused members and no module
outside the set (``dataclasses.inspect``, ``os.sys.modules``), so a computed name finds
nothing more. The code gate (code_gate.py) is the last line: whatever a program reaches,
no code Boa has not compiled can be made in its process.

Imported by the workers' runtime: standard library only, nothing heavy.
"""

from __future__ import annotations

# Run code given as text or as a code object; `breakpoint` starts pdb, which runs text.
DYNAMIC_CODE_BUILTINS = frozenset({"exec", "eval", "compile", "__import__", "breakpoint"})

# `__builtins__` is the program's builtins table; `__annotations__` bound in a class body
# would let dataclasses build methods from text the program wrote; `__loader__`/`__spec__`
# lead to the import machinery.
REFUSED_NAMES = frozenset({"__builtins__", "__annotations__", "__loader__", "__spec__"})

# Dunder attributes a program may use: the data model's ordinary methods and names. Every
# other dunder is refused: `__globals__`, `__builtins__`, `__code__`, `__closure__`,
# `__defaults__`, `__self__`, `__func__`, `__wrapped__`, `__dict__`, `__mro__`,
# `__bases__`, `__subclasses__`, `__getattribute__`, `__reduce__`, `__traceback__`, …
SAFE_DUNDER_ATTRIBUTES = frozenset({
    "__init__", "__new__", "__post_init__", "__init_subclass__", "__class__", "__name__",
    "__qualname__", "__doc__", "__module__", "__slots__", "__match_args__", "__all__",
    "__members__", "__cause__", "__context__", "__version__",
    "__repr__", "__str__", "__format__", "__bytes__", "__hash__", "__bool__", "__len__",
    "__length_hint__", "__iter__", "__next__", "__reversed__", "__contains__",
    "__getitem__", "__setitem__", "__delitem__", "__missing__", "__call__",
    "__enter__", "__exit__", "__aenter__", "__aexit__", "__aiter__", "__anext__", "__await__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__int__", "__float__", "__complex__", "__index__", "__round__", "__trunc__", "__floor__",
    "__ceil__", "__neg__", "__pos__", "__abs__", "__invert__",
    "__add__", "__sub__", "__mul__", "__matmul__", "__truediv__", "__floordiv__", "__mod__",
    "__divmod__", "__pow__", "__lshift__", "__rshift__", "__and__", "__xor__", "__or__",
    "__radd__", "__rsub__", "__rmul__", "__rmatmul__", "__rtruediv__", "__rfloordiv__",
    "__rmod__", "__rdivmod__", "__rpow__", "__rlshift__", "__rrshift__", "__rand__",
    "__rxor__", "__ror__",
    "__iadd__", "__isub__", "__imul__", "__imatmul__", "__itruediv__", "__ifloordiv__",
    "__imod__", "__ipow__", "__ilshift__", "__irshift__", "__iand__", "__ixor__", "__ior__",
    "__copy__", "__deepcopy__", "__sizeof__",
})

# Plain attributes that reach frames (and through them every module's globals) or code.
INTERNAL_ATTRIBUTES = frozenset({
    "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "f_trace",
    "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "tb_frame",
})

# Standard-library modules a program may not use: their purpose is to make, load or run
# code (or to reach what does), or they run other programs.
DENIED_MODULES = frozenset({
    "builtins", "importlib", "imp", "runpy", "code", "codeop", "marshal", "pickle",
    "pickletools", "copyreg", "shelve", "dbm", "types", "ctypes", "inspect", "dis",
    "timeit", "doctest", "pdb", "bdb", "cProfile", "profile", "trace", "pydoc", "pkgutil",
    "modulefinder", "zipimport", "zipapp", "compileall", "py_compile", "idlelib", "lib2to3",
    "rlcompleter", "site", "subprocess", "pty", "unittest", "venv", "ensurepip",
})
ALLOWED_PRIVATE_MODULES = frozenset({"__future__"})

# The modules a Python-4 program may use (exact dotted names: a submodule is allowed only
# when listed). Derived from what the bank's gold solutions use (bisect, collections,
# heapq, itertools, math, statistics, string), the docs' examples (json, functools,
# asyncio, os), the migrator's HumanEval-style programs (typing), and what a solver of
# such problems reasonably reaches for: numbers, text, data structures, dates, hashing,
# plus the system modules the sandbox itself confines (os, sys, time, io, tempfile, …).
# Not in it: the garbage collector (gc), weak references (weakref: finalize calls any
# callable from a library frame), threads (threading, _thread), introspection (inspect,
# types, dis), foreign functions (ctypes), and every module of DENIED_MODULES.
ALLOWED_MODULES = frozenset({
    "__future__", "abc", "array", "asyncio", "base64", "binascii", "bisect", "calendar",
    "cmath", "collections", "collections.abc", "colorsys", "contextlib", "copy", "csv",
    "dataclasses", "datetime", "decimal", "difflib", "enum", "errno", "fnmatch",
    "fractions", "functools", "graphlib", "hashlib", "heapq", "hmac", "html", "io",
    "ipaddress", "itertools", "json", "keyword", "math", "numbers", "operator", "os",
    "os.path", "pathlib", "pprint", "queue", "random", "re", "reprlib", "secrets",
    "shlex", "shutil", "signal", "socket", "stat", "statistics", "string", "struct",
    "sys", "tempfile", "textwrap", "time", "typing", "unicodedata", "uuid", "warnings",
    "zipfile", "zlib",
})

# Public members of allowed modules that reach the interpreter's internals: the table of
# loaded modules (every module's globals, the real builtins), tracing and audit hooks
# (a hook runs code at every event), the import system's hooks, the last traceback (its
# frames), and typing's ForwardRef (it compiles the text it is given).
MODULE_INTERNALS = {
    "sys": frozenset({
        "modules", "settrace", "setprofile", "gettrace", "getprofile", "addaudithook",
        "audit", "meta_path", "path_hooks", "path_importer_cache", "excepthook",
        "displayhook", "breakpointhook", "unraisablehook", "call_tracing", "exc_info",
        "exception", "last_traceback", "last_type", "last_value", "getrefcount",
        "setswitchinterval", "activate_stack_trampoline",
    }),
    "typing": frozenset({"ForwardRef"}),
}
# Private-looking names that are a module's documented interface.
PUBLIC_PRIVATE_MEMBERS = {"os": frozenset({"_exit"})}


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name[:2] == "__" and name[-2:] == "__"


def attribute_refused(name: str) -> bool:
    """Whether attribute ``name`` is out of a Python-4 program's reach."""
    if is_dunder(name):  # (`__x` alone is a class-private name, mangled, and allowed)
        return name not in SAFE_DUNDER_ATTRIBUTES
    return name in INTERNAL_ATTRIBUTES


def module_refusal(name: str) -> str | None:
    """Why a program may not ``use`` module ``name`` (dotted), or None when it may."""
    if name in ALLOWED_MODULES:
        return None
    top = name.partition(".")[0]
    if top in DENIED_MODULES:
        return "it makes, loads or runs code that Boa has not compiled"
    if top[:1] == "_" and top not in ALLOWED_PRIVATE_MODULES:
        return "it is private to the interpreter"
    return "it is outside Python-4's capability set (docs/python4.md, \"Dynamic code\")"


def member_refusal(module: str, name: str) -> str | None:
    """Why a program may not reach ``name`` of module ``module`` (dotted), or None."""
    if name[:1] == "_" and not is_dunder(name) and name not in PUBLIC_PRIVATE_MEMBERS.get(module, ()):
        return "it is private to the module"
    if name in MODULE_INTERNALS.get(module, ()):
        return "it reaches the interpreter's internals"
    return None
