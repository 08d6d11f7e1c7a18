"""`py4 data ...` commands: schedule flags, mix/pack from configs, inspect output."""

from __future__ import annotations

import json

import yaml
from typer.testing import CliRunner

from py4.data.cli import app
from py4.data.inspect import CLOSE, OPEN, inspect_packed_row
from py4.data.packed_io import load_packed

runner = CliRunner()


def invoke(*args: str):
    result = runner.invoke(app, list(args))
    return result


def test_schedule_flags_print_and_write(tmp_path):
    result = invoke("schedule", "--total-tokens", "80,090,880", "--seq-len", "8192", "--micro-batch", "1",
                    "--grad-accum", "8", "--gpus", "4", "--rounding", "ceil", "--warmup", "0.03",
                    "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "max steps 306" in result.output and "262,144 tokens per step" in result.output
    written = json.loads((tmp_path / "step_schedule.json").read_text())
    assert written["max_steps"] == 306 and written["warmup_steps"] == 10


def test_schedule_json_output(tmp_path):
    result = invoke("schedule", "--total-tokens", "373.66M", "--micro-batch", "2", "--grad-accum", "2", "--gpus", "8",
                    "--rounding", "floor", "--json", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["max_steps"] == 1425


def test_schedule_rows_mode_and_config(tmp_path):
    config = tmp_path / "eft.yaml"
    config.write_text(yaml.safe_dump({"kind": "data.schedule", "rows": 1024, "epochs": 2, "seq_len": 4096,
                                      "micro_batch": 1, "grad_accum": 32, "gpus": 1, "expected_max_steps": 64}))
    result = invoke("schedule", "--config", str(config), "--out", str(tmp_path), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["max_steps"] == 64
    override = invoke("schedule", "--config", str(config), "rows=256", "expected_max_steps=16", "--out", str(tmp_path))
    assert override.exit_code == 0 and "max steps 16" in override.output


def test_schedule_errors_are_clear(tmp_path):
    result = invoke("schedule", "--total-tokens", "100", "--out", str(tmp_path))
    assert result.exit_code == 2 and "zero steps" in result.output
    result = invoke("schedule", "--total-tokens", "1M", "--rounding", "nearest", "--out", str(tmp_path))
    assert result.exit_code == 2 and "rounding" in result.output


def test_mix_pack_inspect_from_configs(tmp_path, corpus_dir, replay_dir, chat_dir, tokenizer_dir, tokenizer):
    mix_cfg = tmp_path / "mix.yaml"
    mix_cfg.write_text(yaml.safe_dump({"kind": "data.mix", "out_dir": str(tmp_path / "mix"), "corpus": str(corpus_dir),
                                       "replay": {"path": str(replay_dir)}, "tokenizer": str(tokenizer_dir),
                                       "seq_len": 128}))
    result = invoke("mix", "--config", str(mix_cfg), "copies=2")
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "mix" / "manifest.json").read_text())
    assert manifest["copies"] == 2 and f"total_mix_tokens: {manifest['total_mix_tokens']}" in result.output

    result = invoke("inspect", str(tmp_path / "mix"), "--index", "1", "--tokens", "--max-tokens", "20")
    assert result.exit_code == 0, result.output
    assert "128 tokens, 128 supervised, 1 segment(s)" in result.output
    assert " index      id   label    pos  token" in result.output

    pack_cfg = tmp_path / "pack.yaml"
    pack_cfg.write_text(yaml.safe_dump({"kind": "data.pack", "out_dir": str(tmp_path / "sft"), "format": "chat",
                                        "instructions": {"path": str(chat_dir)}, "tokenizer": str(tokenizer_dir),
                                        "seq_len": 256}))
    result = invoke("pack", "--config", str(pack_cfg))
    assert result.exit_code == 0, result.output
    text = inspect_packed_row(tmp_path / "sft", 0).plain
    first = load_packed(tmp_path / "sft")[0]
    supervised = tokenizer.decode([t for t, lab in zip(first["input_ids"], first["labels"], strict=True)
                                   if lab != -100])
    body = text.split("--- segment", 1)[1]
    marked = "".join(part.split(CLOSE)[0] for part in body.split(OPEN)[1:])
    assert marked == supervised and "answer" in marked and "question" not in marked


def test_bad_config_reports_the_field(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(yaml.safe_dump({"kind": "data.mix", "out_dir": "x", "tokenizer": "t", "corpus": "c",
                                   "replay": {"path": "r"}, "copys": 3}))
    result = invoke("mix", "--config", str(cfg))
    assert result.exit_code == 2 and "copys" in result.output and "copies" in result.output


def test_text_pack_max_sequences_is_exact(tmp_path, replay_dir, tokenizer_dir):
    cfg = tmp_path / "text.yaml"
    cfg.write_text(yaml.safe_dump({"kind": "data.pack", "format": "text", "out_dir": str(tmp_path / "t"),
                                   "text": [{"path": str(replay_dir)}], "tokenizer": str(tokenizer_dir),
                                   "seq_len": 64, "max_sequences": 3}))
    assert invoke("pack", "--config", str(cfg)).exit_code == 0
    manifest = json.loads((tmp_path / "t" / "manifest.json").read_text())
    c = manifest["counts"]
    assert c["sequences"] == 3 == len(load_packed(tmp_path / "t"))
    assert c["packed_tokens"] + c["remainder_tokens"] + c["tokens_beyond_max_sequences"] == c["tokens_in"]


def test_smoke_replay_command(tmp_path):
    result = invoke("smoke-replay", "--out", str(tmp_path / "r"), "--max-docs", "3")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r" / "manifest.json").read_text())["docs"] == 3


def test_inspect_from_a_config_with_overrides(tmp_path, chat_dir, tokenizer_dir):
    pack_cfg = tmp_path / "pack.yaml"
    pack_cfg.write_text(yaml.safe_dump({"kind": "data.pack", "out_dir": str(tmp_path / "sft"), "format": "chat",
                                        "instructions": {"path": str(chat_dir)}, "tokenizer": str(tokenizer_dir),
                                        "seq_len": 256}))
    assert invoke("pack", "--config", str(pack_cfg)).exit_code == 0
    cfg = tmp_path / "inspect.yaml"
    cfg.write_text(yaml.safe_dump({"kind": "data.inspect", "dataset": str(tmp_path / "sft"), "index": 0}))
    result = invoke("inspect", "--config", str(cfg), "index=1")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("row 1 of") and OPEN in result.output
    bad = invoke("inspect", str(tmp_path / "sft"), "index=999")
    assert bad.exit_code == 2 and "out of range" in bad.output
