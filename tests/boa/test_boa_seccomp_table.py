"""The seccomp filter of every architecture Boa supports, built from the one syscall table
and checked by running its BPF program on the verdicts that matter (on any machine: the
aarch64 program is built and run here on x86_64 too)."""

from __future__ import annotations

import errno

import pytest

from py4.boa import seccomp

EPERM = seccomp.RET_ERRNO | errno.EPERM
ALLOW, KILL = seccomp.RET_ALLOW, seccomp.RET_KILL_PROCESS
# Numbers the kernel gives these calls (arch/x86/entry/syscalls/syscall_64.tbl and
# include/uapi/asm-generic/unistd.h), written out here independently of the table.
READ = {"x86_64": 0, "aarch64": 63}
FADVISE64 = {"x86_64": 221, "aarch64": 223}
PREADV2 = {"x86_64": 327, "aarch64": 286}
FCNTL = {"x86_64": 72, "aarch64": 25}
MINCORE = {"x86_64": 27, "aarch64": 232}
F_GETFL, F_NOTIFY, F_SETLK = 3, 1026, 6


def verdict(program, arch_value: int, nr: int, args=(0, 0)) -> int:
    """Run a classic-BPF seccomp program (the instructions Boa uses) on one syscall."""
    data = {seccomp.OFFSET_ARCH: arch_value, seccomp.OFFSET_NR: nr,
            seccomp.OFFSET_ARG0: args[0], seccomp.OFFSET_ARG1: args[1],
            seccomp.OFFSET_ARG5: args[2] if len(args) > 2 else 0}
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        if code == seccomp.RET_K:
            return k
        if code == seccomp.LD_W_ABS:
            acc = data[k]
            pc += 1
            continue
        taken = {seccomp.JEQ_K: acc == k, seccomp.JGE_K: acc >= k, seccomp.JSET_K: bool(acc & k)}[code]
        pc += 1 + (jt if taken else jf)


@pytest.mark.parametrize("arch", seccomp.ARCHITECTURES)
def test_page_cache_and_notification_calls_are_refused_on_every_architecture(arch):
    program = seccomp.instructions(arch)
    audit = seccomp.AUDIT_ARCH[arch]
    assert verdict(program, audit, READ[arch]) == ALLOW
    for nr in (FADVISE64[arch], MINCORE[arch], 451):  # 451: cachestat
        assert verdict(program, audit, nr) == EPERM, nr
    assert verdict(program, audit, PREADV2[arch], (3, 0, 0x8)) == EPERM  # RWF_NOWAIT
    assert verdict(program, audit, PREADV2[arch], (3, 0, 0)) == ALLOW
    assert verdict(program, audit, FCNTL[arch], (3, F_GETFL)) == ALLOW
    assert verdict(program, audit, FCNTL[arch], (3, F_NOTIFY)) == EPERM
    assert verdict(program, audit, FCNTL[arch], (3, F_SETLK)) == EPERM


@pytest.mark.parametrize("arch", seccomp.ARCHITECTURES)
def test_another_architectures_calls_kill_the_process(arch):
    program = seccomp.instructions(arch)
    other = next(a for a in seccomp.ARCHITECTURES if a != arch)
    assert verdict(program, seccomp.AUDIT_ARCH[other], READ[other]) == KILL
    assert verdict(program, 0x40000003, 3) == KILL  # i386 compat


def test_aarch64_table_follows_the_generic_numbering():
    numbers = seccomp.syscall_numbers("aarch64")
    assert "inotify_init" not in numbers  # aarch64 has only inotify_init1
    assert (numbers["inotify_init1"], numbers["fanotify_init"], numbers["readahead"]) == (26, 262, 213)
    assert seccomp.AUDIT_ARCH["aarch64"] == 0xC00000B7
    assert len(set(numbers.values())) == len(numbers)  # no two names share a number
    assert len(set(seccomp.syscall_numbers("x86_64").values())) == len(seccomp.syscall_numbers("x86_64"))


def test_supervisor_filter_lets_only_mount_through():
    for arch in seccomp.ARCHITECTURES:
        numbers = seccomp.syscall_numbers(arch)
        program = seccomp.instructions(arch, supervisor=True)
        audit = seccomp.AUDIT_ARCH[arch]
        assert verdict(program, audit, numbers["mount"]) == ALLOW
        assert verdict(program, audit, numbers["umount2"]) == ALLOW
        assert verdict(program, audit, numbers["fadvise64"]) == EPERM


def test_executor_refuses_to_start_without_its_filter_unless_told(monkeypatch):
    # What a worker on a machine without a syscall table reports (worker.py: no filter).
    from py4.boa import executor as executor_module

    report = {"seccomp": False, "warnings": ["no seccomp filter (no seccomp syscall table for riscv64)"]}
    monkeypatch.setattr(executor_module.Executor, "capabilities", property(lambda self: report))
    with pytest.raises(executor_module.WorkerError, match="seccomp=False"):
        executor_module.Executor(workers=1)
    with executor_module.Executor(workers=1, seccomp=False) as accepted:  # the caller's choice
        assert accepted.run("print(1)\n").stdout == "1\n"
