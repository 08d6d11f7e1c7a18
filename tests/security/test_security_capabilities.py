"""The closed world: what a Python-4 program may reach is decided at compile time.

Each attack of the second review laundered a code object or a refused function through a
library that calls what it is handed (weakref.finalize, threading.Thread.run, the JSON
scanner's object_hook, typing._GenericAlias). Every one starts by reaching something
outside the capability set (py4.lang.internals: the module allowlist, module members
that reach the interpreter's internals, dunder attributes): the analyser refuses the
program and names what it refused, so certification never runs it. A name computed at
run time finds nothing more: `use` binds a view of the module without those members.
One attack per test; the code gate's own answer to each is in test_security_gate.py.
"""

from __future__ import annotations

import pytest

from py4.boa.certify import certify
from security_fixtures import EXPECTED_MARKER

pytestmark = pytest.mark.security

PY3_BODY = f"[0, {EXPECTED_MARKER - 1} + x][-1]"  # a negative index: Python 3 only


def _refused(cert, construct: str) -> None:
    assert not cert.certified and cert.status == "compile_error" and cert.tests_passed == 0, cert
    named = [d for d in cert.diagnostics if d["severity"] == "error" and construct in d["message"]]
    assert named, cert.diagnostics


def test_forward_ref_code_laundered_through_weakref_finalize(sandbox, marker_problem):
    source = ("use gc\nuse typing\nuse weakref\n"
              f"let ref = typing.ForwardRef('(lambda x: {PY3_BODY})')\n"
              "let code = [o for o in gc.get_referents(ref) if type(o).__name__ == 'code'][0]\n"
              "fn f() -> nil:\n    pass\n"
              "let made = weakref.finalize(f, type(f), code, {})()\n"
              "let solve = made()\n")
    cert = certify(marker_problem, source, executor=sandbox.executor)
    for construct in ("module `gc`", "module `weakref`", "`typing.ForwardRef`"):
        _refused(cert, construct)
    sandbox.assert_serves_next()


def test_thread_run_launders_a_function_made_from_code(sandbox, marker_problem):
    source = ("use threading\nuse typing\n"
              f"let code = typing.ForwardRef('(lambda x: {PY3_BODY})').__forward_code__\n"
              "fn f() -> nil:\n    pass\n"
              "let made = []\n"
              "threading.Thread(target=made.extend, args=(map(type(f), [code], [{}]),)).run()\n"
              "let solve = made[0]()\n")
    cert = certify(marker_problem, source, executor=sandbox.executor)
    for construct in ("module `threading`", "`typing.ForwardRef`", "`__forward_code__`"):
        _refused(cert, construct)
    sandbox.assert_serves_next()


def test_json_object_hook_launders_a_function_made_from_code(sandbox, marker_problem):
    source = ("use functools\nuse json\nuse typing\n"
              f"let code = typing.ForwardRef('(lambda x: {PY3_BODY})').__forward_code__\n"
              "fn f() -> nil:\n    pass\n"
              "let made = json.loads('{}', object_hook=functools.partial(type(f), code))\n")
    cert = certify(marker_problem, source, executor=sandbox.executor)
    _refused(cert, "`typing.ForwardRef`")
    sandbox.assert_serves_next()


def test_generic_alias_calls_compile_with_a_library_file_name(sandbox, marker_problem):
    source = ("use typing\n"
              "let library = '/usr/lib/python3.11/json/__init__.py'\n"
              f"let code = typing._GenericAlias(compile, (int,))('lambda x: {PY3_BODY}', library, 'eval')\n")
    cert = certify(marker_problem, source, executor=sandbox.executor)
    _refused(cert, "`typing._GenericAlias`")
    _refused(cert, "`compile`")
    sandbox.assert_serves_next()


def test_gate_defaults_emptied_through_weakref_finalize(sandbox):
    result = sandbox.executor.run(
        "use sys\nuse weakref\n"
        "let gate = sys.modules['py4.lang.code_gate']._gate\n"
        "weakref.finalize(gate, setattr, gate, '__defaults__', nil)()\n")
    assert result.status == "compile_error"
    for construct in ("module `weakref`", "`sys.modules`"):
        assert construct in result.stderr, result.stderr
    sandbox.assert_serves_next()


# ----------------------------------------------------------------------------- classes

def test_module_outside_the_capability_set_is_refused_by_name(sandbox):
    for module in ("gc", "weakref", "threading", "_thread", "ctypes", "inspect", "types",
                   "multiprocessing", "importlib", "sysconfig", "test"):
        result = sandbox.executor.run(f"use {module}\n")
        assert result.status == "compile_error", module
        assert f"module `{module}` is not available to Python-4 programs" in result.stderr, result.stderr


def test_computed_module_name_is_refused_at_run_time(sandbox):
    result = sandbox.executor.run("print(__imp" + "ort__)\n")  # the analyser's own check
    assert result.status == "compile_error"
    result = sandbox.executor.run("use json\nprint(getattr(json, 'dec' + 'oder', 'absent'))\n")
    assert result.status == "ok" and result.stdout == "absent\n", result  # not in the set
    sandbox.assert_serves_next()


def test_private_module_member_through_a_computed_name_is_not_there(sandbox):
    result = sandbox.executor.run(
        "use typing\nuse dataclasses\n"
        "print(getattr(typing, '_Generic' + 'Alias', 'absent'), getattr(dataclasses, '_create' + '_fn', 'absent'))\n")
    assert result.status == "ok" and result.stdout == "absent absent\n", result
    sandbox.assert_serves_next()


def test_module_reached_as_another_modules_member_is_a_view(sandbox):
    # os.sys is the sys module: reached this way it is the same view, without sys.modules;
    # dataclasses.inspect is a module outside the set: not there at all.
    result = sandbox.executor.run(
        "use os\nuse dataclasses\nlet s = getattr(os, 'sys')\n"
        "print(getattr(s, 'mod' + 'ules', 'absent'), getattr(dataclasses, 'insp' + 'ect', 'absent'),\n"
        "      s.maxsize > 0)\n")
    assert result.status == "ok" and result.stdout == "absent absent True\n", result
    sandbox.assert_serves_next()


def test_sys_internals_are_refused_where_written(sandbox):
    for member in ("modules", "settrace", "setprofile", "addaudithook", "meta_path", "exc_info",
                   "_getframe"):
        result = sandbox.executor.run(f"use sys\nprint(sys.{member})\n")
        assert result.status == "compile_error" and f"`sys.{member}`" in result.stderr, member
        result = sandbox.executor.run(f"from sys use {member}\n")
        assert result.status == "compile_error" and f"`sys.{member}`" in result.stderr, member


def test_an_honest_solver_keeps_its_modules(sandbox):
    result = sandbox.executor.run(
        "use sys\nuse os\nuse math\nfrom collections use Counter\nuse collections.abc\n"
        "sys.setrecursionlimit(3000)\n"
        "print(math.isqrt(17), Counter('aab')['a'], os.path.join('a', 'b'),\n"
        "      isinstance([], collections.abc.Sequence), sys.getrecursionlimit())\n")
    assert result.status == "ok" and result.stdout == "4 2 a/b True 3000\n", result
    sandbox.assert_serves_next()
