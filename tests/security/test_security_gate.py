"""The code gate, the second layer: each attack of the second review, run as if the
capability set had let it through (the analyser's module and member checks and the
runtime's module views switched off in a process of its own, the gate installed as Boa
installs it). The gate decides by what the code is, so laundering a call through a library
frame (weakref.finalize, threading.Thread.run, the JSON scanner, typing._GenericAlias)
changes nothing: making the foreign code is refused wherever the call comes from. One
attack per test.
"""

from __future__ import annotations

import dis
import json
import subprocess
import sys
from types import CodeType

import pytest

from py4.lang import code_gate

pytestmark = pytest.mark.security

PY3 = "(lambda x: [0, 987654321011 + x][-1])"  # Python 3 only: a negative index
REAL = "use sys\nlet real = sys.modules['builtins']\nfn f() -> nil:\n    pass\n"
# The code object typing.ForwardRef compiles from Python 3 text, found with gc.
FORWARD_CODE = (f"let ref = typing.ForwardRef({PY3!r})\n"
                "let code = [o for o in gc.get_referents(ref) if type(o).__name__ == 'code'][0]\n")
ATTACKS = {
    "forward_ref_weakref_finalize": (
        "use gc\nuse typing\nuse weakref\n" + REAL + FORWARD_CODE +
        "let solve = weakref.finalize(f, type(f), code, {})()()\nprint('FOREIGN', solve(1))\n"),
    "thread_run_list_extend_map": (
        "use gc\nuse typing\nuse threading\n" + REAL + FORWARD_CODE +
        "let made = []\n"
        "threading.Thread(target=made.extend, args=(map(type(f), [code], [{}]),)).run()\n"
        "print('FOREIGN', made[0]()(1))\n"),
    "json_object_hook": (
        "use gc\nuse typing\nuse json\nuse functools\n" + REAL + FORWARD_CODE +
        "let made = json.loads('{}', object_hook=functools.partial(type(f), code))\n"
        "print('FOREIGN', made()(1))\n"),
    "generic_alias_compile_with_a_library_name": (
        REAL + "use typing\nuse os\n"
        "let library = os.path.join(os.path.dirname(os.__file__), 'json', '__init__.py')\n"
        f"let code = typing._GenericAlias(real.compile, (int,))({PY3!r}, library, 'eval')\n"
        "print('FOREIGN', real.eval(code)(1))\n"),
    "gate_defaults_emptied_through_weakref_finalize": (
        REAL + "use weakref\nlet gate = sys.modules['py4.lang.code_gate']._gate\n"
        "try:\n    weakref.finalize(gate, real.setattr, gate, '__defaults__', ())()\n"
        "catch BaseException as exc:\n    print('defaults:', type(exc).__name__)\n"
        "real.exec(\"print('FOREIGN', [1][-1])\")\n"),
    "gate_code_replaced": (
        REAL + "let gate = sys.modules['py4.lang.code_gate']._gate\n"
        "try:\n    real.setattr(gate, '__code__', f.__code__)\n"
        "catch BaseException as exc:\n    print('code:', type(exc).__name__)\n"
        "use os\nos.system('echo FOREIGN')\n"),
    "gate_globals_filled": (
        REAL + "let gate = sys.modules['py4.lang.code_gate']._gate\n"
        "gate.__globals__.update(real.__dict__)\n"
        "real.exec(\"print('FOREIGN', [1][-1])\")\n"),
    "code_replace_with_foreign_bytecode": (
        REAL + "let g = fun x: x\n"
        "let code = g.__code__.replace(co_code=(fun x: [x][0]).__code__.co_code)\n"
        "print('FOREIGN', type(f)(code, {})(1))\n"),
    "library_file_name_for_foreign_text": (
        REAL + "use os\nlet library = os.__file__\n"
        "real.exec(real.compile(\"print('FOREIGN', [1][-1])\", library, 'exec'))\n"),
    "dataclass_template_with_a_call": (
        REAL + "use dataclasses\n"
        "let text = 'def __create_fn__():\\n def f(self):\\n  return print(self)\\n return f'\n"
        "real.exec(text)\n"),
    "marshal_of_foreign_code": (
        REAL + "let m = sys.modules['marshal']\n"
        "let data = m.dumps(real.compile('1', 'x', 'eval'))\n"),
}

RUNNER = """
import contextlib, io, json, sys, types
from py4.lang import analyze, code_gate, compile_py4, runtime_builtins
from py4.lang.runtime import new_globals
analyze.module_refusal = runtime_builtins.module_refusal = lambda name: None
analyze.member_refusal = lambda module, name: None
analyze.attribute_refused = runtime_builtins.attribute_refused = lambda name: False
runtime_builtins.module_view = lambda module: module
compiled = compile_py4(sys.argv[1], "<py4>")
assert compiled.ok, [d.render() for d in compiled.diagnostics]
program = types.FunctionType(compiled.code, new_globals())
code_gate.install()
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        program()
    outcome = ["ok", ""]
except BaseException as exc:
    outcome = [type(exc).__name__, str(exc)]
print(json.dumps([*outcome, out.getvalue()]))
"""


def _attack(source: str) -> tuple[str, str, str]:
    done = subprocess.run([sys.executable, "-c", RUNNER, source], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    status, message, output = json.loads(done.stdout.splitlines()[-1])
    return status, message, output


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_gate_refuses_the_foreign_code_wherever_the_call_comes_from(name):
    status, message, output = _attack(ATTACKS[name])
    assert "FOREIGN" not in output, (status, message, output)
    assert status == "DynamicCodeError" and "Python-4" in message, (status, message, output)


def test_gate_policy_is_only_in_its_code():
    # No defaults, no closure, no global or builtin looked up: what it decides on is the
    # constants of its code object, which the program cannot change.
    gate = code_gate._gate
    assert gate.__defaults__ is None and gate.__kwdefaults__ is None and gate.__closure__ is None

    def global_names(code: CodeType) -> set:
        found = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
        for const in code.co_consts:
            if isinstance(const, CodeType):
                found |= global_names(const)
        return found

    assert global_names(gate.__code__) == set()
