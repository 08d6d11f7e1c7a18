"""Every step count of the reference table, one test each, from the campaign's token counts.

Token counts (reference JSON, midtraining group sources): Gemma-3-tokenizer corpus tokens
per copy 10,011,360 (iso), 5,397,107 (12B prop), 13,941,156 (31B prop); the mix is four
copies plus an equal-token Dolmino stream, so total = 8 x per-copy tokens. GLM step counts
divide GLM-tokenizer counts 77.05M / 73.95M / 373.66M by 262,144 with floor.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from py4.data.schedule import compute_schedule, parse_count, read_step_schedule, write_step_schedule

ISO_PER_COPY = 10_011_360
PROP_12B_PER_COPY = 5_397_107
PROP_31B_PER_COPY = 13_941_156
PROP_GLM_GEMMA_COUNT = 49_465_523


def mix_total(per_copy: int, copies: int = 4) -> int:
    return per_copy * copies * 2  # corpus copies + the equal-token replay stream


def midtrain(total: int, micro: int, accum: int, gpus: int, rounding: str):
    return compute_schedule(seq_len=8192, micro_batch=micro, grad_accum=accum, gpus=gpus, rounding=rounding,
                            total_tokens=total, warmup=0.03)


def test_mix_totals_match_the_table_rounding():
    assert mix_total(ISO_PER_COPY) == 80_090_880  # "80.1M"
    assert mix_total(PROP_12B_PER_COPY) == 43_176_856  # "43.2M"
    assert mix_total(PROP_31B_PER_COPY) == 111_529_248  # "111.5M"
    assert mix_total(PROP_GLM_GEMMA_COUNT) == 395_724_184  # "395.7M"


def test_gemma_12b_iso_306_ceil():
    s = midtrain(mix_total(ISO_PER_COPY), 1, 8, 4, "ceil")
    assert s.tokens_per_step == 262_144 and s.max_steps == 306
    assert midtrain(mix_total(ISO_PER_COPY), 1, 8, 4, "floor").max_steps == 305  # rounding matters


def test_gemma_31b_iso_306_ceil():
    s = midtrain(mix_total(ISO_PER_COPY), 1, 4, 8, "ceil")
    assert s.tokens_per_step == 262_144 and s.max_steps == 306


def test_gemma_control_306_ceil_token_matched_to_iso():
    # control = Dolmino only, token-matched to the iso arm: the same total
    for micro, accum, gpus in ((1, 8, 4), (1, 4, 8)):
        assert midtrain(mix_total(ISO_PER_COPY), micro, accum, gpus, "ceil").max_steps == 306


def test_gemma_12b_prop_164_floor():
    s = midtrain(mix_total(PROP_12B_PER_COPY), 1, 8, 4, "floor")
    assert s.max_steps == 164
    assert midtrain(mix_total(PROP_12B_PER_COPY), 1, 8, 4, "ceil").max_steps == 165


def test_gemma_31b_prop_425_floor():
    s = midtrain(mix_total(PROP_31B_PER_COPY), 1, 4, 8, "floor")
    assert s.max_steps == 425
    assert midtrain(mix_total(PROP_31B_PER_COPY), 1, 4, 8, "ceil").max_steps == 426


def test_glm_prop_1425_floor():
    s = midtrain(parse_count("373.66M"), 2, 2, 8, "floor")
    assert s.max_steps == 1425
    assert midtrain(parse_count("373.66M"), 2, 2, 8, "ceil").max_steps == 1426


def test_glm_iso_293_floor():
    assert midtrain(parse_count("77.05M"), 2, 2, 8, "floor").max_steps == 293
    assert midtrain(parse_count("77.05M"), 2, 2, 8, "ceil").max_steps == 294


def test_glm_control_282_floor():
    assert midtrain(parse_count("73.95M"), 2, 2, 8, "floor").max_steps == 282
    assert midtrain(parse_count("73.95M"), 2, 2, 8, "ceil").max_steps == 283


@pytest.mark.parametrize("micro,accum,gpus", [(2, 32, 4), (1, 32, 8), (2, 16, 8)])
def test_sft_48_steps_of_2097152_tokens(micro, accum, gpus):
    # 48 is a cap binding inside one nominal epoch of packed Dolci (any total above 48 steps)
    s = compute_schedule(seq_len=8192, micro_batch=micro, grad_accum=accum, gpus=gpus, rounding="floor",
                         total_tokens=1_923_659 * 700, max_steps_cap=48, warmup=10)
    assert s.tokens_per_step == 2_097_152
    assert s.max_steps == 48 and s.uncapped_steps > 48
    assert s.tokens_trained == 100_663_296  # "100.7M"
    assert s.warmup_steps == 10 and s.warmup_ratio is None


def test_eft_1024_rows_64_steps():
    s = compute_schedule(seq_len=4096, micro_batch=1, grad_accum=32, gpus=1, rows=1024, epochs=2, warmup=0.05)
    assert s.unit == "rows" and s.sequences_per_step == 32 and s.max_steps == 64
    assert s.warmup_steps == 4  # ceil(0.05 x 64)


def test_eft_256_rows_16_steps():
    assert compute_schedule(seq_len=4096, micro_batch=1, grad_accum=32, gpus=1, rows=256, epochs=2).max_steps == 16


def test_eft_glm_layout_64_steps():
    assert compute_schedule(seq_len=4096, micro_batch=2, grad_accum=4, gpus=4, rows=1024, epochs=2).max_steps == 64


def test_eft_large_dose_2048_rows_4_epochs_256_steps():
    assert compute_schedule(seq_len=4096, micro_batch=1, grad_accum=32, gpus=1, rows=2048, epochs=4).max_steps == 256


def test_midtrain_warmup_is_ceil_of_3_percent():
    assert midtrain(mix_total(ISO_PER_COPY), 1, 8, 4, "ceil").warmup_steps == 10  # ceil(9.18)
    assert midtrain(mix_total(PROP_12B_PER_COPY), 1, 8, 4, "floor").warmup_steps == 5  # ceil(4.92)


@pytest.mark.parametrize("kwargs,message", [
    ({"total_tokens": 100}, "zero steps"),
    ({"total_tokens": 10**9, "rows": 5}, "exactly one"),
    ({}, "exactly one"),
    ({"total_tokens": 10**9, "rounding": "nearest"}, "rounding"),
    ({"total_tokens": 10**9, "warmup": 2.5}, "whole"),
    ({"total_tokens": 10**9, "max_steps_cap": 0}, "max_steps_cap"),
])
def test_bad_schedules_raise(kwargs, message):
    base = {"seq_len": 8192, "micro_batch": 1, "grad_accum": 1, "gpus": 1}
    with pytest.raises(ValueError, match=message):
        compute_schedule(**base, **kwargs)


def test_parse_count():
    assert parse_count("80,090,880") == 80_090_880
    assert parse_count("77.05M") == 77_050_000
    assert parse_count("1.5k") == 1500
    for bad in ("", "abc", "1.23456k"):
        with pytest.raises(ValueError):
            parse_count(bad)


def test_step_schedule_json_round_trip(tmp_path: Path):
    s = midtrain(mix_total(ISO_PER_COPY), 1, 8, 4, "ceil")
    path = write_step_schedule(tmp_path, s)
    data = json.loads(path.read_text())
    for key in ("seq_len", "micro_batch", "grad_accum", "gpus", "tokens_per_step", "total_tokens", "max_steps",
                "rounding", "warmup_steps", "warmup_ratio"):
        assert key in data
    assert read_step_schedule(tmp_path) == s
