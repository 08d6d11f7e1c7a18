"""Held-out Python-4 documents: the training corpus's documents are left out (py4.train.heldout_loss)."""

import json

import pytest

from py4.errors import FileFormatError
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
    with pytest.raises(FileFormatError, match=f"^{tmp_path}: no shards/\\*.jsonl"):
        read_documents(tmp_path)
    (tmp_path / "shards").mkdir()
    shard = tmp_path / "shards" / "shard-00000.jsonl"
    shard.write_text('{"id": "x"}\n')
    with pytest.raises(FileFormatError, match=f"^{shard}:1: field 'text': expected str, got nothing$"):
        read_documents(tmp_path)
    shard.write_text('{"id": "x", "text": "let x = 1\\n"}\n{"id": "y", "text": \n')
    with pytest.raises(FileFormatError, match=f"^{shard}:2: invalid JSON"):
        read_documents(tmp_path)


def _heldout_loss(*args: str):
    from typer.testing import CliRunner

    from py4.cli import app

    return CliRunner().invoke(app, ["smoke", "heldout-loss", "--model", "unused", *args])


def test_the_command_names_the_shard_line_and_field(tmp_path):
    docs = _corpus(tmp_path / "docs", ["let x = 1\n"])
    shard = docs / "shards" / "shard-00000.jsonl"
    shard.write_text(shard.read_text() + '{"id": "d1", "text": 3}\n')
    result = _heldout_loss("--docs", str(docs), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"error: {shard}:2: field 'text': expected str, got int"


def test_the_command_says_when_nothing_is_held_out(tmp_path):
    trained = _corpus(tmp_path / "train", ["let x = 1\n"])
    docs = _corpus(tmp_path / "docs", ["let x = 1\n"])
    result = _heldout_loss("--docs", str(docs), "--exclude", str(trained), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: {docs}: every document is also in {trained}")


def test_a_bug_in_the_scoring_keeps_its_traceback(tmp_path, monkeypatch):
    import py4.train.heldout_loss

    def bug(*args, **kwargs):
        raise RuntimeError("CUDA error: device-side assert triggered")

    monkeypatch.setattr(py4.train.heldout_loss, "heldout_loss", bug)
    result = _heldout_loss("--docs", str(tmp_path), "--out", str(tmp_path / "out"))
    assert isinstance(result.exception, RuntimeError) and result.exit_code != 2
    assert "error: CUDA" not in result.output


def test_smoke_assets_names_an_unknown_field():
    from typer.testing import CliRunner

    from py4.cli import app

    result = CliRunner().invoke(app, ["smoke", "assets", "--out", "unused", "it_training.stepz=3"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: invalid config <defaults of SmokeAssetsConfig>")
    assert "it_training.stepz" in result.output


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
