"""Dynamic code cannot get past certification: one attack per test.

A Python-4 program may run only code that went through Python-4 compilation and
analysis. Every test below is a way a hostile program could run code Boa never compiled
(a Python 3 solution in a string, a code object, a module that runs strings, the real
builtins found by introspection). Each is either refused at compile time, with a
diagnostic that names the construct and its line, or fails at run time without the
foreign code running. "Foreign code ran" is seen either as a passing test (the marker
problem's expected outputs are computed only by the foreign code) or as ``FOREIGN`` in
the output.
"""

from __future__ import annotations

import marshal
import shlex

import pytest

from py4.boa.certify import certify
from security_fixtures import EXPECTED_MARKER

pytestmark = pytest.mark.security

# A Python 3 solution of the marker problem (solve(x) == EXPECTED_MARKER - 1 + x) that
# Python-4 refuses three times over: `def`, a missing annotation (P4-05) and a negative
# index (P4-14).
PY3_SOLUTION = f"def solve(x):\n    return [0, {EXPECTED_MARKER - 1} + x][-1]\n"
FOREIGN = "print('FOREIGN', [1, 2][-1])"  # Python 3 only: a negative index


def _refused_at_compile(cert, construct: str, line: int) -> None:
    """Not certified, because the front end refused ``construct`` at ``line`` (and says so)."""
    assert not cert.certified and not cert.compiled and cert.status == "compile_error", cert
    assert cert.tests_passed == 0
    named = [d for d in cert.diagnostics
             if d["severity"] == "error" and d["line"] == line and construct in d["message"]]
    assert named, cert.diagnostics


def _run_refused_at_compile(result, construct: str, line: int) -> None:
    assert result.status == "compile_error", result
    assert "FOREIGN" not in result.stdout
    named = [d for d in result.diagnostics if d["line"] == line and construct in d["message"]]
    assert named, result.diagnostics


def _ran_without_foreign_code(result, error_type: str) -> None:
    """The program ran and stopped with ``error_type``; the foreign code printed nothing."""
    assert "FOREIGN" not in result.stdout, result
    assert result.status == "runtime_error", result
    assert error_type in result.stderr, result.stderr


# ----------------------------------------------------------------------------- exec, eval

def test_python3_solution_wrapped_in_exec_is_not_certified(sandbox, marker_problem):
    cert = certify(marker_problem, f"exec({PY3_SOLUTION!r})\n", executor=sandbox.executor)
    _refused_at_compile(cert, "`exec`", 1)
    sandbox.assert_serves_next()


def test_p4_05_code_does_not_certify_through_eval(sandbox, marker_problem):
    # Written directly, this solution earns P4-05 (no annotations) and is not certified.
    direct = certify(marker_problem, f"fn solve(x):\n    return {EXPECTED_MARKER - 1} + x\n",
                     executor=sandbox.executor)
    assert not direct.certified and [w["rule"] for w in direct.warnings] == ["P4-05"]
    source = f"let solve = eval('lambda x: {EXPECTED_MARKER - 1} + x')\n"
    cert = certify(marker_problem, source, executor=sandbox.executor)
    _refused_at_compile(cert, "`eval`", 1)
    sandbox.assert_serves_next()


def test_compile_builtin_is_refused(sandbox):
    result = sandbox.executor.run(f"type(fun: 0)(compile({FOREIGN!r}, 'x', 'exec'), globals())()\n")
    _run_refused_at_compile(result, "`compile`", 1)
    sandbox.assert_serves_next()


def test_dunder_import_is_refused(sandbox):
    result = sandbox.executor.run(f"__import__('builtins').exec({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`__import__`", 1)
    sandbox.assert_serves_next()


# ----------------------------------------------------------------------------- the real builtins

def test_builtins_module_is_not_available(sandbox):
    result = sandbox.executor.run(f"use builtins\nbuiltins.exec({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`builtins`", 1)
    sandbox.assert_serves_next()


def test_dunder_builtins_name_is_refused(sandbox):
    result = sandbox.executor.run(f"__builtins__['exec']({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`__builtins__`", 1)
    sandbox.assert_serves_next()


def test_vetted_builtins_have_no_exec_even_when_reached_by_name(sandbox):
    # The static check is dodged by a computed key: the program's builtins table itself
    # holds no exec, eval or compile.
    result = sandbox.executor.run(
        f"let table = globals()['__buil' + 'tins__']\ntable['ex' + 'ec']({FOREIGN!r})\n")
    _ran_without_foreign_code(result, "KeyError")
    sandbox.assert_serves_next()


def test_vars_of_a_module_holds_no_real_builtins(sandbox):
    # A module's namespace holds the real builtins under `__builtins__`: vars() leaves it out.
    result = sandbox.executor.run(f"use json\nvars(json)['__buil' + 'tins__']['exec']({FOREIGN!r})\n")
    _ran_without_foreign_code(result, "KeyError")
    sandbox.assert_serves_next()


def test_builtin_function_self_is_refused(sandbox):
    # `print.__self__` is the real `builtins` module.
    result = sandbox.executor.run(f"print.__self__.exec({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`__self__`", 1)
    sandbox.assert_serves_next()


def test_computed_dunder_through_getattr_fails_at_run_time(sandbox):
    result = sandbox.executor.run(
        f"let real = getattr(print, '__se' + 'lf__')\nreal.exec({FOREIGN!r})\n")
    _ran_without_foreign_code(result, "AttributeError")
    sandbox.assert_serves_next()


def test_sys_modules_lookup_of_builtins_cannot_run_a_string(sandbox):
    result = sandbox.executor.run(f"use sys\nsys.modules['builtins'].exec({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`sys.modules`", 2)  # the gate's turn: tests/security/test_security_gate.py
    sandbox.assert_serves_next()


def test_certificate_says_why_eval_of_the_real_builtins_was_refused(sandbox, marker_problem):
    source = ("use sys\n"
              "fn solve(x: int) -> int:\n"
              "    let real = sys.modules['builtins']\n"
              f"    return real.eval('[0, {EXPECTED_MARKER - 1} + x][-1]', {{'x': x}})\n")
    cert = certify(marker_problem, source, executor=sandbox.executor)
    _refused_at_compile(cert, "`sys.modules`", 3)
    sandbox.assert_serves_next()


def test_gc_walk_to_the_real_builtins_cannot_run_a_string(sandbox):
    # `print`'s referent is the real `builtins` module, whose referent is its namespace.
    result = sandbox.executor.run(
        "use gc\n"
        "let module = first(gc.get_referents(print))\n"
        "let real = [o for o in gc.get_referents(module) if type(o).__name__ == 'dict']\n"
        f"first(real)['exec']({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`gc`", 1)
    sandbox.assert_serves_next()


def test_subclasses_walk_is_refused(sandbox):
    result = sandbox.executor.run(
        "let found = [c for c in object.__subclasses__() if c.__name__ == 'catch_warnings']\n"
        f"first(found)()._module.__builtins__['exec']({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`__subclasses__`", 1)
    sandbox.assert_serves_next()


# ----------------------------------------------------------------------------- globals and frames

def test_function_globals_are_refused(sandbox):
    result = sandbox.executor.run(
        f"use json\njson.dumps.__globals__['__builtins__']['exec']({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`__globals__`", 2)
    sandbox.assert_serves_next()


def test_class_pattern_reading_globals_is_refused(sandbox):
    # A class pattern reads the attributes it names: `case object(__globals__=g)`.
    result = sandbox.executor.run(
        "use json\nmatch json.dumps:\n    case object(__globals__=g):\n"
        f"        g['__builtins__']['exec']({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`__globals__`", 3)
    sandbox.assert_serves_next()


def test_from_use_of_a_modules_builtins_is_refused(sandbox):
    result = sandbox.executor.run(f"from json use __builtins__ as real\nreal['exec']({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`__builtins__`", 1)
    sandbox.assert_serves_next()


def test_frame_f_globals_are_refused(sandbox):
    # The harness's frame holds the real exec in its globals.
    result = sandbox.executor.run(
        f"use sys\nsys._getframe(1).f_globals['_exec']({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`f_globals`", 2)
    sandbox.assert_serves_next()


def test_generator_frame_f_builtins_are_refused(sandbox):
    result = sandbox.executor.run(
        f"let gen = (x for x in [1])\ngen.gi_frame.f_builtins['exec']({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`gi_frame`", 2)
    sandbox.assert_serves_next()


def test_frame_attribute_through_computed_getattr_fails_at_run_time(sandbox):
    result = sandbox.executor.run(
        "use sys\n"
        "let harness = getattr(sys._getframe(1), 'f_glo' + 'bals')\n"
        f"harness['_exec']({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`sys._getframe`", 2)
    sandbox.assert_serves_next()


# ----------------------------------------------------------------------------- code objects

def test_types_module_is_not_available(sandbox):
    result = sandbox.executor.run(
        f"use types\ntypes.FunctionType(compile({FOREIGN!r}, 'x', 'exec'), globals())()\n")
    _run_refused_at_compile(result, "`types`", 1)
    sandbox.assert_serves_next()


def test_code_replace_is_refused(sandbox):
    result = sandbox.executor.run(
        "let f = fun: print('P4')\n"
        "let g = type(f)(f.__code__.replace(co_consts=(nil, 'FOREIGN')), globals())\ng()\n")
    _run_refused_at_compile(result, "`__code__`", 2)
    sandbox.assert_serves_next()


def test_function_type_cannot_wrap_a_foreign_code_object(sandbox):
    # A function's code reached by a computed name, to be rebuilt by FunctionType.
    result = sandbox.executor.run(
        "let f = fun: print('P4')\n"
        "let code = getattr(f, '__co' + 'de__')\n"
        "type(f)(code.replace(co_consts=(nil, 'FOREIGN')), globals())()\n")
    _ran_without_foreign_code(result, "AttributeError")
    sandbox.assert_serves_next()


def test_marshal_is_not_available(sandbox):
    payload = marshal.dumps(compile(FOREIGN, "x", "exec")).hex()
    result = sandbox.executor.run(
        f"use marshal\nlet code = marshal.loads(bytes.fromhex({payload!r}))\n"
        "type(fun: 0)(code, globals())()\n")
    _run_refused_at_compile(result, "`marshal`", 1)
    sandbox.assert_serves_next()


# ----------------------------------------------------------------------------- modules that run strings

def test_pickle_reduce_is_not_available(sandbox):
    payload = b"cbuiltins\nexec\n(V" + FOREIGN.encode() + b"\ntR."
    result = sandbox.executor.run(f"use pickle\npickle.loads({payload!r})\n")
    _run_refused_at_compile(result, "`pickle`", 1)
    sandbox.assert_serves_next()


def test_copy_reduce_reaches_no_dunder(sandbox):
    # copy.copy calls the callable a __reduce__ names: the program's getattr is vetted.
    result = sandbox.executor.run(
        "use copy\n"
        "class Reducer:\n"
        "    fn __reduce__(self) -> tuple:\n"
        "        return (getattr, (print, '__self__'))\n"
        f"copy.copy(Reducer()).exec({FOREIGN!r})\n")
    _ran_without_foreign_code(result, "AttributeError")
    sandbox.assert_serves_next()


def test_code_module_is_not_available(sandbox):
    result = sandbox.executor.run(f"use code\ncode.InteractiveInterpreter().runsource({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`code`", 1)
    sandbox.assert_serves_next()


def test_codeop_module_is_not_available(sandbox):
    result = sandbox.executor.run("from codeop use compile_command\n"
                                  f"type(fun: 0)(compile_command({FOREIGN!r}), globals())()\n")
    _run_refused_at_compile(result, "`codeop`", 1)
    sandbox.assert_serves_next()


def test_importlib_is_not_available(sandbox):
    result = sandbox.executor.run(
        f"use importlib\nimportlib.import_module('builtins').exec({FOREIGN!r})\n")
    _run_refused_at_compile(result, "`importlib`", 1)
    sandbox.assert_serves_next()


def test_runpy_is_not_available(sandbox):
    result = sandbox.executor.run(
        f"use runpy\nwith open('/tmp/f.py', 'w') as fh:\n    fh.write({FOREIGN!r})\n"
        "runpy.run_path('/tmp/f.py')\n")
    _run_refused_at_compile(result, "`runpy`", 1)
    sandbox.assert_serves_next()


def test_ctypes_is_not_available(sandbox):
    result = sandbox.executor.run(
        f"use ctypes\nctypes.pythonapi.PyRun_SimpleString({FOREIGN.encode()!r})\n")
    _run_refused_at_compile(result, "`ctypes`", 1)
    sandbox.assert_serves_next()


def test_preloaded_ctypes_cannot_call_into_the_interpreter(sandbox):
    # The workers load ctypes for themselves: a program finds it in sys.modules.
    result = sandbox.executor.run(
        f"use sys\nsys.modules['ctypes'].pythonapi.PyRun_SimpleString({FOREIGN.encode()!r})\n")
    _run_refused_at_compile(result, "`sys.modules`", 2)
    sandbox.assert_serves_next()


def test_unlisted_module_refused_by_the_run_time_importer(sandbox):
    # The static allow-list is dodged by a computed name: the importer checks it again.
    payload = marshal.dumps(compile(FOREIGN, "x", "exec")).hex()
    result = sandbox.executor.run(
        "let table = globals()['__buil' + 'tins__']\n"
        "let m = table['__imp' + 'ort__']('mar' + 'shal')\n"
        f"type(fun: 0)(m.loads(bytes.fromhex({payload!r})), globals())()\n")
    _ran_without_foreign_code(result, "ImportError")
    sandbox.assert_serves_next()


def test_another_python_cannot_be_started(sandbox):
    result = sandbox.executor.run(
        "use os\nuse sys\n"
        "let python = sys.base_prefix + '/bin/python3'\n"
        f"print(os.popen(python + ' -c ' + {shlex.quote(FOREIGN)!r}).read())\n")
    _ran_without_foreign_code(result, "DynamicCodeError")
    sandbox.assert_serves_next()


def test_another_python_cannot_be_started_by_the_unaudited_fork_exec(sandbox):
    # _posixsubprocess.fork_exec starts programs without telling audit hooks.
    result = sandbox.executor.run(
        "use sys\nuse os\n"
        "let real = sys.modules['builtins']\n"
        "real.getattr(real, '__import__')('subprocess')\n"
        "let start = sys.modules['_posixsubprocess'].fork_exec\n"
        "let python = sys.base_prefix + '/bin/python3'\n"
        "let r, w = os.pipe()\n"
        f"let pid = start([python, '-c', {FOREIGN!r}], [python.encode()], true, (), nil, nil,\n"
        "    -1, -1, -1, -1, -1, -1, r, w, false, false, -1, nil, nil, nil, -1, nil, false)\n"
        "os.waitpid(pid, 0)\n")
    _run_refused_at_compile(result, "`sys.modules`", 3)
    sandbox.assert_serves_next()


# ----------------------------------------------------------------------------- indirections

def test_class_made_by_three_argument_type_reaches_no_dunder(sandbox):
    # type(name, bases, namespace) is allowed (its functions are Python-4 code), but the
    # dunder method it slips past the analyser (a dict key) reaches only the vetted getattr.
    result = sandbox.executor.run(
        "use copy\n"
        "let Reducer = type('Reducer', (), {'__reduce__': fun self: (getattr, (print, '__self__'))})\n"
        f"copy.copy(Reducer()).exec({FOREIGN!r})\n")
    _ran_without_foreign_code(result, "AttributeError")
    sandbox.assert_serves_next()


def test_functools_reduce_over_getattr_fails_at_run_time(sandbox):
    result = sandbox.executor.run(
        f"use functools\nfunctools.reduce(getattr, ['__self__', 'exec'], print)({FOREIGN!r})\n")
    _ran_without_foreign_code(result, "AttributeError")
    sandbox.assert_serves_next()


def test_operator_attrgetter_reaches_no_dunder(sandbox):
    result = sandbox.executor.run(
        f"use operator\noperator.attrgetter('__self__.exec')(print)({FOREIGN!r})\n")
    _ran_without_foreign_code(result, "AttributeError")
    sandbox.assert_serves_next()


def test_string_formatter_get_field_reaches_no_dunder(sandbox):
    result = sandbox.executor.run(
        "use string\n"
        "let real = first(string.Formatter().get_field('0.__self__', [print], {:}))\n"
        f"real.exec({FOREIGN!r})\n")
    _ran_without_foreign_code(result, "AttributeError")
    sandbox.assert_serves_next()


def test_string_annotation_is_not_evaluated(sandbox):
    # typing evaluates string annotations with eval: Python 3 code in a string.
    result = sandbox.executor.run(
        "use typing\n"
        f"fn f(x: {FOREIGN!r}) -> nil:\n    pass\n"
        "print(typing.get_type_hints(f))\n")
    _ran_without_foreign_code(result, "DynamicCodeError")
    sandbox.assert_serves_next()
