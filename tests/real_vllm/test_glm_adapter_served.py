"""GLM-4.5-Air's EFT adapter served by a real ``vllm serve``: the rehearsal's ``glm_moe_lora`` boundary.

The adapter is made with the campaign's GLM EFT LoRA settings (``configs/train/glm45_air/eft.yaml``:
rank 64, attention only, the MoE experts untouched) on the rehearsal's GLM-4.5-Air stand-in (the
-it kind, built by ``build_standin``), its B drawn large enough (normal, std 0.05, seed 0) that the
adapter moves the probes' log-probabilities well beyond the comparison's tolerance.

- The campaign's command line (``--enable-lora --lora-modules``) on vLLM's CPU build: the server
  starts, and the first request fails in the MoE's Triton kernels (``TritonExperts``), which is
  what the boundary steps around. vLLM picks them for every unquantized MoE once LoRA is enabled,
  whatever the adapter targets; when a vLLM build serves it on a CPU, this test fails and the
  boundary goes.
- The rehearsal's command line (its ``evaluation.serve``, as an evaluation node's plan is made):
  the same ``vllm serve`` with the adapter merged into its base. ``py4 eval probes --endpoint``
  against it equals py4's local scoring of the unmerged adapter on the float32 base pair by pair.

Both servers compute in float32 (``--dtype float32``, as ``test_standins_served.py`` explains); the
first also without it, as a rehearsal node runs (bfloat16, the stand-in's own dtype). Each start
costs 40-250 s here, by the machine's load.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml

from chat_server import alive, free_port
from vllm_tier import ROOT, py4

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

CAMPAIGN = ROOT / "configs/campaign/python4.yaml"
REHEARSAL = ROOT / "configs/rehearsal/python4.yaml"
GLM_EFT = ROOT / "configs/train/glm45_air/eft.yaml"
KEY, NODE = "glm45_air", "glm45_air/iso/eft_4"  # an evaluation node the boundary covers
PROBE_LIMIT = 40  # the rehearsal's probes.limit
ABS_TOLERANCE, REL_TOLERANCE = 1e-4, 1e-5  # test_standins_served.py's
ADAPTER_SHIFT = 1e-2  # the adapter moves some pair's log-probability by more than this


@pytest.fixture(scope="module")
def glm(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(the -it stand-in, its float32 copy, the EFT adapter on it)."""
    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from py4.rehearsal.standins import build_standin
    from py4.train.eft import LoraSpec

    root = tmp_path_factory.mktemp("glm45")
    base = build_standin("glm45", "it", root / "model", seed=0)
    float32 = root / "model-float32"
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    model.save_pretrained(float32)
    AutoTokenizer.from_pretrained(base).save_pretrained(float32)
    lora = LoraSpec(**yaml.safe_load(GLM_EFT.read_text())["lora"])
    assert set(lora.target_modules) == {"q_proj", "k_proj", "v_proj", "o_proj"}  # the experts untouched
    torch.manual_seed(0)
    peft_model = get_peft_model(model, lora.peft_config())
    with torch.no_grad():
        for name, param in peft_model.named_parameters():
            if "lora_B" in name:
                param.normal_(std=0.05)
    peft_model.save_pretrained(root / "adapter")
    adapted = {name.split(".lora_")[0] for name, _ in peft_model.named_parameters() if ".lora_" in name}
    assert adapted and all(".self_attn." in name for name in adapted), sorted(adapted)[:4]
    return base, float32, root / "adapter"


@pytest.fixture(scope="module")
def rehearsal_serve(tmp_path_factory):
    from py4.rehearsal.rehearse import Layout, load_rehearsal, rehearsal_spec

    spec = rehearsal_spec(load_rehearsal(REHEARSAL), CAMPAIGN, Layout(tmp_path_factory.mktemp("rehearsal")))
    return spec.evaluation.serve


def _plan(serve, glm, vllm_program, work: Path, extra: list[str]):
    from py4.evaluate.serve import plan_server

    base, _, adapter = glm
    serve = serve.model_copy(update={"executable": str(vllm_program), "port": free_port(),
                                     "extra_args": [*serve.extra_args, *extra]})
    return plan_server(serve, str(adapter), name=NODE, base=str(base), model_key=KEY,
                       scratch=str(work / "served_model"))


def _chat(server, model: str) -> httpx.Response:
    return httpx.post(f"{server.base_url}/chat/completions", timeout=600,
                      json={"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4,
                            "temperature": 0})


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("dtype", [[], ["--dtype", "float32"]], ids=["own-dtype", "float32"])
def test_the_campaigns_lora_serving_of_glm_fails_in_vllms_triton_moe_on_a_cpu(glm, rehearsal_serve, vllm_program,
                                                                              tmp_path, dtype):
    from py4.evaluate.serve import serving

    campaign_serve = rehearsal_serve.model_copy(update={"merge_adapter": {}})  # the boundary's override undone
    plan = _plan(campaign_serve, glm, vllm_program, tmp_path, dtype)
    assert "--enable-lora" in plan.argv and plan.servable_copy is None
    log = tmp_path / "server.log"
    with serving(plan, log) as server:
        reply = _chat(server, server.request_model)
        pid = server.process.pid
    assert not alive(pid), f"the vLLM server (pid {pid}) outlived its test"
    text = log.read_text(errors="replace")
    assert reply.status_code == 500, (reply.status_code, reply.text[:500])
    assert "Using TRITON Unquantized MoE LoRA backend" in text
    assert "experts/triton_moe.py" in text and "module 'triton.language' has no attribute" in text


@pytest.mark.timeout(3600)
def test_the_rehearsals_glm_adapter_is_served_merged_by_vllm_as_the_adapter_scores(glm, rehearsal_serve,
                                                                                   vllm_program, tmp_path):
    from py4.evaluate.serve import serving

    base, float32, adapter = glm
    plan = _plan(rehearsal_serve, glm, vllm_program, tmp_path, ["--dtype", "float32"])
    copy = str(tmp_path / "served_model")
    # the campaign's command line but for the served folder: no LoRA module, the merged copy itself
    assert plan.engine == "vllm" and plan.argv[:3] == [str(vllm_program), "serve", copy]
    assert "--enable-lora" not in plan.argv and plan.servable_copy == copy
    assert plan.argv[plan.argv.index("--tool-call-parser") + 1] == "glm45"
    served = tmp_path / "served"
    with serving(plan, tmp_path / "server.log") as server:
        made = json.loads((Path(copy) / "py4_served_copy.json").read_text())
        assert made == {"weights": str(adapter), "base": str(base), "class": "Glm4MoeForCausalLM", "merged": True}
        assert _chat(server, server.request_model).status_code == 200
        done = py4("eval", "probes", "--endpoint", server.base_url, "--model", server.request_model,
                   "--tokenizer", str(base), "--limit", str(PROBE_LIMIT), "--out", str(served), "--no-progress")
        assert done.returncode == 0, done.stderr[-3000:]
        pid = server.process.pid
    assert not alive(pid), f"the vLLM server (pid {pid}) outlived its test"
    assert not Path(copy).exists()
    local, unadapted = tmp_path / "local", tmp_path / "base"
    for out, extra in ((local, ["--adapter", str(adapter)]), (unadapted, [])):
        done = py4("eval", "probes", "--model", str(float32), *extra, "--limit", str(PROBE_LIMIT), "--out", str(out),
                   "--no-progress")
        assert done.returncode == 0, done.stderr[-3000:]
    served_scores, want, plain = _scores(served), _scores(local), _scores(unadapted)
    assert served_scores.keys() == want.keys() == plain.keys() and len(want) >= PROBE_LIMIT
    for pair_id, row in want.items():
        got = served_scores[pair_id]
        assert (got["p4_tokens"], got["py3_tokens"]) == (row["p4_tokens"], row["py3_tokens"]), pair_id
        for key in ("p4_logprob", "py3_logprob"):
            assert got[key] == pytest.approx(row[key], abs=ABS_TOLERANCE, rel=REL_TOLERANCE), (pair_id, key)
    shift = max(abs(want[p][k] - plain[p][k]) for p in want for k in ("p4_logprob", "py3_logprob"))
    assert shift > ADAPTER_SHIFT, f"the adapter moves no log-probability by more than {ADAPTER_SHIFT} ({shift})"


def _scores(run: Path) -> dict[str, dict]:
    return {row["id"]: row for row in json.loads((run / "results.json").read_text())["scores"]}
