"""Boa, the Python-4 interpreter as a service: sandboxed execution and certification.

- ``executor.Executor``: pre-forked isolated workers; ``run``/``run_many`` -> ``RunResult``.
- ``certify.certify``/``certify_many``: a solution against a problem's tests -> ``Certificate``.
- CLI: ``boa run``, ``boa certify`` (``cli_exec``), next to ``boa check``/``translate``/``migrate``.

What the sandbox covers: network, mount (private read-only root), PID, IPC and UTS
namespaces; an unprivileged per-worker uid; no_new_privs and a seccomp filter; rlimits on
CPU, memory, processes, file size and descriptors; per-worker memory and pids cgroups; a
tmpfs scratch dir wiped after every run; a wall-clock deadline after which every process
of the run dies. What it does not: kernel exploits and side channels, remnants of earlier
runs' output in the worker's memory, a CPU quota. Details and what was active where the tests ran:
``docs/boa.md``.
"""
