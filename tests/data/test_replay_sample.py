"""The mix's replay is a seeded sample of the whole source, drawn as the campaign drew it.

``order: shards`` (the default) is the as-run draw: every ``data/**/*.jsonl.zst`` shard pooled,
sorted, shuffled by ``random.Random(42)``, streamed through ``datasets``' seeded shuffle buffer
(checked against that procedure written out on a stand-in laid out like the pinned Dolmino
repository). ``order: by_source``: the stand-in's sources (``data/<source>/.../*``, several
shards per source, jsonl, gzipped jsonl and parquet) in proportion: read in file order, the first
documents would all be the first source's; sampled, every prefix of the stream holds each source
at its share of the bytes, to within one document.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from data_helpers import sentence, write_jsonl
from py4.data.mix import replay_documents, run_mix
from py4.data.replay_sample import SampleRecord, list_shards, sample_documents, source_of
from py4.data.sources import TextSourceSpec, iter_text_source
from py4.data.tokens import DataError


def rows(source: str, shard: int, n: int) -> list[dict]:
    return [{"id": f"{source}-{shard}-{i}", "text": f"{source} " + sentence(i, 20)} for i in range(n)]


@pytest.fixture
def dolmino_like(tmp_path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = tmp_path / "dolmino"
    import zstandard

    for shard in range(2):  # the largest source, sorted first: the head of the stream in file order
        write_jsonl(root / "data" / "dclm" / f"000{shard}" / "dclm-0000.jsonl", rows("dclm", shard, 60))
    (root / "data" / "dclm" / "0002").mkdir()  # Dolmino's own shards are zstd-compressed JSON lines
    (root / "data" / "dclm" / "0002" / "dclm-0000.json.zst").write_bytes(zstandard.ZstdCompressor().compress(
        "".join(json.dumps(r) + "\n" for r in rows("dclm", 2, 60)).encode()))
    (root / "data" / "math").mkdir(parents=True)
    for shard in range(2):
        with gzip.open(root / "data" / "math" / f"math-{shard:04d}.jsonl.gz", "wt", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows("math", shard, 40))
    (root / "data" / "wiki").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows("wiki", 0, 30)), root / "data" / "wiki" / "wiki-0000.parquet")
    (root / "README.md").write_text("a dataset card, not data")
    return root


def test_every_prefix_holds_each_source_in_proportion(dolmino_like):
    spec = TextSourceSpec(path=str(dolmino_like))
    shards = list_shards(spec)
    assert {source_of(s.name) for s in shards} == {"dclm", "math", "wiki"} and len(shards) == 6
    record = SampleRecord(seed=42, shuffle_buffer=8)
    docs = list(sample_documents(spec, 42, 8, record, order="by_source"))
    weights = {name: entry["weight"] for name, entry in record.sources.items()}
    seen = {name: 0 for name in weights}
    for n, doc in enumerate(docs[:200], start=1):  # while every source still has documents
        seen[doc.source.removeprefix("replay/")] += 1
        assert all(abs(seen[name] - w * n) <= 1 + 1e-9 for name, w in weights.items()), (n, seen)
    expected = [f"dclm-{s}-{i}" for s in range(3) for i in range(60)] + [
        f"math-{s}-{i}" for s in range(2) for i in range(40)] + [f"wiki-0-{i}" for i in range(30)]
    assert sorted(d.id for d in docs) == sorted(expected)  # each document once, the .json.zst shard's too
    assert {name: e["docs_read"] for name, e in record.sources.items()} == {"dclm": 180, "math": 80, "wiki": 30}
    # in file order the first 60 documents are one dclm shard's
    assert {d.id.split("-")[0] for d in list(iter_text_source(spec))[:60]} == {"dclm"}


def test_the_sample_is_the_seed_s(dolmino_like):
    spec = TextSourceSpec(path=str(dolmino_like))
    first = [d.id for d in sample_documents(spec, 42, 8)]
    assert first == [d.id for d in sample_documents(spec, 42, 8)]
    assert first != [d.id for d in sample_documents(spec, 7, 8)]
    assert first[:20] != [d.id for d in iter_text_source(spec)][:20]


def test_the_mix_manifest_records_the_sample_and_the_shards_read(tmp_path, dolmino_like, tokenizer_dir):
    from py4.data.configs import MixConfig

    config = MixConfig.model_validate({
        "out_dir": str(tmp_path / "control"), "arm": "control", "tokenizer": str(tokenizer_dir), "seq_len": 64,
        "replay": {"path": str(dolmino_like)}, "control_target_tokens": 3000, "replay_shuffle_buffer": 4,
        "replay_order": "by_source"})
    manifest = run_mix(config)
    sample = manifest["replay_sample"]
    assert sample["seed"] == 42 and sample["shuffle_buffer"] == 4
    used = {name: e["docs_used"] for name, e in sample["sources"].items()}
    assert sum(used.values()) == manifest["counts"]["replay_docs"] and all(used.values())
    for name, entry in sample["sources"].items():
        assert abs(entry["docs_used"] - entry["weight"] * sum(used.values())) <= 1 + 1e-9
        assert entry["shards_read"] and all(source_of(s) == name for s in entry["shards_read"])
    assert [d.id for d in replay_documents(config)][:5] == [
        d.id for d in sample_documents(config.replay, 42, 4, order="by_source")][:5]


def test_a_source_without_data_files_or_a_row_without_text_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no data files"):
        list(sample_documents(TextSourceSpec(path=str(tmp_path / "empty")), 42, 4))
    with pytest.raises(DataError, match="replay.data_files"):
        list(sample_documents(TextSourceSpec(path=str(tmp_path / "empty"), name="web"), 42, 4))
    write_jsonl(tmp_path / "bad" / "data" / "x" / "a.jsonl", [{"id": "1", "body": "no text"}])
    with pytest.raises(DataError, match=r"a.jsonl: row 0: field 'text'"):
        list(sample_documents(TextSourceSpec(path=str(tmp_path / "bad")), 42, 4))


def test_offline_the_cached_hub_copy_is_read_shuffled_by_the_seed(tmp_path):
    """Offline (the rehearsal, a pre-fetched cluster) the Hub's tree cannot be listed: the cached copy
    ``datasets`` falls back to is read through its seeded shuffle, and the record says so."""
    import os
    import subprocess
    import sys
    import textwrap

    from py4.rehearsal.datasets import DOLMINO_ID, dolmino_rows, install_dataset

    rows = dolmino_rows(40)
    install_dataset(tmp_path / "datasets", DOLMINO_ID, "f23aa129", rows)
    script = textwrap.dedent(f"""
        import json
        from py4.data.replay_sample import SampleRecord, sample_documents
        from py4.data.sources import TextSourceSpec
        spec = TextSourceSpec(hub_id="{DOLMINO_ID}", revision="f23aa129")
        record = SampleRecord(42, 8)
        ids = [d.id for d in sample_documents(spec, 42, 8, record)]
        print(json.dumps({{"ids": ids, "again": [d.id for d in sample_documents(spec, 42, 8)],
                          "other": [d.id for d in sample_documents(spec, 7, 8)], "record": record.to_json()}}))
    """)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_DATASETS_CACHE": str(tmp_path / "datasets"), "HF_HOME": str(tmp_path / "hf")}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert sorted(out["ids"]) == sorted(r["id"] for r in rows) and out["ids"] != [r["id"] for r in rows]
    assert out["ids"] == out["again"] != out["other"]
    assert out["record"]["sources"]["."]["docs_read"] == 40
    assert "offline" in out["record"]["sources"]["."]["shards_read"]


@pytest.fixture
def dolmino_layout(tmp_path) -> Path:
    """Laid out like allenai/dolma3_dolmino_mix-100B-1125: ``data/<ingredient>[/<part>]/*.jsonl.zst``
    shards whose rows carry more than ``text`` (web shards add ``warcinfo`` and the like, other
    shards do not), beside a README.md dataset card."""
    import zstandard

    root = tmp_path / "dolmino"
    layout = {"data/common_crawl-high-quality_19_science/shard_00000000.jsonl.zst": ("cc", 30, True),
              "data/common_crawl-high-quality_19_science/shard_00000001.jsonl.zst": ("cc", 30, True),
              "data/stack_edu-python/shard_00000000.jsonl.zst": ("code", 25, False),
              "data/stack_edu-python/shard_00000001.jsonl.zst": ("code", 25, False),
              "data/math-meta-reasoning/part-0/shard_00000000.jsonl.zst": ("math", 20, False),
              "data/wiki_to_rcqa/shard_00000000.jsonl.zst": ("qa", 15, False)}
    for n, (name, (prefix, count, web)) in enumerate(sorted(layout.items())):
        docs = []
        for i in range(count):
            row: dict = {"id": f"{prefix}-{n}-{i}", "text": f"{prefix} {n} " + sentence(i, 12), "source": prefix}
            if web and i % 2:
                row["warcinfo"] = {"url": f"http://example.org/{i}"}
            docs.append(json.dumps(row) + "\n")
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(zstandard.ZstdCompressor().compress("".join(docs).encode()))
    (root / "README.md").write_text("---\nlicense: odc-by\n---\n")
    return root


def _as_run_texts(root: Path, seed: int, buffer: int) -> list[str]:
    """The as-run draw written out: the ``data/**/*.jsonl.zst`` paths sorted, shuffled by Python's
    ``random.Random(seed)``, read shard by shard (``text`` alone) by a generator that ``datasets``
    streams through ``shuffle(seed=seed, buffer_size=buffer)``."""
    import random

    import datasets
    import zstandard

    paths = sorted(str(p) for p in root.glob("data/**/*.jsonl.zst"))
    random.Random(seed).shuffle(paths)

    def rows(paths):
        for path in paths:
            with open(path, "rb") as fh:
                for line in zstandard.ZstdDecompressor().stream_reader(fh).read().decode().splitlines():
                    if line.strip():
                        yield {"text": json.loads(line)["text"]}

    stream = datasets.IterableDataset.from_generator(rows, gen_kwargs={"paths": paths})
    return [row["text"] for row in stream.shuffle(seed=seed, buffer_size=buffer)]


def test_the_default_order_is_the_as_run_draw_over_the_pooled_shards(dolmino_layout):
    spec = TextSourceSpec(path=str(dolmino_layout))
    record = SampleRecord(seed=42, shuffle_buffer=16)
    docs = list(sample_documents(spec, 42, 16, record))
    assert [d.text for d in docs] == _as_run_texts(dolmino_layout, 42, 16)
    assert [d.text for d in docs] != _as_run_texts(dolmino_layout, 7, 16)
    out = record.to_json()
    assert out["order"] == "shards" and out["seed"] == 42 and out["shuffle_buffer"] == 16
    assert sorted(out["shards_opened"]) == sorted(s.name for s in list_shards(spec)) and len(out["shards_opened"]) == 6
    assert {n: e["docs_read"] for n, e in out["sources"].items()} == {
        "common_crawl-high-quality_19_science": 60, "stack_edu-python": 50, "math-meta-reasoning": 20,
        "wiki_to_rcqa": 15}
    assert {d.source for d in docs} == {f"replay/{n}" for n in out["sources"]}


def test_the_mix_config_defaults_to_the_as_run_order_and_buffer(tmp_path):
    from py4.data.configs import MixConfig

    config = MixConfig.model_validate({"out_dir": str(tmp_path), "arm": "control", "tokenizer": "t",
                                       "replay": {"path": str(tmp_path)}, "control_target_tokens": 10})
    assert (config.replay_order, config.replay_shuffle_buffer, config.seed) == ("shards", 10_000, 42)
