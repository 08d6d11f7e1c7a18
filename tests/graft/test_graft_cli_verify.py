"""`py4 graft`, `py4 graft verify`, the config type and Hub resolution."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from graft_fixtures import SHAPES, graft_config, load_output, related_triple, write_triple
from py4.cli import app as py4_app
from py4.config import ConfigError, load_config
from py4.graft import GraftConfig, GraftError, run, verify_graft
from py4.graft.config import parse_size
from py4.runs import read_manifest

runner = CliRunner()


@pytest.fixture
def dirs(tmp_path):
    return write_triple(tmp_path / "in", related_triple(), shards={"base": 2})


def _corrupt(out: Path, name: str) -> None:
    """Flip one byte inside ``name``'s stored data."""
    index = json.loads((out / "model.safetensors.index.json").read_text())
    path = out / index["weight_map"][name]
    data = bytearray(path.read_bytes())
    (n,) = struct.unpack("<Q", data[:8])
    begin, _ = json.loads(data[8:8 + n])[name]["data_offsets"]
    data[8 + n + begin + 1] ^= 0x01
    path.write_bytes(bytes(data))


def test_cli_main_form_as_written_in_the_issue(tmp_path, dirs):
    out = tmp_path / "out"
    res = runner.invoke(py4_app, ["graft", "--mid", str(dirs["mid"]), "--it", str(dirs["it"]), "--base",
                                  str(dirs["base"]), "--lambda", "1.0", "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert f"grafted {len(SHAPES)} tensors" in res.output and "verified" in res.output
    assert read_manifest(out)["status"] == "done" and read_manifest(out)["lambda_"] == 1.0


def test_cli_config_file_and_key_value_overrides(tmp_path, dirs):
    cfg = tmp_path / "graft.yaml"
    cfg.write_text(f"mid: {dirs['mid']}\nit: {{path: {dirs['it']}}}\nbase: {dirs['base']}\n"
                   f"out: {tmp_path / 'unused'}\nlambda_: 0.3\nfsync: false\n")
    out = tmp_path / "out"
    res = runner.invoke(py4_app, ["graft", "--config", str(cfg), "--out", str(out), "--no-progress", "lambda_=0.5",
                                  "--set", "mismatch.dtype=compute"])
    assert res.exit_code == 0, res.output
    manifest = read_manifest(out)
    assert manifest["config"]["lambda_"] == 0.5 and manifest["config"]["mismatch"]["dtype"] == "compute"
    assert manifest["config"]["fsync"] is False


def test_cli_reports_config_errors_with_the_field(tmp_path, dirs):
    res = runner.invoke(py4_app, ["graft", "--mid", str(dirs["mid"]), "--it", str(dirs["it"]), "--base",
                                  str(dirs["base"]), "--out", str(tmp_path / "o"), "lamda_=2", "--no-progress"])
    assert res.exit_code == 2  # bad input
    assert "lamda_: unknown key; did you mean 'lambda_'?" in res.output


def test_cli_reports_a_shape_mismatch_naming_the_tensor(tmp_path):
    triple = related_triple()
    triple["base"]["model.norm.weight"] = torch.zeros(15, dtype=torch.bfloat16)
    dirs = write_triple(tmp_path / "in", triple)
    res = runner.invoke(py4_app, ["graft", "--mid", str(dirs["mid"]), "--it", str(dirs["it"]), "--base",
                                  str(dirs["base"]), "--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 2 and "model.norm.weight: shape mismatch" in res.output


def test_verify_passes_on_a_good_graft_and_names_a_corrupted_tensor(tmp_path, dirs):
    out = tmp_path / "out"
    run(graft_config(dirs, out, lambda_=0.7, max_shard_size=1500), show_progress=False)
    res = runner.invoke(py4_app, ["graft", "verify", "--out", str(out), "--all"])
    assert res.exit_code == 0, res.output
    assert f"checked {len(SHAPES)} tensor(s): 0 problem(s)" in res.output
    _corrupt(out, "model.layers.1.mlp.up_proj.weight")
    res = runner.invoke(py4_app, ["graft", "verify", "--out", str(out), "--all"])
    assert res.exit_code == 1
    assert "MISMATCH model.layers.1.mlp.up_proj.weight: stored values differ" in res.output
    result = verify_graft(graft_config(dirs, out, lambda_=0.7, max_shard_size=1500), sample=3, seed=1)
    assert len(result.checked) == 3


def test_verify_detects_a_wrong_lambda_and_a_changed_template(tmp_path, dirs):
    out = tmp_path / "out"
    run(graft_config(dirs, out, lambda_=0.7), show_progress=False)
    wrong = verify_graft(graft_config(dirs, out, lambda_=0.8), sample=None)
    assert len(wrong.mismatches) == len(SHAPES)
    (out / "chat_template.jinja").write_text("tampered")
    result = verify_graft(graft_config(dirs, out, lambda_=0.7), sample=None)
    assert result.mismatches == ["chat_template.jinja: the output's copy differs from the -it model's"]


def test_a_failed_verification_fails_the_run(tmp_path, dirs, monkeypatch):
    import py4.graft.engine as engine
    from py4.graft.verify import VerifyResult

    monkeypatch.setattr(engine, "verify_graft", lambda *a, **k: VerifyResult(["x"], ["x: stored values differ"]))
    with pytest.raises(GraftError, match="verification failed"):
        run(graft_config(dirs, tmp_path / "out"), show_progress=False)
    assert read_manifest(tmp_path / "out")["status"] == "failed"


def test_config_defaults_and_validation():
    cfg = GraftConfig(mid="a", it={"path": "org/it", "revision": "abc"}, base="b", out="o")
    assert (cfg.lambda_, cfg.accumulate_dtype, cfg.output_dtype) == (1.0, "float32", "bfloat16")
    assert cfg.mid.path == "a" and cfg.it.revision == "abc" and cfg.max_shard_bytes == 5 * 10**9
    assert (parse_size("500MB"), parse_size("2GiB"), parse_size(17)) == (5 * 10**8, 2 * 2**30, 17)
    with pytest.raises(ValueError):
        parse_size("5 parsecs")
    with pytest.raises(ConfigError) as info:
        load_config(GraftConfig, None, ["mid=a", "it=b", "base=c", "out=o", "missing.only_in_it=take_mid",
                                        "max_shard_size=lots", "lambda_=.nan"])
    text = str(info.value)
    assert "missing.only_in_it" in text and "max_shard_size" in text and "lambda_" in text


def test_hub_ids_are_fetched_with_snapshot_download_at_the_revision(tmp_path, monkeypatch):
    import huggingface_hub

    triple = related_triple()
    commit = "0123456789abcdef0123456789abcdef01234567"
    calls = []

    def fake_snapshot_download(repo_id, revision=None, allow_patterns=None, cache_dir=None):
        calls.append((repo_id, revision, tuple(allow_patterns)))
        folder = tmp_path / "hub" / repo_id.replace("/", "--") / "snapshots" / commit
        if not folder.exists():
            write_triple(tmp_path / "staging" / repo_id.replace("/", "--"), {"it": triple["it"]})
            folder.parent.mkdir(parents=True)
            (tmp_path / "staging" / repo_id.replace("/", "--") / "it").rename(folder)
        return str(folder)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    dirs = write_triple(tmp_path / "in", {"mid": triple["mid"], "base": triple["base"]})
    config = GraftConfig(mid=str(dirs["mid"]), it={"path": "google/tiny-it", "revision": "v1"},
                         base=str(dirs["base"]), out=str(tmp_path / "out"), fsync=False)
    run(config, show_progress=False)
    assert calls[0] == ("google/tiny-it", "v1", tuple(config.hub_allow_patterns))
    entry = read_manifest(tmp_path / "out")["inputs"]["it"]
    assert entry["hub_id"] == "google/tiny-it" and entry["revision"] == commit
    assert entry["requested_revision"] == "v1"
    assert set(load_output(tmp_path / "out")) == set(SHAPES)


def test_unusable_sources_are_clear_errors(tmp_path, dirs):
    with pytest.raises(GraftError, match="neither an existing folder nor a Hub id"):
        run(graft_config({**dirs, "base": tmp_path / "no" / "such" / "dir"}, tmp_path / "o"), show_progress=False)
    with pytest.raises(GraftError, match="revisions apply to Hub ids only"):
        run(GraftConfig(mid=str(dirs["mid"]), it={"path": str(dirs["it"]), "revision": "main"},
                        base=str(dirs["base"]), out=str(tmp_path / "o")), show_progress=False)
    shard = dirs["base"] / "model-00002-of-00002.safetensors"
    shard.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{}")
    with pytest.raises(GraftError, match="model-00002-of-00002.safetensors: header length 16 is impossible"):
        run(graft_config(dirs, tmp_path / "o"), show_progress=False)
    payload = b'{"w": {"dtype": 1}}'
    shard.write_bytes(len(payload).to_bytes(8, "little") + payload)
    with pytest.raises(GraftError, match="tensor 'w' lacks a valid dtype, shape or data_offsets"):
        run(graft_config(dirs, tmp_path / "o"), show_progress=False)
