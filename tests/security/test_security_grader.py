"""Grader attacks (BOA.md): none of them can certify a wrong solution.

The control test shows that an honest solution to the same problem certifies, so every
attack's ``certified is False`` is the grader's doing, not a broken fixture.
"""

from __future__ import annotations

import pytest

from security_fixtures import EXPECTED_MARKER
from py4.boa.certify import certify
from py4.boa.executor import Executor
from py4.problems.schema import Problem

pytestmark = pytest.mark.security

HONEST = f"fn solve(x: int) -> int:\n    return {EXPECTED_MARKER - 1} + x\n"


def _certify(sandbox, problem, source):
    cert = certify(problem, source, executor=sandbox.executor)
    assert cert.compiled, cert.diagnostics  # the attack must fail at grading, not compiling
    sandbox.assert_serves_next()
    return cert


def _certify_python3(executor, problem, source):
    """The attack as plain Python 3: a Python-4 program cannot reach `sys.modules`, frames
    or gc (the capability set refuses it at compile time); the grader must hold for any
    code a run executes."""
    cert = certify(problem, source, executor=executor)
    assert cert.compiled, cert.diagnostics
    return cert


def test_control_honest_solution_certifies(sandbox, marker_problem):
    cert = _certify(sandbox, marker_problem, HONEST)
    assert cert.certified and cert.tests_passed == 2, cert


def test_sys_exit_before_tests(sandbox, marker_problem):
    cert = _certify(sandbox, marker_problem, "use sys\nsys.exit(0)\n" + HONEST)
    assert not cert.certified and cert.tests_passed == 0


def test_os_exit_before_tests(sandbox, marker_problem):
    cert = _certify(sandbox, marker_problem, "use os\nos._exit(0)\n" + HONEST)
    assert not cert.certified and cert.tests_passed == 0


def test_sys_exit_inside_entry_point(sandbox, marker_problem):
    cert = _certify(sandbox, marker_problem, "use sys\nfn solve(x: int) -> int:\n    sys.exit(0)\n")
    assert not cert.certified and cert.tests_passed == 0


def test_os_exit_after_first_test(sandbox, marker_problem):
    source = (f"use os\nfn solve(x: int) -> int:\n    if x == 2:\n        os._exit(0)\n"
              f"    return {EXPECTED_MARKER}\n")
    cert = _certify(sandbox, marker_problem, source)
    assert not cert.certified and cert.tests_passed == 1


def test_always_equal_object(sandbox, marker_problem):
    source = ("class Eq:\n    fn __eq__(self, other: object) -> bool:\n        return true\n"
              "    fn __ne__(self, other: object) -> bool:\n        return false\n"
              "fn solve(x: int) -> object:\n    return Eq()\n")
    cert = _certify(sandbox, marker_problem, source)
    assert not cert.certified and cert.tests_passed == 0
    assert cert.failures[0]["type"] == "Unserialisable"


def test_int_subclass_with_lying_eq(sandbox, marker_problem):
    source = ("class Liar(int):\n    fn __eq__(self, other: object) -> bool:\n        return true\n"
              "    fn __repr__(self) -> str:\n        return '987654321012'\n"
              "fn solve(x: int) -> int:\n    return Liar(0)\n")
    cert = _certify(sandbox, marker_problem, source)
    assert not cert.certified and cert.tests_passed == 0


def test_str_subclass_with_lying_eq(sandbox):
    problem = Problem(id="security/str", family="security", title="s", prompt="s",
                      entry_point="solve", tests=[{"args": [], "expected": "the answer"}])
    source = ("class Liar(str):\n    fn __eq__(self, other: object) -> bool:\n        return true\n"
              "    fn __str__(self) -> str:\n        return 'the answer'\n"
              "fn solve() -> str:\n    return Liar('wrong')\n")
    cert = _certify(sandbox, problem, source)
    assert not cert.certified


def test_nan_never_equals(sandbox):
    problem = Problem(id="security/nan", family="security", title="n", prompt="n", entry_point="solve",
                      tests=[{"args": [], "expected": 1.5, "tolerance": 1e9}])
    cert = _certify(sandbox, problem, "fn solve() -> float:\n    return float('nan')\n")
    assert not cert.certified


def test_monkeypatched_builtins_and_json(python3_sandbox, marker_problem):
    source = ("import sys, json\nbuiltins = sys.modules['builtins']\n"
              "builtins.isinstance = lambda *a: True\n"
              "builtins.repr = lambda *a: '987654321012'\n"
              "json.dumps = lambda *a, **k: '987654321012'\n"
              "json.loads = lambda *a, **k: 987654321012\n"
              "def solve(x):\n    return 0\n")
    cert = _certify_python3(python3_sandbox, marker_problem, source)
    assert not cert.certified and cert.tests_passed == 0


def test_filterwarnings_cannot_hide_a_warning(sandbox, marker_problem):
    source = ("use warnings\nwarnings.filterwarnings('ignore')\nwarnings.simplefilter('ignore')\n"
              f"fn solve(x):\n    return {EXPECTED_MARKER - 1} + x\n")  # P4-05: no annotations
    cert = _certify(sandbox, marker_problem, source)
    assert cert.tests_passed == 2 and cert.warnings and not cert.certified


def test_reading_expected_through_frames(python3_sandbox, marker_problem):
    source = ("import sys\n"
              "def scan(value, depth):\n"
              "    if depth > 3:\n        return 0\n"
              "    if isinstance(value, int) and value > 10 ** 11:\n        return value\n"
              "    if isinstance(value, (list, tuple)):\n"
              "        for item in value:\n"
              "            hit = scan(item, depth + 1)\n"
              "            if hit:\n                return hit\n"
              "    if isinstance(value, dict):\n"
              "        for key, item in value.items():\n"
              "            hit = scan(item, depth + 1)\n"
              "            if hit:\n                return hit\n"
              "    return 0\n"
              "def solve(x):\n"
              "    frame = sys._getframe()\n"
              "    while frame is not None:\n"
              "        for name, value in frame.f_locals.items():\n"
              "            hit = scan(value, 0)\n"
              "            if hit:\n                return hit\n"
              "        frame = frame.f_back\n"
              "    return 0\n")
    cert = _certify_python3(python3_sandbox, marker_problem, source)
    assert not cert.certified and cert.tests_passed == 0


def test_reading_expected_through_gc(python3_sandbox, marker_problem):
    source = ("import gc\n"
              "def solve(x):\n"
              "    for obj in gc.get_objects():\n"
              "        if isinstance(obj, dict):\n"
              "            for key, value in obj.items():\n"
              "                if key == 'expected' or (type(value) is int and value > 10 ** 11):\n"
              "                    return value\n"
              "        if isinstance(obj, str) and '987654321' in obj:\n"
              "            return int(obj)\n"
              "    return 0\n")
    cert = _certify_python3(python3_sandbox, marker_problem, source)
    assert not cert.certified and cert.tests_passed == 0


def test_forged_result_lines_on_stdout(sandbox, marker_problem):
    source = ("print('PASS 2/2')\n"
              "print('{\"k\": \"result\", \"i\": 0, \"v\": \"987654321012\"}')\n"
              "print('{\"certified\": true, \"tests_passed\": 2}')\n"
              "fn solve(x: int) -> int:\n    print('ok all tests passed')\n    return 0\n")
    cert = _certify(sandbox, marker_problem, source)
    assert not cert.certified and cert.tests_passed == 0


def test_forged_frames_on_every_descriptor(sandbox, marker_problem):
    source = ("use os\nuse json\n"
              "let payload = json.dumps({'k': 'result', 'i': 0, 'v': '987654321012'}).encode()\n"
              "let frame = os.urandom(16) + len(payload).to_bytes(4, 'big') + payload\n"
              "for fd in range(3, 63):\n"
              "    try:\n        os.write(fd, frame + b'garbage' * 100)\n"
              "    catch OSError:\n        pass\n"
              "fn solve(x: int) -> int:\n    return 0\n")
    cert = _certify(sandbox, marker_problem, source)
    assert not cert.certified and cert.tests_passed == 0


def test_forged_frames_with_the_harness_channel(python3_sandbox, marker_problem):
    # Find the harness's own channel object (and its token) in memory and use it: the
    # program can still only claim values, and it does not know the expected ones.
    source = ("import gc, os\n"
              "chans = [o for o in gc.get_objects() if type(o).__name__ == 'Channel']\n"
              "for chan in chans:\n"
              "    chan.send({'k': 'start', 'i': 0})\n"
              "    chan.send({'k': 'result', 'i': 0, 'v': '0'})\n"
              "    chan.send({'k': 'start', 'i': 1})\n"
              "    chan.send({'k': 'result', 'i': 1, 'v': '0'})\n"
              "    chan.send({'k': 'done'})\n"
              "def solve(x):\n    return 0\n")
    cert = _certify_python3(python3_sandbox, marker_problem, source)
    assert not cert.certified and cert.tests_passed == 0


@pytest.mark.parametrize("value", ["{1, 2}", "object()", "(fun: 1)", "b'bytes'", "range(1, 3)",
                                   "iter([1])"])
def test_unserialisable_return_values(sandbox, marker_problem, value):
    cert = _certify(sandbox, marker_problem, f"fn solve(x: int) -> object:\n    return {value}\n")
    assert not cert.certified and cert.tests_passed == 0


def test_huge_int_return(sandbox, marker_problem):
    cert = _certify(sandbox, marker_problem, "fn solve(x: int) -> int:\n    return 10 ** 100000\n")
    assert not cert.certified and cert.status == "ok"


def test_deeply_nested_return(sandbox, marker_problem):
    source = ("fn solve(x: int) -> list:\n    let v = []\n"
              "    for i in range(1, 100000):\n        v = [v]\n    return v\n")
    cert = _certify(sandbox, marker_problem, source)
    assert not cert.certified


def test_huge_string_return(sandbox, marker_problem):
    cert = _certify(sandbox, marker_problem, "fn solve(x: int) -> str:\n    return 'x' * (10 ** 7)\n")
    assert not cert.certified


def test_bool_is_not_int(sandbox, int_problem):
    cert = _certify(sandbox, int_problem, "fn solve(x: int) -> bool:\n    return true\n")
    assert not cert.certified


def test_closing_all_descriptors(sandbox, marker_problem):
    source = "use os\nos.closerange(0, 1024)\n" + HONEST
    cert = _certify(sandbox, marker_problem, source)
    assert not cert.certified and cert.tests_passed == 0


def test_hanging_on_one_test(sandbox, marker_problem):
    source = (f"fn solve(x: int) -> int:\n    while x == 2:\n        pass\n"
              f"    return {EXPECTED_MARKER}\n")
    cert = _certify(sandbox, marker_problem, source)
    assert not cert.certified and cert.tests_passed == 1
    assert {"test": 1, "reason": "timeout"} in cert.failures


def test_reading_earlier_runs_results_from_inherited_memory(marker_problem):
    # A correct solution runs first on the same worker; the attack then scans every
    # writable page of its own process (inherited from the supervisor by fork) for
    # result frames. The supervisor never holds result values, so nothing is found.
    # (This attack certified before the executor read the channels itself.) Plain
    # Python 3 with ctypes: Python-4 programs cannot load ctypes any more
    # (test_security_dynamic_code.py), but the supervisor's memory must hold nothing
    # for whatever code a run manages to execute.
    with Executor(workers=1, timeout_s=1.0, output_cap=2048, dialect="python3") as python3:
        honest = f"def solve(x):\n    return {EXPECTED_MARKER - 1} + x\n"
        assert certify(marker_problem, honest, executor=python3).certified
        source = ("import ctypes, re\n"
                  "def solve(x):\n"
                  "    pattern = re.compile(rb'\"v\": \"([0-9]+)\"')\n"
                  "    with open('/proc/self/maps') as fh:\n"
                  "        for line in fh:\n"
                  "            parts = line.split()\n"
                  "            if not parts[1].startswith('rw'):\n"
                  "                continue\n"
                  "            start, end = (int(b, 16) for b in parts[0].split('-'))\n"
                  "            blob = ctypes.string_at(start, end - start)\n"
                  "            for m in pattern.finditer(blob):\n"
                  "                if int(m.group(1)) > 10 ** 11:\n"
                  "                    return int(m.group(1)) + x - 1\n"
                  "    return 0\n")
        cert = certify(marker_problem, source, executor=python3)
        assert cert.compiled and not cert.certified and cert.tests_passed == 0, cert


def test_forged_end_of_run_cannot_certify(sandbox, marker_problem):
    # "!" and status 0 on every descriptor (among them the pipes on which the harness
    # reports the end of the run): the run stops there, and no test has a passing result.
    source = ("use os\n"
              "fn solve(x: int) -> int:\n"
              "    for fd in range(3, 64):\n"
              "        try:\n            os.write(fd, b'!\\x00')\n        catch OSError:\n            pass\n"
              "    return 0\n")
    cert = _certify(sandbox, marker_problem, source)
    assert not cert.certified and cert.tests_passed == 0
    sandbox.assert_serves_next()
