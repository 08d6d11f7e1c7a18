"""Evaluation through a real server process: ``transformers serve`` of the rehearsal's stand-ins.

Each test starts the server as the campaign runner does (``py4.evaluate.serve``), evaluates
through it with the endpoint policy and checks that it is stopped afterwards. A randomly
initialised stand-in never writes a tool call, and teaching it one takes minutes of CPU; so
the served folder's ``generation_config.json`` carries a ``sequence_bias`` that steers greedy
decoding along one ``submit`` call in the family's own format (as its chat template writes
it). Everything else is real: the server renders the prompt with the model's chat template
and tools, generates, decodes, parses (or not) the call, and the client reads it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chat_server import alive, free_port
from py4.episodes import TOOL_SCHEMAS, EpisodeConfig, run_episodes
from py4.episodes.environment import initial_messages
from py4.episodes.endpoint import EndpointPolicy
from py4.evaluate.serve import ServeConfig, ServeError, plan_server, serving
from py4.problems.bank import load_bank

pytestmark = pytest.mark.smoke

EPISODE = EpisodeConfig(enable_thinking=False, max_tool_calls=2)
END_OF_CALL = {"gemma4": "<turn|>", "glm45": "<|observation|>"}  # an EOS of the stand-in's generation config


@pytest.fixture(scope="module")
def problem():
    """The test_heldin problem with the shortest gold solution (a short steered call)."""
    return min((p for p in load_bank() if p.split == "test_heldin"), key=lambda p: (len(p.gold), p.id))


def steer_to_submit(folder: Path, family: str, problem, context: int = 8) -> str:
    """Make greedy decoding after the episode's first prompt write ``submit(gold)``; returns the call text."""
    from transformers import AutoTokenizer, GenerationConfig

    tokenizer = AutoTokenizer.from_pretrained(folder)
    messages = initial_messages(problem, EPISODE)
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "submit", "arguments": {"code": problem.gold}}}]}
    kwargs = dict(tools=TOOL_SCHEMAS, enable_thinking=EPISODE.enable_thinking, tokenize=False)
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, **kwargs)
    text = tokenizer.apply_chat_template([*messages, call], **kwargs)[len(prompt):] + END_OF_CALL[family]
    head = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    target = tokenizer(text, add_special_tokens=False)["input_ids"]
    ids = head + target
    nexts: dict[tuple, int] = {}
    for i in range(len(head), len(ids)):  # each target token, after the `context` tokens before it
        key = tuple(ids[i - context:i])
        assert nexts.setdefault(key, ids[i]) == ids[i], "raise `context`: two target tokens share one"
    config = GenerationConfig.from_pretrained(folder)
    config.sequence_bias = [[[*key, nxt], 100.0] for key, nxt in nexts.items()]
    config.save_pretrained(folder)
    return text


@pytest.fixture(scope="module")
def steered(tmp_path_factory, problem):
    """family -> a stand-in -it model folder steered to submit the problem's gold solution."""
    from py4.rehearsal.standins import build_standin

    root = tmp_path_factory.mktemp("served")
    out = {}
    for family in ("gemma4", "glm45"):
        folder = build_standin(family, "it", root / family, seed=0)
        steer_to_submit(folder, family, problem)
        out[family] = folder
    return out


def evaluate_through(server, family: str, problem):
    policy = EndpointPolicy(server.base_url, server.request_model, temperature=0.0, family=family, retries=1,
                            engine="transformers")
    try:
        return run_episodes([problem], policy, EPISODE)[0]
    finally:
        policy.close()


def test_gemma4_standin_served_its_tool_call_arrives_as_openai_tool_calls(steered, problem, tmp_path):
    """transformers serve parses Gemma-4's call itself (its response schema for model_type gemma4)."""
    plan = plan_server(ServeConfig(engine="transformers", port=free_port()), str(steered["gemma4"]),
                       name="gemma4/graft", scratch=str(tmp_path / "served_model"))
    with serving(plan, tmp_path / "server.log") as server:
        pid = server.process.pid
        run = evaluate_through(server, "gemma4", problem)
    assert not alive(pid)
    turn = run.turns[0]  # the raw turn, with what the server answered
    api_calls = turn["api_tool_calls"]
    assert [c["function"]["name"] for c in api_calls] == ["submit"]
    assert json.loads(api_calls[0]["function"]["arguments"]) == {"code": problem.gold}
    assert run.episode.outcome == "certified" and run.episode.malformed_calls == 0


@pytest.mark.parametrize(("family", "text_class"), [("gemma4", "Gemma4ForCausalLM"),
                                                    ("gemma4_12b", "Gemma4UnifiedForCausalLM")])
def test_servable_copy_of_a_gemma4_model_is_its_language_model_with_the_gemma4_schema(tmp_path, family, text_class):
    """The 31B (gemma4) and the 12B (gemma4_unified) are served as their language model alone, with the
    same logits and transformers serve's Gemma-4 response schema on the tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from py4.evaluate.serve import transformers_copy
    from py4.rehearsal.standins import build_standin

    folder = build_standin(family, "it", tmp_path / family, seed=0)
    plan = plan_server(ServeConfig(engine="transformers", port=free_port()), str(folder), name=f"{family}/graft",
                       scratch=str(tmp_path / "served_model"))
    copy = transformers_copy(plan)
    served = AutoModelForCausalLM.from_pretrained(copy, dtype=torch.float32)
    whole = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    assert type(served).__name__ == text_class
    ids = torch.tensor([[2, 10, 20, 30, 40]])
    with torch.no_grad():
        assert torch.allclose(served(input_ids=ids).logits, whole(input_ids=ids).logits, atol=1e-5)
    assert AutoTokenizer.from_pretrained(copy).response_template is not None


def test_glm45_adapter_served_merged_its_tool_call_arrives_as_text(steered, problem, tmp_path):
    """No server-side GLM-4.5 parser in transformers serve: the call is text, read by the glm45 parser.

    The evaluated weights are a LoRA adapter: the transformers engine merges it into its base
    for serving and removes the merged folder when the server stops.
    """
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = steered["glm45"]
    adapter = tmp_path / "eft_8" / "model"
    lora = get_peft_model(AutoModelForCausalLM.from_pretrained(base),
                          LoraConfig(r=8, target_modules=["q_proj", "v_proj"]))  # B = 0: the base's function
    lora.save_pretrained(adapter)
    plan = plan_server(ServeConfig(engine="transformers", port=free_port()), str(adapter), name="glm45/eft_8",
                       base=str(base), model_key="glm45_air", scratch=str(tmp_path / "served_model"))
    assert plan.request_model == str(tmp_path / "served_model")
    with serving(plan, tmp_path / "server.log") as server:
        copy = json.loads((tmp_path / "served_model/py4_served_copy.json").read_text())
        assert copy == {"weights": str(adapter), "base": str(base), "class": "Glm4MoeForCausalLM"}
        run = evaluate_through(server, "glm45", problem)
    assert not (tmp_path / "served_model").exists()
    turn = run.turns[0]  # the raw turn, with what the server answered
    assert turn["api_tool_calls"] is None and "<tool_call>submit" in turn["text"]
    assert run.episode.outcome == "certified" and run.episode.malformed_calls == 0


def test_a_server_that_exits_or_is_not_ready_is_a_clear_error_and_is_stopped(steered, tmp_path):
    weights = str(steered["glm45"])
    exits = plan_server(ServeConfig(engine="transformers", port=free_port(), extra_args=["--no-such-option"]),
                        weights, name="x", scratch=str(tmp_path / "copy1"))
    with pytest.raises(ServeError, match=r"exited with status 2 before it was ready \(command: .* --no-such-option\); "
                                         r"its log .*exits.log ends:\n"):
        with serving(exits, tmp_path / "exits.log"):
            pytest.fail("the body must not run when the server did not start")
    slow = plan_server(ServeConfig(engine="transformers", port=free_port(), ready_timeout_s=0.01), weights,
                       name="x", scratch=str(tmp_path / "copy2"))
    with pytest.raises(ServeError, match=r"not ready after 0 s \(evaluation.serve.ready_timeout_s"):
        with serving(slow, tmp_path / "slow.log"):
            pytest.fail("the body must not run when the server is not ready")
    pid = int(next(line for line in (tmp_path / "slow.log").read_text().splitlines() if line.startswith("pid "))[4:])
    assert not alive(pid)  # stopped, not left running
    assert not (tmp_path / "copy1").exists() and not (tmp_path / "copy2").exists()
    with pytest.raises(ServeError, match="its weights folder .*missing does not exist"):
        with serving(plan_server(ServeConfig(engine="transformers"), str(tmp_path / "missing"), name="x"),
                     tmp_path / "x.log"):
            pass


def test_a_missing_vllm_environment_is_named(tmp_path):
    weights = tmp_path / "graft"
    weights.mkdir()
    config = ServeConfig(engine="vllm", executable=str(tmp_path / "vllm-env/bin/vllm"), family={"m": "glm45"})
    with pytest.raises(ServeError, match=r"evaluation.serve.executable: .*vllm-env/bin/vllm is not an executable"):
        with serving(plan_server(config, str(weights), name="m/graft", model_key="m"), tmp_path / "server.log"):
            pass
    with pytest.raises(ServeError, match="no family for model 'other'"):
        plan_server(config, str(weights), name="other/graft", model_key="other")
    with pytest.raises(ValueError, match="executable: engine vllm needs the vllm program"):
        ServeConfig(engine="vllm")
