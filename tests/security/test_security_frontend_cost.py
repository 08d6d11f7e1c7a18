"""The front end under attack: bounded cost, no global serialisation.

A program is compiled in Boa's trusted parent, so its compile cost is everyone's cost.
Before the fix a 99,000-character program of 33,000 i-string fields took 0.8-2.8 s to
compile under a process-wide lock, and an honest one-liner submitted at the same time
waited for it; 8,000 names bound by one `case` pattern took 13 s. Now each construct
whose cost grows faster than its text is bounded (py4.lang.limits) and refused, with a
diagnostic naming the limit, *before* the expensive stage runs; and compilations do not
wait for each other.

No wall-clock bounds: a limit is shown to hold by the expensive stage (the parser, or
CPython's compiler) never being reached, and the absence of serialisation by an honest
compilation finishing while a hostile one is held inside the front end.
"""

from __future__ import annotations

import ast
import gc
import threading
import warnings

import pytest

import py4.lang.compile as lang_compile
from py4.boa import frontend
from py4.lang.compile import compile_py4
from py4.lang.limits import (MAX_CALL_ARGUMENTS, MAX_CODE_OBJECTS, MAX_ISTRING_FIELDS,
                             MAX_PATTERN_CAPTURES)

pytestmark = pytest.mark.security

PATIENCE_S = 60  # only breaks a deadlock (the old lock); the property is the ordering


class StageReached(AssertionError):
    pass


def _forbid(monkeypatch, stage: str) -> None:
    """Make the parser (``parse``) or CPython's compiler (``compile``) fail if reached."""
    def reached(*args, **kwargs):
        raise StageReached(f"the front end reached {stage} on a program it must refuse")

    monkeypatch.setattr(lang_compile, {"parse": "_parse", "compile": "_compile_tree"}[stage],
                        reached)


def _refusal(sandbox, source: str) -> dict:
    result = sandbox.executor.run(source)
    assert result.status == "compile_error", result
    errors = [d for d in result.diagnostics if d["severity"] == "error"]
    assert errors, result
    return errors[0]


def _serves_next(sandbox, monkeypatch) -> None:
    monkeypatch.undo()  # the parser and compiler back
    sandbox.assert_serves_next()


def test_istring_field_flood_is_refused_before_parsing(sandbox, monkeypatch):
    # The program: 99,036 characters, 33,000 fields in one i-string.
    source = 'let a = 1\nlet s = i"' + "{a}" * 33_000 + '"\nprint(len(s))\n'
    _forbid(monkeypatch, "parse")
    error = _refusal(sandbox, source)
    assert f"too many i-string fields: the program has 33000; the limit is {MAX_ISTRING_FIELDS}" \
        in error["message"], error
    assert error["line"] == 2, error  # at the first field over the limit
    _serves_next(sandbox, monkeypatch)


def test_keyword_argument_flood_is_refused_before_compiling(sandbox, monkeypatch):
    # CPython checks keyword names pairwise: 8,000 of them took 0.6 s.
    source = "print(" + "".join(f"k{i}=1, " for i in range(8000)) + ")\n"
    _forbid(monkeypatch, "compile")
    error = _refusal(sandbox, source)
    assert f"too many arguments in one call: 8000; the limit is {MAX_CALL_ARGUMENTS}" \
        in error["message"], error
    _serves_next(sandbox, monkeypatch)


def test_case_pattern_capture_flood_is_refused_before_compiling(sandbox, monkeypatch):
    # Each name a pattern binds is checked against all earlier ones: 8,000 took 13 s,
    # 4,000 (this one) 1.2 s.
    source = ("let a = {:}\nmatch a:\n    case {"
              + ", ".join(f"{i}: x{i}" for i in range(4000)) + "}:\n        pass\n")
    _forbid(monkeypatch, "compile")
    error = _refusal(sandbox, source)
    assert f"too many names bound by one case pattern: 4000; the limit is {MAX_PATTERN_CAPTURES}" \
        in error["message"], error
    _serves_next(sandbox, monkeypatch)


def test_class_pattern_keyword_flood_is_refused_before_compiling(sandbox, monkeypatch):
    source = ("let a = 1\nmatch a:\n    case int("
              + ", ".join(f"k{i}=1" for i in range(4000)) + "):\n        pass\n")
    _forbid(monkeypatch, "compile")
    error = _refusal(sandbox, source)
    assert f"too many arguments in one class pattern: 4000; the limit is {MAX_CALL_ARGUMENTS}" \
        in error["message"], error
    _serves_next(sandbox, monkeypatch)


def test_repeated_lambda_flood_is_refused_before_compiling(sandbox, monkeypatch):
    # Equal code objects are merged with a quadratic search: 8,000 `fun: 1` took 1 s.
    source = "let a = 1\n" + "print(fun: 1)\n" * 1500  # over 20,000 characters: not cached
    _forbid(monkeypatch, "compile")
    error = _refusal(sandbox, source)
    assert ("too many functions, lambdas, classes and comprehensions: the program has 1500; "
            f"the limit is {MAX_CODE_OBJECTS}") in error["message"], error
    assert error["line"] == 2 + MAX_CODE_OBJECTS, error  # the first one over the limit
    _serves_next(sandbox, monkeypatch)


def test_programs_at_the_limits_still_compile():
    """The limits refuse floods, not programs: each bound itself is accepted."""
    fields = 'let a = 1\nprint(i"' + "{a}" * MAX_ISTRING_FIELDS + '")\n'
    call = "print(" + ", ".join(["1"] * MAX_CALL_ARGUMENTS) + ")\n"
    captures = ("let a = [1]\nmatch a:\n    case ["
                + ", ".join(f"x{i}" for i in range(MAX_PATTERN_CAPTURES)) + "]:\n        pass\n")
    lambdas = "let a = 1\n" + "print(fun: 1)\n" * MAX_CODE_OBJECTS
    for source in (fields, call, captures, lambdas):
        result = compile_py4(source)
        assert result.ok, result.diagnostics


def _hold_inside_front_end(monkeypatch, marker: str, inside: threading.Event,
                           release: threading.Event, released: list) -> None:
    """Compiling a program that contains ``marker`` stops inside the front end (after
    the token pass, under the warnings/gc bookkeeping) until ``release`` is set."""
    real_analyze = lang_compile.analyze

    def analyze(tree, *args, **kwargs):
        if marker in ast.unparse(tree):
            inside.set()
            released.append(release.wait(PATIENCE_S))
        return real_analyze(tree, *args, **kwargs)

    monkeypatch.setattr(lang_compile, "analyze", analyze)


def test_honest_compile_does_not_wait_for_a_hostile_one(sandbox, monkeypatch):
    # The hostile compilation is held inside the front end (as a slow one would be);
    # before the fix the honest one queued behind it on a process-wide lock.
    inside, honest_done, released = threading.Event(), threading.Event(), []
    _hold_inside_front_end(monkeypatch, "hostile_marker_3141", inside, honest_done, released)
    hostile = threading.Thread(target=frontend.compile_source,
                               args=("let hostile_marker_3141 = 1\nprint(hostile_marker_3141)\n",))
    hostile.start()
    try:
        assert inside.wait(PATIENCE_S)
        result = sandbox.executor.run("print(6 * 7 + 7001)\n")  # compiled and run meanwhile
        honest_done.set()
    finally:
        honest_done.set()
        hostile.join()
    assert result.status == "ok" and result.stdout == "7043\n", result
    assert released == [True], "the hostile compilation was not released by the honest one"
    sandbox.assert_serves_next()


def test_overlapping_compilations_leave_warnings_and_gc_as_found(monkeypatch):
    # A starts, B starts, A finishes, B finishes: B must still compile quietly after A
    # finished, and the process's warning filters and collector must end as they began
    # (before the fix, B put back the filters it found, A's "ignore", for good).
    a_inside, a_done, b_inside = threading.Event(), threading.Event(), threading.Event()
    seen_by_b_after_a: list = []
    real_analyze = lang_compile.analyze

    def analyze(tree, *args, **kwargs):
        text = ast.unparse(tree)
        if "marker_a" in text:
            a_inside.set()
            assert b_inside.wait(PATIENCE_S)
        elif "marker_b" in text:
            b_inside.set()
            assert a_done.wait(PATIENCE_S)
            seen_by_b_after_a.append((list(warnings.filters), gc.isenabled()))
        return real_analyze(tree, *args, **kwargs)

    monkeypatch.setattr(lang_compile, "analyze", analyze)
    filters_before, gc_before = warnings.filters, gc.isenabled()
    results: dict = {}

    def compile_a():
        results["a"] = compile_py4("let marker_a = 1\n")
        a_done.set()

    thread_a = threading.Thread(target=compile_a)
    thread_b = threading.Thread(target=lambda: results.__setitem__(
        "b", compile_py4("let marker_b = 1\n")))
    thread_a.start()
    assert a_inside.wait(PATIENCE_S)
    thread_b.start()
    thread_a.join()
    thread_b.join()
    assert results["a"].ok and results["b"].ok
    (filters_in_b, collecting_in_b), = seen_by_b_after_a
    assert filters_in_b == [("ignore", None, Warning, None, 0)]  # still quiet for B
    assert collecting_in_b == gc_before  # the collector is back once A, which paused it, ends
    assert warnings.filters is filters_before
    assert gc.isenabled() == gc_before


def test_compilations_that_always_overlap_do_not_keep_the_collector_paused(monkeypatch):
    # Compilation k+1 starts before k ends, so some compilation is always running (as under
    # a steady stream from several threads). Before the fix the collector was switched back
    # on only when none was running: never, so the trusted parent ran without it for good.
    count = 5
    inside = [threading.Event() for _ in range(count)]
    done = [threading.Event() for _ in range(count)]
    seen_after_predecessor: list = []
    real_analyze = lang_compile.analyze

    def analyze(tree, *args, **kwargs):
        k = int(ast.unparse(tree).split("marker_")[1].split()[0])
        inside[k].set()
        if k > 0:
            assert done[k - 1].wait(PATIENCE_S)
            seen_after_predecessor.append((list(warnings.filters), gc.isenabled()))
        if k + 1 < count:
            assert inside[k + 1].wait(PATIENCE_S)  # the next one is running before k ends
        return real_analyze(tree, *args, **kwargs)

    monkeypatch.setattr(lang_compile, "analyze", analyze)
    filters_before, gc_before = warnings.filters, gc.isenabled()
    assert gc_before, "the test needs the collector on to see it paused"
    results: dict = {}

    def compile_one(k):
        results[k] = compile_py4(f"let marker_{k} = 1\n")
        done[k].set()

    threads = [threading.Thread(target=compile_one, args=(k,)) for k in range(count)]
    for k, thread in enumerate(threads):
        thread.start()
        assert inside[k].wait(PATIENCE_S)
    for thread in threads:
        thread.join()
    assert all(results[k].ok for k in range(count)), results
    assert [collecting for _, collecting in seen_after_predecessor] == [True] * (count - 1)
    quiet = [("ignore", None, Warning, None, 0)]
    assert all(filters == quiet for filters, _ in seen_after_predecessor)
    assert warnings.filters is filters_before
    assert gc.isenabled()
