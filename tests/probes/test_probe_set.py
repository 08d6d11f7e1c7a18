"""The shipped probe set: a fresh build equals it, every rule has >= 40 confirmed pairs (leaks: test_leaks.py)."""

from __future__ import annotations

import pytest

from py4.lang.rules import RULES
from py4.problems.probe_set.build import build_probes, jsonl_bytes, load_probes


@pytest.mark.slow  # ~30 s: the length matching runs every parameter set a variant may take through Boa
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



# The rules whose differing spans are made of a variant's names or numbers alone (docs/probes.md,
# "Length matching"): under the smoke tokenizer every one of their pairs has members of equal length.
FULLY_MATCHABLE = {"P4-01", "P4-08", "P4-09", "P4-10", "P4-14", "P4-15", "P4-17", "P4-19", "P4-27", "P4-29"}


def test_rules_that_allow_it_have_members_of_equal_token_length():
    from py4.problems.probe_set.build import length_matched, length_tokenizers

    records = load_probes()
    tokenizers = length_tokenizers()
    assert "smoke" in tokenizers
    counts = length_matched(records, tokenizers)
    per_rule = {rid: sum(r["rule"] == rid for r in records) for rid in RULES}
    assert {rid: counts["smoke"][rid] for rid in FULLY_MATCHABLE} == {rid: per_rule[rid] for rid in FULLY_MATCHABLE}
    # the manifest states what the shipped set measures
    import json

    from py4.problems.probe_set.build import probe_paths
    assert json.loads(probe_paths()[1].read_text())["length_matched"] == counts


def test_length_matching_takes_a_matched_parameter_set_over_the_variants_own():
    """P4-29's span is the bound name against a builtin: under the smoke tokenizer the variants' own
    names are longer than any builtin, so the build takes a name from another parameter set."""
    from py4.problems.probe_set.build import _first_matched_syntax, _matched, _split_members, length_tokenizers
    from py4.problems.probe_set.templates import _syntax, candidates, variant

    tokenizers = length_tokenizers()
    for i in range(3):
        own = _split_members([(c, None) for c in _syntax(variant(i), i)["P4-29"]], i)
        assert not _matched(own, tokenizers)
        j = _first_matched_syntax("P4-29", i, tokenizers, set())
        assert j != i and j in candidates(i)
        assert _matched(_split_members([(c, None) for c in _syntax(variant(j), i)["P4-29"]], i), tokenizers)
        assert _first_matched_syntax("P4-29", i, {}, set()) == i  # nothing to match: its own


@pytest.mark.slow  # trains the smoke tokenizer: ~30 s
def test_shipped_length_tokenizer_is_the_smoke_assets_tokenizer(tmp_path):
    import json

    from py4.chat.smoke_tokenizer import stdlib_texts, train_tokenizer
    from py4.data.smoke_instructions import build_smoke_instructions
    from py4.problems.probe_set.build import DATA_DIR, LENGTH_TOKENIZERS
    from py4.train.assets import SmokeAssetsConfig, _chain, _split_instructions

    config = SmokeAssetsConfig()
    ins = config.instructions
    rows = build_smoke_instructions(n_qa=ins.n_qa, n_episodes=ins.n_episodes, seed=ins.seed)
    train_rows, _ = _split_instructions(rows, ins.held_out)
    chat_text = (json.dumps(r["messages"], ensure_ascii=False) for r in train_rows)
    train_tokenizer(_chain(stdlib_texts(config.tokenizer_text_bytes), chat_text), config.vocab_size).save_pretrained(
        tmp_path)
    shipped = (DATA_DIR / LENGTH_TOKENIZERS / "smoke.json").read_bytes()
    assert (tmp_path / "tokenizer.json").read_bytes() == shipped
