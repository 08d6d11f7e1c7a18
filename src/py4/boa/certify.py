"""Certification: does a Python-4 solution solve a problem, as judged by the trusted side?

The solution runs in one sandboxed child that receives the tests' *inputs* only
(``args``/``kwargs``), calls the entry point once per test and sends back each return
value as strict JSON. This process (the trusted parent) parses those values and compares
them with the expected outputs, which never leave it. So an early ``exit(0)``, an
always-equal object, an int/str subclass, a forged result line on stdout, monkeypatched
builtins, silenced warnings or a peek at frames/``gc`` cannot make a test pass: a test
passes only when a value equal to the expected one came back for it.

``certified = compiled and tests_passed == tests_total and not warnings``, where
``warnings`` are the analyser's warning diagnostics, found statically in this process
where the program cannot reach them.
"""

from __future__ import annotations

import json
import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from py4.boa import frontend
from py4.boa.executor import Executor
from py4.problems.schema import Problem, TestCase

MAX_FAILURES_SHOWN = 5
MAX_TOTAL_TIMEOUT_S = 60.0


@dataclass
class Certificate:
    """What Boa says of a solution to a problem."""

    certified: bool
    compiled: bool
    tests_passed: int
    tests_total: int
    warnings: list[dict] = field(default_factory=list)
    diagnostics: list[dict] = field(default_factory=list)
    rules_exercised: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    status: str = "ok"
    failures: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


def certify(problem: Problem, solution: str | bytes, *, executor: Executor | None = None,
            per_test_timeout_s: float | None = None, filename: str = "<py4>") -> Certificate:
    """Certify ``solution`` against ``problem``'s tests.

    Uses ``executor`` when given, else a one-worker executor made for this call. Never
    raises for anything the solution does; raises ValueError for a problem without tests.
    """
    if executor is None:
        with Executor(workers=1) as own:
            return certify(problem, solution, executor=own, per_test_timeout_s=per_test_timeout_s,
                           filename=filename)
    if not problem.tests:
        raise ValueError(f"problem {problem.id} has no tests")
    started = time.monotonic()
    compiled = frontend.compile_source(solution, filename, executor.dialect)
    diagnostics = [d.to_json() for d in compiled.diagnostics]
    warnings = [d.to_json() for d in compiled.warnings]
    total = len(problem.tests)
    if not compiled.ok:
        return Certificate(False, False, 0, total, warnings, diagnostics, compiled.rules_exercised,
                           round(time.monotonic() - started, 6), "compile_error",
                           [{"test": None, "reason": "compile_error"}])
    per_test = float(per_test_timeout_s or executor.timeout_s)
    whole = min(per_test * (total + 1), MAX_TOTAL_TIMEOUT_S)
    header = {"mode": "certify", "filename": filename, "source": _text(solution),
              "diagnostics": "verbatim", "timeout_s": whole, "per_test_timeout_s": per_test,
              "output_cap": executor.output_cap, "entry_point": problem.entry_point,
              "tests": [json.dumps({"args": t.args, "kwargs": t.kwargs}) for t in problem.tests]}
    reply = executor.dispatch(header, compiled.marshalled, whole)
    outcomes = _test_outcomes(reply, total)
    failures, passed = [], 0
    for i, (test, outcome) in enumerate(zip(problem.tests, outcomes)):
        if outcome["status"] == "ok" and _matches(test, outcome["value"]):
            passed += 1
        elif len(failures) < MAX_FAILURES_SHOWN:
            failures.append(_failure(i, outcome))
    status = _run_status(reply)
    forged = reply is not None and reply.get("reason") == "protocol"  # wrote frames the harness never writes
    return Certificate(passed == total and not warnings and not forged, True, passed, total, warnings, diagnostics,
                       compiled.rules_exercised, round(time.monotonic() - started, 6), status, failures)


def certify_many(pairs: Iterable[tuple[Problem, str | bytes]], *, executor: Executor,
                 per_test_timeout_s: float | None = None) -> list[Certificate]:
    """Certify many (problem, solution) pairs on all of ``executor``'s workers, in order."""
    items = list(pairs)
    with ThreadPoolExecutor(max_workers=executor.workers) as pool:
        return list(pool.map(lambda pair: certify(pair[0], pair[1], executor=executor,
                                                  per_test_timeout_s=per_test_timeout_s), items))


def _text(source: str | bytes) -> str:
    return source.decode("utf-8", "replace") if isinstance(source, bytes) else source


def _test_outcomes(reply: dict | None, total: int) -> list[dict]:
    """One outcome per test from the child's messages; anything missing did not run.

    Messages are accepted only in protocol order (start i, then one result or error for
    that i); a frame out of order voids every test from that point on.
    """
    outcomes = [{"status": "not_run"} for _ in range(total)]
    if reply is None:
        return outcomes
    current = None
    for message in reply.get("messages", []):
        kind, index = message.get("k"), message.get("i")
        if kind == "load_error":
            return [{"status": "error", "type": message.get("type"), "line": message.get("line"),
                     "phase": "load"} for _ in range(total)]
        if kind == "start":
            current = index if type(index) is int and -1 <= index < total else None
            if current is not None and current >= 0 and outcomes[current]["status"] != "not_run":
                break  # a second start for a test that already has an outcome: forged
            continue
        if kind in ("result", "error") and index == current and current is not None and current >= 0:
            if kind == "result" and isinstance(message.get("v"), str):
                outcomes[current] = {"status": "ok", "value": message["v"]}
            else:
                outcomes[current] = {"status": "error", "type": str(message.get("type")),
                                     "line": message.get("line"), "detail": message.get("detail")}
            current = None
            continue
        if kind in ("result", "error"):
            break
    if reply.get("reason") == "timeout" and current is not None and current >= 0:
        outcomes[current] = {"status": "timeout"}
    return outcomes


def _run_status(reply: dict | None) -> str:
    if reply is None:
        return "killed"
    if reply.get("reason") == "timeout":
        return "timeout"
    if reply.get("reason") == "protocol" or reply.get("signal") is not None:
        return "killed"
    return "ok" if reply.get("exit_code") == 0 else "runtime_error"


def _failure(index: int, outcome: dict) -> dict:
    """A human-readable failure (never the expected value: it may reach a policy)."""
    reason = outcome["status"]
    if reason == "ok":
        return {"test": index, "reason": "wrong_answer"}
    if reason == "error":
        failure = {"test": index, "reason": "error", "type": outcome.get("type"), "line": outcome.get("line")}
        if outcome.get("type") == "DynamicCodeError" and outcome.get("detail"):
            failure["detail"] = outcome["detail"]  # what Boa's code gate refused (docs/boa.md)
        return failure
    return {"test": index, "reason": reason}


# ----------------------------------------------------------------------------- comparing

class _Reject(Exception):
    pass


def _strict_constant(name: str):
    raise _Reject(name)  # NaN / Infinity tokens are not strict JSON


def _matches(test: TestCase, value_json: str) -> bool:
    """Whether the child's strict-JSON value equals ``test.expected``."""
    try:
        actual = json.loads(value_json, parse_constant=_strict_constant)
    except (_Reject, ValueError, RecursionError):
        return False
    try:
        return values_equal(test.expected, actual, test.tolerance)
    except RecursionError:
        return False


def values_equal(expected: Any, actual: Any, tolerance: float | None = None) -> bool:
    """JSON equality with no coercion: bool is not a number, NaN equals nothing, lists
    (and tuples, as JSON makes them lists) and dicts compare item by item; numbers compare
    by value (int 3 equals float 3.0), within ``tolerance`` (absolute or relative) when
    one is given.
    """
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is bool and type(actual) is bool and expected == actual
    if _is_number(expected) and _is_number(actual):
        if isinstance(expected, float) and math.isnan(expected) or isinstance(actual, float) and math.isnan(actual):
            return False
        if tolerance is None:
            return expected == actual
        try:
            return math.isclose(expected, actual, rel_tol=tolerance, abs_tol=tolerance)
        except OverflowError:  # an int too large for a float: only exact equality counts
            return expected == actual
    if expected is None or actual is None:
        return expected is None and actual is None
    if isinstance(expected, str) or isinstance(actual, str):
        return type(expected) is str and type(actual) is str and expected == actual
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)):
        return len(expected) == len(actual) and all(
            values_equal(e, a, tolerance) for e, a in zip(expected, actual))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return set(expected) == set(actual) and all(
            values_equal(expected[k], actual[k], tolerance) for k in expected)
    return False


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)
