"""The code gate: in a process that runs a Python-4 program, no code Boa has not compiled
is made, loaded or run.

The capability set (internals.py) keeps a program away from the real ``exec``, the heap,
frames and the libraries that call what they are handed; this gate is the second layer,
for a program that gets past it anyway. It is an audit hook (PEP 578) that decides by
**what the code is**, never by who asks: every way of making a code object is announced
to audit hooks before it happens, and each is allowed only for content Boa can vouch
for:

- ``compile`` (text to code: ``compile``, ``exec``/``eval`` of text): the exact bytes of a
  file of the interpreter's library under that file's own name (the import system), or,
  under the name ``<string>``, text of one of the stated standard-library templates —
  ``dataclasses``' methods (a ``def __create_fn__`` made of identifiers, the templates'
  operators and keywords and the field-name strings they quote: no numbers, no other
  strings or keywords, no calls but the templates' own, no two names side by side),
  ``collections.namedtuple``'s constructor (``lambda _cls, a, b: _tuple_new(_cls, (a, b))``),
  and a type expression of ``typing.ForwardRef`` (names, digits, dots, brackets, commas,
  ``|``, quotes; no calls, no keywords but ``None``);
- ``marshal.loads``: the exact bytes of a library module's cached bytecode (the ``.pyc``
  named by the loader's ``bytecode_path``, read again here, after its 16-byte header);
- ``code.__new__`` (``types.CodeType``, ``code.replace``): bytecode equal to that of a
  code object of the same name in the named library file's cached bytecode
  (``types.coroutine`` re-flags a library generator this way);
- setting a function's ``__code__``: only to a copy of its own code that differs in the
  ``CO_ITERABLE_COROUTINE`` flag (``types.coroutine``); its ``__defaults__`` or
  ``__kwdefaults__``: only of a library or template function (namedtuple's ``__new__``).

So every code object in the process was compiled by Boa (the program's, unmarshalled
before the gate), belongs to Boa or the library, or passed one of these checks: running
one (``exec``, ``function.__new__``) is allowed whoever asks, as is reading code or frames
(library code reads them, e.g. for tracebacks; the capability set keeps programs away).
Starting another program, loading ctypes, adding an audit hook and creating a
subinterpreter are refused outright.

**The policy cannot be changed by the program.** The hook is a function whose code
holds every value it decides on as a constant (code objects are immutable), whose
globals it never reads (an empty namespace) and which has no defaults or closure; the
only way to change it, replacing its ``__code__``, is itself refused by it. An audit
hook cannot be removed, so ``install()`` is for processes that run only Python-4
programs (Boa's run children), never for a test process or the trusted parent.

Starting another program through the private ``_posixsubprocess.fork_exec`` is not
announced to audit hooks: ``install`` replaces it by a refusal (see there).
"""

from __future__ import annotations

import _posixsubprocess  # loaded with the runtime, before any run: see install()
import builtins
import keyword
import marshal
import os
import re
import sys
import sysconfig
from types import CodeType, FunctionType


class DynamicCodeError(RuntimeError):
    """Code that Boa has not compiled was about to be made, loaded or run: refused.

    (A RuntimeError, so that ``sys.addaudithook`` quietly refuses new hooks too.)
    """


def _library_prefixes() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    dirs = {os.path.dirname(os.__file__), paths["stdlib"], paths["platstdlib"]}
    return tuple(sorted(d.rstrip(os.sep) + os.sep for d in dirs))


GATED = frozenset({
    "compile", "exec", "marshal.loads", "marshal.load", "code.__new__", "function.__new__",
    "object.__setattr__", "sys.addaudithook", "import", "cpython.PyInterpreterState_New",
    "os.exec", "os.posix_spawn", "os.spawn", "os.system", "os.startfile", "subprocess.Popen",
})
# Importing `_posixsubprocess` again would make a fresh `fork_exec` (see install()).
REFUSED_IMPORTS = frozenset({"_xxsubinterpreters", "_xxinterpchannels", "_testcapi",
                             "_testinternalcapi", "_testmultiphase", "_ctypes", "ctypes",
                             "_posixsubprocess"})
PROGRAMS = frozenset({"os.exec", "os.posix_spawn", "os.spawn", "os.system", "os.startfile",
                      "subprocess.Popen"})
CO_ITERABLE_COROUTINE = 0x100
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
# namedtuple's constructor template, whole.
NAMEDTUPLE = re.compile(rf"lambda _cls, ((?:{_IDENT}, )*(?:{_IDENT},?)?): _tuple_new\(_cls, \(\1\)\)")
# dataclasses' templates: the strings they quote, and what is left once those are removed.
DATACLASS_STRINGS = re.compile(
    rf"'{_IDENT}'|f\"\((?:{_IDENT}={{self\.{_IDENT}!r}}(?:, {_IDENT}={{self\.{_IDENT}!r}})*)?\)\""
    r"|f\"cannot (?:assign to|delete) field \{name!r\}\"")
DATACLASS_REST = re.compile(r"[A-Za-z0-9_ \n(),.:=<>*+]*(?:->[A-Za-z0-9_ \n(),.:=<>*+]*)*")
DATACLASS_KEYWORDS = frozenset({"def", "return", "if", "is", "or", "in", "else", "raise", "pass",
                                "None", "True", "False"})
NUMBER = re.compile(r"(?<![A-Za-z0-9_])[0-9]")
# In the templates a call is of a method being defined or of one of these; two words side
# by side have a keyword among them (`is cls`, `return self`), never two names (`a b`).
DATACLASS_CALLS = re.compile(
    rf"(?<![A-Za-z0-9_.])(?!(?:def|hash|type|super|FrozenInstanceError|_dflt_{_IDENT})\()"
    rf"(?<!def )({_IDENT})\(|\.(?!(?:__setattr__|__delattr__|__post_init__)\(){_IDENT}\(")
PAIR = re.compile(rf"(?=(?<![A-Za-z0-9_])({_IDENT}) +({_IDENT}))")
WORD = re.compile(_IDENT)
FORWARD_REF = re.compile(r"[A-Za-z0-9_.\[\], |'\"]{1,1000}")
KEYWORDS = frozenset(keyword.kwlist) - {"None"}


def _gate_source() -> str:
    """The hook's text: every name it uses is a local bound from one constant, ``"@POLICY"``,
    or the constants ``"@GATED"`` and ``"@ERROR"``, each replaced by its value once compiled
    (see _make_gate)."""
    return '''
def gate(event, args):
    if event not in "@GATED":  # (most events: decided before the policy is unpacked)
        if event[:7] == "ctypes.":
            refusal = "@ERROR"
            raise refusal("ctypes is not available to Python-4 programs")
        return
    (refused_imports, programs, library, frozen, error, import_error, type_, str_,
     bytes_, memoryview_, code_type, function_type, open_, getframe, loads, cache_tag, sep,
     namedtuple, dataclass_strings, dataclass_rest, dataclass_keywords, number, word,
     dataclass_calls, pair, forward_ref, keywords, iterable_coroutine, unreadable) = "@POLICY"
    if event == "exec" or event == "function.__new__":
        return  # every code object passed a check when it was made (see the module doc)
    if event == "import":
        if args[0] in refused_imports:  # (an ImportError: library code may try its import)
            raise import_error("module `" + args[0] + "` is not available to Python-4 programs")
        return
    if event == "compile":
        source, filename = args[0], args[1]
        if type_(source) is memoryview_:
            source = bytes_(source)
        if type_(source) is str_:
            source = source.encode("utf-8", "surrogatepass")
        if type_(source) is not bytes_ or type_(filename) is not str_:
            raise error("compiling at run time: refused in Python-4 (no exec, eval, compile)")
        if filename.startswith(library) and (sep + ".." + sep) not in filename:
            try:
                with open_(filename, "rb") as file:
                    if file.read() == source:
                        return  # the import system compiling a library module from its file
            except unreadable:
                pass
        elif filename == "<string>":
            text = source.decode("utf-8", "replace")
            if namedtuple.fullmatch(text) is not None:
                return
            rest = dataclass_strings.sub("", text)
            if (text[:18] == "def __create_fn__(" and number.search(text) is None
                    and dataclass_rest.fullmatch(rest) is not None
                    and dataclass_calls.search(rest) is None):
                for found in word.finditer(rest):
                    name = found.group()
                    if name in keywords and name not in dataclass_keywords:
                        break
                else:
                    for found in pair.finditer(rest):
                        if found.group(1) not in keywords and found.group(2) not in keywords:
                            break
                    else:
                        return  # a dataclasses method template (see DATACLASS_STRINGS)
            if forward_ref.fullmatch(text) is not None:
                for found in word.finditer(text):
                    if found.group() in keywords:
                        break
                else:
                    return  # a type expression (typing.ForwardRef): names, no calls
        raise error("compiling text at run time: refused in Python-4 (no exec, eval, compile)")
    if event == "marshal.loads" or event == "marshal.load":
        data = args[0] if event == "marshal.loads" else None
        bytecode_path = getframe(1).f_locals.get("bytecode_path")
        if type_(data) is memoryview_:
            data = bytes_(data)
        if (type_(data) is bytes_ and type_(bytecode_path) is str_
                and bytecode_path.startswith(library) and (sep + ".." + sep) not in bytecode_path
                and bytecode_path.endswith(".pyc")):
            try:
                with open_(bytecode_path, "rb") as file:
                    if file.read()[16:] == data:
                        return  # a library module's own cached bytecode
            except unreadable:
                pass
        raise error("loading marshalled code: refused in Python-4")
    if event == "code.__new__":
        bytecode, filename, name = args[0], args[1], args[2]
        if (type_(filename) is str_ and filename.startswith(library)
                and (sep + ".." + sep) not in filename and filename.endswith(".py")):
            head, _, tail = filename.rpartition(sep)
            bytecode_path = head + sep + "__pycache__" + sep + tail[:-3] + "." + cache_tag + ".pyc"
            try:
                with open_(bytecode_path, "rb") as file:
                    stack = [loads(file.read()[16:])]
            except unreadable:
                stack = []
            while stack:
                code = stack.pop()
                if code.co_name == name and code.co_code == bytecode:
                    return  # the library's own bytecode (types.coroutine re-flags a generator)
                stack.extend(c for c in code.co_consts if type_(c) is code_type)
        raise error("making a code object at run time: refused in Python-4")
    if event == "object.__setattr__":
        target, name, value = args[0], args[1], args[2]
        if type_(name) is str_ and name == "__code__" and type_(target) is function_type:
            old = target.__code__
            if (type_(value) is code_type and value.co_code == old.co_code
                    and value.co_consts == old.co_consts and value.co_names == old.co_names
                    and value.co_varnames == old.co_varnames and value.co_name == old.co_name
                    and value.co_filename == old.co_filename
                    and value.co_flags == old.co_flags | iterable_coroutine):
                return  # types.coroutine: the same code, flagged as an iterable coroutine
            raise error("setting `__code__` would swap a function's code: refused in Python-4")
        if type_(name) is str_ and (name == "__defaults__" or name == "__kwdefaults__"):
            where = target.__code__.co_filename if type_(target) is function_type else ""
            if where == "<string>" or (where.startswith(library) and (sep + ".." + sep) not in where):
                return  # a library or template function (namedtuple sets its __new__'s defaults)
            raise error("setting `" + name + "` would change a function: refused in Python-4")
        return
    if event in programs:
        raise error("starting another program: refused in Python-4")
    if event == "sys.addaudithook":
        raise error("audit hooks cannot be added in Python-4")
    raise error(event + ": refused in Python-4")  # subinterpreters
'''


def _with_constant(code: CodeType, placeholder: str, value: object) -> CodeType:
    consts = tuple(value if c == placeholder and type(c) is str else
                   _with_constant(c, placeholder, value) if isinstance(c, CodeType) else c
                   for c in code.co_consts)
    return code.replace(co_consts=consts)


def _make_gate() -> FunctionType:
    policy = (REFUSED_IMPORTS, PROGRAMS, _library_prefixes(), "<frozen ", DynamicCodeError,
              ImportError, type, str, bytes, memoryview, CodeType, FunctionType, builtins.open,
              sys._getframe, marshal.loads, sys.implementation.cache_tag, os.sep, NAMEDTUPLE,
              DATACLASS_STRINGS, DATACLASS_REST, DATACLASS_KEYWORDS, NUMBER, WORD, DATACLASS_CALLS,
              PAIR, FORWARD_REF, KEYWORDS, CO_ITERABLE_COROUTINE, (OSError, ValueError, EOFError))
    module = compile(_gate_source(), __file__, "exec")
    template = next(c for c in module.co_consts if isinstance(c, CodeType) and c.co_name == "gate")
    code = _with_constant(template, "@POLICY", policy)
    code = _with_constant(code, "@GATED", GATED)
    code = _with_constant(code, "@ERROR", DynamicCodeError)
    # Its globals are an empty namespace it never reads: tests check that no instruction
    # of it looks a name up (tests/security/test_security_gate.py).
    return FunctionType(code, {"__builtins__": {}}, "_gate")


_gate = _make_gate()


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
