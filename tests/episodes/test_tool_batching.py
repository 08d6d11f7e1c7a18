"""GRPO's tool calls batched per round: TRL's own tool loop, scripted turns, Boa for real.

TRL 1.16 calls the tools of a generation round one rollout at a time. ``py4.train.grpo``'s
trainer runs a round's Boa work at once (one ``Executor.run_many`` for the ``run_code`` calls,
the ``submit`` certifications alongside) and each environment answers TRL from those results.
These tests drive TRL's real ``_generate_and_score_completions`` (environments reset, tool
loop, token masks, rewards) with a scripted generator instead of a model's sampling, once with
the plain ``GRPOTrainer`` and once with the batched one, and compare everything: messages,
token ids, tool masks, episode outcomes, events and rewards.

The scripts cover: a run that times out, a compile error, two calls in one turn, a submit that
certifies and one that does not, calls after the submission, an unknown tool and wrong
arguments (TRL refuses them before the tool runs), the call limit, and a rollout that never
calls a tool.
"""

from __future__ import annotations

import functools
import json
import threading

import pytest

from py4.boa.executor import Executor
from py4.data.smoke_instructions import PROBLEM_TEMPLATES
from py4.episodes import EpisodeConfig, Py4Environment, dataset_rows
from py4.problems.schema import Problem

pytestmark = pytest.mark.smoke

LOOP = "let n = 0\nwhile n >= 0:\n    n += 1\n"  # runs into the timeout
CONFIG = EpisodeConfig(max_tool_calls=3, token_budget=2048, run_timeout_s=1.0, enable_thinking=False)
GENERATIONS = 3


def _problems() -> list[Problem]:
    return [template.problem(f"batch/{i}", 4 + i, template.names[0], "grpo", ["P4-12"])
            for i, template in enumerate(PROBLEM_TEMPLATES[:2])]


def _call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def _script(plan: int, problem: Problem) -> list[list[dict]]:
    """The tool calls of each assistant turn of one rollout (an empty turn: text only, the rollout ends)."""
    gold = problem.gold
    wrong = f"fn {problem.entry_point}(x):\n    return 0\n"
    return {
        0: [[_call("run_code", code=f"{gold}\nprint({problem.entry_point}(3))\n")],
            [_call("submit", code=gold)], []],
        1: [[_call("run_code", code=LOOP)], [_call("submit", code=wrong), _call("run_code", code="print(1)\n")], []],
        2: [[_call("run_code", code="print(2)\n"), _call("run_code", code="print(1 +)\n")],
            [_call("shell", cmd="ls"), _call("run_code", source="print(0)\n"), _call("run_code", code="print(3)\n")],
            [_call("run_code", code="print(4)\n")], []],
        3: [[]],
        4: [[_call("submit", code=gold)], []],
        5: [[_call("run_code", code=LOOP), _call("submit", code=gold)], [_call("submit", code=gold)], []],
    }[plan]


def _scripted(trainer_class, problems: dict[str, Problem]):
    """``trainer_class`` with its generation replaced by the scripts: rollout j of the batch
    follows plan j (told in its first turn's text, read back in later rounds)."""

    class Scripted(trainer_class):
        generated: list = []

        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
            tokenizer = self.processing_class
            out = []
            for row, ids in enumerate(prompt_ids):
                text = tokenizer.decode(ids, skip_special_tokens=False)
                turn = text.count("<start_of_turn>model") - 1
                plan = row if turn == 0 else int(text.split("plan=", 1)[1].split(".", 1)[0])
                problem = next(p for p in problems.values() if p.prompt in text)
                calls = _script(plan, problem)[turn]
                body = f"plan={plan}. turn {turn}." + "".join(
                    f"<tool_call>{json.dumps(c)}</tool_call>" for c in calls)
                out.append(tokenizer.encode(body + "<end_of_turn>", add_special_tokens=False))
            return out, None

        def _generate(self, prompts):
            result = super()._generate(prompts)
            self.generated.append(result)
            return result

    return Scripted


class CountingExecutor:
    """The real executor, counting how it is called (from any thread)."""

    def __init__(self, executor: Executor):
        self.executor = executor
        self.run_many_sizes: list[int] = []
        self.single_runs = 0
        self.dispatches = 0
        self._lock = threading.Lock()

    def __getattr__(self, name):
        return getattr(self.executor, name)

    def run(self, *args, **kwargs):
        with self._lock:
            self.single_runs += 1
        return self.executor.run(*args, **kwargs)

    def run_many(self, requests):
        requests = list(requests)
        with self._lock:
            self.run_many_sizes.append(len(requests))
        return self.executor.run_many(requests)

    def dispatch(self, *args, **kwargs):
        with self._lock:
            self.dispatches += 1
        return self.executor.dispatch(*args, **kwargs)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A small chat tokenizer (the smoke chat format) and a random tiny model: only TRL's
    machinery around generation runs, the turns are scripted."""
    from py4.chat.smoke_tokenizer import stdlib_texts, train_tokenizer
    from py4.train.tiny_model import TinyModelSpec, build_tiny_model

    tokenizer = train_tokenizer(stdlib_texts(150_000), vocab_size=400)
    spec = TinyModelSpec(hidden_size=16, intermediate_size=32, head_dim=8, max_position_embeddings=8192)
    return tokenizer, build_tiny_model(spec, tokenizer)


@pytest.fixture(scope="module")
def boa():
    with Executor(workers=2) as executor:
        yield executor


def _rollout(tiny, boa, tmp_path, batched: bool):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from py4.train.grpo import batched_tools_trainer

    tokenizer, model = tiny
    problems = {p.id: p for p in _problems()}
    counting = CountingExecutor(boa)
    factory = functools.partial(Py4Environment, CONFIG, problems=problems, tokenizer=tokenizer, executor=counting)
    rows = [row for row in dataset_rows(list(problems.values()), CONFIG) for _ in range(GENERATIONS)]
    args = GRPOConfig(output_dir=str(tmp_path / ("batched" if batched else "plain")), use_cpu=True, bf16=False,
                      per_device_train_batch_size=len(rows), num_generations=GENERATIONS, max_steps=1,
                      max_completion_length=CONFIG.token_budget, max_tool_calling_iterations=CONFIG.max_tool_calls + 1,
                      chat_template_kwargs={"enable_thinking": False}, gradient_checkpointing=False, beta=0.0,
                      report_to=[], save_strategy="no")
    trainer_class = _scripted(batched_tools_trainer() if batched else GRPOTrainer, problems)
    trainer = trainer_class(model=model, processing_class=tokenizer, args=args, train_dataset=Dataset.from_list(rows),
                            reward_funcs=[], environment_factory=factory)
    trainer.generated = []
    trainer.model.train()
    output = trainer._generate_and_score_completions(rows)
    return trainer, output, counting


def _timeless(value):
    """Drop what measures time (Boa seconds, certificate durations): the rest must be equal."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k not in ("boa_s", "duration_s")}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def test_batched_tool_rounds_give_the_plain_loops_transcripts_and_rewards(tiny, boa, tmp_path):
    plain, plain_out, plain_boa = _rollout(tiny, boa, tmp_path, batched=False)
    batched, batched_out, batched_boa = _rollout(tiny, boa, tmp_path, batched=True)

    [(p_prompt_ids, p_ids, p_mask, p_completions, *_)] = plain.generated
    [(b_prompt_ids, b_ids, b_mask, b_completions, *_)] = batched.generated
    assert b_completions == p_completions  # every message: turns, tool calls, tool answers
    assert (b_prompt_ids, b_ids, b_mask) == (p_prompt_ids, p_ids, p_mask)
    p_episodes = [env.episode for env in plain.environments]
    b_episodes = [env.episode for env in batched.environments]
    assert [_timeless(e.summary()) for e in b_episodes] == [_timeless(e.summary()) for e in p_episodes]
    assert [_timeless(e.events) for e in b_episodes] == [_timeless(e.events) for e in p_episodes]
    assert [e.reward for e in b_episodes] == [e.reward for e in p_episodes]
    assert batched_out["advantages"].tolist() == plain_out["advantages"].tolist()

    # the scripts did what they say (so the comparison covers those cases)
    outcomes = [(e.outcome, e.end_reason) for e in p_episodes]
    assert outcomes == [("certified", "submitted"), ("uncertified", "submitted"), ("truncated", "call_limit"),
                        ("no_submission", "no_tool_call"), ("certified", "submitted"), ("certified", "submitted")]
    statuses = [ev.get("status") for e in p_episodes for ev in e.events]
    assert "timeout" in statuses and "compile_error" in statuses
    answers = [m["content"] for c in p_completions for m in c if m["role"] == "tool"]
    assert any("Tool shell not found" in a for a in answers)  # TRL refused it; no Boa work foreseen

    # plain: one Boa call at a time, never a batch; batched: each round's runs in one run_many,
    # and every Boa result the episodes used came from the round's batch
    assert plain_boa.run_many_sizes == [] and plain_boa.single_runs > 0
    boa_calls = sum(1 for e in p_episodes for ev in e.events if "status" in ev)
    assert batched_boa.single_runs == 0
    # round 1: rollouts 0, 1, 2 (two calls) and 5; round 2: rollout 2 (the others submit or stop);
    # round 3: rollout 2's call over the limit never reaches Boa
    assert batched_boa.run_many_sizes == [5, 1]
    assert batched.tool_batching == {"rounds": 3, "boa_calls": 10}  # 5 + 1 runs, 2 + 2 certifications
    assert sum(e.executor.served for e in b_episodes) == boa_calls
    assert sum(e.executor.missed for e in b_episodes) == 0
