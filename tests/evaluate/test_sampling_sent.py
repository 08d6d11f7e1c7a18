"""Every sampling parameter reaches the engine explicitly, and the run records what was sent.

A served request that leaves ``top_k`` (or ``min_p``, ``repetition_penalty``) out is filled by
vLLM from the model's generation_config.json (Gemma -it: top_k 64, top_p 0.95), so evaluation
and EFT replay would sample otherwise than the config says. Here a local HTTP server (127.0.0.1,
ephemeral port, tests/chat_server.py) captures the JSON bodies of a real ``py4 eval`` run with an endpoint policy;
``transformers`` ``generate`` is checked on the GenerationConfig it resolves for a tiny model
whose generation_config.json says otherwise.
"""

from __future__ import annotations

import json

import pytest

from chat_server import ChatServer
from py4.evaluate.harness import EvalConfig, run

SAMPLING = {"temperature": 0.6, "top_p": 0.9, "top_k": 0, "min_p": 0.05, "repetition_penalty": 1.1}


def capturing_server() -> ChatServer:
    """A chat-completions server that records each request body and answers without a tool call."""
    reply = {"choices": [{"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": "no idea"}}],
             "usage": {"completion_tokens": 3}}
    return ChatServer(lambda body, n: (200, reply))


def test_an_eval_request_carries_every_sampling_parameter_and_the_run_records_them(tmp_path):
    with capturing_server() as server:
        config = EvalConfig.model_validate({
            "splits": ["test_heldin"], "limit": 2,
            "policy": {"name": "endpoint", "endpoint": server.url, "model": "served"},
            "sampling": {"samples": 1, "seed": 5, **SAMPLING}})
        results = run(config, tmp_path / "eval", progress=False)
    assert server.bodies
    for body in server.bodies:
        assert {k: body.get(k) for k in SAMPLING} == SAMPLING
        assert isinstance(body["seed"], int) and isinstance(body["max_tokens"], int) and body["max_tokens"] > 0
    effective = results["sampling_effective"]
    assert {k: effective[k] for k in SAMPLING} == SAMPLING and effective["engine"]
    assert json.loads((tmp_path / "eval" / "results.json").read_text())["sampling_effective"] == effective
    assert json.loads((tmp_path / "eval" / "run_manifest.json").read_text())["sampling"] == effective


def test_the_default_eval_sends_top_k_off_rather_than_leaving_it_to_the_server(tmp_path):
    with capturing_server() as server:
        config = EvalConfig.model_validate({"splits": ["test_heldin"], "limit": 1,
                                            "policy": {"name": "endpoint", "endpoint": server.url, "model": "m"}})
        run(config, tmp_path / "eval", progress=False)
    assert {(b["temperature"], b["top_p"], b["top_k"], b["min_p"], b["repetition_penalty"])
            for b in server.bodies} == {(0.7, 1.0, 0, 0.0, 1.0)}


def test_a_transformers_serve_request_carries_only_the_fields_it_takes_and_says_so(tmp_path):
    # transformers serve answers 422 to top_k/min_p/repetition_penalty: they are not sent, and the
    # record says the served model's own values applied
    with capturing_server() as server:
        config = EvalConfig.model_validate({
            "splits": ["test_heldin"], "limit": 1, "sampling": {"samples": 1, **SAMPLING},
            "policy": {"name": "endpoint", "endpoint": server.url, "model": "m", "engine": "transformers"}})
        results = run(config, tmp_path / "eval", progress=False)
    assert server.bodies and all(not {"top_k", "min_p", "repetition_penalty"} & set(b) for b in server.bodies)
    assert {(b["temperature"], b["top_p"]) for b in server.bodies} == {(0.6, 0.9)}
    effective = results["sampling_effective"]
    assert effective["engine"].startswith("transformers") and "not sent" in effective["top_k"]


@pytest.mark.parametrize("engine", ["vllm", "transformers"])
def test_an_evaluation_node_tells_its_policy_the_servers_engine(engine):
    from pathlib import Path

    from py4.campaign.dag import build_dag
    from py4.campaign.spec import load_campaign

    spec = Path(__file__).resolve().parents[2] / "configs/campaign/python4.yaml"
    nodes = build_dag(load_campaign(spec, [f"evaluation.serve.engine={engine}"]), check=False)
    served = [n for n in nodes if n.stage == "eval" and n.server is not None]
    assert served
    engines = {o.value for n in served for o in n.overrides if o.key == "policy.engine"}
    assert engines == ({"transformers"} if engine == "transformers" else set())


@pytest.fixture
def opinionated_model():
    """A tiny model whose generation_config.json samples otherwise (as a Gemma -it's does)."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig, GenerationConfig

    model = Gemma3ForCausalLM(Gemma3TextConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1,
                                               num_attention_heads=1, num_key_value_heads=1, head_dim=16,
                                               intermediate_size=32))
    model.generation_config = GenerationConfig(do_sample=True, top_k=64, top_p=0.95, temperature=1.3, min_p=0.2,
                                               repetition_penalty=1.5, typical_p=0.5)
    return model


def test_generate_takes_every_sampling_field_from_the_config_not_the_model(opinionated_model):
    from py4.episodes.sampling import generation_config

    class Stage:
        temperature, top_p, top_k, min_p, repetition_penalty = 0.7, 1.0, 0, 0.0, 1.0

    resolved, _ = opinionated_model._prepare_generation_config(generation_config(Stage, 16))
    assert (resolved.do_sample, resolved.temperature, resolved.top_p, resolved.top_k, resolved.min_p,
            resolved.repetition_penalty, resolved.typical_p, resolved.max_new_tokens) == (
        True, 0.7, 1.0, 0, 0.0, 1.0, 1.0, 16)
    # what the old call (keywords for temperature/top_p only) resolved to: the model's top_k and penalties
    old, _ = opinionated_model._prepare_generation_config(None, do_sample=True, temperature=0.7, top_p=1.0)
    assert (old.top_k, old.min_p, old.repetition_penalty) == (64, 0.2, 1.5)
