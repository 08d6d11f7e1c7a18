"""`py4 problems validate`: the bank's gates (docs/problems.md lists them).

Per problem: ids unique, canary, a non-core target, no `py3_*` helper in the gold, the
Python 3 reference passes its own tests (in-process: trusted code), the gold certifies
under Boa, targeted rules are exercised by the gold and violated by the reference, a
held-in problem's gold exercises no held-out rule, and the problem discriminates: for
each targeted rule R the reference migrated with every fixer except R's fails
certification (while the fully migrated reference is reported when it does not certify).
Per bank: splits disjoint by family (no test family in a training split) and the split
sizes / rule coverage the study needs.
"""

from __future__ import annotations

import os
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from py4.problems.family import FamilyError
from py4.problems.generate import Call, load_reference, run_reference
from py4.problems.schema import CANARY, Problem, migration_helper_in
from py4.problems.splits import TEST_SPLITS, TRAINING_SPLITS

__all__ = ["ValidationReport", "validate_problems", "HELD_IN_SPLITS", "UNEXERCISABLE_LINTS", "COVERAGE_MINIMA"]

HELD_IN_SPLITS = ("eft_pool", "grpo", "test_heldin", "train_sanity")
# Lints whose only governed construct is the violation itself: a clean gold cannot
# "exercise" them (py4.lang.analyze), so the exercised-subset gate exempts them.
UNEXERCISABLE_LINTS = frozenset({"P4-25", "P4-29"})
NON_CORE = frozenset(f"P4-{n:02d}" for n in range(6, 31))
COVERAGE_MINIMA = {"problems": 3000, "families": 120, "per_rule": 40, "eft_pool": 1100, "grpo": 512,
                   "test_heldin": 250, "test_heldout": 250, "eft_large": 1843}


@dataclass
class ValidationReport:
    problems: int = 0
    failures: list[dict] = field(default_factory=list)
    notes: list[dict] = field(default_factory=list)
    coverage: dict[str, Any] = field(default_factory=dict)
    coverage_shortfalls: list[str] = field(default_factory=list)
    migrator: str = "present"
    seconds: dict[str, float] = field(default_factory=dict)
    workers: int = 0

    def fail(self, problem: Problem | None, gate: str, detail: str) -> None:
        self.failures.append({"id": problem.id if problem else None, "family": problem.family if problem else None,
                              "gate": gate, "detail": detail})

    def to_json(self) -> dict:
        return {"problems": self.problems, "failures": self.failures,
                "failure_counts": dict(Counter(f["gate"] for f in self.failures)),
                "notes": self.notes, "coverage": self.coverage, "coverage_shortfalls": self.coverage_shortfalls,
                "migrator": self.migrator, "workers": self.workers, "seconds": self.seconds}


def _static_gates(problems: list[Problem], report: ValidationReport,
                  probes_dir: str | Path | None = None) -> None:
    ids = Counter(p.id for p in problems)
    for pid, n in ids.items():
        if n > 1:
            report.failures.append({"id": pid, "family": None, "gate": "ids_unique",
                                    "detail": f"{n} problems share it"})
    from py4.problems.probe_set.build import load_probes
    from py4.problems.probe_set.verify import bank_leaks  # no rule-probe text in the bank (docs/probes.md)

    for pid, probes in bank_leaks(problems, load_probes(probes_dir)).items():
        report.failures.append({"id": pid, "family": None, "gate": "no_probe_text",
                                "detail": f"contains the text of probes {probes[:3]}"})
    for p in problems:
        if p.canary != CANARY:
            report.fail(p, "canary", "canary missing or altered")
        if not set(p.rules) & NON_CORE:
            report.fail(p, "targets_non_core", f"rules {p.rules} include no non-core rule")
        if (helper := migration_helper_in(p.gold)) is not None:
            report.fail(p, "gold_idiomatic", f"gold calls a migration helper ({helper})")
    split_families = defaultdict(set)
    for p in problems:
        split_families[p.split].add(p.family)
    test_fams = set().union(*(split_families[s] for s in TEST_SPLITS))
    train_fams = set().union(*(split_families[s] for s in TRAINING_SPLITS))
    for fam in sorted(test_fams & train_fams):
        report.failures.append({"id": None, "family": fam, "gate": "splits_disjoint",
                                "detail": "family appears in a test split and a training split"})


def _reference_gate(problems: list[Problem], report: ValidationReport) -> None:
    from py4.boa.certify import values_equal

    for p in problems:
        try:
            fn = load_reference(p.reference_py3, p.entry_point)
            for i, t in enumerate(p.tests):
                got = run_reference(fn, p.entry_point, Call(list(t.args), dict(t.kwargs)))
                if not values_equal(t.expected, got, t.tolerance):
                    report.fail(p, "reference_passes", f"test {i}: expected {t.expected!r}, got {got!r}")
                    break
        except FamilyError as exc:
            report.fail(p, "reference_passes", str(exc))


def _certify_gates(problems, report, executor, held_out) -> None:
    from py4.boa.certify import certify_many

    certs = certify_many([(p, p.gold) for p in problems], executor=executor)
    # A sandbox hiccup (a worker restarted under load) must not pass for a broken gold,
    # nor fail a good one: uncertified golds are certified once more, one at a time.
    retry = [i for i, c in enumerate(certs) if not c.certified]
    retried = certify_many([(problems[i], problems[i].gold) for i in retry], executor=executor)
    for i, c in zip(retry, retried, strict=True):
        if c.certified:
            report.notes.append({"id": problems[i].id, "family": problems[i].family,
                                 "note": "gold certified only on retry", "detail": certs[i].status})
        certs[i] = c
    for p, c in zip(problems, certs, strict=True):
        if not c.certified:
            why = c.failures[:1] or c.warnings[:1] or c.diagnostics[:1] or [c.status]
            report.fail(p, "gold_certifies", f"{c.tests_passed}/{c.tests_total} tests, status {c.status}: {why}")
        exercised = set(c.rules_exercised)
        missing = set(p.rules) - exercised - UNEXERCISABLE_LINTS
        if missing:
            report.fail(p, "targets_exercised", f"targeted {sorted(missing)} not exercised by the gold")
        if p.split in HELD_IN_SPLITS and exercised & held_out:
            report.fail(p, "held_in_clean", f"held-in gold exercises held-out {sorted(exercised & held_out)}")


def _migration_gates(problems, report, executor) -> None:
    from py4.boa.certify import certify_many
    from py4.lang.migrate import migrate

    jobs: list[tuple[Problem, str | None, str]] = []  # (problem, skipped rule or None, source)
    for p in problems:
        full = migrate(p.reference_py3)
        violated = full.rules_violated() if callable(full.rules_violated) else full.rules_violated
        missing = set(p.rules) - set(violated)
        if missing:
            report.fail(p, "targets_violated", f"reference does not violate {sorted(missing)} (migrator: {violated})")
        jobs.append((p, None, full.source))
        for rule in p.rules:
            jobs.append((p, rule, migrate(p.reference_py3, skip_rules={rule}).source))
    certs = certify_many([(p, src) for p, _, src in jobs], executor=executor)
    for (p, rule, _), c in zip(jobs, certs, strict=True):
        if rule is None and not c.certified:
            report.notes.append({"id": p.id, "family": p.family, "note": "fully migrated reference does not certify",
                                 "detail": str((c.failures or c.warnings or [c.status])[:1])})
        elif rule is not None and c.certified:
            report.fail(p, "discriminates", f"reference migrated without the {rule} fixer still certifies")


def _coverage(problems: list[Problem], report: ValidationReport) -> None:
    per_split = Counter(p.split for p in problems)
    per_rule = Counter(r for p in problems for r in p.rules)
    families = {p.family for p in problems}
    report.coverage = {"problems": len(problems), "families": len(families),
                       "per_split": dict(sorted(per_split.items())),
                       "per_rule": dict(sorted(per_rule.items()))}
    m = COVERAGE_MINIMA
    if len(problems) < m["problems"]:
        report.coverage_shortfalls.append(f"{len(problems)} problems < {m['problems']}")
    if len(families) < m["families"]:
        report.coverage_shortfalls.append(f"{len(families)} families < {m['families']}")
    for rule in sorted(NON_CORE):
        if per_rule[rule] < m["per_rule"]:
            report.coverage_shortfalls.append(f"{rule} targeted by {per_rule[rule]} problems < {m['per_rule']}")
    for split in ("eft_pool", "test_heldin", "test_heldout", "eft_large"):
        if per_split[split] < m[split]:
            report.coverage_shortfalls.append(f"{split} has {per_split[split]} problems < {m[split]}")
    if per_split["grpo"] != m["grpo"]:
        report.coverage_shortfalls.append(f"grpo has {per_split['grpo']} problems, not {m['grpo']}")


def validate_problems(problems: Iterable[Problem], *, held_out: Iterable[str], workers: int | None = None,
                      check_migration: bool = True, check_coverage: bool = True,
                      progress: Callable[[str], None] | None = None,
                      probes_dir: str | Path | None = None) -> ValidationReport:
    """Run every gate over ``problems`` with a Boa executor of ``workers`` (default: all cores).
    ``probes_dir``: the probe set whose text no problem may hold (default: the shipped one; a
    campaign's pinned set is the folder its ``dataset:probes`` run writes).

    Never raises for a bad problem: each one is a failure in the report. Raises
    RuntimeError only when Boa itself cannot start.
    """
    from py4.boa.executor import Executor

    problems = list(problems)
    held_out = frozenset(held_out)
    report = ValidationReport(problems=len(problems))
    say = progress or (lambda msg: None)
    t0 = time.perf_counter()
    _static_gates(problems, report, probes_dir)
    if check_coverage:
        _coverage(problems, report)
    say("reference tests (Python 3, in-process)")
    _reference_gate(problems, report)
    report.seconds["static_and_reference"] = time.perf_counter() - t0
    workers = workers or os.cpu_count() or 1
    report.workers = workers
    with Executor(workers=workers) as executor:
        t1 = time.perf_counter()
        say(f"certifying {len(problems)} gold solutions on {workers} workers")
        _certify_gates(problems, report, executor, held_out)
        report.seconds["gold"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        try:
            import py4.lang.migrate  # noqa: F401
        except ImportError:
            report.migrator = "absent: discrimination and violated-rules gates skipped"
        else:
            if check_migration:
                say("discrimination: migrating references with each targeted fixer skipped")
                _migration_gates(problems, report, executor)
            else:
                report.migrator = "present, gates not requested"
        report.seconds["migration"] = time.perf_counter() - t2
    report.seconds["total"] = time.perf_counter() - t0
    return report
