"""Differential check: a Python 3 program under `python3` vs its migration under Boa.

`python3 P` runs in a subprocess (PYTHONHASHSEED=0, a scratch directory). The
migration runs under Boa's Executor (`boa run`) when it uses only the standard library;
the sandbox does not see site-packages, so programs of installed packages run their
migration in a plain subprocess with the same compile + `runtime.new_globals()` that
Boa uses. A program passes when stdout and exit status are identical.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from py4.lang.compile import compile_py4
from py4.lang.migrate import migrate

TIMEOUT_S = 30.0
STDLIB_ROOTS = ("test.",)

_PY4_RUNNER = """
import sys
from py4.lang.compile import compile_py4
from py4.lang import runtime
source = open(sys.argv[1], encoding="utf-8").read()
result = compile_py4(source, sys.argv[1])
if not result.ok:
    for d in result.diagnostics:
        print(d.render("verbatim"), file=sys.stderr)
    sys.exit(1)
exec(result.code, runtime.new_globals())
"""


@dataclass
class Outcome:
    name: str
    status: str  # pass | fail | excluded
    reason: str = ""
    detail: str = ""


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = "0"
    env.pop("PYTHONPATH", None)
    return env


def run_python3(source: str) -> tuple[str, int | None]:
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "program.py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
        try:
            proc = subprocess.run([sys.executable, path], capture_output=True, text=True,
                                  timeout=TIMEOUT_S, cwd=scratch, env=_env(), stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return "", None
    return proc.stdout, proc.returncode


def run_python4_subprocess(source: str) -> tuple[str, int | None, str]:
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "program.py4")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
        try:
            proc = subprocess.run([sys.executable, "-c", _PY4_RUNNER, path], capture_output=True,
                                  text=True, timeout=TIMEOUT_S, cwd=scratch, env=_env(),
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return "", None, "timeout"
    return proc.stdout, proc.returncode, proc.stderr


def uses_only_stdlib(name: str) -> bool:
    module = name.split(":")[0]
    top = module.split(".")[0]
    return module.startswith(STDLIB_ROOTS) or top in sys.stdlib_module_names


def outside_python4(source: str) -> str:
    """The first refusal of what Python-4 programs may not do (exec, eval, `use inspect`,
    `__dict__`, …: docs/python4.md, "Dynamic code"), or "" when there is none."""
    refusals = [d.message for d in compile_py4(source).diagnostics
                if "not available to Python-4" in d.message or "Boa has not compiled" in d.message]
    return refusals[0] if refusals else ""


class Differential:
    """Runs programs; holds one Boa Executor for the stdlib programs."""

    def __init__(self):
        self.executor = None

    def __enter__(self):
        try:
            from py4.boa.executor import Executor
            self.executor = Executor(workers=1, timeout_s=TIMEOUT_S, output_cap=1_000_000).__enter__()
        except Exception:  # no executor on this machine: every program runs in a subprocess
            self.executor = None
        return self

    def __exit__(self, *exc):
        if self.executor is not None:
            self.executor.__exit__(*exc)

    def run_python4(self, name: str, source: str, stdlib: bool | None = None) -> tuple[str, int | None, str]:
        if self.executor is not None and (uses_only_stdlib(name) if stdlib is None else stdlib):
            result = self.executor.run(source, timeout_s=TIMEOUT_S)
            if result.status == "compile_error":
                return "", 1, result.stderr
            return result.stdout, result.exit_code, result.stderr
        return run_python4_subprocess(source)

    def check(self, name: str, source: str, stdlib: bool | None = None) -> Outcome:
        """`stdlib`: the program imports only the standard library, so its migration runs
        under Boa's executor (None: decided from `name`, a doctest program's module)."""
        first = run_python3(source)
        if first[1] is None:
            return Outcome(name, "excluded", "python3 run times out")
        second = run_python3(source)
        if first != second:
            return Outcome(name, "excluded", "python3 output is not deterministic")
        result = migrate(source, assume_python3=True)
        if result.cannot_convert:
            return Outcome(name, "excluded", "cannot convert: " + result.cannot_convert[0].reason)
        outside = outside_python4(result.source)
        if outside:
            return Outcome(name, "excluded", "outside Python-4: " + outside)
        stdout, code, stderr = self.run_python4(name, result.source, stdlib)
        if (stdout, code) == first:
            return Outcome(name, "pass")
        if "DynamicCodeError" in stderr:  # Boa's code gate: eval of annotations, pickle, …
            return Outcome(name, "excluded", "outside Python-4: " + stderr.strip().splitlines()[-1])
        detail = (f"exit {first[1]} vs {code}\n--- python3 stdout\n{first[0][-1500:]}\n"
                  f"--- python-4 stdout\n{stdout[-1500:]}\n--- python-4 stderr\n{stderr[-1500:]}")
        return Outcome(name, "fail", "output differs", detail)
