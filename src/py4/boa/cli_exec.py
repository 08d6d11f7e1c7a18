"""`boa run` and `boa certify`: the sandboxed executor on the command line.

`boa run FILE` behaves like an interpreter: the program's output on stdout, diagnostics
and errors on stderr, and the program's exit status (124 on timeout, 137 when killed,
1 for compile errors, memory and output-limit stops). With ``--json`` it prints one
object and exits 0 when the status is ``ok``, else 1.

`boa certify --problem-file P.json --solution FILE` exits 0 when certified, 1 when not,
2 for unreadable or invalid input. FILE and P.json may be ``-`` (standard input; not both).
What a valid problem file is, is the problem bank's to say, not Boa's: the command is made
with the bank's reader by ``py4.boa_cli`` (above both; ``register(app, read_problem)``).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, Callable

import typer

from py4.boa.cli_lang import DiagnosticsMode, display_name, read_source
from py4.errors import Py4Error, cli_errors
from py4.lang.diagnostics import Rendering

if TYPE_CHECKING:  # not at run time: `boa run` need not import certification
    from py4.boa.certify import CertifiableProblem
    from py4.boa.executor import Executor, RunResult

EXIT_TIMEOUT, EXIT_KILLED = 124, 137

# A problem file's bytes -> the problem; raises ValueError, saying what is wrong, for an invalid one.
ProblemReader = Callable[[bytes], "CertifiableProblem"]


@cli_errors  # unreadable FILE, a sandbox that cannot start: one line, exit 2
def run(
    file: str = typer.Argument(..., help="Python-4 program, or - for stdin."),
    timeout: float = typer.Option(5.0, "--timeout", min=0.01, help="Wall-clock limit in seconds."),
    output_cap: int = typer.Option(2048, "--output-cap", min=0, help="Characters kept of stdout and stderr."),
    diagnostics: DiagnosticsMode = typer.Option(DiagnosticsMode.verbatim, "--diagnostics",
                                                help="verbatim, or generic (kind and line only)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Run a Python-4 program in Boa's sandbox."""
    source = read_source(file, "program")
    name = display_name(file)
    with _executor(timeout_s=timeout, output_cap=output_cap) as executor:
        result = executor.run(source, timeout_s=timeout, diagnostics=diagnostics.rendering, filename=name)
    if as_json:
        typer.echo(json.dumps(result.to_json()))
        raise typer.Exit(0 if result.status == "ok" else 1)
    sys.stdout.write(result.stdout)
    sys.stdout.flush()
    if result.status != "compile_error":
        for diag in result.diagnostics:  # warnings of a program that compiled
            sys.stderr.write(f"{name}: {_render(diag, diagnostics.rendering)}\n")
    sys.stderr.write(result.stderr)
    raise typer.Exit(_exit_status(result))


def _executor(*, timeout_s: float = 5.0, output_cap: int = 2048) -> Executor:
    """A one-worker executor; a :class:`Py4Error` (exit 2) with the reason when it cannot start."""
    from py4.boa.executor import Executor, WorkerError

    try:
        return Executor(workers=1, timeout_s=timeout_s, output_cap=output_cap)
    except WorkerError as exc:
        raise Py4Error(f"cannot start the sandbox: {exc}") from None


def _render(diag: dict[str, Any], mode: Rendering) -> str:
    if mode == "generic":
        return diag["message"]
    return f"line {diag['line']}, col {diag['col']}: {diag['severity']} {diag['rule']}: {diag['message']}"


def _exit_status(result: RunResult) -> int:
    if result.status == "timeout":
        return EXIT_TIMEOUT
    if result.status == "killed":
        return EXIT_KILLED
    if result.exit_code is not None:
        return result.exit_code
    return 0 if result.status == "ok" else 1


def certify_command(read_problem: ProblemReader) -> Callable[..., None]:
    """`boa certify`, reading problem files with ``read_problem``."""

    @cli_errors  # unreadable or invalid input: one line, exit 2
    def certify(
        problem_file: str = typer.Option(..., "--problem-file", help="Problem JSON file, or - for stdin."),
        solution: str = typer.Option(..., "--solution", help="Python-4 solution file, or - for stdin."),
        as_json: bool = typer.Option(False, "--json", help="Print the certificate as one JSON object."),
    ) -> None:
        """Certify a solution against a problem's tests (exit 0 certified, 1 not, 2 bad input)."""
        from py4.boa.certify import certify as certify_solution

        if problem_file == "-" and solution == "-":
            raise Py4Error("--problem-file and --solution cannot both be - (stdin)")
        raw = read_source(problem_file, "problem file")
        try:
            problem = read_problem(raw)
        except ValueError as exc:  # the reader's contract (ProblemReader): invalid input, not a bug
            raise Py4Error(f"{problem_file}: invalid problem: {_first_lines(exc)}") from None
        source = read_source(solution, "solution")
        with _executor() as executor:
            cert = certify_solution(problem, source, executor=executor, filename=display_name(solution))
        if as_json:
            typer.echo(json.dumps(cert.to_json()))
        else:
            verdict = "certified" if cert.certified else "NOT certified"
            typer.echo(f"{problem.id}: {verdict}: {cert.tests_passed}/{cert.tests_total} tests passed, "
                       f"{len(cert.warnings)} warning(s), status {cert.status}")
            for diag in cert.diagnostics:
                typer.echo(f"  {_render(diag, 'verbatim')}")
            for failure in cert.failures:
                typer.echo(f"  failed: {json.dumps(failure)}")
        raise typer.Exit(0 if cert.certified else 1)

    return certify


def _first_lines(exc: Exception, limit: int = 5) -> str:
    return "; ".join(str(exc).splitlines()[:limit])


def register(app: typer.Typer, read_problem: ProblemReader | None = None) -> None:
    """Add `boa run`, and `boa certify` when given ``read_problem`` (the reader of problem files)."""
    app.command("run")(run)
    if read_problem is not None:
        app.command("certify")(certify_command(read_problem))
