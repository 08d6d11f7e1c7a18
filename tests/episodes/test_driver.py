"""The episode driver: turns, calls, limits, malformed calls, budget, parallel Boa calls."""

from __future__ import annotations

import pytest

from py4.episodes import EpisodeConfig, Turn, run_episodes, shared_executor
from py4.episodes.parsing import parse_tool_blocks
from py4.problems.bank import load_bank


@pytest.fixture(scope="module")
def problems():
    return [p for p in load_bank() if p.split == "test_heldout"][:4]


class ScriptPolicy:
    """Replays the same list of turn texts for every episode (``{gold}`` filled in)."""

    name = "script"

    def __init__(self, texts, tokens=5, finished=True):
        self.texts, self.tokens, self.finished = texts, tokens, finished
        self.requests = []

    def act(self, requests):
        self.requests.append(requests)
        out = []
        for r in requests:
            text = self.texts[min(r.turn, len(self.texts) - 1)].replace("{gold}", _escape(r.problem.gold))
            out.append(Turn(text, parse_tool_blocks(text), self.tokens, self.finished))
        return out

    def count_tokens(self, text):
        return 1

    def close(self):
        pass


def _escape(code: str) -> str:
    import json

    return json.dumps(code)[1:-1]


def call(name: str, code: str) -> str:
    return '<tool_call>{"name": "%s", "arguments": {"code": "%s"}}</tool_call>' % (name, code)


def test_test_then_submit_certifies(problems):
    policy = ScriptPolicy([call("run_code", "print(1 + 1)"), call("submit", "{gold}")])
    runs = run_episodes(problems[:2], policy, EpisodeConfig(), samples=2)
    assert [r.key for r in runs] == [f"{p.id}#{s}" for p in problems[:2] for s in range(2)]
    for run in runs:
        assert run.episode.outcome == "certified" and run.episode.calls == 2
        roles = [m["role"] for m in run.messages]
        assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]
        assert run.messages[3]["content"] == "2" and run.messages[3]["tool_call_id"] == "call_1_0"
        assert run.record()["tokens_used"] == 5 + 1 + 5 + 1
    assert len(policy.requests) == 2 and all(len(batch) == 4 for batch in policy.requests)  # batched per step


def test_no_tool_call_ends_without_submission(problems):
    runs = run_episodes(problems[:1], ScriptPolicy(["I give up."]))
    assert runs[0].episode.outcome == "no_submission" and runs[0].episode.reward == pytest.approx(-0.10)


def test_malformed_calls_are_counted_replied_and_kept(problems):
    policy = ScriptPolicy(['<tool_call>{"name": "run_code", "arguments": {</tool_call>', call("submit", "{gold}")])
    run = run_episodes(problems[:1], policy)[0]
    assert run.episode.malformed_calls == 1 and run.episode.outcome == "certified"
    assert run.episode.calls == 2  # a malformed call counts against the limit in reply mode
    assert run.messages[3]["content"].startswith("error: malformed tool call (not JSON")
    assert "<tool_call>" in run.messages[2]["content"]  # kept in the conversation as text
    assert run.record()["turns"][0]["calls"][0]["error"]


def test_ignore_mode_counts_but_ends_like_trl(problems):
    policy = ScriptPolicy(['<tool_call>{"name": "run_code"}</tool_call>', call("submit", "{gold}")])
    run = run_episodes(problems[:1], policy, EpisodeConfig(malformed_calls="ignore"))[0]
    assert run.episode.malformed_calls == 1 and run.episode.outcome == "no_submission"
    assert run.episode.events[0]["malformed"] is True


def test_call_limit_truncates(problems):
    run = run_episodes(problems[:1], ScriptPolicy([call("run_code", "print(1)")]), EpisodeConfig(max_tool_calls=3))[0]
    assert run.episode.outcome == "truncated" and run.episode.end_reason == "call_limit"
    assert run.episode.reward == pytest.approx(-0.25) and len(run.turns) == 4


def test_budget_cut_turn_truncates_and_its_calls_do_not_run(problems):
    policy = ScriptPolicy([call("submit", "{gold}")], tokens=50, finished=False)
    run = run_episodes(problems[:1], policy, EpisodeConfig(token_budget=50))[0]
    assert run.episode.outcome == "truncated" and run.episode.end_reason == "token_budget"
    assert run.episode.events == [] and run.episode.certificate is None
    assert policy.requests[0][0].max_new_tokens == 50


def test_tool_results_count_against_the_budget(problems):
    policy = ScriptPolicy([call("run_code", "print(1)")], tokens=10)
    run = run_episodes(problems[:1], policy, EpisodeConfig(token_budget=25))[0]
    # turn 10 + result 1, twice = 22; the third turn (10) goes over 25: truncated, its call never runs
    assert run.episode.outcome == "truncated" and run.episode.tokens_used == 32 and run.episode.calls == 2


def test_boa_calls_of_different_episodes_run_in_parallel(problems):
    executor = shared_executor()
    if executor.workers < 2:
        pytest.skip("needs 2 Boa workers")
    # Each run reports when it slept (the monotonic clock is one clock for all workers): two
    # episodes' calls ran in parallel when their intervals overlap. No bound on elapsed time.
    sleep = call("run_code", "use time\\nlet start = time.monotonic()\\ntime.sleep(0.6)\\n"
                             "print(start, time.monotonic())")
    policy = ScriptPolicy([sleep, "done"])
    runs = run_episodes(problems[:4], policy, EpisodeConfig(), executor=executor)
    spans = sorted(tuple(map(float, r.messages[3]["content"].split())) for r in runs)
    assert len(spans) == 4
    assert any(later[0] < earlier[1] for earlier, later in zip(spans, spans[1:], strict=False)), spans  # neighbours
