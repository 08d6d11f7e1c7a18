"""A fake Slurm client for the fast tests: `sbatch`, `squeue`, `sacct`, `scancel` on PATH.

One script, dispatched by the name it is called as; its state is a JSON file
(``$FAKE_SLURM_STATE``): ``jobs`` (id -> {state, reason, argv}), ``next_id``, ``calls`` (every
command line), ``accounting`` (False: sacct fails as on a cluster without accounting).
`install(tmp_path, monkeypatch)` puts it first on PATH and returns a `FakeSlurm` to read and
change that state.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

SCRIPT = r'''#!{python}
import json, os, sys
path = os.environ["FAKE_SLURM_STATE"]
state = json.load(open(path))
name = os.path.basename(sys.argv[0])
args = sys.argv[1:]
state["calls"].append([name, *args])
jobs = state["jobs"]

def save():
    json.dump(state, open(path, "w"))

def option(prefix):
    return next((a.split("=", 1)[1] for a in args if a.startswith(prefix + "=")), None)

if name == "sbatch":
    if state.get("sbatch_fails"):
        save(); print("sbatch: error: Batch job submission failed: Invalid account", file=sys.stderr); sys.exit(1)
    job = str(state["next_id"]); state["next_id"] += 1
    dep = option("--dependency")
    jobs[job] = {{"state": "PENDING", "reason": "Dependency" if dep else "None", "argv": args}}
    save(); print(job); sys.exit(0)
if name == "squeue":
    ids = option("--jobs")
    wanted = ids.split(",") if ids else list(jobs)
    if ids and any(i not in jobs or jobs[i].get("purged") for i in wanted) and len(wanted) == 1:
        save(); print("slurm_load_jobs error: Invalid job id specified", file=sys.stderr); sys.exit(1)
    for i in wanted:
        if i in jobs and not jobs[i].get("purged"):
            print(f"{{i}}|{{jobs[i]['state']}}|{{jobs[i]['reason']}}")
    save(); sys.exit(0)
if name == "sacct":
    if not state.get("accounting"):
        save(); print("Slurm accounting storage is disabled", file=sys.stderr); sys.exit(1)
    for i in (option("--jobs") or "").split(","):
        if i in jobs:
            print(f"{{i}}|{{jobs[i]['state']}}|0:0")
    save(); sys.exit(0)
if name == "scancel":
    state.setdefault("cancelled", []).extend(args)
    for i in args:
        if i in jobs:
            jobs[i]["state"], jobs[i]["reason"] = "CANCELLED", "None"
    save(); sys.exit(0)
sys.exit(f"fake slurm: unknown command {{name}}")
'''


class FakeSlurm:
    def __init__(self, state_file: Path):
        self.state_file = state_file

    @property
    def state(self) -> dict:
        return json.loads(self.state_file.read_text())

    def update(self, **fields) -> None:
        state = self.state
        state.update(fields)
        self.state_file.write_text(json.dumps(state))

    def set_job(self, job_id: str, state: str, reason: str = "None", **extra) -> None:
        data = self.state
        data["jobs"].setdefault(job_id, {"argv": []}).update(state=state, reason=reason, **extra)
        self.state_file.write_text(json.dumps(data))

    def calls(self, name: str) -> list[list[str]]:
        return [c[1:] for c in self.state["calls"] if c[0] == name]

    def sbatch_of(self, job_id: str) -> list[str]:
        return self.state["jobs"][job_id]["argv"]


def install(tmp_path: Path, monkeypatch, first_id: int = 100) -> FakeSlurm:
    bin_dir = tmp_path / "fake-slurm-bin"
    bin_dir.mkdir()
    script = bin_dir / "fake_slurm"
    script.write_text(SCRIPT.format(python=sys.executable))
    script.chmod(0o755)
    for name in ("sbatch", "squeue", "sacct", "scancel"):
        (bin_dir / name).symlink_to(script)
    state = tmp_path / "fake-slurm-state.json"
    state.write_text(json.dumps({"jobs": {}, "next_id": first_id, "calls": [], "accounting": False}))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM_STATE", str(state))
    return FakeSlurm(state)
