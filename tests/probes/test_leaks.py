"""No probe text in the bank or a corpus: the leak index, and the gates that run it
(`py4 problems validate`'s no_probe_text, `py4 corpus validate`)."""

from __future__ import annotations

import json

import pytest

from py4.problems.probe_set.build import load_probes
from py4.problems.probe_set.verify import LeakIndex, bank_leaks, corpus_leaks, leaked


@pytest.fixture(scope="module")
def records():
    return load_probes()


def _first(records, kind):
    return next(r for r in records if r["kind"] == kind)


def test_index_finds_member_texts_programs_results_and_the_canary(records):
    syntax, semantic = _first(records, "syntax"), _first(records, "semantic")
    index = LeakIndex(records)
    member = syntax["prefix"] + syntax["py3"] + syntax["suffix"]
    assert syntax["id"] in index.find("intro\n" + member + "\noutro")
    assert syntax["id"] in index.find("x\n" + syntax["check"]["p4_code"] + "y")
    assert index.find("... " + records[0]["canary"] + " ...") == {"<canary>"}
    code, result = semantic["check"]["code"].rstrip("\n"), semantic["check"]["p4_result"]
    assert semantic["id"] in index.find(f"Some text.\n{code}  # -> {result}\nmore")
    # The one-line program alone is an ordinary example, not the probe's answer.
    assert index.find(f"Some text.\n{code}\n") == set()
    assert index.find("nothing here, let alone a probe") == set()


def test_shipped_bank_has_no_probe_text(records):
    from py4.problems.bank import load_bank

    assert bank_leaks(load_bank(), records) == {}


def test_problems_validate_gate_flags_a_gold_carrying_a_probe_program(records):
    from py4.problems.bank import load_bank
    from py4.problems.validate import ValidationReport, _static_gates

    good = load_bank()[:2]
    planted = good[1].model_copy(update={"gold": good[1].gold + "\n" + _first(records, "syntax")["check"]["p4_code"]})
    report = ValidationReport()
    _static_gates([good[0], planted], report)
    leaks = [(f["id"], f["gate"]) for f in report.failures if f["gate"] == "no_probe_text"]
    assert leaks == [(planted.id, "no_probe_text")]


def _corpus(tmp_path, texts):
    from py4.corpus.output import ShardWriter, text_sha256

    writer = ShardWriter(tmp_path, shard_docs=10)
    for i, text in enumerate(texts):
        writer.write({"id": f"doc-{i}", "text": text, "type": "t", "rules": [], "tokens": 1,
                      "sha256": text_sha256(text)})
    writer.close()
    (tmp_path / "manifest.json").write_text(json.dumps({"docs": len(texts)}))
    return tmp_path


def test_corpus_validate_fails_a_document_carrying_probe_text(records, tmp_path):
    from py4.corpus.output import iter_documents
    from py4.corpus.subset import validate_corpus

    syntax = _first(records, "syntax")
    leak = "A page.\n\n" + syntax["prefix"] + syntax["p4"] + syntax["suffix"]
    folder = _corpus(tmp_path, ["A page about nothing in particular.", leak])
    assert corpus_leaks(iter_documents(folder), records) == {"doc-1": [syntax["id"]]}
    report = validate_corpus(folder, None, workers=1)
    assert report["failed_docs"] == 1 and report["failures"][0]["id"] == "doc-1"
    assert "probes" in report["failures"][0]["problems"][-1]


def test_leaked_lists_sorted_ids(records):
    planted = records[0]["check"]["p4_code"]
    assert leaked(records, ["some text\n" + planted + "\nmore"]) == [records[0]["id"]]
