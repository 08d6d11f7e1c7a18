"""A smoke config run before its assets exist: the README's `py4 corpus generate --config
configs/corpus/smoke.yaml …` on a fresh clone names the missing folder and the command that builds
it (not transformers' "Repo id must be in the form 'repo_name'…")."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from py4.cli import app
from py4.data.tokens import DataError, load_tokenizer

ROOT = Path(__file__).resolve().parents[2]


def test_a_missing_smoke_tokenizer_names_the_command_that_builds_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataError) as err:
        load_tokenizer("campaign-out/smoke/assets/tokenizer")
    text = str(err.value)
    assert "no such folder" in text and "Repo id" not in text
    assert "py4 smoke assets --out campaign-out/smoke/assets --config configs/train/smoke/smoke_assets.yaml" in text


def test_corpus_generate_before_the_assets_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["corpus", "generate", "--config", str(ROOT / "configs/corpus/smoke.yaml"),
                                   "--out", str(tmp_path / "corpus"), "max_docs=2"])
    assert res.exit_code == 2, res.output
    assert "py4 smoke assets --out campaign-out/smoke/assets" in " ".join(res.output.split())
