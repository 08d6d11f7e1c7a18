"""Sources: corpus shards, replay text (local folders; the Hub call path), instruction rows."""

from __future__ import annotations

import gzip
import json

import pydantic
import pytest

from py4.data import sources
from py4.data.instructions import load_instruction_source, strict_alternation_problem
from py4.data.sources import TextSourceSpec, iter_corpus, iter_text_source, read_corpus_manifest
from py4.data.tokens import DataError, DocumentEncoder

from data_helpers import write_jsonl


def test_corpus_reads_shards_in_order_including_gz(tmp_path):
    write_jsonl(tmp_path / "b.jsonl", [{"id": "b1", "text": "second"}])
    with gzip.open(tmp_path / "a.jsonl.gz", "wt") as fh:
        fh.write(json.dumps({"id": "a1", "text": "first", "extra": 1}) + "\n\n")
    (tmp_path / "manifest.json").write_text("{}")
    assert [d.id for d in iter_corpus(tmp_path)] == ["a1", "b1"]


@pytest.mark.parametrize("line,message", [
    ("{not json", "shard.jsonl:2: invalid JSON"),
    ('{"id": "x"}', "shard.jsonl:2: field 'text': expected str, got nothing"),
    ('{"id": 3, "text": "t"}', "shard.jsonl:2: field 'id': expected str, got int"),
    ("[1, 2]", "shard.jsonl:2: expected a JSON object"),
])
def test_corpus_errors_name_file_line_and_field(tmp_path, line, message):
    (tmp_path / "shard.jsonl").write_text('{"id": "ok", "text": "fine"}\n' + line + "\n")
    with pytest.raises(DataError, match=message):
        list(iter_corpus(tmp_path))


def test_corpus_manifest_is_required(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", [{"id": "a", "text": "t"}])
    with pytest.raises(DataError, match="manifest.json is missing"):
        read_corpus_manifest(tmp_path)


def test_local_text_source_reads_jsonl_then_txt_documents(tmp_path):
    write_jsonl(tmp_path / "rows.jsonl", [{"id": "j1", "text": "from jsonl"}, {"id": "j2", "text": "second row"}])
    (tmp_path / "doc.txt").write_text("a whole\nfile\nis one document\n")
    docs = list(iter_text_source(TextSourceSpec(path=str(tmp_path))))
    assert [d.text for d in docs] == ["from jsonl", "second row", "a whole\nfile\nis one document\n"]


def test_text_source_missing_field_is_an_error(tmp_path):
    write_jsonl(tmp_path / "rows.jsonl", [{"body": "x"}])
    with pytest.raises(DataError, match="field 'text'"):
        list(iter_text_source(TextSourceSpec(path=str(tmp_path))))


def test_hub_source_streams_at_the_pinned_revision(monkeypatch):
    calls = []

    def fake_load_dataset(path, **kwargs):
        calls.append((path, kwargs))
        return iter([{"id": "d1", "text": "hub text"}])

    import datasets

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    spec = TextSourceSpec(hub_id="allenai/dolma3_dolmino_mix-100B-1125", revision="f23aa129")
    assert [d.text for d in iter_text_source(spec)] == ["hub text"]
    path, kwargs = calls[0]
    assert path == "allenai/dolma3_dolmino_mix-100B-1125"
    assert kwargs["revision"] == "f23aa129" and kwargs["streaming"] is True and kwargs["split"] == "train"


def test_source_spec_validation():
    with pytest.raises(pydantic.ValidationError, match="pinned revision"):
        TextSourceSpec(hub_id="allenai/x")
    with pytest.raises(pydantic.ValidationError, match="exactly one"):
        TextSourceSpec(hub_id="a/b", revision="r", path="p")
    with pytest.raises(pydantic.ValidationError, match="exactly one"):
        TextSourceSpec()


@pytest.mark.parametrize("messages,problem", [
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], None),
    ([{"role": "system", "content": "s"}, {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"},
      {"role": "user", "content": "q2"}, {"role": "assistant", "content": "a2"}], None),
    ([], "no messages"),
    ([{"role": "system", "content": "s"}], "system only"),
    ([{"role": "assistant", "content": "a"}], "first turn not user"),
    ([{"role": "user", "content": "q"}], "last turn not assistant"),
    ([{"role": "user", "content": "q"}, {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
     "role 'user' where 'assistant' expected"),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": ""}], "empty content"),
    ([{"role": "user", "content": None}, {"role": "assistant", "content": "a"}], "content not a string"),
    ([{"role": "user", "content": "q"}, {"role": "system", "content": "s"}, {"role": "assistant", "content": "a"}],
     "role 'system' where 'assistant' expected"),
])
def test_strict_alternation(messages, problem):
    assert strict_alternation_problem(messages) == problem


def test_instruction_source_counts_kept_and_total(chat_dir):
    source = load_instruction_source({"path": str(chat_dir)})
    kept = list(source)
    assert len(kept) == 30 and source.stats["rows_total"] == 34 and source.stats["rows_kept"] == 30
    assert source.stats["rejected_by_reason"] == {"empty content": 1, "first turn not user": 1,
                                                  "last turn not assistant": 1,
                                                  "role 'tool' where 'assistant' expected": 1}


def test_instruction_source_reads_parquet_like_the_hub_format(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"id": "p1", "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "train-00000.parquet")
    [conversation] = list(load_instruction_source({"path": str(tmp_path)}))
    assert conversation.messages == rows[0]["messages"]


def test_instruction_hub_spec_uses_the_same_loader(monkeypatch):
    import datasets

    seen = {}

    def fake(path, **kwargs):
        seen.update(kwargs, path=path)
        return iter([{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}])

    monkeypatch.setattr(datasets, "load_dataset", fake)
    source = load_instruction_source({"hub_id": "allenai/Dolci-Instruct-SFT", "revision": "bd3c8f3a"})
    assert len(list(source)) == 1
    assert seen["path"] == "allenai/Dolci-Instruct-SFT" and seen["revision"] == "bd3c8f3a" and seen["streaming"]


def test_document_encoder_matches_the_tokenizer(tokenizer):
    encoder = DocumentEncoder(tokenizer)
    text = "fn main(): let x = range(3)"
    [ids] = encoder.encode_batch([text])
    plain = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert ids.tolist() == [tokenizer.bos_token_id] + plain + [tokenizer.eos_token_id]
    assert encoder.count_batch([text]) == [len(ids)]
    encoded = DocumentEncoder(tokenizer, add_bos=False).encode_batch([text])[0].tolist()
    assert encoded == plain + [tokenizer.eos_token_id]


def test_local_data_files_rejects_empty_folder(tmp_path):
    with pytest.raises(DataError, match="no"):
        sources.local_data_files(tmp_path)


def test_arrow_null_filling_is_undone_for_tool_calls(tmp_path):
    rows = [
        {"messages": [{"role": "user", "content": "q"},
                      {"role": "assistant", "content": "", "tool_calls": [
                          {"type": "function", "function": {"name": "run_code", "arguments": {"code": "print(1)"}}}]},
                      {"role": "tool", "content": "1"}, {"role": "assistant", "content": "done"}],
         "tools": [{"type": "function", "function": {"name": "run_code"}}]},
        {"messages": [{"role": "user", "content": "q"},
                      {"role": "assistant", "content": "", "tool_calls": [
                          {"type": "function", "function": {"name": "submit", "arguments": {"answer": "x"}}}]}]},
    ]
    write_jsonl(tmp_path / "t.jsonl", rows)
    first, second = load_instruction_source({"path": str(tmp_path), "filter": "none"})
    assert first.messages[1]["tool_calls"][0]["function"]["arguments"] == {"code": "print(1)"}
    assert second.messages[1]["tool_calls"][0]["function"]["arguments"] == {"answer": "x"}
    assert first.tools == rows[0]["tools"] and second.tools is None


def test_prefetched_keeps_order_and_reraises():
    from py4.data.tokens import prefetched

    assert list(prefetched(iter(range(100)), depth=3)) == list(range(100))

    def failing():
        yield 1
        raise DataError("bad row 2")

    out = []
    with pytest.raises(DataError, match="bad row 2"):
        for item in prefetched(failing()):
            out.append(item)
    assert out == [1]
    early = prefetched(iter(range(10_000)), depth=2)
    assert next(early) == 0
    early.close()  # stopping early does not hang on the producer
