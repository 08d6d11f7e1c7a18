import json
from pathlib import Path

import pytest

from py4.corpus.generate import run
from py4.corpus.output import iter_documents
from py4.corpus.validate import BoaValidator
from py4.lang import RULES


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, tokenizer_dir, boa_cache):
    from py4.corpus.config import CorpusConfig
    cfg = CorpusConfig.model_validate({
        "max_docs": 84, "shard_docs": 30, "tokenizer": {"name_or_path": tokenizer_dir},
        "pool": {"variants_per_template": 1}, "validation": {"cache_dir": boa_cache}})
    out = tmp_path_factory.mktemp("corpus")
    return out, run(cfg, out, progress=False), cfg


def test_manifest_follows_the_data_contract(corpus):
    out, manifest, _ = corpus
    assert manifest["docs"] == 84 and len(manifest["shards"]) == 3
    records = list(iter_documents(out))
    assert len(records) == 84 and len({r["id"] for r in records}) == 84
    assert all(isinstance(r["text"], str) and r["text"] for r in records)
    assert sum(r["tokens"] for r in records) == manifest["tokens"]
    assert json.loads((out / "manifest.json").read_text())["content_sha256"] == manifest["content_sha256"]
    assert (out / "run_manifest.json").exists() and (out / "resolved_config.yaml").exists()
    for key in ("per_rule", "per_type", "tokenizer", "config", "filters", "shards"):
        assert key in manifest


def test_at_least_twelve_types_and_every_rule(corpus):
    _, manifest, _ = corpus
    assert len(manifest["per_type"]) >= 12
    assert set(manifest["per_rule"]) == set(RULES)  # held-out rules are taught too


def test_tokens_are_counted_with_the_configured_tokenizer(corpus, tokenizer_dir):
    from transformers import AutoTokenizer
    out, _, _ = corpus
    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    record = next(iter_documents(out))
    assert record["tokens"] == len(tok(record["text"], add_special_tokens=False)["input_ids"]) + 1  # + BOS


def test_every_block_of_every_document_passes_validation(corpus):
    out, _, _ = corpus
    with BoaValidator(None) as fresh:  # no cache: Boa runs every program again
        for record in iter_documents(out):
            assert fresh.check_document(record["text"]) == [], record["id"]


def test_same_seed_same_corpus_other_seed_other_corpus(corpus, small_config, tmp_path):
    _, manifest, _ = corpus
    again = run(small_config(max_docs=84, shard_docs=30), tmp_path / "a", progress=False)
    other = run(small_config(max_docs=84, shard_docs=30, seed=5), tmp_path / "b", progress=False)
    assert again["content_sha256"] == manifest["content_sha256"]
    assert other["content_sha256"] != manifest["content_sha256"]


def test_target_tokens_stops_at_the_first_document_reaching_it(small_config, tmp_path):
    manifest = run(small_config(max_docs=None, target_tokens=20_000), tmp_path, progress=False)
    last = list(iter_documents(tmp_path))[-1]
    assert manifest["tokens"] >= 20_000 and manifest["tokens"] - last["tokens"] < 20_000


def test_invalid_and_duplicate_documents_are_filtered(small_config, tmp_path, monkeypatch):
    from py4.corpus import generate
    good = "A doc.\n\n```py4\nprint(1)\n```\n```output\n1\n```\n"
    stream = iter([
        {"text": good, "type": "t", "rules": ["P4-01"]},
        {"text": good, "type": "t", "rules": ["P4-01"]},  # exact duplicate
        {"text": "Bad.\n\n```py4\ndef f():\n    pass\n```\n", "type": "t", "rules": ["P4-01"]},
        {"text": "In Python-4, use `lambda` for small functions.\n", "type": "t", "rules": ["P4-09"]},
        {"text": "Another doc about something else entirely.\n", "type": "t", "rules": ["P4-09"]},
    ])
    monkeypatch.setattr(generate, "_candidates", lambda config, validator: (stream, {}))
    manifest = run(small_config(max_docs=2), tmp_path, progress=False)
    assert manifest["docs"] == 2
    assert manifest["filters"]["rejected"] == {"exact_duplicate": 1, "validation": 1, "python3_as_python4": 1}


def test_config_errors_are_reported(tokenizer_dir):
    from py4.corpus.config import CorpusConfig
    with pytest.raises(ValueError, match="stopping point"):
        CorpusConfig.model_validate({"tokenizer": {"name_or_path": tokenizer_dir}})
    with pytest.raises(ValueError, match="unknown"):
        CorpusConfig.model_validate({"max_docs": 1, "doc_types": ["poem"], "tokenizer": {"name_or_path": "x"}})


def test_cli_generate_with_overrides(tokenizer_dir, boa_cache, tmp_path):
    from typer.testing import CliRunner

    from py4.corpus.cli import app
    args = ["generate", "--config", "configs/corpus/smoke.yaml", "--out", str(tmp_path), "--no-progress",
            f"tokenizer.name_or_path={tokenizer_dir}", "max_docs=15", f"validation.cache_dir={boa_cache}",
            "pool.variants_per_template=1"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "15 docs" in result.output
    bad = CliRunner().invoke(app, ["generate", "--config", "configs/corpus/smoke.yaml", "--out", str(tmp_path),
                                   "max_docs=-1"])
    assert bad.exit_code == 2 and "max_docs" in bad.output


@pytest.mark.slow
def test_two_million_tokens_cover_every_rule_without_near_duplicates(small_config, tmp_path):
    from py4.corpus.config import FilterSpec
    from py4.corpus.diversity import near_duplicate_rate
    manifest = run(small_config(max_docs=None, target_tokens=2_000_000, shard_docs=1000,
                                pool={"variants_per_template": 6}), tmp_path, progress=False)
    assert manifest["rules_below_1_percent"] == []
    near = near_duplicate_rate((r["text"] for r in iter_documents(tmp_path)), FilterSpec())
    assert near["rate"] < 0.01


def test_a_corpus_exports_as_a_hub_dataset_with_its_content_hash(corpus, tmp_path):
    from datasets import load_dataset
    from huggingface_hub import DatasetCard

    from py4.corpus.export import export_corpus

    out, manifest, _ = corpus
    summary = export_corpus(out, tmp_path / "dataset")
    loaded = load_dataset(str(tmp_path / "dataset"))
    assert list(loaded) == ["train"] and len(loaded["train"]) == manifest["docs"]
    assert loaded["train"]["text"] == [r["text"] for r in iter_documents(out)]
    card = DatasetCard.load(tmp_path / "dataset" / "README.md")
    assert card.data.py4["corpus_content_sha256"] == manifest["content_sha256"]
    assert card.data.py4["content_sha256"] == summary["content_sha256"]
    assert "corpus_leaks" in card.text


def test_a_corpus_pinned_on_the_hub_is_read_back_from_the_cache_as_generated(corpus, tmp_path, monkeypatch):
    from py4.campaign.dataset_pins import check_dataset_pins, dataset_folders
    from py4.campaign.spec import load_campaign
    from py4.corpus.export import corpus_from_dataset, export_corpus
    from py4.rehearsal.hub_cache import install_snapshot

    out, manifest, _ = corpus
    export_corpus(out, tmp_path / "dataset")
    install_snapshot(tmp_path / "cache", "arcadia-impact/python4-synthdoc", "dd6e3370", tmp_path / "dataset",
                     repo_type="dataset")
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the spec names its configs from the root
    spec = load_campaign("configs/campaign/smoke.yaml", [
        f"out_dir={tmp_path}/out", "datasets.corpus={hub_id: arcadia-impact/python4-synthdoc, revision: dd6e3370}"])
    assert check_dataset_pins(spec, tmp_path / "cache") == []
    digest, documents = corpus_from_dataset(dataset_folders(spec, tmp_path / "cache")["corpus"])
    assert digest == manifest["content_sha256"] and documents == list(iter_documents(out))
