"""The graft's arithmetic against independent numpy computations, bit for bit."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from graft_fixtures import SHAPES, graft_config, load_output, related_triple, write_triple
from py4.graft import run


def _np32(t: torch.Tensor) -> np.ndarray:
    return t.to(torch.float32).numpy()  # exact for bf16/fp16/fp32 inputs


def _round_bf16_bits(x: np.ndarray) -> np.ndarray:
    """fp32 -> bf16 bit patterns, round to nearest, ties to even (finite inputs)."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


@pytest.mark.parametrize("lam", [1.0, 0.7, -0.5, 0.0])
def test_each_tensor_equals_an_independent_fp32_computation(tmp_path, lam):
    triple = related_triple()
    dirs = write_triple(tmp_path, triple)
    run(graft_config(dirs, tmp_path / "out", lambda_=lam, output_dtype="float32"), show_progress=False)
    out = load_output(tmp_path / "out")
    assert set(out) == set(SHAPES)
    for name in SHAPES:
        mid, it, base = (_np32(triple[r][name]) for r in ("mid", "it", "base"))
        expected = mid + np.float32(lam) * (it - base)
        assert expected.dtype == np.float32
        got = out[name].numpy()
        assert got.dtype == np.float32 and got.shape == expected.shape
        assert np.array_equal(got.view(np.uint32), expected.view(np.uint32)), name


def test_bf16_output_is_the_fp32_result_rounded_to_nearest_even(tmp_path):
    triple = related_triple()
    dirs = write_triple(tmp_path, triple)
    run(graft_config(dirs, tmp_path / "out", lambda_=0.3), show_progress=False)
    out = load_output(tmp_path / "out")
    for name in SHAPES:
        mid, it, base = (_np32(triple[r][name]) for r in ("mid", "it", "base"))
        expected_bits = _round_bf16_bits(mid + np.float32(0.3) * (it - base))
        assert out[name].dtype == torch.bfloat16
        assert np.array_equal(out[name].view(torch.int16).numpy().view(np.uint16), expected_bits), name


def test_bf16_rounding_of_ties_and_edge_values(tmp_path):
    # fp32 inputs with zero chat vector: the output is mid rounded to bf16.
    patterns = np.array([0x3F808000, 0x3F818000, 0x3F80C000, 0x3F807FFF, 0x3F808001, 0x00000001,
                         0x80000000, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0xBF808000, 0x00400000],
                        dtype=np.uint32)
    mid = torch.from_numpy(patterns.view(np.float32).copy())
    zeros = torch.zeros_like(mid)
    dirs = {}
    for role, t in {"mid": mid, "it": zeros, "base": zeros}.items():
        dirs[role] = tmp_path / role
        dirs[role].mkdir()
        save_file({"w": t}, dirs[role] / "model.safetensors", metadata={"format": "pt"})
        (dirs[role] / "config.json").write_text("{}")
    run(graft_config(dirs, tmp_path / "out", verify_sample=0), show_progress=False)
    got = load_output(tmp_path / "out")["w"].view(torch.int16).numpy().view(np.uint16)
    zero = np.zeros_like(patterns.view(np.float32))
    expected = _round_bf16_bits(patterns.view(np.float32) + (zero - zero))  # -0 + +0 is +0
    # 0x7F7FFFFF (max float) rounds up to +inf in bf16, as IEEE rounding says.
    assert got[7] == 0x7F80 and got[8] == 0x7F80 and got[9] == 0xFF80
    assert np.array_equal(got, expected)
    assert got[0] == 0x3F80 and got[1] == 0x3F82  # ties go to even


def test_accumulate_in_float64_is_configurable(tmp_path):
    triple = related_triple(dtype=torch.float32)
    dirs = write_triple(tmp_path, triple)
    run(graft_config(dirs, tmp_path / "out", lambda_=0.7, accumulate_dtype="float64", output_dtype="float32"),
        show_progress=False)
    out = load_output(tmp_path / "out")
    for name in SHAPES:
        mid, it, base = (triple[r][name].numpy().astype(np.float64) for r in ("mid", "it", "base"))
        expected = (mid + np.float64(0.7) * (it - base)).astype(np.float32)
        assert np.array_equal(out[name].numpy().view(np.uint32), expected.view(np.uint32)), name


def test_chunking_does_not_change_the_result(tmp_path):
    triple = related_triple()
    dirs = write_triple(tmp_path, triple)
    run(graft_config(dirs, tmp_path / "a", lambda_=0.7), show_progress=False)
    run(graft_config(dirs, tmp_path / "b", lambda_=0.7, chunk_size=12), show_progress=False)  # 3 fp32 elements
    for file in sorted(p.name for p in (tmp_path / "a").glob("model-*.safetensors")):
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()


def test_shards_are_byte_identical_to_safetensors_save_file(tmp_path):
    triple = related_triple()
    triple["it"]["extra.int_buffer"] = torch.arange(5, dtype=torch.int64)  # copied as is, another dtype
    dirs = write_triple(tmp_path, triple)
    out = tmp_path / "out"
    run(graft_config(dirs, out, max_shard_size=1500, output_dtype="float16"), show_progress=False)
    shards = sorted(out.glob("model-*.safetensors"))
    assert len(shards) > 2
    for shard in shards:
        again = tmp_path / "again.safetensors"
        save_file(load_file(shard), again, metadata={"format": "pt"})
        assert again.read_bytes() == shard.read_bytes(), shard.name


def test_index_lists_every_tensor_and_the_total_size(tmp_path):
    dirs = write_triple(tmp_path, related_triple())
    out = tmp_path / "out"
    result = run(graft_config(dirs, out, max_shard_size=1000), show_progress=False)
    index = json.loads((out / "model.safetensors.index.json").read_text())
    out_tensors = load_output(out)
    assert index["metadata"]["total_size"] == sum(t.numel() * 2 for t in out_tensors.values()) == result.total_size
    assert sorted(set(index["weight_map"].values())) == result.shards
    assert len(result.shards) > 1 and result.shards[0].endswith(f"-of-{len(result.shards):05d}.safetensors")
    for file in result.shards:  # no shard is over the limit unless one tensor alone is
        tensors = load_file(out / file)
        assert len(tensors) == 1 or sum(t.numel() * 2 for t in tensors.values()) <= 1000
