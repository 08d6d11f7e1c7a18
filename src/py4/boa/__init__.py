"""Boa, the Python-4 interpreter as a service: sandboxed execution and certification.

    from py4.boa import Executor, certify, check
    check("let x = 1\nprint(x)")                 # [] : no diagnostics
    with Executor(workers=2) as boa:
        boa.run('print(i"{1 + 1}")').stdout       # '2\n'
        certify(problem, solution, executor=boa)  # Certificate(certified=..., tests_passed=...)

- ``Executor`` (``executor``): pre-forked isolated workers; ``run``/``run_many`` -> ``RunResult``.
- ``certify``/``certify_many`` (``certify``): a solution against a problem's tests -> ``Certificate``.
- ``compile_py4`` (``py4.lang``): diagnostics, rules exercised, a code object; ``check``: the diagnostics alone.
- CLI: ``boa run``, ``boa certify`` (``cli_exec``), next to ``boa check``/``translate``/``migrate``.

The names load on first use, so ``import py4.boa`` (and a worker's import of its
submodules) stays cheap. docs/api.md has examples.

What the sandbox covers: network, mount (private read-only root), PID, IPC and UTS
namespaces; an unprivileged per-worker uid; no_new_privs and a seccomp filter; rlimits on
CPU, memory, processes, file size and descriptors; per-worker memory and pids cgroups; a
tmpfs scratch dir wiped after every run; a wall-clock deadline after which every process
of the run dies. What it does not: kernel exploits and side channels, remnants of earlier
runs' output in the worker's memory, a CPU quota. Details and what was active where the tests ran:
``docs/boa.md``.
"""

import sys

TYPE_CHECKING = False  # not typing's: `import py4.boa` (every Boa worker does) stays cheap
if TYPE_CHECKING:  # what type checkers and IDEs see of the lazy names below
    from py4.boa.certify import Certificate, certify, certify_many  # noqa: F401
    from py4.boa.executor import Executor, RunRequest, RunResult, WorkerError  # noqa: F401
    from py4.lang.compile import CompileResult, compile_py4  # noqa: F401
    from py4.lang.diagnostics import Diagnostic
    from types import ModuleType
else:
    ModuleType = type(sys)  # types.ModuleType, without importing types

# name -> the module that defines it (imported on first access: PEP 562)
_EXPORTS = {
    "Executor": "py4.boa.executor", "RunResult": "py4.boa.executor", "RunRequest": "py4.boa.executor",
    "WorkerError": "py4.boa.executor",
    "certify": "py4.boa.certify", "certify_many": "py4.boa.certify", "Certificate": "py4.boa.certify",
    "compile_py4": "py4.lang.compile", "CompileResult": "py4.lang.compile",
    "Diagnostic": "py4.lang.diagnostics",
}

__all__ = [*_EXPORTS, "check"]


def check(source: "str | bytes", filename: str = "<py4>") -> "list[Diagnostic]":
    """The diagnostics of a Python-4 program (errors and warnings; empty when clean), as ``boa check``.

    Never raises for str or bytes (``compile_py4``'s contract); nothing runs.
    """
    from py4.lang.compile import compile_py4

    return compile_py4(source, filename).diagnostics


class _Package(ModuleType):
    """``py4.boa`` itself: its ``certify`` is the function, never the submodule of that name.

    Python sets a package's attribute to a submodule once the submodule is imported, so
    ``import py4.episodes`` (which imports ``py4.boa.certify``) would otherwise make
    ``from py4.boa import certify`` give a module. The module stays in ``sys.modules``;
    ``from py4.boa.certify import …`` works as ever.
    """

    def __setattr__(self, name: str, value: object) -> None:
        if name == "certify" and isinstance(value, type(sys)):
            value = value.certify
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


# No `from __future__ import annotations` nor importlib: each costs an import on every `import py4.boa`.
def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:  # lets ``from py4.boa import cgroups`` fall back to the submodule
        raise AttributeError(f"module 'py4.boa' has no attribute {name!r}")
    value = getattr(__import__(module, fromlist=[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
