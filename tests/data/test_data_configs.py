"""Every YAML under configs/data validates against its kind's type; schedule configs reproduce
the reference table's step counts."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from py4.config import load_config
from py4.data.configs import MixConfig, PackConfig, ScheduleConfig, config_type_for
from py4.data.schedule import compute_schedule

CONFIG_ROOT = Path(__file__).resolve().parents[2] / "configs" / "data"
FILES = sorted(CONFIG_ROOT.rglob("*.yaml"))


def test_there_are_data_configs():
    assert len(FILES) >= 25


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CONFIG_ROOT)))
def test_config_validates_and_opens_with_a_run_command(path):
    kind = yaml.safe_load(path.read_text())["kind"]
    config = load_config(config_type_for(kind), path)
    assert path.read_text().startswith("#") and "py4 data" in path.read_text().split("\n\n")[0]
    if isinstance(config, ScheduleConfig) and config.expected_max_steps is not None:
        schedule = compute_schedule(seq_len=config.seq_len, micro_batch=config.micro_batch,
                                    grad_accum=config.grad_accum, gpus=config.gpus, rounding=config.rounding,
                                    total_tokens=config.total_tokens, rows=config.rows, epochs=config.epochs,
                                    warmup=config.warmup, max_steps_cap=config.max_steps_cap)
        assert schedule.max_steps == config.expected_max_steps


def campaign(name: str):
    path = CONFIG_ROOT / "campaign" / name
    return load_config(config_type_for(yaml.safe_load(path.read_text())["kind"]), path)


def test_campaign_mixes_carry_the_table():
    steps = {}
    for path in sorted((CONFIG_ROOT / "campaign").glob("mix_*.yaml")):
        config = campaign(path.name)
        assert isinstance(config, MixConfig) and config.seq_len == 8192 and config.seed == 42
        assert config.replay.hub_id == "allenai/dolma3_dolmino_mix-100B-1125" and config.replay.revision
        s = config.schedule
        assert s.micro_batch * s.grad_accum * s.gpus * config.seq_len == 262_144 and s.warmup == 0.03
        steps[path.stem] = (config.expected_max_steps, s.rounding)
    assert steps == {
        "mix_gemma4_12b_iso": (306, "ceil"), "mix_gemma4_12b_control": (306, "ceil"),
        "mix_gemma4_12b_prop": (164, "floor"),
        "mix_gemma4_31b_iso": (306, "ceil"), "mix_gemma4_31b_control": (306, "ceil"),
        "mix_gemma4_31b_prop": (425, "floor"),
        "mix_glm45_air_iso": (293, "floor"), "mix_glm45_air_control": (282, "floor"),
        "mix_glm45_air_prop": (1425, "floor")}


def test_campaign_sft_configs_carry_the_dolci_counts():
    for name in ("sft_gemma4_12b.yaml", "sft_gemma4_31b.yaml", "sft_glm45_air.yaml"):
        config = campaign(name)
        assert isinstance(config, PackConfig)
        assert config.instructions.hub_id == "allenai/Dolci-Instruct-SFT" and config.instructions.revision == "bd3c8f3a"
        assert (config.expected_rows_total, config.expected_rows_kept) == (2_152_112, 1_923_659)
        s = config.schedule
        assert s.micro_batch * s.grad_accum * s.gpus * config.seq_len == 2_097_152
        assert s.max_steps_cap == 48 and s.warmup == 10 and config.expected_max_steps == 48
