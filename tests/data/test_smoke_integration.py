"""The shipped smoke data configs with the real smoke assets: the smoke tokenizer
(py4.chat.smoke_tokenizer) and the smoke instruction set (py4.data.smoke_instructions)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from py4.config import load_config
from py4.data.configs import MixConfig, PackConfig
from py4.data.mix import run_mix
from py4.data.pack import run_pack
from py4.data.packed_io import IGNORE_INDEX, load_packed

from data_helpers import sentence, write_jsonl

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "data" / "smoke"
pytestmark = pytest.mark.smoke


@pytest.fixture(scope="module")
def smoke_tokenizer_dir(tmp_path_factory) -> Path:
    smoke_tokenizer = pytest.importorskip("py4.chat.smoke_tokenizer")
    out = tmp_path_factory.mktemp("smoke_tokenizer")
    smoke_tokenizer.train_tokenizer(smoke_tokenizer.stdlib_texts(600_000), vocab_size=1024).save_pretrained(out)
    return out


def test_smoke_sft_config_packs_tool_episodes(tmp_path, smoke_tokenizer_dir):
    instructions = pytest.importorskip("py4.data.smoke_instructions")
    rows = instructions.build_smoke_instructions(n_qa=20, n_episodes=20, seed=0)
    instructions.write_smoke_instructions(rows, tmp_path / "instructions")
    config = load_config(PackConfig, CONFIGS / "sft.yaml", [
        f"out_dir={tmp_path / 'sft'}", f"instructions.path={tmp_path / 'instructions'}",
        f"tokenizer={smoke_tokenizer_dir}"])
    manifest = run_pack(config)
    assert manifest["source"]["rows_kept"] == 40 and manifest["counts"]["conversations_dropped"] == 0
    from py4.data.tokens import load_tokenizer

    tok = load_tokenizer(str(smoke_tokenizer_dir))
    supervised = []
    for row in load_packed(tmp_path / "sft"):
        ids, labels = np.asarray(row["input_ids"]), np.asarray(row["labels"])
        supervised.append(tok.decode(ids[labels != IGNORE_INDEX].tolist()))
    text = "".join(supervised)
    assert "<tool_call>" in text and '"name": "run_code"' in text and '"name": "submit"' in text
    assert "<start_of_turn>user" not in text and "<start_of_turn>tool" not in text


def test_smoke_mix_configs_iso_then_control(tmp_path, smoke_tokenizer_dir):
    corpus = tmp_path / "corpus"
    write_jsonl(corpus / "shard-00000.jsonl", [{"id": f"d{i}", "text": "fn f() -> int:\n    " + sentence(i, 40)}
                                               for i in range(40)])
    (corpus / "manifest.json").write_text(json.dumps({"docs": 40}))
    iso = run_mix(load_config(MixConfig, CONFIGS / "mix_iso.yaml", [
        f"out_dir={tmp_path / 'iso'}", f"corpus={corpus}", f"tokenizer={smoke_tokenizer_dir}"]))
    counts = iso["counts"]
    iso_config = load_config(MixConfig, CONFIGS / "mix_iso.yaml")
    assert counts["replay_tokens"] == iso_config.copies * counts["corpus_tokens"]
    assert iso["inputs"]["replay"]["builtin"] == "stdlib"
    control = run_mix(load_config(MixConfig, CONFIGS / "mix_control.yaml", [
        f"out_dir={tmp_path / 'control'}", f"control_target_manifest={tmp_path / 'iso'}",
        f"tokenizer={smoke_tokenizer_dir}"]))
    assert control["total_mix_tokens"] == iso["total_mix_tokens"]
    steps = json.loads((tmp_path / "control" / "step_schedule.json").read_text())
    per_step = iso_config.schedule.micro_batch * iso_config.schedule.grad_accum * iso_config.seq_len
    assert steps["max_steps"] == -(-iso["total_mix_tokens"] // per_step)
