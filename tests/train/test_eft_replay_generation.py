"""EFT replay answers at campaign scale.

A local parent answers on the accelerator when there is one (else the CPU), batched, and its
answers are read with the episode parser, not ``tokenizer.parse_response``, which fails for a
tokenizer without a response schema (Gemma-4, GLM-4.5); or an OpenAI-compatible server answers.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from chat_server import ChatServer
from py4.train import eft_data

PROMPTS = [f"Name {n} fruits that are {colour}." for n, colour in
           [(2, "red"), (3, "green"), (4, "yellow"), (5, "orange"), (6, "purple"), (7, "blue")]]


@pytest.fixture(scope="module")
def instructions(tmp_path_factory) -> Path:
    """A local instruction folder in Dolci's row format (strict alternation)."""
    folder = tmp_path_factory.mktemp("instructions")
    rows = [{"messages": [{"role": "user", "content": p}, {"role": "assistant", "content": "Some."}]} for p in PROMPTS]
    (folder / "part-0.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


@pytest.mark.parametrize("requested, cuda, expected", [
    ("auto", True, eft_data.GenerationDevice("cuda", "bfloat16", "auto")),
    ("auto", False, eft_data.GenerationDevice("cpu", "float32", None)),
    ("cuda", True, eft_data.GenerationDevice("cuda", "bfloat16", "auto")),
    ("cpu", True, eft_data.GenerationDevice("cpu", "float32", None)),
])
def test_a_local_parent_answers_on_the_accelerator_when_there_is_one(requested, cuda, expected):
    assert eft_data.generation_device(requested, cuda_available=cuda) == expected


def test_asking_for_cuda_without_it_names_the_field():
    with pytest.raises(ValueError, match=r"replay_settings\.device.*CUDA is not available"):
        eft_data.generation_device("cuda", cuda_available=False)


@pytest.mark.smoke
def test_gemma4_standin_answers_replay_prompts_into_well_formed_rows(instructions, tmp_path):
    """The Gemma-4 -it stand-in (real template, no response schema) answers on this machine's
    device (the CPU here) in batches; each row is the prompt and an assistant turn with content
    (and reasoning when the parser finds some), cut at the end of the turn."""
    from transformers import AutoTokenizer

    from py4.rehearsal.standins import build_standin

    parent = build_standin("gemma4", "it", tmp_path / "parent", seed=0)
    tokenizer = AutoTokenizer.from_pretrained(parent)
    assert getattr(tokenizer, "response_template", None) is None  # parse_response would raise
    settings = eft_data.ReplaySettings(instructions=str(instructions), parent={"path": str(parent)},
                                       max_new_tokens=24, batch_size=2)

    rows = eft_data.replay_rows(settings, 3, random.Random(424242))

    assert len(rows) == 3 and len({r["messages"][0]["content"] for r in rows}) == 3
    for row in rows:
        user, answer = row["messages"]
        assert user == {"role": "user", "content": user["content"]} and user["content"] in PROMPTS
        assert answer["role"] == "assistant" and set(answer) <= {"role", "content", "reasoning_content"}
        assert isinstance(answer["content"], str) and answer["content"] == answer["content"].strip()
        for marker in ("<turn|>", "<|turn>", "<pad>", "<eos>"):  # cut at the turn's end; no padding
            assert marker not in answer["content"]
        assert row["tools"] is None and row["source"] == "replay"
        assert row["chat_template_kwargs"] == {"enable_thinking": True}
    assert any(r["messages"][1]["content"] for r in rows)  # a random model still writes something
    generation = eft_data.replay_generation(settings)
    assert {k: generation[k] for k in ("route", "device", "dtype", "batch_size")} == {
        "route": "local", "device": "cpu", "dtype": "float32", "batch_size": 2}
    assert generation["sampling"] | {"seed": None} == {
        "temperature": 0.7, "top_p": 1.0, "top_k": 0, "min_p": 0.0, "repetition_penalty": 1.0, "max_tokens": 24,
        "seed": None, "engine": "transformers generate"}


@pytest.mark.smoke
def test_the_generator_is_placed_on_the_chosen_device(tmp_path):
    # The stand-in is saved in bf16 (as the Hub checkpoints are); on the CPU it answers in float32.
    import torch

    from py4.rehearsal.standins import build_standin
    from py4.train import loading

    parent = build_standin("gemma4", "it", tmp_path / "parent", seed=0)
    where = eft_data.generation_device("auto")
    model = eft_data.load_generator(loading.ModelSource(path=str(parent)), where)
    expected = (torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu"))
    assert {p.device for p in model.parameters()} == {expected}
    assert {p.dtype for p in model.parameters()} == {getattr(torch, where.dtype)}
    assert not model.training
    # Answers are cut at the -it generation config's end of turn as well as at <eos>.
    tokenizer = loading.load_tokenizer(loading.ModelSource(path=str(parent)))
    stops = {tokenizer.convert_tokens_to_ids(t) for t in ("<eos>", "<turn|>")}
    assert eft_data.stop_token_ids(model, tokenizer) == stops


def replay_server() -> ChatServer:
    """A chat-completions server: answers each prompt with thinking and a reply, records bodies."""

    def answer(body, n):
        prompt = body["messages"][-1]["content"]
        return 200, {"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": f"  Answer to: {prompt}\n", "reasoning_content": f"Think: {prompt}"}}],
            "usage": {"completion_tokens": 9}}

    return ChatServer(answer)


def test_an_endpoint_answers_replay_prompts(instructions):
    """Through a server: one request per prompt with the replay settings; nothing is loaded here."""
    with replay_server() as server:
        settings = eft_data.ReplaySettings(
            instructions=str(instructions), parent={"path": "zai-org/GLM-4.5-Air", "revision": "a24ceef6"},
            max_new_tokens=4096, endpoint={"url": server.url, "model": "parent", "concurrency": 2})
        rows = eft_data.replay_rows(settings, 4, random.Random(0))

    assert len(server.bodies) == 4
    sampling = {"temperature": 0.7, "top_p": 1.0, "top_k": 0, "min_p": 0.0, "repetition_penalty": 1.0}
    for body in server.bodies:  # every sampling field sent: the server's generation_config.json fills none
        assert body["model"] == "parent" and {k: body[k] for k in sampling} == sampling
        assert body["max_tokens"] == 4096 and isinstance(body["seed"], int)
        assert body["chat_template_kwargs"] == {"enable_thinking": True} and not body.get("tools")
    for row in rows:
        prompt = row["messages"][0]["content"]
        assert row["messages"][1] == {"role": "assistant", "content": f"Answer to: {prompt}",
                                      "reasoning_content": f"Think: {prompt}"}
    generation = eft_data.replay_generation(settings)
    assert {k: generation[k] for k in ("route", "url", "model")} == {"route": "endpoint", "url": server.url,
                                                                      "model": "parent"}
    assert {k: generation["sampling"][k] for k in sampling} == sampling
    assert generation["sampling"]["max_tokens"] == 4096
