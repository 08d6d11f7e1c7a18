"""What one Slurm job of the campaign runs: ``python -m py4.campaign.slurm_job FILE --node ID ...``.

It rebuilds the campaign's DAG from the spec (with the overrides it was submitted with), checks
that the node's fingerprint is the one submitted (a spec edited after submission is refused,
not run with other settings), and runs the node with `py4.campaign.runner.run_node` — the
record, resume and command line of the local runner (`run_subprocess`). Exit status: 0 done
(or already done), 1 failed, 2 cannot run (spec changed, unknown node, inputs not done),
143 stopped by SIGTERM (scancel, time limit: the record says ``interrupted``).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys


def _log(text: str) -> None:
    print(text, flush=True)


def _interrupt_on_sigterm() -> None:
    # Slurm stops a job (scancel, time limit) with SIGTERM: raise KeyboardInterrupt so the
    # record says interrupted (not running forever) and the stage's child is stopped.
    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m py4.campaign.slurm_job", description=__doc__.splitlines()[0])
    parser.add_argument("campaign", help="campaign YAML")
    parser.add_argument("--node", required=True, help="the run id")
    parser.add_argument("--fingerprint", required=True, help="the run's fingerprint when it was submitted")
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="key=value override of the spec")
    args = parser.parse_args(argv)

    from py4.campaign.dag import build_dag
    from py4.campaign.lock import this_runner
    from py4.campaign.records import fingerprints, missing_inputs, node_is_done
    from py4.campaign.runner import run_node, run_subprocess
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
    _interrupt_on_sigterm()
    try:
        ok = run_node(node, nodes, spec.out_dir, run_subprocess, fingerprint, _log,
                      runner=this_runner() | {"slurm_job": os.environ.get("SLURM_JOB_ID", "?")})
    except KeyboardInterrupt:
        _log(f"{node.id} interrupted")
        return 143
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
