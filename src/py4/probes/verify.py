"""Checks on a probe set: no probe program occurs verbatim in other texts (the bank, a corpus)."""

from __future__ import annotations

from typing import Iterable


def probe_programs(records: list[dict]) -> dict[str, str]:
    """Each distinct probe program (both members' code) -> the first probe id using it."""
    out: dict[str, str] = {}
    for r in records:
        check = r["check"]
        for code in (check.get("code"), check.get("p4_code"), check.get("py3_code")):
            if code:
                out.setdefault(code.strip(), r["id"])
    return out


def leaked(records: list[dict], texts: Iterable[str]) -> list[str]:
    """Ids of probes whose program, or whose canary, occurs in any of ``texts``."""
    programs = probe_programs(records)
    canaries = {r["canary"] for r in records}
    found: set[str] = set()
    for text in texts:
        if any(c in text for c in canaries):
            found.add("<canary>")
        for code, pid in programs.items():
            if code in text:
                found.add(pid)
    return sorted(found)
