"""What one Slurm job of the campaign runs: ``python -m py4.campaign.slurm_job FILE --node ID ...``.

It rebuilds the campaign's DAG from the spec (with the overrides it was submitted with), checks
that the node's fingerprint is the one submitted (a spec edited after submission is refused,
not run with other settings), and runs the node with `py4.campaign.runner.run_node` — the
record, resume and command line of the local runner (`run_subprocess`). Exit status: 0 done
(or already done), 1 failed, 2 cannot run (spec changed, unknown node, inputs not done),
143 stopped by SIGTERM (scancel, preemption, time limit: the record says ``interrupted``).

Slurm's stop signal (``--signal=B:USR1@<s>``, `py4.campaign.slurm.STOP_SIGNAL`, shortly before
the time limit) stops the run the same way — its processes get SIGTERM, the record says
``interrupted`` — and then the job requeues itself (``scontrol requeue $SLURM_JOB_ID``, exit 0):
started again, it finds its run interrupted and resumes it from the last checkpoint. A job
spanning several machines runs its node with `py4.campaign.slurm.multinode_launch` (srun).
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys

from py4.campaign.slurm import STOP_SIGNAL


def _log(text: str) -> None:
    print(text, flush=True)


def _interrupt_on_sigterm() -> None:
    # Slurm stops a job (scancel, time limit) with SIGTERM: raise KeyboardInterrupt so the
    # record says interrupted (not running forever) and the stage's child is stopped.
    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)


class _Stop:
    """Slurm's stop signal: asked (the job requeues itself once its run is stopped)."""

    asked = False


def _stop_on_signal() -> None:
    # Only the batch process gets the signal (B:): the run's processes (the stage, accelerate, srun)
    # get SIGTERM, as on scancel; KeyboardInterrupt unwinds run_node, which records interrupted.
    def handler(signum, frame):
        _Stop.asked = True
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # scontrol requeue's SIGTERM: this process exits anyway
        _terminate_children()
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(getattr(signal, "SIG" + STOP_SIGNAL), handler)


def _terminate_children() -> None:
    """SIGTERM to this process's children (read from /proc: Slurm runs on Linux)."""
    from pathlib import Path

    me = os.getpid()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])  # the name may hold spaces and ")"
            if ppid == me:
                os.kill(int(stat.parent.name), signal.SIGTERM)
        except (OSError, ValueError, IndexError):  # gone meanwhile
            pass


def _requeue() -> int:
    """``scontrol requeue`` this job: Slurm starts it again (its run resumes). 0, or 1 if it failed."""
    import subprocess

    job = os.environ.get("SLURM_JOB_ID")
    if not job:
        _log("error: stopped by Slurm's stop signal, but SLURM_JOB_ID is not set: cannot requeue")
        return 1
    proc = subprocess.run(["scontrol", "requeue", job], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        _log(f"error: scontrol requeue {job} failed (exit {proc.returncode}): {proc.stderr.strip()}")
        return 1
    _log(f"requeued job {job}: its run resumes from its last checkpoint when it starts again")
    return 0


def _run_launch(argv: list[str]) -> None:
    """Run a multi-node launch (srun …) as the node's executor, with run_subprocess's exits."""
    import subprocess

    from py4.campaign.runner import RunFailed

    proc = subprocess.run(argv, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    if proc.returncode in (-signal.SIGINT, -signal.SIGTERM, 128 + signal.SIGINT, 128 + signal.SIGTERM):
        raise KeyboardInterrupt(f"{argv[0]} stopped by a signal (exit {proc.returncode})")
    if proc.returncode != 0:
        raise RunFailed(f"{shlex.join(argv)} exited with {proc.returncode}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m py4.campaign.slurm_job", description=__doc__.splitlines()[0])
    parser.add_argument("campaign", help="campaign YAML")
    parser.add_argument("--node", required=True, help="the run id")
    parser.add_argument("--fingerprint", required=True, help="the run's fingerprint when it was submitted")
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="key=value override of the spec")
    args = parser.parse_args(argv)
    _stop_on_signal()
    try:
        return _main(args)
    except KeyboardInterrupt:
        if not _Stop.asked:
            raise
        _log(f"{args.node} stopped by Slurm's stop signal ({STOP_SIGNAL}: the time limit nears)")
        return _requeue()


def _main(args: argparse.Namespace) -> int:

    from py4.campaign.dag import build_dag
    from py4.campaign.lock import this_runner
    from py4.campaign.records import fingerprints, missing_inputs, node_is_done
    from py4.campaign.runner import run_node, run_subprocess
    from py4.campaign.slurm import SlurmError, multinode_launch
    from py4.campaign.spec import load_campaign
    from py4.errors import Py4Error

    try:
        spec = load_campaign(args.campaign, args.overrides)
        nodes = build_dag(spec)
    except (Py4Error, OSError) as exc:  # a ConfigError, a DagError, an unreadable file
        _log(f"error: {exc}")
        return 2
    node = next((n for n in nodes if n.id == args.node), None)
    if node is None:
        _log(f"error: {args.campaign} has no run {args.node!r} (the spec changed since submission?)")
        return 2
    fingerprint = fingerprints(nodes)[node.id]
    if fingerprint != args.fingerprint:
        _log(f"error: {node.id}: its command or an input changed since it was submitted (fingerprint "
             f"{fingerprint}, submitted {args.fingerprint}); submit the campaign again")
        return 2
    if node_is_done(spec.out_dir, node, fingerprint):
        _log(f"{node.id} is already done")
        return 0
    missing = missing_inputs(spec.out_dir, node)
    if missing:
        _log(f"error: {node.id} needs {', '.join(missing)}, which are not done")
        return 2
    try:
        srun = multinode_launch(node, spec)
    except SlurmError as exc:
        _log(f"error: {exc}")
        return 2
    executor = run_subprocess
    if srun:
        _log(f"  on {os.environ.get('SLURM_JOB_NUM_NODES', '?')} machines: {shlex.join(srun)}")
        def executor(_node):
            _run_launch(srun)
    if os.environ.get("SLURM_RESTART_COUNT"):
        _log(f"job {os.environ.get('SLURM_JOB_ID', '?')} started again (requeued {os.environ['SLURM_RESTART_COUNT']}×)")
    _interrupt_on_sigterm()
    try:
        ok = run_node(node, nodes, spec.out_dir, executor, fingerprint, _log,
                      runner=this_runner() | {"slurm_job": os.environ.get("SLURM_JOB_ID", "?")})
    except KeyboardInterrupt:
        if _Stop.asked:
            raise
        _log(f"{node.id} interrupted")
        return 143
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
