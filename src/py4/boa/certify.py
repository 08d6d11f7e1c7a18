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

A problem is anything with an ``id``, an ``entry_point`` and ``tests`` of ``args``,
``kwargs``, ``expected`` and ``tolerance`` (``CertifiableProblem``): the problem bank's
``py4.problems.schema.Problem`` is one, and Boa does not depend on the bank.
"""

from __future__ import annotations

import json
import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Literal, Mapping, NotRequired, Protocol, Sequence, TypedDict, runtime_checkable

from py4.boa import frontend
from py4.boa.executor import Executor
from py4.boa.protocol import JobHeader, RunReply

MAX_FAILURES_SHOWN = 5
MAX_TOTAL_TIMEOUT_S = 60.0

# How the solution's process ended (a run's statuses, less those certification has no use for).
CertificateStatus = Literal["ok", "compile_error", "runtime_error", "timeout", "killed"]
FailureReason = Literal["compile_error", "wrong_answer", "error", "timeout", "not_run"]


@runtime_checkable
class CertifiableTest(Protocol):
    """One test as certification reads it: the inputs go to the solution, the rest stays here."""

    @property
    def args(self) -> Sequence[Any]: ...
    @property
    def kwargs(self) -> Mapping[str, Any]: ...
    @property
    def expected(self) -> Any: ...
    @property
    def tolerance(self) -> float | None: ...


@runtime_checkable
class CertifiableProblem(Protocol):
    """What certification needs of a problem (``py4.problems.schema.Problem`` has it)."""

    @property
    def id(self) -> str: ...
    @property
    def entry_point(self) -> str: ...
    @property
    def tests(self) -> Sequence[CertifiableTest]: ...


class Failure(TypedDict):
    """A failed test as a certificate shows it (never the expected value: it may reach a policy)."""

    test: int | None  # None: the whole solution (it did not compile)
    reason: FailureReason
    type: NotRequired[str | None]  # the exception's type, for reason "error"
    line: NotRequired[int | None]
    detail: NotRequired[str]  # what Boa's code gate refused (DynamicCodeError only)


@dataclass(kw_only=True)
class Certificate:
    """What Boa says of a solution to a problem."""

    certified: bool
    compiled: bool
    tests_passed: int
    tests_total: int
    warnings: list[dict[str, Any]] = field(default_factory=list)  # Diagnostic.to_json()
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    rules_exercised: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    status: CertificateStatus = "ok"
    failures: list[Failure] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Outcome:
    """One test's outcome as the child's frames tell it."""

    status: Literal["ok", "error", "timeout", "not_run"]
    value: str | None = None  # the returned value's strict JSON (status ok)
    type: str | None = None  # the exception's type name (status error)
    line: int | None = None
    detail: str | None = None


def certify(problem: CertifiableProblem, solution: str | bytes, *, executor: Executor | None = None,
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
    if not compiled.ok or compiled.marshalled is None:  # (a program that compiled has its code)
        return Certificate(certified=False, compiled=False, tests_passed=0, tests_total=total, warnings=warnings,
                           diagnostics=diagnostics, rules_exercised=compiled.rules_exercised,
                           duration_s=round(time.monotonic() - started, 6), status="compile_error",
                           failures=[{"test": None, "reason": "compile_error"}])
    per_test = float(per_test_timeout_s or executor.timeout_s)
    whole = min(per_test * (total + 1), MAX_TOTAL_TIMEOUT_S)
    header: JobHeader = {
        "mode": "certify", "filename": filename, "source": _text(solution),
        "diagnostics": "verbatim", "timeout_s": whole, "per_test_timeout_s": per_test,
        "output_cap": executor.output_cap, "entry_point": problem.entry_point,
        "tests": [json.dumps({"args": t.args, "kwargs": t.kwargs}) for t in problem.tests]}
    reply = executor.dispatch(header, compiled.marshalled, whole)
    outcomes = _test_outcomes(reply, total)
    failures: list[Failure] = []
    passed = 0
    for i, (test, outcome) in enumerate(zip(problem.tests, outcomes, strict=True)):  # one outcome per test
        if outcome.status == "ok" and outcome.value is not None and _matches(test, outcome.value):
            passed += 1
        elif len(failures) < MAX_FAILURES_SHOWN:
            failures.append(_failure(i, outcome))
    status = _run_status(reply)
    forged = reply is not None and reply["reason"] == "protocol"  # wrote frames the harness never writes
    return Certificate(certified=passed == total and not warnings and not forged, compiled=True,
                       tests_passed=passed, tests_total=total, warnings=warnings, diagnostics=diagnostics,
                       rules_exercised=compiled.rules_exercised, duration_s=round(time.monotonic() - started, 6),
                       status=status, failures=failures)


def certify_many(pairs: Iterable[tuple[CertifiableProblem, str | bytes]], *, executor: Executor,
                 per_test_timeout_s: float | None = None) -> list[Certificate]:
    """Certify many (problem, solution) pairs on all of ``executor``'s workers, in order."""
    items = list(pairs)
    with ThreadPoolExecutor(max_workers=executor.workers) as pool:
        return list(pool.map(lambda pair: certify(pair[0], pair[1], executor=executor,
                                                  per_test_timeout_s=per_test_timeout_s), items))


def _text(source: str | bytes) -> str:
    return source.decode("utf-8", "replace") if isinstance(source, bytes) else source


def _test_outcomes(reply: RunReply | None, total: int) -> list[_Outcome]:
    """One outcome per test from the child's messages; anything missing did not run.

    Messages are accepted only in protocol order (start i, then one result or error for
    that i); a frame out of order voids every test from that point on.
    """
    outcomes = [_Outcome("not_run") for _ in range(total)]
    if reply is None:
        return outcomes
    current = None
    for message in reply["messages"]:
        kind, index = message["k"], message.get("i")
        if kind == "load_error":
            return [_Outcome("error", type=message.get("type"), line=message.get("line")) for _ in range(total)]
        if kind == "start":
            current = index if type(index) is int and -1 <= index < total else None
            if current is not None and current >= 0 and outcomes[current].status != "not_run":
                break  # a second start for a test that already has an outcome: forged
            continue
        if kind in ("result", "error") and index == current and current is not None and current >= 0:
            value = message.get("v")
            if kind == "result" and isinstance(value, str):
                outcomes[current] = _Outcome("ok", value=value)
            else:
                outcomes[current] = _Outcome("error", type=str(message.get("type")), line=message.get("line"),
                                             detail=message.get("detail"))
            current = None
            continue
        if kind in ("result", "error"):
            break
    if reply["reason"] == "timeout" and current is not None and current >= 0:
        outcomes[current] = _Outcome("timeout")
    return outcomes


def _run_status(reply: RunReply | None) -> CertificateStatus:
    if reply is None:
        return "killed"
    if reply["reason"] == "timeout":
        return "timeout"
    if reply["reason"] == "protocol" or reply["signal"] is not None:
        return "killed"
    return "ok" if reply["exit_code"] == 0 else "runtime_error"


def _failure(index: int, outcome: _Outcome) -> Failure:
    """A human-readable failure (never the expected value: it may reach a policy)."""
    if outcome.status == "ok":
        return {"test": index, "reason": "wrong_answer"}
    if outcome.status == "error":
        failure: Failure = {"test": index, "reason": "error", "type": outcome.type, "line": outcome.line}
        if outcome.type == "DynamicCodeError" and outcome.detail:
            failure["detail"] = outcome.detail  # what Boa's code gate refused (docs/boa.md)
        return failure
    return {"test": index, "reason": outcome.status}


# ----------------------------------------------------------------------------- comparing

class _Reject(Exception):
    pass


def _strict_constant(name: str) -> Any:
    raise _Reject(name)  # NaN / Infinity tokens are not strict JSON


# Made once: json.loads with an argument builds a decoder per call (~1/3 of a test's check).
_strict_decode = json.JSONDecoder(parse_constant=_strict_constant).decode


def _matches(test: CertifiableTest, value_json: str) -> bool:
    """Whether the child's strict-JSON value equals ``test.expected``."""
    try:
        actual = _strict_decode(value_json)
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
            values_equal(e, a, tolerance) for e, a in zip(expected, actual, strict=True))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return set(expected) == set(actual) and all(
            values_equal(expected[k], actual[k], tolerance) for k in expected)
    return False


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)
