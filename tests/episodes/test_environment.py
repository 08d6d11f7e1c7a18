"""Py4Environment: TRL's contract, tools, limits, outcomes and rewards."""

from __future__ import annotations

import inspect

import pytest

from py4.episodes import (EpisodeConfig, Py4Environment, RewardTable, TOOL_SCHEMAS, environment_factory,
                          note_completion_lengths, shared_executor)
from py4.episodes.feedback import EPISODE_OVER
from py4.problems.bank import load_bank


@pytest.fixture(scope="module")
def problem():
    return next(p for p in load_bank() if p.split == "test_heldin")


@pytest.fixture(scope="module")
def executor():
    return shared_executor()


def make_env(problem, **config) -> Py4Environment:
    env = Py4Environment(EpisodeConfig(**config), problems={problem.id: problem})
    env.reset(problem_id=problem.id, prompt=[{"role": "user", "content": problem.prompt}])
    return env


def test_trl_sees_exactly_two_tools_reset_and_reward():
    # TRL: every public function of the class except reset/get_reward becomes a tool.
    names = {n for n, _ in inspect.getmembers(Py4Environment, predicate=inspect.isfunction) if not n.startswith("_")}
    assert names == {"reset", "run_code", "submit", "get_reward"}


def test_tool_schemas_are_what_transformers_makes_of_the_methods():
    from transformers.utils import get_json_schema

    env = Py4Environment()
    assert [get_json_schema(env.run_code), get_json_schema(env.submit)] == TOOL_SCHEMAS


def test_factory_makes_fresh_instances_sharing_one_executor(problem, executor):
    factory = environment_factory(EpisodeConfig(), problems={problem.id: problem})
    a, b = factory(), factory()
    assert a is not b
    a.reset(problem_id=problem.id)
    b.reset(problem_id=problem.id)
    # each episode's PrefetchedRuns (results batched per tool round) wraps the one shared executor
    assert a.episode.executor is not b.episode.executor
    assert a.episode.executor.executor is b.episode.executor.executor is executor


def test_reset_accepts_id_problem_dict_and_fields(problem):
    env = Py4Environment()
    env.reset(problem_id=problem.id)  # the shipped bank
    assert env.episode.problem == problem
    env.reset(problem=problem.to_json())
    assert env.episode.problem == problem
    env.reset(**{**problem.to_json(), "prompt": [{"role": "user", "content": "x"}]})  # TRL's chat prompt column
    assert env.episode.problem.tests == problem.tests


def test_reset_errors_name_the_problem():
    env = Py4Environment(problems={})
    with pytest.raises(KeyError, match="py4/9999"):
        env.reset(problem_id="py4/9999")
    with pytest.raises(ValueError, match="cannot tell the problem"):
        env.reset(prompt="hello")
    with pytest.raises(RuntimeError, match="reset"):
        Py4Environment().run_code("print(1)")


def test_gold_submission_certifies_and_first_submit_wins(problem):
    env = make_env(problem)
    answer = env.submit(problem.gold)
    assert answer.startswith("Submission received. The episode is over. Certified:")
    assert env.get_reward() == 1.0 and env.episode.outcome == "certified"
    assert env.submit("fn broken(") == EPISODE_OVER
    assert env.run_code("print(1)") == EPISODE_OVER
    assert env.episode.outcome == "certified" and env.get_reward() == 1.0
    assert env.episode.calls == 1


def test_wrong_submission_is_uncertified_then_final(problem):
    env = make_env(problem)
    answer = env.submit(problem.reference_py3)
    assert "Not certified" in answer and "SyntaxError at line" in answer  # generic: no rule words
    assert "P4-" not in answer
    assert env.get_reward() == 0.0
    assert env.submit(problem.gold) == EPISODE_OVER
    assert env.episode.outcome == "uncertified"


def test_no_submission_and_custom_reward_table(problem):
    env = make_env(problem)
    assert env.run_code('print("hi")') == "hi"
    assert env.get_reward() == pytest.approx(-0.10)
    assert env.episode.outcome == "no_submission"
    env = make_env(problem, rewards=RewardTable(certified=2.0, no_submission=-1.0))
    assert env.get_reward() == -1.0
    env.reset(problem_id=problem.id)
    env.submit(problem.gold)
    assert env.get_reward() == 2.0


def test_the_call_over_the_limit_truncates(problem):
    env = make_env(problem, max_tool_calls=2)
    env.run_code("print(1)")
    env.run_code("print(2)")
    assert "limit (2) reached" in env.run_code("print(3)")
    assert env.episode.outcome == "truncated" and env.get_reward() == pytest.approx(-0.25)
    assert env.submit(problem.gold) == EPISODE_OVER  # a late submit changes nothing
    assert env.episode.outcome == "truncated"


def test_limit_does_not_truncate_a_submitted_episode(problem):
    env = make_env(problem, max_tool_calls=1)
    env.submit(problem.gold)
    env.run_code("print(1)")
    assert env.episode.outcome == "certified"


def test_environment_counts_tokens_with_a_tokenizer(problem):
    class CharTokenizer:
        def encode(self, text, add_special_tokens=False):
            return list(text)

    env = Py4Environment(EpisodeConfig(token_budget=30), problems={problem.id: problem}, tokenizer=CharTokenizer())
    env.reset(problem_id=problem.id)
    env.run_code('print("a long enough line of output")')
    assert env.episode.outcome == "truncated" and env.episode.end_reason == "token_budget"
    assert env.get_reward() == pytest.approx(-0.25)


def test_note_completion_lengths_truncates_full_trajectories_without_submission(problem):
    full, short, submitted = (make_env(problem, token_budget=100) for _ in range(3))
    submitted.submit(problem.gold)
    assert note_completion_lengths([[0] * 100, [0] * 10, [0] * 100], environments=[full, short, submitted]) == [0.0] * 3
    assert [e.get_reward() for e in (full, short, submitted)] == [pytest.approx(-0.25), pytest.approx(-0.10), 1.0]


@pytest.mark.parametrize("mode", ["generic", "verbatim"])
def test_run_code_diagnostics_modes(problem, mode):
    env = make_env(problem, diagnostics=mode)
    compile_error = env.run_code("def f():\n    return 1\n")
    runtime_error = env.run_code("let xs = [1]\nprint(xs[5])\n")
    warning = env.run_code("fn f(x):\n    return x\nprint(f(2))\n")
    if mode == "generic":
        assert compile_error == "SyntaxError at line 1"
        assert runtime_error == "IndexError at line 2"
        assert warning.splitlines() == ["warning at line 1", "2"]
    else:
        assert "P4-01" in compile_error and "fn" in compile_error
        assert "IndexError" in runtime_error and "line 2" in runtime_error
        assert "P4-05" in warning and warning.endswith("2")


def test_run_code_reports_timeouts_and_empty_output(problem):
    env = make_env(problem, run_timeout_s=0.5)
    assert env.run_code("let x = 1\n") == "(no output)"
    answer = env.run_code("while true:\n    pass\n")
    assert answer.endswith("[timeout]")
