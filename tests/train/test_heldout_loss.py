"""Held-out Python-4 documents: the training corpus's documents are left out (py4.train.heldout_loss)."""

import json

import pytest

from py4.train.heldout_loss import held_out_documents, read_documents


def _corpus(folder, texts):
    (folder / "shards").mkdir(parents=True)
    rows = [{"id": f"d{i}", "text": t, "rules": ["P4-09" if "held" in t else "P4-01"]} for i, t in enumerate(texts)]
    (folder / "shards" / "shard-00000.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_documents_of_the_training_corpus_are_dropped(tmp_path):
    trained = _corpus(tmp_path / "train", ["fn a() -> int:\n    return 1\n", "let x = 1\n"])
    docs = _corpus(tmp_path / "docs", ["let x = 1\n", "fn b() -> int:\n    return 2\n", "held out doc\n"])
    kept, dropped = held_out_documents(docs, [trained])
    assert dropped == 1 and [d["text"] for d in kept] == ["fn b() -> int:\n    return 2\n", "held out doc\n"]


def test_a_folder_without_shards_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no shards/\\*.jsonl"):
        read_documents(tmp_path)
    (tmp_path / "shards").mkdir()
    (tmp_path / "shards" / "shard-00000.jsonl").write_text('{"id": "x"}\n')
    with pytest.raises(ValueError, match="shard-00000.jsonl:1: expected a JSON object with a `text` field"):
        read_documents(tmp_path)


@pytest.mark.smoke
def test_loss_is_split_by_held_in_and_held_out_rule_documents(tmp_path, smoke_assets):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from py4.train.heldout_loss import document_loss

    base = smoke_assets / "base"
    model, tok = AutoModelForCausalLM.from_pretrained(base), AutoTokenizer.from_pretrained(base)
    docs = [{"text": "fn f() -> int:\n    return 1\n" * 20, "rules": ["P4-01"]},
            {"text": "let x = 0.1 + 0.2\n" * 20, "rules": ["P4-09"]}]  # P4-09 is held out
    out = document_loss(model, tok, docs, max_tokens=10_000, block=64)
    assert out["documents"] == 2 and out["heldin"]["scored_tokens"] > 0 and out["heldout"]["scored_tokens"] > 0
    assert out["all"]["scored_tokens"] == out["heldin"]["scored_tokens"] + out["heldout"]["scored_tokens"]
    assert 7.0 < out["all"]["loss"] < 9.0  # an untrained model: ~ln(3072) = 8.03
