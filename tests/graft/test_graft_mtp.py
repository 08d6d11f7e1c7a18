"""GLM-4.5's multi-token-prediction layer, which transformers drops on load, in the graft.

The -it and Base stand-ins (``py4.rehearsal.standins``) carry the MTP layer
``model.layers.<num_hidden_layers>.*`` in their safetensors, as the Hub checkpoints do; a
"midtrained" model loaded and saved by transformers lacks it. Policy
``missing.mtp_missing_in_mid: base_plus_chat_vector`` gives those tensors
``W_base + lambda_ (W_it - W_base)`` — the graft formula for a layer midtraining never
trained (W_mid = W_base) — and the campaign's GLM graft config uses it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml

from py4.graft import GraftConfig, GraftError, run, verify_graft
from py4.graft.checkpoint import load_checkpoint
from py4.graft.plan import ON_BASE, mtp_prefixes
from py4.runs import read_manifest

REPO = Path(__file__).resolve().parents[2]
CAMPAIGN_CONFIG = REPO / "configs/graft/glm45_air.yaml"

pytestmark = pytest.mark.smoke


def _tensors(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    out = {}
    for path in sorted(folder.glob("*.safetensors")):
        out.update(load_file(path))
    return out


@pytest.fixture(scope="module")
def glm(tmp_path_factory) -> dict[str, Path]:
    """GLM stand-ins: base and -it with their MTP layer; mid = base moved a little, saved by transformers."""
    from transformers import AutoModelForCausalLM

    from py4.rehearsal.standins import build_standin

    root = tmp_path_factory.mktemp("glm")
    base = build_standin("glm45", "base", root / "base", seed=0)
    it = build_standin("glm45", "it", root / "it", seed=0)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.bfloat16)
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():  # a stand-in for midtraining: every loaded weight moves
        for _, param in sorted(model.named_parameters()):
            param.add_((torch.randn(param.shape, generator=generator) * 0.01).to(param.dtype))
    model.save_pretrained(root / "mid")
    return {"mid": root / "mid", "it": it, "base": base}


def _mtp_names(glm) -> list[str]:
    prefixes = mtp_prefixes(load_checkpoint("it", glm["it"], []))
    assert prefixes == ("model.layers.2.",)  # num_hidden_layers 2, num_nextn_predict_layers 1
    names = sorted(n for n in _tensors(glm["base"]) if n.startswith(prefixes))
    assert len(names) > 10 and "model.layers.2.eh_proj.weight" in names
    return names


def _config(glm, out: Path, **fields) -> GraftConfig:
    data = {"mid": str(glm["mid"]), "it": str(glm["it"]), "base": str(glm["base"]), "out": str(out),
            "fsync": False, "verify_sample": 0}
    data.update(fields)
    return GraftConfig.model_validate(data)


def test_a_transformers_saved_mid_lacks_the_mtp_layer_and_the_default_says_what_to_choose(glm, tmp_path):
    mtp = _mtp_names(glm)
    mid, it = _tensors(glm["mid"]), _tensors(glm["it"])
    assert not any(n in mid for n in mtp) and all(n in it for n in mtp)
    with pytest.raises(GraftError) as caught:
        run(_config(glm, tmp_path / "out", mismatch={"mid_dtype": "round_to_it"}), show_progress=False)
    message = str(caught.value)
    assert f"{len(mtp)} tensor(s) cannot be grafted" in message
    assert ("model.layers.2.eh_proj.weight: multi-token-prediction layer missing in mid "
            "(policy missing.mtp_missing_in_mid=error)") in message
    assert message.count("missing.mtp_missing_in_mid: base_plus_chat_vector") == 1


def test_mtp_tensors_are_base_plus_the_scaled_chat_vector(glm, tmp_path):
    mtp = _mtp_names(glm)
    lam = 0.5
    config = _config(glm, tmp_path / "out", lambda_=lam, missing={"mtp_missing_in_mid": ON_BASE},
                     mismatch={"mid_dtype": "round_to_it"})
    result = run(config, show_progress=False)
    out, it, base, mid = (_tensors(p) for p in (tmp_path / "out", glm["it"], glm["base"], glm["mid"]))
    assert set(out) == set(it)  # the grafted model carries every -it tensor, the MTP layer included
    for name in mtp:
        expected = (base[name].float() + torch.tensor(lam) * (it[name].float() - base[name].float())).to(torch.bfloat16)
        assert torch.equal(out[name].view(torch.int16), expected.view(torch.int16)), name
        if not torch.equal(it[name], base[name]):  # a chat vector (the router bias is a buffer: none)
            assert not torch.equal(out[name], it[name]), name  # lambda 0.5: not a copy of -it
    assert sum(not torch.equal(it[n], base[n]) for n in mtp) > 10
    for name in set(mid) - set(mtp):
        assert name in result.grafted
    # transformers keeps the router in fp32 (mlp.gate.weight, e_score_correction_bias): rounded to -it's BF16.
    assert set(result.mid_rounded) == {n for n, t in mid.items() if t.dtype == torch.float32} != set()
    assert result.on_base == {n: "multi-token-prediction layer missing in mid" for n in mtp}
    manifest = read_manifest(tmp_path / "out")
    assert manifest["tensors"][ON_BASE] == result.on_base
    assert manifest["counts"][ON_BASE] == len(mtp)
    assert not set(mtp) & (set(manifest["tensors"]["grafted"]) | set(manifest["tensors"]["copied"]))
    check = verify_graft(config, sample=None)  # recomputes every tensor, the MTP layer included
    assert check.ok, check.mismatches
    assert set(mtp) <= set(check.checked)


def test_the_campaign_glm_config_grafts_the_mtp_layer(glm, tmp_path):
    from typer.testing import CliRunner

    from py4.graft.cli import app

    mtp = _mtp_names(glm)
    args = ["--config", str(CAMPAIGN_CONFIG), "--mid", str(glm["mid"]), "--it", str(glm["it"]),
            "--base", str(glm["base"]), "--out", str(tmp_path / "out"), "--no-progress", "fsync=false"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"{len(mtp)} on base (mid lacks them)" in result.output
    out, it, base = (_tensors(p) for p in (tmp_path / "out", glm["it"], glm["base"]))
    for name in mtp:  # lambda 1.0: base + (it - base), computed in fp32 and rounded
        expected = (base[name].float() + (it[name].float() - base[name].float())).to(torch.bfloat16)
        assert torch.equal(out[name].view(torch.int16), expected.view(torch.int16)), name
    resolved = (tmp_path / "out" / "resolved_config.yaml").read_text()
    assert f"mtp_missing_in_mid: {ON_BASE}" in resolved
    manifest = json.loads((tmp_path / "out" / "run_manifest.json").read_text())
    assert sorted(manifest["tensors"][ON_BASE]) == mtp
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tmp_path / "out")  # the graft loads as a GLM model
    assert type(model).__name__ == "Glm4MoeForCausalLM"
    with torch.no_grad():
        assert torch.isfinite(model(input_ids=torch.tensor([[5, 6, 7]])).logits).all()


def test_the_campaign_dag_grafts_each_model_with_its_graft_config():
    from py4.campaign.dag import build_dag
    from py4.campaign.spec import load_campaign

    spec = load_campaign(REPO / "configs/campaign/python4.yaml")
    grafts = {n.id: n for n in build_dag(spec) if n.stage == "graft"}
    assert len(grafts) == 9
    for node_id, node in grafts.items():
        model = node_id.split("/")[0]
        argv = node.argv
        assert argv[argv.index("--config") + 1] == f"configs/graft/{model}.yaml" == node.config
    config = yaml.safe_load(CAMPAIGN_CONFIG.read_text())
    assert config["missing"]["mtp_missing_in_mid"] == ON_BASE
    for model in ("gemma4_12b", "gemma4_31b", "glm45_air"):
        data = yaml.safe_load((REPO / f"configs/graft/{model}.yaml").read_text())
        GraftConfig.model_validate({**data, "mid": "m", "it": "i", "base": "b", "out": "o"})  # strict: no typo
        assert data["mismatch"]["mid_dtype"] == "round_to_it"
