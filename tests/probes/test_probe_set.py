"""The shipped probe set: a fresh build equals it, every rule has >= 40 confirmed pairs (leaks: test_leaks.py)."""

from __future__ import annotations

from py4.lang.rules import RULES
from py4.probes.build import build_probes, jsonl_bytes, load_probes


def test_shipped_probe_set_equals_a_fresh_build():
    assert jsonl_bytes(build_probes(workers=2)) == jsonl_bytes(load_probes())


def test_every_rule_has_40_pairs_in_three_contexts_marked_as_boa_rules():
    records = load_probes()
    for rid, rule in RULES.items():
        mine = [r for r in records if r["rule"] == rid]
        assert len(mine) >= 40, rid
        assert {r["context"] for r in mine} == {"bare", "repl", "prose"}
        assert all(r["held_out"] == rule.held_out for r in mine)
        assert all(r["kind"] == ("semantic" if rule.kind == "semantics" else "syntax") for r in mine)
    for r in records:
        assert r["p4"] != r["py3"] and r["p4"].strip() and r["py3"].strip()
        if r["kind"] == "semantic":  # the stated results are what Boa and Python 3 print
            assert r["p4"].strip(" `\n") in r["check"]["p4_result"]
            assert r["py3"].strip(" `\n") in r["check"]["py3_result"]

