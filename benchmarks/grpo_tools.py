"""Benchmark GRPO's tool calls: TRL's plain tool loop vs the batched rounds of ``py4.train.grpo``.

    .venv/bin/python benchmarks/grpo_tools.py [--rollouts 16] [--rounds 4] [--timeout 1.0] [--repeats 2]

One GRPO step's worth of tool calls through TRL 1.16's real ``GRPOTrainer._generate_and_score_completions``
(environments reset, ``_tool_call_loop``, token masks, rewards; the environment is ``Py4Environment`` on
one shared Boa executor with one worker per core): ``--rollouts`` rollouts of two problems, each making
one call per round for ``--rounds`` rounds — ``run_code`` in every round but the last, ``submit`` of the
gold solution in the last — and one in eight ``run_code`` calls an endless loop that runs into the
``--timeout``. Generation is scripted (the turns are fixed text), so what is timed is TRL's machinery
around the tools plus the tools themselves; the tiny model only scores the step.

Both trainers run in the same process on the same executor, alternating (plain, batched, plain, …,
``--repeats`` of each), and their transcripts and rewards are checked equal. Printed: per mode the
median seconds of the tool loop and of the whole step, tool calls/s and episodes/s, and the ratio
batched / plain.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

LOOP = "let n = 0\nwhile n >= 0:\n    n += 1\n"


def _script(rollout: int, turn: int, rounds: int, gold: str, entry: str) -> list[dict]:
    if turn >= rounds:
        return []
    if turn == rounds - 1:
        return [{"name": "submit", "arguments": {"code": gold}}]
    if (rollout + turn) % 8 == 0:
        return [{"name": "run_code", "arguments": {"code": LOOP}}]
    return [{"name": "run_code", "arguments": {"code": f"{gold}\nprint({entry}({rollout + turn}))\n"}}]


def _trainer(base, problems, rounds: int):
    """``base`` with scripted turns, timing its tool loop."""

    class Scripted(base):
        loop_seconds: list[float] = []
        transcripts: list = []

        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
            tokenizer, out = self.processing_class, []
            for row, ids in enumerate(prompt_ids):
                text = tokenizer.decode(ids, skip_special_tokens=False)
                turn = text.count("<start_of_turn>model") - 1
                rollout = row if turn == 0 else int(text.split("rollout=", 1)[1].split(".", 1)[0])
                problem = next(p for p in problems if p.prompt in text)
                calls = _script(rollout, turn, rounds, problem.gold, problem.entry_point)
                body = f"rollout={rollout}. turn {turn}." + "".join(
                    f"<tool_call>{json.dumps(c)}</tool_call>" for c in calls)
                out.append(tokenizer.encode(body + "<end_of_turn>", add_special_tokens=False))
            return out, None

        def _tool_call_loop(self, *args, **kwargs):
            started = time.perf_counter()
            result = super()._tool_call_loop(*args, **kwargs)
            self.loop_seconds.append(time.perf_counter() - started)
            self.transcripts.append(result[1])
            return result

    return Scripted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rollouts", type=int, default=16, help="rollouts per step (two problems, half each)")
    parser.add_argument("--rounds", type=int, default=4, help="tool calls per rollout (one per round)")
    parser.add_argument("--timeout", type=float, default=1.0, help="Boa run timeout (s)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--workers", type=int, default=None, help="Boa workers (default: one per core)")
    args = parser.parse_args()
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

    import functools

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from py4.boa.executor import Executor
    from py4.data.smoke_instructions import PROBLEM_TEMPLATES
    from py4.episodes import EpisodeConfig, Py4Environment, dataset_rows
    from py4.train.grpo import batched_tools_trainer
    from py4.chat.smoke_tokenizer import stdlib_texts, train_tokenizer
    from py4.train.tiny_model import TinyModelSpec, build_tiny_model

    problems = [t.problem(f"bench/{i}", 4 + i, t.names[0], "grpo", ["P4-12"])
                for i, t in enumerate(PROBLEM_TEMPLATES[:2])]
    config = EpisodeConfig(max_tool_calls=args.rounds, token_budget=8192, run_timeout_s=args.timeout,
                           enable_thinking=False)
    tokenizer = train_tokenizer(stdlib_texts(150_000), vocab_size=400)
    model = build_tiny_model(TinyModelSpec(hidden_size=16, intermediate_size=32, head_dim=8,
                                           max_position_embeddings=16384), tokenizer)
    per_problem = args.rollouts // len(problems)
    rows = [row for row in dataset_rows(problems, config) for _ in range(per_problem)]
    calls = len(rows) * args.rounds
    timeouts = sum(1 for r in range(len(rows)) for t in range(args.rounds - 1) if (r + t) % 8 == 0)

    with Executor(workers=args.workers, timeout_s=args.timeout) as executor:
        factory = functools.partial(Py4Environment, config, problems={p.id: p for p in problems},
                                    tokenizer=tokenizer, executor=executor)
        trainers = {}
        for mode, base in (("plain", GRPOTrainer), ("batched", batched_tools_trainer())):
            grpo_args = GRPOConfig(output_dir=f"/tmp/grpo-tools-bench-{mode}", use_cpu=True, bf16=False,
                                   per_device_train_batch_size=len(rows), num_generations=per_problem, max_steps=1,
                                   max_completion_length=config.token_budget,
                                   max_tool_calling_iterations=args.rounds + 1,
                                   chat_template_kwargs={"enable_thinking": False}, gradient_checkpointing=False,
                                   beta=0.0, report_to=[], save_strategy="no")
            trainer = _trainer(base, problems, args.rounds)(model=model, processing_class=tokenizer, args=grpo_args,
                                                            train_dataset=Dataset.from_list(rows), reward_funcs=[],
                                                            environment_factory=factory)
            trainer.loop_seconds, trainer.transcripts = [], []
            trainer.model.train()
            trainers[mode] = trainer
        steps = {mode: [] for mode in trainers}
        rewards = {}
        for _ in range(args.repeats):
            for mode, trainer in trainers.items():
                started = time.perf_counter()
                trainer._generate_and_score_completions(rows)  # one step's rollouts (a private TRL method)
                steps[mode].append(time.perf_counter() - started)
                rewards[mode] = [env.episode.reward for env in trainer.environments]
        same_transcripts = trainers["plain"].transcripts[-1] == trainers["batched"].transcripts[-1]
        if not same_transcripts or rewards["plain"] != rewards["batched"]:
            raise SystemExit("batched and plain transcripts or rewards differ")

    print(f"{len(rows)} rollouts x {args.rounds} calls = {calls} tool calls per step ({timeouts} time out at "
          f"{args.timeout:g} s), Boa workers: {executor.workers}, repeats: {args.repeats}")
    summary = {}
    for mode, trainer in trainers.items():
        loop_s, step_s = statistics.median(trainer.loop_seconds), statistics.median(steps[mode])
        summary[mode] = {"tool_loop_s": round(loop_s, 3), "step_s": round(step_s, 3),
                         "tool_calls_per_s": round(calls / loop_s, 2), "episodes_per_s": round(len(rows) / step_s, 3)}
        print(f"{mode:8s} tool loop {loop_s:7.3f} s  step {step_s:7.3f} s  "
              f"{calls / loop_s:7.2f} calls/s  {len(rows) / step_s:6.3f} episodes/s")
    ratio_loop = summary["plain"]["tool_loop_s"] / summary["batched"]["tool_loop_s"]
    ratio_step = summary["plain"]["step_s"] / summary["batched"]["step_s"]
    print(f"ratio batched/plain: tool calls/s {ratio_loop:.2f}x, episodes/s {ratio_step:.2f}x")
    print(json.dumps({"calls": calls, "timeouts": timeouts, "workers": executor.workers, **summary,
                      "ratio_tool_calls_per_s": round(ratio_loop, 2), "ratio_episodes_per_s": round(ratio_step, 2)}))


if __name__ == "__main__":
    main()
