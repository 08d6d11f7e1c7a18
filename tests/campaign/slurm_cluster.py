"""A real single-node Slurm for the tests: munged, slurmctld and slurmd in a temporary folder.

Debian's packages (scripts/install_slurm.sh), CPU-only resources, run as root in the test
container with everything that needs cgroups or a system service turned off
(``ProctrackType=proctrack/linuxproc``, ``TaskPlugin=task/none``, no accounting, munge on its own
socket and key). With no accounting, squeue is the only record of an ended job: ``MinJobAge``
keeps it for a day (the whole smoke campaign outlasts an hour on a shared machine; with the
former hour, its first jobs' COMPLETED records were purged before it ended). Clients find it
through ``SLURM_CONF``. `LocalSlurm.stop` cancels its jobs, waits for them to end and stops the
three daemons by their process ids; it raises if any of them, or a job step of this cluster, is
still alive.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DAEMONS = ("munged", "slurmctld", "slurmd")


class SlurmUnavailable(RuntimeError):
    """Slurm cannot be started here; the message says why (the tests skip with it)."""


def _which(name: str) -> str | None:
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.access(p, os.X_OK)),
                                      None)


def missing_commands() -> list[str]:
    return [c for c in (*DAEMONS, "sbatch", "squeue", "scancel", "sinfo") if _which(c) is None]


def install() -> None:
    """scripts/install_slurm.sh (idempotent); SlurmUnavailable with its output when it fails."""
    proc = subprocess.run(["bash", str(ROOT / "scripts/install_slurm.sh")], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SlurmUnavailable("scripts/install_slurm.sh failed: " + (proc.stderr or proc.stdout).strip()[-500:])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalSlurm:
    def __init__(self, workdir: Path, cpus: int = 2):
        self.dir = Path(workdir)
        self.cpus = cpus
        self.node = socket.gethostname().split(".")[0]
        self.procs: dict[str, subprocess.Popen] = {}
        self.logs: list = []
        self.conf = self.dir / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}

    # --- start ---------------------------------------------------------------------------------

    def start(self, timeout_s: float = 300) -> LocalSlurm:
        """Start the three daemons and wait for the node to be idle. ``timeout_s`` bounds each wait
        (not a test assertion): generous, so a loaded machine is slow rather than a skip; a daemon
        that exits fails at once. On failure the daemons already spawned are stopped first."""
        if os.geteuid() != 0:
            raise SlurmUnavailable("a single-node Slurm in a test needs root (SlurmUser=root, SlurmdUser=root)")
        missing = missing_commands()
        if missing:
            raise SlurmUnavailable(f"not installed: {', '.join(missing)} (scripts/install_slurm.sh installs them)")
        try:
            self._start_daemons(timeout_s)
        except BaseException:
            self._stop_daemons()  # they run in their own sessions: nothing else would ever stop them
            raise
        return self

    def _start_daemons(self, timeout_s: float) -> None:
        for sub in ("munge", "state", "spool", "log"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self.dir.chmod(0o755)  # munged refuses a socket folder others cannot reach
        key = self.dir / "munge" / "munge.key"
        key.write_bytes(os.urandom(128))
        key.chmod(0o600)
        self.munge_socket = self.dir / "munge" / "socket"
        self._spawn("munged", [_which("munged"), "--foreground", "--force", f"--socket={self.munge_socket}",
                               f"--key-file={key}", f"--log-file={self.dir / 'log/munged.log'}",
                               f"--pid-file={self.dir / 'munge/munged.pid'}", f"--seed-file={self.dir / 'munge/seed'}"])
        self._wait(lambda: self.munge_socket.exists(), timeout_s, "munged did not create its socket")
        self.conf.write_text(self._config())
        self._spawn("slurmctld", [_which("slurmctld"), "-D", "-f", str(self.conf)])
        self._spawn("slurmd", [_which("slurmd"), "-D", "-f", str(self.conf)])
        self._wait(self._node_idle, timeout_s, "the node did not come up idle (sinfo)")

    def _config(self) -> str:
        d = self.dir
        return f"""# written by tests/campaign/slurm_cluster.py
ClusterName=py4test
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
MinJobAge=86400
SlurmdTimeout=300
KillWait=10
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN
PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP
"""

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = open(self.dir / "log" / f"{name}.out", "wb")  # noqa: SIM115 - the daemon's output until stop()
        self.logs.append(log)
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env=self.env, start_new_session=True)

    def _wait(self, ready, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead:
                raise SlurmUnavailable(f"{', '.join(dead)} exited: {self.logs_tail()}")
            if ready():
                return
            time.sleep(0.5)
        raise SlurmUnavailable(f"{what} within {timeout_s:.0f} s: {self.logs_tail()}")

    def _node_idle(self) -> bool:
        proc = self.run(["sinfo", "-h", "-N", "-o", "%T"])
        return proc.returncode == 0 and proc.stdout.strip() == "idle"

    def run(self, argv: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run(argv, capture_output=True, text=True, env=self.env, check=False)

    def logs_tail(self, lines: int = 15) -> str:
        out = []
        for f in sorted((self.dir / "log").glob("*")):
            text = f.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {f.name}\n" + "\n".join(text))
        return "\n".join(out)

    # --- jobs -------------------------------------------------------------------------------------

    def queue(self) -> dict[str, tuple[str, str]]:
        """job id -> (state, reason) of every job the controller still knows."""
        proc = self.run(["squeue", "-h", "-t", "all", "-o", "%i|%T|%r"])
        return {i: (s, r) for i, s, r in (line.split("|") for line in proc.stdout.split())}

    def wait_idle(self, timeout_s: float) -> None:
        """Until no job is pending or running (or raise TimeoutError)."""
        from py4.campaign.slurm import LIVE_STATES

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not any(state in LIVE_STATES for state, _ in self.queue().values()):
                return
            time.sleep(2)
        raise TimeoutError(f"jobs still queued after {timeout_s:.0f} s: {self.queue()}")

    # --- stop ---------------------------------------------------------------------------------------

    def stop(self) -> None:
        """Cancel every job of this cluster, then stop the daemons it started (by pid)."""
        if self.procs.get("slurmctld") and self.procs["slurmctld"].poll() is None:
            self.run(["scancel", "--full", *self.queue()])
            try:
                self.wait_idle(60)
            except TimeoutError:
                pass
        self._stop_daemons()

    def _stop_daemons(self) -> None:
        """SIGTERM (then SIGKILL) the daemons started, kill this cluster's leftover job steps, close
        the logs; raise if anything is still alive."""
        for name in ("slurmd", "slurmctld", "munged"):
            proc = self.procs.get(name)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        steps = self.job_steps()
        for pid in steps:  # a job step this cluster's slurmd started and that outlived it
            os.kill(pid, signal.SIGKILL)
        for log in self.logs:
            log.close()
        alive = [n for n, p in self.procs.items() if p.poll() is None]
        if alive or steps:
            raise RuntimeError(f"still alive after stop: daemons {alive}, job steps {steps}")

    def job_steps(self) -> list[int]:
        """slurmstepd processes of this cluster (their spool files are in its folder)."""
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                if not (proc / "cmdline").read_bytes().startswith(b"slurmstepd"):
                    continue
                fds = [os.readlink(fd) for fd in (proc / "fd").iterdir()]
            except OSError:
                continue
            if any(fd.startswith(str(self.dir)) for fd in fds):
                found.append(int(proc.name))
        return found
