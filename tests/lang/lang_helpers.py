"""Test-side helper shared by the language tests: run a Python-4 program, return its output."""

import contextlib
import io

from py4.lang import compile_py4
from py4.lang.runtime import new_globals


def run_py4(source: str) -> str:
    """Compile ``source`` (which must compile cleanly), execute it, and return what it printed."""
    result = compile_py4(source)
    assert result.ok, [d.render() for d in result.diagnostics]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(result.code, new_globals())
    return out.getvalue()
