"""The rehearsal's stand-ins of Gemma-4 12B, Gemma-4 31B and GLM-4.5-Air served by a real ``vllm serve``.

Each stand-in is written by the rehearsal's own builder (``build_standin``, the -it kind: the files
every evaluated chat model inherits through the graft) and served with the command line the
rehearsal's evaluation nodes get: ``plan_server`` with the rehearsal's ``evaluation.serve`` (the
campaign's, with the rehearsal's overrides and boundaries): each Gemma-4 as its own multimodal class
with ``--language-model-only``, GLM-4.5-Air as the model itself (its adapters stay with the
``glm_moe_lora`` boundary). Three things differ from a rehearsal node's command line: the
program's absolute path, a free port, and ``--dtype float32``: the stand-ins are bf16 on disk, and
the server computes in float32 with their weights upcast exactly, as py4's local scoring of a
float32 copy of the folder does (``py4 eval probes --model`` on a CPU keeps a checkpoint's own
dtype, and bf16 against float32 differs by up to 0.54 nats on a 40-pair sample).

Against each server, ``py4 eval probes --endpoint`` in token mode equals py4's local scoring of
those weights pair by pair, and ``py4 eval episodes`` with the rehearsal's evaluation settings
runs its episodes through the family's tool-call and reasoning parsers and records them.

Both Gemma-4 stand-ins: they share tokenizer, chat template, parsers and head sizes, but not their
class (``gemma4_unified`` with an encoder-free vision embedder, ``gemma4`` with a vision tower), and
vLLM builds each multimodal class with its own loader; one server each costs a start of 75-260 s
here at loads 2-20 (a cold compile cache: up to 545 s, benchmarks/RESULTS.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chat_server import alive, free_port
from vllm_tier import ROOT, SPLIT, py4

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

CAMPAIGN = ROOT / "configs/campaign/python4.yaml"
REHEARSAL = ROOT / "configs/rehearsal/python4.yaml"
STANDINS = {"gemma4_12b": "gemma4_12b", "gemma4_31b": "gemma4", "glm45_air": "glm45"}  # model key -> family
PROBE_LIMIT = 40  # the rehearsal's probes.limit: every 31st pair of the 1,260
# A span's log-probability sums float32 terms computed by other kernels in another order: 1e-4 as
# the smoke model's, relative 1e-5 beyond that (a span sums up to dozens of token log-probabilities).
ABS_TOLERANCE, REL_TOLERANCE = 1e-4, 1e-5


@pytest.fixture(scope="module", params=sorted(STANDINS))
def standin(request, tmp_path_factory) -> tuple[str, Path]:
    """(campaign model key, the -it stand-in's folder)."""
    from py4.rehearsal.standins import build_standin

    key = request.param
    return key, build_standin(STANDINS[key], "it", tmp_path_factory.mktemp(key) / "model", seed=0)


@pytest.fixture(scope="module")
def rehearsal_serve(tmp_path_factory):
    """The rehearsal's ``evaluation.serve`` (what its evaluation nodes' plans are made from)."""
    from py4.rehearsal.rehearse import Layout, load_rehearsal, rehearsal_spec

    spec = rehearsal_spec(load_rehearsal(REHEARSAL), CAMPAIGN, Layout(tmp_path_factory.mktemp("rehearsal")))
    return spec.evaluation.serve


@pytest.fixture(scope="module")
def standin_server(standin, rehearsal_serve, vllm_program, tmp_path_factory):
    """The stand-in's running server; stopped, with all it spawned, when its tests are done."""
    from py4.evaluate.serve import plan_server, serving

    key, folder = standin
    serve = rehearsal_serve.model_copy(update={"executable": str(vllm_program), "port": free_port(),
                                               "extra_args": [*rehearsal_serve.extra_args, "--dtype", "float32"]})
    work = tmp_path_factory.mktemp(f"{key}-server")
    plan = plan_server(serve, str(folder), name=f"{key}/standin", model_key=key, scratch=str(work / "served_model"))
    assert plan.engine == "vllm" and plan.argv[0] == str(vllm_program)
    assert ("--language-model-only" in plan.argv) == key.startswith("gemma4")
    with serving(plan, work / "server.log") as server:
        print(f"{key}: vllm serve ready in {server.ready_s:.1f} s ({plan.command})")
        yield server
        pid = server.process.pid
    assert not alive(pid), f"the vLLM server (pid {pid}) outlived its fixture"


@pytest.fixture(scope="module")
def standin_float32(standin, tmp_path_factory) -> Path:
    """The stand-in's weights upcast to float32 (exact), with its tokenizer: what the server computes with."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    key, folder = standin
    out = tmp_path_factory.mktemp(f"{key}-float32") / "model"
    AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).save_pretrained(out)
    AutoTokenizer.from_pretrained(folder).save_pretrained(out)
    return out


def _scores(run: Path) -> dict[str, dict]:
    return {row["id"]: row for row in json.loads((run / "results.json").read_text())["scores"]}


@pytest.mark.timeout(3600)  # vLLM's CPU start: 100-550 s on this machine at load, then two probe runs
def test_standin_probes_through_vllm_equal_local_scoring(standin, standin_server, standin_float32, tmp_path):
    """The rehearsal's selection, empty-prefix pairs among it: conditioned on the tokenizer's BOS,
    or on its EOS where it has none (GLM-4.5's), by both scorers."""
    from py4.problems.probe_set.build import load_probes
    from py4.probes.evaluate import select_probes

    assert any(p["prefix"] == "" for p in select_probes(load_probes(), PROBE_LIMIT))
    _, folder = standin
    local, served = tmp_path / "local", tmp_path / "served"
    done = py4("eval", "probes", "--model", str(standin_float32), "--limit", str(PROBE_LIMIT), "--out", str(local),
               "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    done = py4("eval", "probes", "--endpoint", standin_server.base_url, "--model", standin_server.request_model,
               "--tokenizer", str(folder), "--limit", str(PROBE_LIMIT), "--out", str(served), "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    local_scores, served_scores = _scores(local), _scores(served)
    assert served_scores.keys() == local_scores.keys() and len(served_scores) >= PROBE_LIMIT
    for pair_id, want in local_scores.items():
        row = served_scores[pair_id]
        assert (row["p4_tokens"], row["py3_tokens"]) == (want["p4_tokens"], want["py3_tokens"]), pair_id
        for key in ("p4_logprob", "py3_logprob"):
            assert row[key] == pytest.approx(want[key], abs=ABS_TOLERANCE, rel=REL_TOLERANCE), (pair_id, key)


@pytest.mark.timeout(3600)
def test_standin_evaluation_episodes_run_through_vllms_parsers(standin, standin_server, rehearsal_serve, tmp_path):
    """The rehearsal's evaluation settings (its ``stage_overrides.eval``); the random stand-in's
    turns are whatever greedy decoding makes of them, so the test checks that each episode ran
    through the server and was recorded with an outcome, not what the outcome is."""
    from py4.episodes.config import OUTCOMES
    from py4.rehearsal.rehearse import load_rehearsal

    key, _ = standin
    family = rehearsal_serve.family[key]
    out = tmp_path / "eval"
    done = py4("eval", "episodes", "--endpoint", standin_server.base_url, "--model", standin_server.request_model,
               "--split", SPLIT, "--temperature", "0", "--out", str(out), "--no-progress",
               *load_rehearsal(REHEARSAL).stage_overrides["eval"], f"policy.family={family}")
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(line) for line in (out / "transcripts.jsonl").read_text().splitlines()]
    assert records
    for record in records:
        assert record["outcome"] in OUTCOMES and record["turns"]
        first = record["turns"][0]
        assert first["tokens"] > 0 and first["finish_reason"] in ("stop", "length", "tool_calls"), first
    results = json.loads((out / "results.json").read_text())
    assert results["policy"]["name"] == "endpoint" and results["policy"]["endpoint"] == standin_server.base_url
    assert sum(s["episodes"] for s in results["splits"].values()) == len(records)
