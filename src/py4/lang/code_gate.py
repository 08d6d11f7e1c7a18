"""The code gate: in a process that runs a Python-4 program, no code Boa has not compiled
is made, loaded or run.

The analyser refuses the constructs that run foreign code and the vetted builtins lack
them (internals.py, runtime_builtins.py); but a hostile program can still find the real
``exec`` by walking the heap (``gc.get_objects``) or through ``sys.modules``, or hand a
string to a standard-library function that compiles it (``typing.get_type_hints``,
``pickle``, …). Every such path ends in a handful of interpreter operations that CPython
announces to audit hooks (PEP 578) before doing them: ``compile`` (text to code),
``exec`` (running a code object), ``marshal.loads``, ``code.__new__`` (including
``code.replace``) and ``function.__new__`` from program code, setting a function's
``__code__`` from program code, loading
ctypes, creating a subinterpreter, and starting another program. The gate is an audit
hook that refuses them (raising ``DynamicCodeError`` before the operation happens),
except for the trusted code paths an honest program needs:

- the harness running the program's own code object (child.py);
- the import system loading library modules: it may compile or unmarshal only bytes
  equal to those of a file of the interpreter's library (read-only in the sandbox), so
  the code objects whose file lies there (or that are frozen into the interpreter) are
  the library's own, and running them is allowed;
- ``dataclasses`` building methods from its templates while it processes a class whose
  field names are identifiers (the only text of the program's that the templates hold),
  and ``collections.namedtuple``'s template (its names are checked identifiers);
- ``typing.ForwardRef`` and ``ast.parse`` compiling (a code object nobody may run, an AST).

An audit hook cannot be removed, so ``install()`` is for processes that run only
Python-4 programs (Boa's run children), never for a test process or the trusted parent.
The hook keeps its whole policy in default arguments (immutable values); replacing a
function's ``__code__`` or defaults is itself refused, so a program that finds the hook
cannot switch it off. Reading objects (``gc``, frames) is not refused: it reaches data,
never new code (the sandbox tests in tests/security rely on it).

Starting another program through the private ``_posixsubprocess.fork_exec`` is not
announced to audit hooks: ``install`` replaces it by a refusal (see there).
"""

from __future__ import annotations

import _posixsubprocess  # loaded with the runtime, before any run: see install()
import dataclasses
import keyword
import os
import sys
import sysconfig

import py4


class DynamicCodeError(RuntimeError):
    """Code that Boa has not compiled was about to be made, loaded or run: refused.

    (A RuntimeError, so that ``sys.addaudithook`` quietly refuses new hooks too.)
    """


def _library_prefixes() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    dirs = {os.path.dirname(os.__file__), paths["stdlib"], paths["platstdlib"]}
    return tuple(sorted(d.rstrip(os.sep) + os.sep for d in dirs))


_LIBRARY = _library_prefixes()
_FROZEN = "<frozen "
_IMPORT_SYSTEM = ("<frozen importlib._bootstrap", "<frozen importlib._bootstrap_external>")
_PY4 = os.path.dirname(os.path.abspath(py4.__file__)) + os.sep
_HARNESS = os.path.join(_PY4, "boa", "child.py")
_DATACLASSES = os.path.join(os.path.dirname(os.__file__), "dataclasses.py")
_COLLECTIONS = os.path.join(os.path.dirname(os.__file__), "collections", "__init__.py")
_TEMPLATE_COMPILERS = (_DATACLASSES, _COLLECTIONS,
                       os.path.join(os.path.dirname(os.__file__), "typing.py"),  # ForwardRef
                       os.path.join(os.path.dirname(os.__file__), "ast.py"))  # parse: ASTs only

_GATED = frozenset({
    "compile", "exec", "marshal.loads", "marshal.load", "code.__new__", "function.__new__",
    "object.__setattr__", "object.__getattr__", "sys.addaudithook", "import",
    "cpython.PyInterpreterState_New",
    "os.exec", "os.posix_spawn", "os.spawn", "os.system", "os.startfile", "subprocess.Popen",
})
# Attributes whose *writes* would swap code (or the gate's own policy) out.
_CODE_ATTRIBUTES = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
# Attributes whose reads CPython announces: code objects, frames.
_REFUSED_READS = frozenset({"__code__", "gi_code", "cr_code", "ag_code", "f_code",
                            "gi_frame", "cr_frame", "ag_frame", "tb_frame"})
# (`_posixsubprocess` is loaded before the gate; importing it again would make a fresh
# `fork_exec`, the one way of starting a program that audit hooks do not hear of.)
_REFUSED_IMPORTS = frozenset({"_xxsubinterpreters", "_xxinterpchannels", "_testcapi",
                              "_testinternalcapi", "_testmultiphase", "_ctypes", "ctypes",
                              "_posixsubprocess"})
_PROGRAMS = frozenset({"os.exec", "os.posix_spawn", "os.spawn", "os.system", "os.startfile",
                       "subprocess.Popen"})


def _dataclass_template(caller, _repr=repr, _type=type, _str=str, _dict=dict,
                       _field=dataclasses.Field, _iskeyword=keyword.iskeyword,
                       _file=", file " + repr(_DATACLASSES) + ", line "):
    """Whether ``caller`` (a frame of dataclasses.py) builds a method template while
    dataclasses processes a class whose field names are all identifiers: the names are
    the only text of the program's that the template holds, and a name such as
    ``a=print()`` (a computed ``__annotations__`` key) would be code."""
    frame = caller.f_back
    while frame is not None:
        text = _repr(frame)
        if text.endswith(", code _process_class>") and _file in text:
            break
        frame = frame.f_back
    else:
        return False  # e.g. dataclasses._create_fn called by the program itself
    fields = frame.f_locals.get("fields")
    if _type(fields) is not _dict:
        return False
    for field in fields.values():
        name = field.name if _type(field) is _field else None
        if _type(name) is not _str or not name.isidentifier() or _iskeyword(name):
            return False
    return True


def _library_file(path, content, skip=0, _type=type, _str=str, _open=open, _bytes=bytes,
                  _library=_LIBRARY, _pardir=os.sep + os.pardir + os.sep):
    """Whether ``content`` is exactly the bytes of file ``path`` of the interpreter's
    library (read-only in the sandbox), after its first ``skip`` bytes: what the import
    system may compile or unmarshal.
    A program that calls the import system's internals with bytes of its own (bytecode
    claiming a library file name) is refused."""
    if _type(path) is not _str or not path.startswith(_library) or _pardir in path:
        return False
    if _type(content) is not _bytes:
        return False
    try:
        with _open(path, "rb") as file:
            return file.read()[skip:] == content
    except OSError:
        return False


def _gate(event, args, _getframe=sys._getframe, _repr=repr, _str_value=str.__str__,
          _type=type, _str=str, _gated=_GATED,
          _library=tuple(repr(p)[:-1] for p in _LIBRARY),  # type: ignore[name-defined]  # mypy 2.4.1: a generator in a default
          _library_paths=_LIBRARY, _frozen_path=_FROZEN, _frozen="'" + _FROZEN,
          _import_system=tuple("'" + m for m in _IMPORT_SYSTEM),  # type: ignore[name-defined]  # as above
          _py4=repr(_PY4)[:-1],
          _harness=repr(_HARNESS), _dataclasses=repr(_DATACLASSES),
          _collections=repr(_COLLECTIONS), _template_compilers=tuple(map(repr, _TEMPLATE_COMPILERS)),
          _code_attributes=_CODE_ATTRIBUTES, _refused_reads=_REFUSED_READS,
          _refused_imports=_REFUSED_IMPORTS, _programs=_PROGRAMS, _error=DynamicCodeError,
          _dataclass_template=_dataclass_template, _library_file=_library_file,
          _import_error=ImportError):
    """The audit hook. Everything it decides on is a default argument: see the module doc.

    The calling code's file is read from the frame's ``repr`` (``<frame at …, file '…',
    line N, code NAME>``), not from ``frame.f_code``: that read is itself announced to
    audit hooks, and would call this hook again.
    """
    if event not in _gated:
        if event[:7] == "ctypes.":
            raise _error("ctypes is not available to Python-4 programs")
        return
    if event == "import":
        if args[0] in _refused_imports:  # (an ImportError: library code may try its import)
            raise _import_error(f"module `{args[0]}` is not available to Python-4 programs")
        return
    if event == "exec" and (args[0].co_filename.startswith(_library_paths)
                            or args[0].co_filename.startswith(_frozen_path)):
        return  # the standard library's own code (an import): no need to look at the caller
    caller = _getframe(1)  # the Python frame whose call raised the event
    where = code_name = ""  # (the caller's file, as a repr, and its function's name)
    if caller is not None:
        text = _repr(caller)
        line_at = text.rfind(", line ")
        where = text[text.find(", file ") + 7:line_at]
        code_name = text[text.find(", code ", line_at) + 7:-1]
    trusted = where.startswith(_library) or where.startswith(_frozen) or where.startswith(_py4)
    if event == "object.__getattr__" or event == "object.__setattr__":
        name = _str_value(args[1])
        if trusted:
            return
        if event == "object.__getattr__" and name in _refused_reads:
            raise _error(f"attribute `{name}` reaches code or frames: refused in Python-4")
        if event == "object.__setattr__" and name in _code_attributes:
            raise _error(f"setting `{name}` would swap a function's code: refused in Python-4")
        return
    if event == "exec":
        code_file = args[0].co_filename
        if where == _harness:
            return  # the program's own code object, run by the harness
        if code_file == "<string>":
            if where == _dataclasses and _dataclass_template(caller):
                return  # dataclasses' own method templates (see _dataclass_template)
            if where == _collections and code_name == "namedtuple":
                return  # namedtuple's own template (its field names are checked identifiers)
        raise _error("running a code object that Boa has not compiled: refused in Python-4 "
                     "(no exec, eval, or string annotations evaluated at run time)")
    if event == "compile":
        if where == _dataclasses:
            if _dataclass_template(caller):
                return
        elif where in _template_compilers:
            return
        elif where.startswith(_import_system) and _library_file(args[1], args[0]):
            return  # the import system compiling a library module from its own file
        raise _error("compiling text at run time: refused in Python-4 (no exec, eval, compile)")
    if event == "marshal.loads":
        if where.startswith(_import_system) and _library_file(
                caller.f_locals.get("bytecode_path"), args[0], 16):  # (after the pyc header)
            return  # the import system reading a library module's own cached bytecode
        raise _error("loading marshalled code: refused in Python-4")
    if event == "function.__new__" or event == "code.__new__":
        if trusted:
            return  # the library's own (e.g. types.coroutine sets a flag with code.replace)
        raise _error("making a function or code object at run time: refused in Python-4")
    if event in _programs:
        raise _error("starting another program: refused in Python-4")
    if event == "sys.addaudithook":
        raise _error("audit hooks cannot be added in Python-4")
    raise _error(f"{event}: refused in Python-4")  # subinterpreters


def _refuse_program(*args, **kwargs):
    raise DynamicCodeError("starting another program: refused in Python-4")


def install() -> None:
    """Install the gate in this process, for good (see the module doc: run processes only).

    ``_posixsubprocess.fork_exec`` (what ``subprocess`` and ``multiprocessing``'s spawn
    start programs with) raises no audit event: it is replaced by a refusal first, and the
    original, referenced by nothing else, is gone.
    """
    _posixsubprocess.fork_exec = _refuse_program
    sys.addaudithook(_gate)
