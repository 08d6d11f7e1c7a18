"""Isolation attacks (BOA.md): network, environment, files, other processes, escapes."""

from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path

import pytest

import py4.problems.schema
from security_fixtures import SECRET_ENV, SECRET_VALUE

pytestmark = pytest.mark.security

REPO = Path(__file__).resolve().parents[2]
SCHEMA_FILE = Path(py4.problems.schema.__file__).resolve()


def _python3_serves_next(executor) -> None:
    result = executor.run("import os\nprint(6 * 7, len([p for p in os.listdir('/proc') if p.isdigit()]))\n")
    assert result.status == "ok" and result.stdout == "42 1\n", result


def _reads(path: str) -> str:
    """A program that prints the first bytes of ``path``, or the error it got."""
    return (f"try:\n    with open({path!r}, 'rb') as fh:\n        print('READ', fh.read(40))\n"
            "catch OSError as exc:\n    print('DENIED', type(exc).__name__)\n")


def test_network_connection_fails(sandbox):
    program = ("use socket\ntry:\n    let s = socket.create_connection(('1.1.1.1', 80), timeout=0.5)\n"
               "    print('CONNECTED')\ncatch OSError as exc:\n    print('NO NETWORK', type(exc).__name__)\n")
    result = sandbox.run(program)
    assert result.status == "ok" and result.stdout.startswith("NO NETWORK")
    sandbox.assert_serves_next()


def test_local_tcp_listen_fails(sandbox):
    program = ("use socket\ntry:\n    let s = socket.socket(socket.AF_INET)\n    s.bind(('127.0.0.1', 0))\n"
               "    print('BOUND')\ncatch OSError as exc:\n    print('NO NETWORK', type(exc).__name__)\n")
    result = sandbox.run(program)
    assert result.stdout.startswith("NO NETWORK")
    sandbox.assert_serves_next()


def test_dns_lookup_fails(sandbox):
    program = ("use socket\ntry:\n    print(socket.getaddrinfo('pypi.org', 443))\n"
               "catch OSError as exc:\n    print('NO DNS', type(exc).__name__)\n")
    result = sandbox.run(program)
    assert result.status == "ok" and result.stdout.startswith("NO DNS")
    sandbox.assert_serves_next()


def test_environment_is_scrubbed(sandbox):
    assert os.environ.get(SECRET_ENV) == SECRET_VALUE  # set in the parent by the fixture
    result = sandbox.run("use os\nprint(dict(os.environ))\n")
    assert result.status == "ok"
    assert SECRET_VALUE not in result.stdout and SECRET_ENV not in result.stdout
    assert set(json.loads(result.stdout.replace("'", '"'))) <= {
        "PATH", "HOME", "TMPDIR", "LANG", "PYTHONIOENCODING"}
    sandbox.assert_serves_next()


def test_parent_proc_environ_unreadable(sandbox):
    parent = os.getpid()
    program = ("use os\nlet found = []\n"
               f"for pid in [{parent}, os.getppid(), 1]:\n"
               "    try:\n        with open(i'/proc/{pid}/environ', 'rb') as fh:\n"
               "            found.append(fh.read())\n"
               "    catch OSError:\n        pass\n"
               "print(found)\n")
    result = sandbox.run(program)
    assert result.status == "ok"
    assert SECRET_VALUE not in result.stdout
    assert result.stdout == "[]\n"
    sandbox.assert_serves_next()


def test_host_processes_invisible(sandbox):
    result = sandbox.run('use os\nprint(sorted(p for p in os.listdir("/proc") if p.isdigit()))\n')
    assert result.status == "ok"
    assert str(os.getpid()) not in result.stdout.split("'")
    assert result.stdout.count("'") == 2  # exactly one pid: its own
    sandbox.assert_serves_next()


def test_problem_bank_unreadable(sandbox):
    assert SCHEMA_FILE.exists()
    result = sandbox.run(_reads(str(SCHEMA_FILE)))
    assert result.stdout.startswith("DENIED")
    listing = sandbox.run(f"use os\nprint(os.path.exists({str(SCHEMA_FILE.parent)!r}))\n")
    assert listing.stdout == "False\n"
    sandbox.assert_serves_next()


def test_test_files_unreadable(sandbox):
    result = sandbox.run(_reads(__file__))
    assert result.stdout.startswith("DENIED")
    sandbox.assert_serves_next()


def test_repository_and_home_invisible(sandbox):
    program = ("use os\n"
               f"print([p for p in [{str(REPO)!r}, '/work', '/home', '/etc/passwd', '/root/.bashrc'] "
               "if os.path.exists(p)])\n")
    result = sandbox.run(program)
    assert result.stdout == "[]\n"
    sandbox.assert_serves_next()


def test_root_holds_only_system_dirs_and_the_interpreter(sandbox):
    prefix = Path(sys.base_prefix).resolve()
    allowed = {"bin", "dev", "etc", "lib", "lib32", "lib64", "proc", "sbin", "tmp", "usr", prefix.parts[1]}
    result = sandbox.run("use os\nprint(sorted(os.listdir('/')))\n")
    assert set(ast.literal_eval(result.stdout)) <= allowed, result.stdout
    if prefix.parts[1] not in ("usr", "opt"):  # e.g. /root/.pyenv/...: only that path is there
        below = sandbox.run(f"use os\nprint(os.listdir({'/' + prefix.parts[1]!r}))\n")
        assert ast.literal_eval(below.stdout) == [prefix.parts[2]]
    sandbox.assert_serves_next()


def test_other_runs_files_unreadable(sandbox):
    first = sandbox.run('with open("/tmp/secret.txt", "w") as fh:\n    fh.write("from run one")\n'
                        'print("written")\n')
    assert first.stdout == "written\n"
    second = sandbox.run(_reads("/tmp/secret.txt"))
    assert second.stdout.startswith("DENIED")
    sandbox.assert_serves_next()


@pytest.mark.parametrize("target", ["/usr/evil.txt", "/evil.txt", "/etc/evil", "/proc/evil", "/dev/evil"])
def test_writing_outside_scratch_fails(sandbox, target):
    program = (f"try:\n    with open({target!r}, 'w') as fh:\n        fh.write('x')\n    print('WROTE')\n"
               "catch OSError as exc:\n    print('DENIED', type(exc).__name__)\n")
    result = sandbox.run(program)
    assert result.stdout.startswith("DENIED"), result
    sandbox.assert_serves_next()


def test_kill_all_processes(sandbox):
    program = ("use os\nuse signal\nif os.fork() == 0:\n    use time\n    time.sleep(30)\n"
               "os.kill(-1, signal.SIGKILL)\nprint('still here')\n")
    result = sandbox.run(program)
    # kill(-1) reaches only the program's own processes (here: its forked child)
    assert result.status == "ok" and result.stdout == "still here\n"
    assert os.getpid()  # this process (the executor's parent) is alive
    sandbox.assert_serves_next()


def test_kill_supervisor_and_parent(sandbox):
    parent = os.getpid()
    program = ("use os\nuse signal\nlet out = []\n"
               f"for pid in [1, os.getppid(), {parent}]:\n"
               "    try:\n        os.kill(pid, signal.SIGKILL)\n        out.append('KILLED')\n"
               "    catch OSError as exc:\n        out.append(type(exc).__name__)\n"
               "print(out)\n")
    result = sandbox.run(program)
    assert "KILLED" not in result.stdout, result
    sandbox.assert_serves_next()


def test_posix_system_runs_confined(python3_sandbox):
    program = (f"import posix\nposix.system('cat {SCHEMA_FILE} /etc/passwd; id -u; echo $BOA_TEST_SECRET')\n")
    result = python3_sandbox.run(program)
    assert "pydantic" not in result.stdout and "root:" not in result.stdout
    assert SECRET_VALUE not in result.stdout
    assert "0\n" not in result.stdout.splitlines(keepends=True)  # not root
    _python3_serves_next(python3_sandbox)


def test_ctypes_syscalls_refused(python3_sandbox):
    program = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
               "print(libc.setuid(0), libc.unshare(0x10000000), "
               "libc.mount(b'none', b'/tmp', b'tmpfs', 0, None), libc.chroot(b'/tmp'))\n")
    result = python3_sandbox.run(program)
    assert result.status == "ok"
    assert result.stdout == "-1 -1 -1 -1\n"
    _python3_serves_next(python3_sandbox)


def test_inherited_filter_confines_the_run_and_its_children(python3_sandbox):
    """Where runs drop privileges the supervisor installs the filter once and each run's
    child inherits it (seccomp.py): the run and what it forks are filtered all the same,
    and the calls the supervisor's filter lets through (mount, umount2) fail for lack of
    a capability, which no user namespace can give back."""
    if not python3_sandbox.capabilities.get("seccomp_inherited"):
        pytest.skip("runs keep the worker's uid here: each child installs its own filter")
    program = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
               "def filtered():\n"
               "    return [l.split()[1] for l in open('/proc/self/status') if l.startswith('Seccomp:')][0]\n"
               "r, w = os.pipe()\n"
               "pid = os.fork()\n"
               "if pid == 0:\n"
               "    os.write(w, filtered().encode()); os._exit(0)\n"
               "os.waitpid(pid, 0)\n"
               "print(filtered(), os.read(r, 8).decode(), libc.mount(b'none', b'/tmp', b'tmpfs', 0, None),\n"
               "      ctypes.get_errno(), libc.umount2(b'/tmp', 2), ctypes.get_errno(),\n"
               "      libc.unshare(0x10000000), ctypes.get_errno())\n")
    result = python3_sandbox.run(program)
    assert result.status == "ok", result
    assert result.stdout.split() == ["2", "2", "-1", "1", "-1", "1", "-1", "1"], result  # EPERM each


def test_subclasses_escape_reaches_nothing(python3_sandbox):
    program = ("wrap = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close']\n"
               "system = wrap[0].__init__.__globals__['system']\n"
               f"system('ls {REPO} 2>&1; cat /proc/1/environ 2>&1 | head -c 100')\n")
    result = python3_sandbox.run(program)
    assert "src" not in result.stdout.split() and "pyproject.toml" not in result.stdout
    assert SECRET_VALUE not in result.stdout
    _python3_serves_next(python3_sandbox)


def test_sys_modules_os_reaches_nothing(python3_sandbox):
    program = ("import sys\nos = sys.modules['os']\n"
               f"print(os.path.exists({str(REPO)!r}), os.getuid() == 0, sorted(os.listdir('/')))\n")
    result = python3_sandbox.run(program)
    assert result.status == "ok"
    assert result.stdout.startswith("False False")
    assert "'work'" not in result.stdout and "'home'" not in result.stdout
    _python3_serves_next(python3_sandbox)


def test_ptrace_refused(python3_sandbox):
    program = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
               "print(libc.ptrace(16, 1, 0, 0))\n")  # PTRACE_ATTACH to the supervisor
    result = python3_sandbox.run(program)
    assert result.stdout == "-1\n"
    _python3_serves_next(python3_sandbox)


def test_new_user_namespace_refused(python3_sandbox):
    program = ("import os\nr = os.system('unshare -U -r id -u 2>/dev/null || echo refused')\n")
    result = python3_sandbox.run(program)
    assert "refused" in result.stdout and "0\n" not in result.stdout.splitlines(keepends=True)
    _python3_serves_next(python3_sandbox)


@pytest.mark.parametrize("leave", [
    'use os\nos.setxattr("/tmp", "user.note", b"from run one")\n',
    'use os\nos.chmod("/tmp", 0o777)\n',
    'use os\nos.mkdir("/tmp/.hidden")\nwith open("/tmp/.hidden/x", "w") as fh:\n    fh.write("from run one")\n',
    'use os\nos.symlink("/tmp", "/tmp/loop")\n',
])
def test_nothing_of_a_run_survives_in_scratch(sandbox, leave):
    assert sandbox.run(leave).status == "ok"
    after = sandbox.run('use os\nprint(os.listdir("/tmp"), os.listxattr("/tmp"), oct(os.stat("/tmp").st_mode))\n')
    assert after.stdout == "[] [] 0o40700\n", after
    sandbox.assert_serves_next()


def test_forged_end_of_run_stops_the_program_at_once(sandbox):
    # The harness reports the end of a run with "!" and the exit status on a pipe the
    # program can find (read by the executor; one byte to the supervisor on another);
    # forging it must end the run as an os._exit would: every process of the run
    # killed, nothing left for the next run.
    program = ("use os\nuse time\nprint('before', flush=true)\n"
               "if os.fork() == 0:\n    time.sleep(30)\n"
               "for fd in range(3, 64):\n"
               "    try:\n        os.write(fd, b'!\\x07')\n    catch OSError:\n        pass\n"
               "time.sleep(0.5)\nwhile true:\n    print('after')\n")
    result = sandbox.run(program)
    assert (result.status, result.exit_code) == ("runtime_error", 7), result
    assert result.stdout == "before\n", result  # ended at the forged report, before "after"
    sandbox.assert_serves_next()
