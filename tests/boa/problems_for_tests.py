"""Problems that are not the bank's: Boa certifies anything shaped like a problem.

``Task`` has what ``py4.boa.certify.CertifiableProblem`` asks for (an id, an entry point
and tests) and ``Case`` what ``CertifiableTest`` asks for, and nothing else, so tests that
use them show Boa needs no problem bank (test_boa_certify.py, test_boa_cli_exec.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    args: list
    kwargs: dict
    expected: object
    tolerance: float | None = None


@dataclass(frozen=True)
class Task:
    id: str
    entry_point: str
    tests: list[Case]
