"""What the tools answer: a run's result and a submission's verdict as the policy sees them.

``generic`` diagnostics keep only kinds and positions (``SyntaxError at line 3``,
``warning at line 5``, ``IndexError at line 7``), so that RL cannot learn a rule from
Boa's words; ``verbatim`` shows the rule id, the message and the fix.
"""

from __future__ import annotations

from py4.boa.certify import Certificate
from py4.boa.executor import RunResult

EPISODE_OVER = "The episode is over; this call changed nothing."
NO_OUTPUT = "(no output)"


def render_run(result: RunResult, mode: str) -> str:
    """A run as a user would see it: warnings, stdout, stderr, then the status when not ok."""
    parts: list[str] = []
    if result.status != "compile_error":  # compile errors are already in stderr, rendered
        parts += [_render_diagnostic(d, mode) for d in result.diagnostics if d.get("severity") == "warning"]
    if result.stdout:
        parts.append(result.stdout.rstrip("\n"))
    if result.stderr:
        parts.append(result.stderr.rstrip("\n"))
    if result.status not in ("ok", "compile_error", "runtime_error"):
        parts.append(f"[{result.status}]")
    elif result.status == "runtime_error" and result.exit_code not in (None, 1):
        parts.append(f"[exit status {result.exit_code}]")
    text = "\n".join(p for p in parts if p)
    return text if text else NO_OUTPUT


def _render_diagnostic(diag: dict, mode: str) -> str:
    if mode == "generic":  # Boa already squashed the message in generic mode
        return str(diag.get("message", ""))
    return (f"line {diag.get('line')}, col {diag.get('col')}: "
            f"{diag.get('severity')} {diag.get('rule')}: {diag.get('message')}")


def render_submission(cert: Certificate, mode: str) -> str:
    """The verdict of the first submit: certified or not, tests passed, and why not."""
    head = "Submission received. The episode is over."
    if cert.certified:
        return f"{head} Certified: {cert.tests_passed}/{cert.tests_total} tests passed."
    if not cert.compiled:
        errors = [d for d in cert.diagnostics if d.get("severity") == "error"]
        shown = "; ".join(_certificate_diagnostic(d, mode) for d in errors[:3])
        return f"{head} Not certified: the solution does not compile ({shown})."
    reasons = [f"{cert.tests_passed}/{cert.tests_total} tests passed"]
    if cert.warnings:
        shown = "; ".join(_certificate_diagnostic(d, mode) for d in cert.warnings[:3])
        reasons.append(f"{len(cert.warnings)} warning(s): {shown}")
    return f"{head} Not certified: {', '.join(reasons)}."


def _certificate_diagnostic(diag: dict, mode: str) -> str:
    """Certificates keep full diagnostics; squash them here in generic mode."""
    if mode == "generic":
        kind = "SyntaxError" if diag.get("severity") == "error" else "warning"
        return f"{kind} at line {diag.get('line')}"
    return _render_diagnostic(diag, mode)
