"""A midtrained model saved in fp32 (FSDP2 with bf16 mixed precision) against bf16 -it and base.

Policy ``mismatch.mid_dtype``: ``round_to_it`` rounds mid to the -it dtype (nearest, ties
to even) before the arithmetic, so the graft is the graft of the same model saved in bf16,
byte for byte; ``exact`` grafts the fp32 values (one rounding of the result); unset with
``mismatch.dtype: error`` (the default) the graft stops with a message naming the choice.
"""

from __future__ import annotations

import pytest
import torch

from graft_fixtures import SHAPES, graft_config, load_output, random_weights, write_checkpoint, write_triple
from py4.graft import GraftError, run, verify_graft
from py4.runs import read_manifest


def _fp32_mid_triple() -> dict[str, dict[str, torch.Tensor]]:
    """bf16 base and -it; an fp32 mid whose values are mostly not representable in bf16."""
    base = random_weights(0, torch.float32)
    it = {k: (v + 0.05 * random_weights(1, torch.float32)[k]).to(torch.bfloat16) for k, v in base.items()}
    mid = {k: v + 0.05 * random_weights(2, torch.float32)[k] for k, v in base.items()}
    base = {k: v.to(torch.bfloat16) for k, v in base.items()}
    assert all(not torch.equal(m, m.to(torch.bfloat16).float()) for m in mid.values())
    return {"mid": mid, "it": it, "base": base}


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(torch.int16)


def test_an_fp32_mid_is_refused_by_default_with_a_message_naming_the_policy(tmp_path):
    dirs = write_triple(tmp_path, _fp32_mid_triple())
    with pytest.raises(GraftError) as caught:
        run(graft_config(dirs, tmp_path / "out"), show_progress=False)
    message = str(caught.value)
    assert f"{len(SHAPES)} tensor(s) cannot be grafted" in message
    assert "model.norm.weight: dtype mismatch: mid F32, it BF16, base BF16 (policy mismatch.dtype=error)" in message
    assert message.count("mismatch.mid_dtype: round_to_it") == 1  # the advice once, not per tensor
    assert "exact" in message
    assert not (tmp_path / "out" / "model.safetensors.index.json").exists()


def test_round_to_it_gives_the_graft_of_the_bf16_save_byte_for_byte(tmp_path):
    triple = _fp32_mid_triple()
    dirs = write_triple(tmp_path / "fp32", triple)
    bf16_mid = {k: v.to(torch.bfloat16) for k, v in triple["mid"].items()}  # what a bf16 save writes
    dirs_bf16 = {**dirs, "mid": write_checkpoint(tmp_path / "bf16" / "mid", bf16_mid, role="mid")}

    result = run(graft_config(dirs, tmp_path / "rounded", mismatch={"mid_dtype": "round_to_it"}),
                 show_progress=False)
    run(graft_config(dirs_bf16, tmp_path / "from_bf16"), show_progress=False)

    shard = "model-00001-of-00001.safetensors"
    assert (tmp_path / "rounded" / shard).read_bytes() == (tmp_path / "from_bf16" / shard).read_bytes()
    out = load_output(tmp_path / "rounded")
    assert {t.dtype for t in out.values()} == {torch.bfloat16}
    assert sorted(result.grafted) == sorted(SHAPES)
    assert result.mid_rounded == {name: "F32 -> BF16 (nearest, ties to even)" for name in SHAPES}
    manifest = read_manifest(tmp_path / "rounded")
    assert manifest["tensors"]["mid_rounded"] == result.mid_rounded
    assert manifest["counts"]["mid_rounded"] == len(SHAPES)
    check = verify_graft(graft_config(dirs, tmp_path / "rounded", mismatch={"mid_dtype": "round_to_it"}),
                         sample=None)
    assert check.ok and sorted(check.checked) == sorted(SHAPES)


def test_exact_grafts_the_fp32_values_with_one_rounding(tmp_path):
    triple = _fp32_mid_triple()
    dirs = write_triple(tmp_path, triple)
    run(graft_config(dirs, tmp_path / "exact", mismatch={"mid_dtype": "exact"}, verify_sample=100),
        show_progress=False)
    run(graft_config(dirs, tmp_path / "rounded", mismatch={"mid_dtype": "round_to_it"}), show_progress=False)
    # Unset, the general policy decides: compute is the exact graft (what it did before mid_dtype existed).
    run(graft_config(dirs, tmp_path / "compute", mismatch={"dtype": "compute"}), show_progress=False)
    exact, rounded, compute = (load_output(tmp_path / n) for n in ("exact", "rounded", "compute"))
    differ = 0
    for name in SHAPES:
        mid, it, base = triple["mid"][name], triple["it"][name].float(), triple["base"][name].float()
        assert torch.equal(_bits(exact[name]), _bits((mid + (it - base)).to(torch.bfloat16))), name
        assert torch.equal(_bits(compute[name]), _bits(exact[name])), name
        differ += int((_bits(exact[name]) != _bits(rounded[name])).sum())
    assert differ > 0  # double rounding (mid, then the result) is not the same as one rounding


def test_mid_dtype_error_and_mismatches_it_does_not_cover(tmp_path):
    triple = _fp32_mid_triple()
    dirs = write_triple(tmp_path / "a", triple)
    with pytest.raises(GraftError, match=r"model\.norm\.weight: dtype mismatch: mid F32, it BF16, base BF16 "
                                         r"\(policy mismatch\.mid_dtype=error\)"):
        run(graft_config(dirs, tmp_path / "out", mismatch={"mid_dtype": "error"}), show_progress=False)
    # -it and base disagree: not a wider mid, so mid_dtype does not apply and mismatch.dtype decides.
    triple["it"]["model.norm.weight"] = triple["it"]["model.norm.weight"].to(torch.float16)
    dirs = write_triple(tmp_path / "b", triple)
    with pytest.raises(GraftError, match=r"model\.norm\.weight: dtype mismatch: mid F32, it F16, base BF16 "
                                         r"\(policy mismatch\.dtype=error\)"):
        run(graft_config(dirs, tmp_path / "out2", mismatch={"mid_dtype": "round_to_it"}), show_progress=False)
