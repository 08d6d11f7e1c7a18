"""Python-4 runs only code that went through its compiler (docs/python4.md, "Dynamic code").

Three layers, each tested here on its own (the attacks through Boa, one per test, are in
tests/security/test_security_dynamic_code.py): the analyser's refusals (internals.py),
the vetted builtins and module views (runtime_builtins.py), and the code gate that Boa's
run processes install (code_gate.py; tested in a child process, since an audit hook can
never be removed from the process that installs it).
"""

from __future__ import annotations

import io
import json
import operator
import string
import subprocess
import sys

import pytest

from lang_helpers import run_py4
from py4.lang import compile_py4
from py4.lang.runtime import HELPERS, new_globals
from py4.lang.runtime_builtins import py4_getattr, py4_hasattr, py4_import, py4_vars


def _errors(source: str) -> list[tuple[str, int, str]]:
    return [(d.rule, d.line, d.message) for d in compile_py4(source).diagnostics
            if d.severity == "error"]


# ----------------------------------------------------------------------------- the analyser

@pytest.mark.parametrize("source, line, words", [
    ("exec('print(1)')\n", 1, "`exec` runs code that Boa has not compiled"),
    ("let x = 1\nlet run = eval\n", 2, "`eval` runs code that Boa has not compiled"),
    ("print(compile('1', 'f', 'eval'))\n", 1, "`compile` runs code"),
    ("let m = __import__('os')\n", 1, "`__import__` runs code"),
    ("breakpoint()\n", 1, "`breakpoint` runs code"),
    ("print(__builtins__)\n", 1, "`__builtins__` reaches the interpreter's internals"),
    ("class A:\n    __annotations__ = {'x': int}\n", 2, "`__annotations__` reaches"),
    ("print(__p4__)\n", 1, "`__p4__` is reserved for the Python-4 runtime"),
    ("print(len.__self__)\n", 1, "attribute `__self__` reaches the interpreter's internals"),
    ("fn f() -> int:\n    return 1\nprint(f.__globals__)\n", 3, "attribute `__globals__`"),
    ("fn f() -> int:\n    return 1\nf.__code__ = nil\n", 3, "attribute `__code__`"),
    ("print(object.__subclasses__())\n", 1, "attribute `__subclasses__`"),
    ("print(int.__mro__)\n", 1, "attribute `__mro__`"),
    ("let g = (x for x in [1])\nprint(g.gi_frame)\n", 2, "attribute `gi_frame`"),
    ("use sys\nprint(sys._getframe().f_back)\n", 2, "attribute `f_back`"),
    ("fn f() -> int:\n    return 1\nmatch f:\n    case object(__globals__=g):\n        print(g)\n",
     4, "attribute `__globals__`"),
    ("from json use __builtins__ as b\n", 1, "attribute `__builtins__`"),
    ("use marshal\n", 1, "module `marshal` is not available to Python-4 programs: it makes, loads"),
    ("from importlib use import_module\n", 1, "module `importlib` is not available"),
    ("use ctypes.util\n", 1, "module `ctypes.util` is not available"),
    ("use _thread\n", 1, "module `_thread` is not available to Python-4 programs: it is private"),
])
def test_the_analyser_refuses_what_leads_out_of_python4(source, line, words):
    errors = _errors(source)
    assert any(rule == "P4-00" and at == line and words in message for rule, at, message in errors), errors


def test_refusals_have_a_generic_rendering_without_words():
    diag = compile_py4("exec('1')\n").diagnostics[0]
    assert diag.render("generic") == "SyntaxError at line 1"


def test_a_program_that_binds_the_name_itself_is_not_refused():
    # Its own `compile` is not the builtin: shadowing a builtin is P4-29's warning, no more.
    result = compile_py4("fn compile(x: int) -> int:\n    return x\nprint(compile(1))\n")
    assert [(d.rule, d.severity) for d in result.diagnostics] == [("P4-29", "warning")]


def test_honest_programs_keep_their_dunders_and_modules():
    source = (
        "from __future__ use annotations\n"
        "use os.path\n"
        "from collections.abc use Iterable\n"
        "class Base:\n"
        "    fn __init__(self, n: int) -> nil:\n"
        "        self.__secret = n\n"
        "    fn secret(self) -> int:\n"
        "        return self.__secret\n"
        "class Child(Base):\n"
        "    fn __init__(self) -> nil:\n"
        "        super().__init__(7)\n"
        "    fn __eq__(self, other: object) -> bool:\n"
        "        return vars(self) == vars(other)\n"
        "let c = Child()\n"
        "print(type(c).__name__, c.__class__.__name__, c.secret(), c == Child(), Child.__doc__)\n"
        "print(getattr(c, 'missing', 0), hasattr(c, 'secret'), isinstance([], Iterable))\n"
        "if __name__ == '__main__':\n"
        "    print(os.path.join('a', 'b'), __name__)\n")
    assert run_py4(source) == "Child Child 7 True None\n0 True True\na/b __main__\n"


# ----------------------------------------------------------------------------- the vetted builtins

def test_the_builtins_table_has_no_dynamic_code_and_no_way_back():
    table = new_globals()["__builtins__"]
    for name in ("exec", "eval", "compile", "breakpoint", "help", "__loader__", "__spec__"):
        assert name not in table
    assert table["getattr"] is py4_getattr and table["__import__"] is py4_import
    assert table["ValueError"] is ValueError and table["ExceptionGroup"] is ExceptionGroup
    assert "__build_class__" in table and table["len"] is len
    with pytest.raises(SystemExit) as stop:  # with or without `site` (Boa's workers run without)
        table["exit"](3)
    assert stop.value.code == 3


def test_getattr_refuses_computed_dunders_and_frames():
    with pytest.raises(AttributeError, match="`__globals__` reaches the interpreter's internals"):
        py4_getattr(run_py4, "__glo" + "bals__")
    with pytest.raises(AttributeError, match="f_globals"):
        py4_getattr(sys._getframe(), "f_globals")
    assert py4_getattr(len, "__self__", "default") == "default"
    assert not py4_hasattr(len, "__self__") and py4_hasattr("x", "upper")

    class Lying(str):  # a str subclass cannot pass for another name
        def __eq__(self, other):
            return False

        __hash__ = str.__hash__

    with pytest.raises(AttributeError):
        py4_getattr(len, Lying("__self__"))


def test_vars_of_modules_and_classes_leaves_out_what_leads_out():
    namespace = py4_vars(json)
    assert "__builtins__" not in namespace and namespace["loads"] is json.loads
    assert "__subclasses__" not in py4_vars(type) and "mro" in py4_vars(type)


def test_import_checks_the_allow_list_again_at_run_time():
    with pytest.raises(ImportError, match="`marshal` is not available"):
        py4_import("mar" + "shal")
    with pytest.raises(ImportError, match="no known parent package"):
        py4_import("sibling", level=1)
    assert py4_import("json").loads is json.loads  # a view of the module


def test_operator_and_string_views_reach_no_dunder():
    view = py4_import("operator")
    assert view is not operator and view.add(1, 2) == 3
    assert view.attrgetter("real")(3) == 3 and view.methodcaller("upper")("a") == "A"
    with pytest.raises(AttributeError):
        view.attrgetter("x", "__self__.exec")
    with pytest.raises(AttributeError):
        view.methodcaller("__reduce_ex__", 4)
    fmt = py4_import("string").Formatter()
    assert fmt.format("{0.real}-{1[0]}", 2, [3]) == "2-3"
    with pytest.raises(AttributeError):
        fmt.get_field("0.__self__", [print], {})
    assert not hasattr(view, "__builtins__") and string.Formatter is not type(fmt)


def test_the_runtime_helpers_reach_no_dunder():
    assert HELPERS.attr("  a ", "trim")() == "a"
    with pytest.raises(AttributeError):
        HELPERS.attr(print, "__self__")


# ----------------------------------------------------------------------------- the code gate

# Program name -> Python-4 source. Each runs as a function compiled before the gate is
# installed (as Boa's harness runs a program), under the name <py4>.
GATE_PROGRAMS = {
    "dataclass": ("use dataclasses\n@dataclasses.dataclass(order=true, frozen=true)\n"
                  "class P:\n    x: int\n    let y: int = 2\nprint(P(1), P(1) < P(2))\n"),
    "namedtuple": "use collections\nlet Q = collections.namedtuple('Q', 'a b')\nprint(Q(1, 2))\n",
    "typed_namedtuple": "use typing\nclass N(typing.NamedTuple):\n    a: int\nprint(N(3))\n",
    "enum": "use enum\nlet Color = enum.Enum('Color', 'RED GREEN')\nprint(Color.RED)\n",
    "lazy_import": "use colorsys\nprint(colorsys.rgb_to_hsv(1, 0, 0))\n",
    "literal_eval": "use ast\nprint(ast.literal_eval('[1, 2]'))\n",
    "asyncio": "use asyncio\nasync fn answer() -> int:\n    return 42\nprint(asyncio.run(answer()))\n",
    "real_exec": "use sys\nsys.modules['builtins'].exec('print(1)')\n",
    "real_compile": "use sys\nsys.modules['builtins'].compile('1', 'x', 'eval')\n",
    "marshal": "use sys\nlet m = sys.modules['marshal']\nprint(m.loads(m.dumps(1)))\n",
    "code_read": "use sys\nlet peek = sys.modules['builtins'].getattr\nprint(peek(fun: 0, '__code__'))\n",
    "defaults_write": ("use sys\nlet poke = sys.modules['builtins'].setattr\n"
                      "fn f(x: int = 1) -> int:\n    return x\npoke(f, '__defaults__', (2,))\n"),
    "program": "use os\nos.system('true')\n",
    "unaudited_program": ("use sys\nlet start = sys.modules['_posixsubprocess'].fork_exec\n"
                          "start(['/bin/true'], [b'/bin/true'], true, (), nil, nil, -1, -1, -1, -1,\n"
                          "      -1, -1, -1, -1, false, false, -1, nil, nil, nil, -1, nil, false)\n"),
    "ctypes": "use sys\nlet real = sys.modules['builtins']\nreal.getattr(real, '__import__')('ctypes')\n",
    "subinterpreter": ("use sys\nlet real = sys.modules['builtins']\n"
                       "real.getattr(real, '__import__')('_xxsubinterpreters')\n"),
    "string_annotation": ("use typing\nfn f(x: 'print(1)') -> nil:\n    pass\n"
                          "print(typing.get_type_hints(f))\n"),
    "dataclass_field_code": ("use dataclasses\n"
                             "let K = type('K', (), {'__annota' + 'tions__': {'a b': int}})\n"
                             "dataclasses.dataclass(K)\n"),
    "dataclass_template": "use dataclasses\ndataclasses._create_fn('f', [], ['return 1'])\n",
    "own_module": ("use sys\nuse tempfile\nlet folder = tempfile.mkdtemp()\n"
                   "with open(folder + '/own_module_p4.py', 'w') as fh:\n    fh.write('print(1)')\n"
                   "sys.path.insert(0, folder)\nuse own_module_p4\n"),
    "forged_bytecode": ("use sys\nlet m = sys.modules['marshal']\n"
                        "let library_file = sys.modules['os'].path.join(sys.base_prefix, 'lib', 'python3.11', "
                        "'os.py')\n"
                        "sys.modules['importlib._bootstrap_external']._compile_bytecode(\n"
                        "    m.dumps(1), 'x', library_file)\n"),
    "new_hook": ("use sys\nsys.addaudithook(fun event, args: print('HOOKED'))\n"
                 "open('/dev/null').close()\nprint('after')\n"),
}
HONEST = ("dataclass", "namedtuple", "typed_namedtuple", "enum", "lazy_import", "asyncio",
          "new_hook",
          # Reading code is data, not new code: the gate lets it through (the capability
          # set refuses `__code__` and the real getattr where a program would write them).
          "code_read")

# The gate is the second layer: these programs reach what the capability set refuses
# (sys.modules, private members, modules outside it) as if the analyser and the runtime's
# module views had missed it, so the runner switches those checks off first.
GATE_RUNNER = """
import contextlib, io, json, sys, types
from py4.lang import analyze, code_gate, compile_py4, runtime_builtins
from py4.lang.runtime import new_globals
analyze.module_refusal = runtime_builtins.module_refusal = lambda name: None
analyze.member_refusal = lambda module, name: None
runtime_builtins.module_view = lambda module: module
functions = {}
for name, source in json.loads(sys.argv[1]).items():
    compiled = compile_py4(source, "<py4>")
    assert compiled.ok, (name, [d.render() for d in compiled.diagnostics])
    functions[name] = types.FunctionType(compiled.code, new_globals())
code_gate.install()
outcomes = {}
for name, function in functions.items():
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            function()
        outcomes[name] = ["ok", out.getvalue()]
    except BaseException as exc:
        outcomes[name] = [type(exc).__name__, str(exc)]
print(json.dumps(outcomes))
"""


@pytest.fixture(scope="module")
def gate_outcomes() -> dict:
    done = subprocess.run([sys.executable, "-c", GATE_RUNNER, json.dumps(GATE_PROGRAMS)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("name", HONEST)
def test_the_gate_lets_honest_programs_run(gate_outcomes, name):
    status, output = gate_outcomes[name]
    assert status == "ok", output
    assert "HOOKED" not in output  # a program cannot add an audit hook of its own


@pytest.mark.parametrize("name", sorted(set(GATE_PROGRAMS) - set(HONEST)))
def test_the_gate_refuses_code_boa_never_compiled(gate_outcomes, name):
    status, message = gate_outcomes[name]
    # (Modules the gate refuses raise ImportError: library code may try them and carry on.)
    expected = "ImportError" if name in ("ctypes", "subinterpreter") else "DynamicCodeError"
    assert status == expected, (status, message)
    assert "Python-4" in message


def test_a_module_view_reads_live_members_from_the_module(monkeypatch):
    # The harness swaps sys's streams after the worker made its views; a view must not
    # keep the old ones (what `use sys` gives is a view: runtime_builtins.module_view).
    view = py4_import("sys")
    replacement = io.StringIO()
    monkeypatch.setattr(sys, "stdout", replacement)
    assert view.stdout is replacement
    with pytest.raises(AttributeError, match="`sys.modules` is not available"):
        view.modules  # noqa: B018 - the read is the test
