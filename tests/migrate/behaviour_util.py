"""Run a Python 3 program and its migration in-process and capture what they print."""

from __future__ import annotations

import contextlib
import io

from py4.lang import runtime
from py4.lang.compile import compile_py4


def run_python3(source: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(source, "<py3>", "exec"), {"__name__": "__main__"})
        except Exception as exc:  # the failure is part of the behaviour
            print("!!", type(exc).__name__)
    return out.getvalue()


def run_python4(source: str) -> str:
    result = compile_py4(source)
    assert result.ok, [d.render("verbatim") for d in result.diagnostics]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(result.code, runtime.new_globals())
        except Exception as exc:
            print("!!", type(exc).__name__)
    return out.getvalue()


def diagnostics(source: str) -> list[str]:
    return [d.render("verbatim") for d in compile_py4(source).diagnostics]
