"""The midtraining mix: exact token accounting, equal-token replay, packing, determinism."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from py4.data.configs import MixConfig
from py4.data.mix import mix_order, replay_documents, run_mix
from py4.data.packed_io import load_packed
from py4.data.sources import TextSourceSpec, iter_corpus
from py4.data.tokens import DataError, DocumentEncoder

SEQ = 64


def mix_config(out: Path, corpus: Path | None, replay: Path, **extra) -> MixConfig:
    data = {"out_dir": str(out), "corpus": str(corpus) if corpus else None, "tokenizer": extra.pop("tokenizer"),
            "seq_len": SEQ, "replay": {"path": str(replay)}, "copies": 4,
            "schedule": {"micro_batch": 1, "grad_accum": 2, "gpus": 1, "rounding": "ceil", "warmup": 0.03}}
    data.update(extra)
    return MixConfig.model_validate(data)


def data_file_hashes(folder: Path) -> dict[str, str]:
    names = [p for p in sorted(folder.iterdir())
             if p.name.startswith("data-") or p.name in ("state.json", "dataset_info.json")]
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in names}


@pytest.fixture
def iso(tmp_path, corpus_dir, replay_dir, tokenizer_dir):
    config = mix_config(tmp_path / "iso", corpus_dir, replay_dir, tokenizer=str(tokenizer_dir))
    return config, run_mix(config)


def test_token_accounting_is_exact(iso, tokenizer, corpus_dir):
    config, manifest = iso
    counts = manifest["counts"]
    encoder = DocumentEncoder(tokenizer)
    corpus_tokens = sum(len(t) for t in encoder.encode_batch([d.text for d in iter_corpus(corpus_dir)]))
    assert counts["corpus_tokens"] == corpus_tokens
    assert counts["replay_tokens"] == corpus_tokens * 4 == counts["replay_target_basis_tokens"]  # equal-token
    assert manifest["total_mix_tokens"] == corpus_tokens * 8
    assert counts["packed_tokens"] + counts["remainder_tokens"] == manifest["total_mix_tokens"]
    assert 0 <= counts["remainder_tokens"] < SEQ
    dataset = load_packed(config.out_dir)
    assert len(dataset) == counts["sequences"] == manifest["total_mix_tokens"] // SEQ


def test_rows_are_blocks_with_every_token_supervised(iso):
    config, _ = iso
    dataset = load_packed(config.out_dir)
    assert all(dataset.features[c].feature.dtype == "int32" for c in ("input_ids", "labels", "position_ids"))
    dataset = dataset.with_format("numpy")
    ids = np.stack(list(dataset["input_ids"]))
    assert ids.shape[1] == SEQ
    assert (np.stack(list(dataset["labels"])) == ids).all()
    assert (np.stack(list(dataset["position_ids"])) == np.arange(SEQ)).all()


def test_packed_stream_is_the_shuffled_documents_in_order(iso, tokenizer, corpus_dir, replay_dir):
    config, manifest = iso
    encoder = DocumentEncoder(tokenizer)
    corpus = encoder.encode_batch([d.text for d in iter_corpus(corpus_dir)])
    replay_texts = [d.text for d in replay_documents(config)]  # the seeded sample, as the mix reads it
    replay = encoder.encode_batch(replay_texts)[:manifest["counts"]["replay_docs"]]
    cut = manifest["counts"]["replay_last_doc_tokens_cut"]
    if cut:
        replay[-1] = replay[-1][:-cut]
    order = mix_order(len(corpus), 4, len(replay), seed=42)
    expected = np.concatenate([corpus[e % len(corpus)] if e < 4 * len(corpus) else replay[e - 4 * len(corpus)]
                               for e in order.tolist()])
    packed = np.concatenate(list(load_packed(config.out_dir).with_format("numpy")["input_ids"]))
    assert np.array_equal(packed, expected[:len(packed)])
    # documents are separated by the tokenizer's BOS/EOS
    assert (expected == tokenizer.bos_token_id).sum() == 4 * len(corpus) + len(replay)


def test_each_corpus_document_appears_copies_times():
    order = mix_order(corpus_docs=5, copies=4, replay_docs=7, seed=42)
    assert sorted(order.tolist()) == list(range(27))
    assert not np.array_equal(order, np.arange(27))  # shuffled
    assert np.array_equal(order, mix_order(5, 4, 7, seed=42))


def test_same_seed_same_bytes_other_seed_differs(iso, tmp_path, corpus_dir, replay_dir, tokenizer_dir):
    config, manifest = iso
    again = run_mix(mix_config(tmp_path / "again", corpus_dir, replay_dir, tokenizer=str(tokenizer_dir)))
    assert again["content_sha256"] == manifest["content_sha256"]
    assert data_file_hashes(tmp_path / "again") == data_file_hashes(Path(config.out_dir))
    other = run_mix(mix_config(tmp_path / "seed7", corpus_dir, replay_dir, tokenizer=str(tokenizer_dir), seed=7))
    assert other["content_sha256"] != manifest["content_sha256"]
    assert other["total_mix_tokens"] == manifest["total_mix_tokens"]


def test_manifest_and_schedule_written(iso):
    config, manifest = iso
    out = Path(config.out_dir)
    assert json.loads((out / "manifest.json").read_text())["total_mix_tokens"] == manifest["total_mix_tokens"]
    schedule = json.loads((out / "step_schedule.json").read_text())
    assert schedule["total_tokens"] == manifest["total_mix_tokens"]
    assert schedule["max_steps"] == -(-manifest["total_mix_tokens"] // (2 * SEQ))  # ceil
    assert manifest["inputs"]["corpus"]["sha256"] and manifest["inputs"]["replay"]["sha256"]
    assert manifest["tokenizer"]["bos_token"] == "<bos>"
    run = json.loads((out / "run_manifest.json").read_text())
    assert run["status"] == "done" and run["total_mix_tokens"] == manifest["total_mix_tokens"]
    assert not (out / ".work").exists() and not (out / ".work-tokens").exists()


def test_control_arm_matches_the_iso_arm_tokens(iso, tmp_path, replay_dir, tokenizer_dir):
    config, manifest = iso
    control = run_mix(mix_config(tmp_path / "control", None, replay_dir, tokenizer=str(tokenizer_dir),
                                 arm="control", control_target_manifest=config.out_dir))
    assert control["total_mix_tokens"] == manifest["total_mix_tokens"]
    assert control["counts"]["corpus_tokens"] == 0 and control["copies"] == 0


def test_replay_too_small_is_an_error(tmp_path, corpus_dir, tokenizer_dir):
    small = tmp_path / "small"
    small.mkdir()
    (small / "a.txt").write_text("just a few words")
    with pytest.raises(DataError, match="ran out"):
        run_mix(mix_config(tmp_path / "out", corpus_dir, small, tokenizer=str(tokenizer_dir)))
    assert json.loads((tmp_path / "out" / "run_manifest.json").read_text())["status"] == "failed"


def test_expected_total_is_checked(tmp_path, corpus_dir, replay_dir, tokenizer_dir):
    with pytest.raises(ValueError, match="expected"):
        run_mix(mix_config(tmp_path / "out", corpus_dir, replay_dir, tokenizer=str(tokenizer_dir),
                           expected_total_mix_tokens=12345))


def test_config_needs_arm_inputs(tmp_path, replay_dir):
    with pytest.raises(ValueError, match="needs corpus"):
        MixConfig.model_validate({"out_dir": "x", "tokenizer": "t", "replay": {"path": str(replay_dir)}})
    with pytest.raises(ValueError, match="exactly one"):
        MixConfig.model_validate({"out_dir": "x", "tokenizer": "t", "arm": "control", "replay": {"path": "r"}})


def test_separate_counting_tokenizer_matches_in_its_basis(tmp_path, corpus_dir, replay_dir, tokenizer_dir, tokenizer):
    # Pack with the run's tokenizer, count with another (the campaign: Gemma-3 counts, GLM packing).
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    char_level = Tokenizer(models.WordLevel({chr(i): i for i in range(32, 127)} | {"<bos>": 200, "<eos>": 201},
                                            unk_token="<bos>"))
    char_level.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    counter = PreTrainedTokenizerFast(tokenizer_object=char_level, bos_token="<bos>", eos_token="<eos>")
    counter.save_pretrained(tmp_path / "counter")
    manifest = run_mix(mix_config(tmp_path / "out", corpus_dir, replay_dir, tokenizer=str(tokenizer_dir),
                                  count_tokenizer=str(tmp_path / "counter")))
    counts = manifest["counts"]
    assert counts["corpus_basis_tokens"] != counts["corpus_tokens"]
    assert counts["replay_basis_tokens"] == (counts["replay_target_basis_tokens"]
                                             + counts["replay_basis_overshoot_tokens"])
    assert counts["replay_target_basis_tokens"] == counts["corpus_basis_tokens"] * 4
    assert counts["replay_last_doc_tokens_cut"] == 0  # whole documents with two tokenizers
    assert manifest["total_mix_tokens"] == counts["corpus_tokens"] * 4 + counts["replay_tokens"]
    assert manifest["basis_total_mix_tokens"] == counts["corpus_basis_tokens"] * 4 + counts["replay_basis_tokens"]
    assert counts["packed_tokens"] + counts["remainder_tokens"] == manifest["total_mix_tokens"]


def test_hub_replay_is_recorded_with_its_revision(tmp_path, corpus_dir, replay_dir, tokenizer_dir, monkeypatch):
    from types import SimpleNamespace

    import datasets
    from huggingface_hub import HfApi

    from py4.data import replay_sample

    rows = [json.loads(line) for line in (replay_dir / "part-0.jsonl").read_text().splitlines()]
    listed, opened = [], []

    def fake_tree(self, repo_id, **kwargs):  # the Hub is never reached in tests
        listed.append((repo_id, kwargs))
        return [SimpleNamespace(path="data"), SimpleNamespace(path="README.md", size=10),
                SimpleNamespace(path="data/web/part-0.jsonl", size=1000)]

    def fake_json_lines(shard):  # a JSON-lines shard is read line by line, never through load_dataset
        opened.append(shard.location)
        return iter(rows)

    def no_load_dataset(builder, **kwargs):
        raise AssertionError(f"load_dataset({builder!r}) for a JSON-lines shard")

    monkeypatch.setattr(HfApi, "list_repo_tree", fake_tree)
    monkeypatch.setattr(replay_sample, "_json_line_rows", fake_json_lines)
    monkeypatch.setattr(datasets, "load_dataset", no_load_dataset)
    config = mix_config(tmp_path / "hub", corpus_dir, replay_dir, tokenizer=str(tokenizer_dir))
    config = config.model_copy(update={"replay": TextSourceSpec(hub_id="allenai/dolma3_dolmino_mix-100B-1125",
                                                                revision="f23aa129")})
    manifest = run_mix(config)
    assert listed == [("allenai/dolma3_dolmino_mix-100B-1125",
                       {"repo_type": "dataset", "revision": "f23aa129", "recursive": True})]
    assert opened == ["hf://datasets/allenai/dolma3_dolmino_mix-100B-1125@f23aa129/data/web/part-0.jsonl"]
    assert manifest["replay_sample"]["sources"]["web"]["shards_read"] == ["data/web/part-0.jsonl"]
    assert manifest["inputs"]["replay"]["hub_id"] == "allenai/dolma3_dolmino_mix-100B-1125"
    assert manifest["inputs"]["replay"]["revision"] == "f23aa129"
    run = json.loads((tmp_path / "hub" / "run_manifest.json").read_text())
    assert run["inputs"]["replay"]["revision"] == "f23aa129"


def test_corpus_count_is_compared_with_the_corpus_manifest(tmp_path, corpus_dir, replay_dir, tokenizer_dir, tokenizer):
    texts = [d.text for d in iter_corpus(corpus_dir)]
    count = sum(DocumentEncoder(tokenizer, add_eos=False).count_batch(texts))
    (corpus_dir / "manifest.json").write_text(json.dumps({"docs": len(texts), "tokens": count}))
    manifest = run_mix(mix_config(tmp_path / "out", corpus_dir, replay_dir, tokenizer=str(tokenizer_dir),
                                  add_eos=False))
    assert manifest["corpus_manifest_tokens"] == count and manifest["corpus_tokens_match_manifest"] is True
    assert manifest["counts"]["corpus_tokens"] == count


def test_the_data_manifest_says_which_code_and_command_made_it(iso):
    import sys

    from py4.runs import code_version

    config, manifest = iso
    written = json.loads((Path(config.out_dir) / "manifest.json").read_text())
    assert written["provenance"] == manifest["provenance"] == {"code": code_version(),
                                                               "command": [sys.executable, *sys.orig_argv[1:]]}
