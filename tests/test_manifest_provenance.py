"""Every folder py4 writes says which code made it: the run manifest's ``provenance`` (git commit and
dirty flag, or the installed version; the command line) and ``libraries``.

Training, evaluation, probes, graft, corpus generation, the data mix and pack and the campaign's
node records go through ``RunRecorder`` (tests/test_runs.py, tests/data/test_mix.py); the EFT dose
is tests/train/test_eft_data.py. Here: the writers whose folder is not a training run's: a corpus
subset, the sanity bank, the held-out loss, and the smoke replay (whose manifest sits among its data
files, so it carries the entries itself); the smoke assets; the rehearsal and GPU-check reports. The
campaign report is tests/report/test_probes_report.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from py4.runs import code_version, read_manifest


def assert_provenance(manifest: dict, kind: str | None = None) -> None:
    assert manifest["provenance"]["code"] == code_version() and manifest["provenance"]["command"]
    assert manifest["libraries"]["py4"]
    if kind is not None:
        assert manifest["kind"] == kind and manifest["status"] == "done"


def _corpus(path: Path, texts: list[str]) -> Path:
    from py4.corpus.output import ShardWriter, text_sha256

    writer = ShardWriter(path, 4)
    for i, text in enumerate(texts):
        writer.write({"id": f"d{i}", "text": text, "tokens": 10, "sha256": text_sha256(text), "rules": ["P4-01"]})
    writer.close()
    (path / "manifest.json").write_text(json.dumps({"name": "c", "docs": len(texts), "content_sha256": "c0"}))
    return path


def test_a_corpus_subset(tmp_path):
    from py4.corpus.subset import subset

    manifest = subset(_corpus(tmp_path / "c", [f"let x{i} = {i}\n" for i in range(8)]), 30, 42, tmp_path / "s")
    run = read_manifest(tmp_path / "s")
    assert_provenance(run, "corpus.subset")
    assert run["inputs"]["corpus"]["content_sha256"] == "c0" and run["outputs"]["corpus"]["docs"] == manifest["docs"]


def test_the_sanity_bank(tmp_path):
    from py4.evaluate.sanity_bank import write_sanity_bank
    from py4.train.eft_data import EFTDoseConfig, build_dose

    dose = build_dose(EFTDoseConfig(out=str(tmp_path / "dose"), gold=2, replay=0))
    assert write_sanity_bank(dose, tmp_path / "bank") == 2
    run = read_manifest(tmp_path / "bank")
    assert_provenance(run, "sanity_bank")
    assert run["outputs"]["bank"]["train_sanity"] == 2


def test_the_smoke_replay(tmp_path):
    from py4.data.replay import build_smoke_replay

    manifest = build_smoke_replay(tmp_path / "replay", max_docs=3)
    assert_provenance(manifest)
    assert json.loads((tmp_path / "replay" / "manifest.json").read_text())["provenance"] == manifest["provenance"]


def test_the_held_out_loss(tmp_path):
    from py4.chat.smoke_tokenizer import stdlib_texts, train_tokenizer
    from py4.train.heldout_loss import heldout_loss
    from py4.train.tiny_model import TinyModelSpec, build_tiny_model, save_model

    tokenizer = train_tokenizer(stdlib_texts(100_000), vocab_size=512)
    model = save_model(build_tiny_model(TinyModelSpec(), tokenizer), tokenizer, tmp_path / "model")
    docs = _corpus(tmp_path / "docs", ["fn a() -> int:\n    return 1\n", "let y = 2\n"])
    result = heldout_loss(str(model), str(docs), [], 200, tmp_path / "loss")
    run = read_manifest(tmp_path / "loss")
    assert_provenance(run, "heldout_loss")
    assert json.loads((tmp_path / "loss" / "results.json").read_text())["documents"] == result["documents"] == 2
    assert run["inputs"]["docs"]["sha256"]


def test_the_rehearsal_report(tmp_path):
    from types import SimpleNamespace

    from py4.rehearsal.report import build_report, write_report

    layout = SimpleNamespace(root=tmp_path, campaign=tmp_path / "campaign", standins=tmp_path / "standins")
    report = build_report([], set(), layout, None, None, SimpleNamespace(boundaries={}), "c.yaml", 1.0)
    write_report(report, tmp_path)
    assert_provenance(json.loads((tmp_path / "rehearsal_report.json").read_text()))


def test_the_gpu_check_report(tmp_path):
    from py4.rehearsal.gpu_check import TINY, write_report

    report = write_report(tmp_path, TINY, [], 60.0)
    written = json.loads((tmp_path / "gpu_check_report.json").read_text())
    assert written["provenance"] == report["provenance"] and report["provenance"]["code"] == code_version()


def test_the_smoke_assets(smoke_assets):
    """The assets are built once per version of the code that shapes them (tests/smoke_models.py),
    possibly by another process: their manifest names the code and command that built them."""
    from py4.train.assets import MANIFEST_NAME

    manifest = json.loads((smoke_assets / MANIFEST_NAME).read_text())
    assert manifest["provenance"]["code"]["package"] and manifest["provenance"]["command"]
    assert manifest["libraries"]["py4"] and manifest["libraries"]["transformers"]
