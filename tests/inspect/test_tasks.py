"""The Inspect tasks give ``py4 eval``'s problems, certification, outcomes and rates.

The scripted policies run through Inspect as the ``py4/<policy>`` model provider (the
gold or Python 3 solution as a ``submit`` tool call) and through ``py4 eval``'s harness;
both must choose the same problems and reach the same outcome on each.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate

from py4.episodes import EpisodeConfig, ParsedTurn, Turn, run_episodes
from py4.episodes.parsing import check_call
from py4.evaluate.harness import run as py4_eval
from py4.evaluate.harness import select_problems
from py4.inspect_tasks.dataset import bank_index
from py4.inspect_tasks.scorer import SCORER_NAME, boa_certification, py4_summary
from py4.inspect_tasks.tasks import python4_heldin, python4_task

LIMIT = 4


def _inspect(task, model, tmp_path: Path, **kwargs):
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none", **kwargs)
    assert log.status == "success", log.error
    return log


def _py4(policy: str, split: str, tmp_path: Path, *overrides: str) -> tuple[dict, list[dict]]:
    from py4.config import load_config
    from py4.evaluate.harness import EvalConfig

    cfg = load_config(EvalConfig, None, [f"policy.name={policy}", f"splits=[{split}]", f"limit={LIMIT}", *overrides])
    results = py4_eval(cfg, tmp_path / f"eval-{policy}", progress=False)
    records = [json.loads(line) for line in (tmp_path / f"eval-{policy}" / "transcripts.jsonl").open()]
    return results, records


@pytest.mark.parametrize("policy,split,expected_rate,episode", [
    ("gold", "test_heldin", 1.0, {}),  # test_heldin has problems that share a prompt
    ("python3", "test_heldout", 0.0, {}),
    ("gold", "test_heldout", 0.0, {"token_budget": 8}),  # the submit turn alone is over budget: truncated
])
def test_scripted_policies_through_inspect_match_py4_eval(policy, split, expected_rate, episode, tmp_path):
    log = _inspect(python4_task(split, limit=LIMIT, **episode), f"py4/{policy}", tmp_path)
    results, records = _py4(policy, split, tmp_path, *[f"episode.{k}={v}" for k, v in episode.items()])

    summary = py4_summary(log)
    assert summary["splits"][split]["certified_rate"] == results["splits"][split]["certified_rate"] == expected_rate
    assert summary["splits"][split] == results["splits"][split]  # outcomes, rewards, pass@k, per rule
    by_id = {r["problem_id"]: r for r in records}
    assert sorted(s.id for s in log.samples) == sorted(by_id)
    assert sorted(by_id) == [p.id for p in select_problems(list(bank_index().values()), split, LIMIT, 0)]
    for sample in log.samples:
        score, record = sample.scores[SCORER_NAME], by_id[sample.id]
        for key in ("outcome", "reward", "end_reason", "tool_calls", "malformed_calls", "tokens_used"):
            assert score.metadata[key] == record[key], (sample.id, key)
        assert score.value == {"certified": float(record["outcome"] == "certified"), "reward": record["reward"]}
        assert score.metadata["per_rule"] == {rule: record["outcome"] == "certified" for rule in record["rules"]}
        assert _without_timing(score.metadata["certificate"]) == _without_timing(record["certificate"])
    assert log.results.scores[0].metrics["mean"].value == expected_rate


def _without_timing(certificate):
    return certificate and {k: v for k, v in certificate.items() if k != "duration_s"}


def test_tools_keep_the_episode_semantics_of_py4(tmp_path):
    """Runs, malformed calls, the first submit, a call after it: as py4's driver answers them."""
    problem = bank_index()[select_problems(list(bank_index().values()), "test_heldin", 1, 0)[0].id]
    turns = [
        [("run_code", {"code": "print(-7 // 2)"}), ("shell", {"cmd": "ls"}), ("run_code", {"code": "x", "y": 1})],
        [("submit", {"code": problem.gold}), ("run_code", {"code": "print(1)"})],
    ]

    def inspect_turn(input, tools, tool_choice, config):
        assert sorted(t.name for t in tools) == ["run_code", "submit"]
        index = sum(m.role == "assistant" for m in input)
        output = ModelOutput.for_tool_call("mockllm/model", *turns[index][0])
        output.message.tool_calls += [ModelOutput.for_tool_call("m", n, a).message.tool_calls[0]
                                      for n, a in turns[index][1:]]
        output.usage = ModelUsage(output_tokens=10, total_tokens=10)
        return output

    model = get_model("mockllm/model", custom_outputs=inspect_turn)
    log = _inspect(python4_task("test_heldin", limit=1), model, tmp_path)
    inspect_record = log.samples[0].store["py4_episode"]

    class Scripted:
        name = "scripted"

        def act(self, requests):
            return [Turn("", ParsedTurn("", None, [check_call(n, a, json.dumps([n, a])) for n, a in turns[r.turn]]),
                         10) for r in requests]

        def count_tokens(self, text):
            from py4.episodes import approximate_tokens

            return approximate_tokens(text)

        def close(self):
            pass

    [driver_run] = run_episodes([problem], Scripted(), EpisodeConfig())
    expected = driver_run.episode.summary()
    for key in ("outcome", "reward", "end_reason", "tool_calls", "malformed_calls", "tokens_used"):
        assert inspect_record[key] == expected[key], key
    assert inspect_record["outcome"] == "certified" and inspect_record["malformed_calls"] == 2

    def answers(events):
        return [(e["tool"], e.get("error"), e["answer"]) for e in events]

    assert answers(inspect_record["events"]) == answers(driver_run.episode.events)
    tool_messages = [m.text for m in log.samples[0].messages if m.role == "tool"]
    assert tool_messages == [e["answer"] for e in driver_run.episode.events]  # every call answered, in order
    assert tool_messages[0] == "-3"  # Python-4 division truncates toward zero: Boa ran it
    assert tool_messages[-1] == "The episode is over; this call changed nothing."


def test_scorer_certifies_the_last_code_block_after_another_solver(tmp_path):
    problem = select_problems(list(bank_index().values()), "test_heldin", 1, 0)[0]
    output = ModelOutput.from_content("mockllm/model", f"Here it is:\n```python4\n{problem.gold}```\n")
    output.usage = ModelUsage(output_tokens=10, total_tokens=10)  # else mockllm counts with tiktoken (network)
    model = get_model("mockllm/model", custom_outputs=[output])
    task = python4_heldin(limit=1)
    task.solver, task.scorer = generate(), [boa_certification()]
    log = _inspect(task, model, tmp_path)
    score = log.samples[0].scores[SCORER_NAME]
    assert score.value == {"certified": 1.0, "reward": 1.0}
    assert score.answer == problem.gold


def test_registry_name_with_mockllm_default_outputs(tmp_path, offline_tiktoken):
    """The issue's mockllm command in process, tiktoken's estimate replaced (the CLI: test_cli_offline.py)."""
    log = _inspect("py4/python4_heldout", "mockllm/model", tmp_path, limit=2)
    assert len(log.samples) == 2
    for sample in log.samples:  # mockllm answers in text: no tool call ends the episode
        assert sample.scores[SCORER_NAME].metadata["outcome"] == "no_submission"
        assert sample.scores[SCORER_NAME].value["reward"] == pytest.approx(-0.1)


def test_an_inspect_limit_truncates_the_episode(tmp_path):
    """Inspect's own limits stop the loop: the episode is truncated (end reason inspect_limit) and scored."""
    def keep_running(input, tools, tool_choice, config):
        output = ModelOutput.for_tool_call("mockllm/model", "run_code", {"code": "print(1)"})
        output.usage = ModelUsage(output_tokens=5, total_tokens=5)
        return output

    model = get_model("mockllm/model", custom_outputs=keep_running)
    log = _inspect(python4_task("test_heldin", limit=1), model, tmp_path, message_limit=6)
    [sample] = log.samples
    meta = sample.scores[SCORER_NAME].metadata
    assert (meta["outcome"], meta["end_reason"]) == ("truncated", "inspect_limit")
    assert sample.scores[SCORER_NAME].value["reward"] == pytest.approx(-0.25)
    assert 0 < meta["tool_calls"] < 16
