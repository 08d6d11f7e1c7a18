"""GRPO's steps follow its rows: each epoch a whole pass in its own order, no step past the data.

The rows are epoch 0 ++ epoch 1 (each the split in its own order) read in order, 16 problems a
step; the reference's 64 steps are 2 epochs of 512 problems, 32 + 32 as two segments. A dropped
prompt would shift every later step off its epoch and run the last steps into a replay of epoch
0, so a prompt over ``grpo.max_prompt_length`` stops the run, naming its problem.
"""

from __future__ import annotations

import pytest

from py4.config import resolve_reference
from py4.episodes.config import EpisodeConfig
from py4.train import grpo
from py4.train.errors import TrainingError


def test_the_reference_schedule_is_two_whole_epochs():
    assert grpo.step_plan_problems(512, 2, 16, 64) == []
    assert grpo.step_plan_problems(512, 2, 16, None) == []  # TRL runs the rows once
    assert grpo.step_plan_problems(512, 2, 1, 4) == []  # a prefix (the rehearsal's 4 steps)
    assert grpo.step_plan_problems(4, 2, 2, 4) == []  # the smoke config


def test_steps_past_the_rows_are_refused():
    problems = grpo.step_plan_problems(500, 2, 16, 64)
    assert any("1000" in p and "epoch 0's order" in p and "62 or fewer" in p for p in problems)


def test_a_step_mixing_two_epochs_is_refused():
    (problem,) = [p for p in grpo.step_plan_problems(504, 2, 16, 63) if "mix" in p]
    assert "step 32 would mix epochs 0 and 1" in problem
    assert grpo.step_plan_problems(504, 2, 16, 31) == []  # stops before the boundary


def test_long_prompts_are_named_and_stop_the_run(small_tokenizer):
    episode = EpisodeConfig()
    rows = grpo.problem_rows(grpo.ProblemSet(limit=6), episode, seed=424242)
    factory = resolve_reference(grpo.GRPOStageConfig.model_fields["environment_factory"].default, "environment_factory")
    tools = grpo.environment_tools(factory(episode, tokenizer=small_tokenizer))
    lengths = {pid: n for pid, n in grpo.long_prompts(rows, small_tokenizer, tools, 0, episode.enable_thinking)}
    assert sorted(lengths) == sorted({r["problem_id"] for r in rows})  # each problem once, not per epoch
    limit = sorted(lengths.values())[2]
    over = grpo.long_prompts(rows, small_tokenizer, tools, limit, episode.enable_thinking)
    assert over and all(n > limit for _, n in over) and len(over) == sum(n > limit for n in lengths.values())
    with pytest.raises(TrainingError, match=rf"max_prompt_length = {limit}: {len(over)} problem prompt") as info:
        grpo.check_prompt_lengths(over, limit)
    assert all(f"{pid} ({n} tokens)" in str(info.value) for pid, n in over)
    grpo.check_prompt_lengths([], limit)


def test_rollout_sampling_is_the_configs_and_is_recorded_as_trl_holds_it(tmp_path):
    """The stage's sampling reaches GRPOConfig whole (TRL sends it to vLLM's SamplingParams or to
    generate), and the manifest's record is read back from the trainer's arguments."""
    from py4.config import load_config
    from py4.train import loading

    config = load_config(grpo.GRPOStageConfig, "configs/train/gemma4_31b/grpo.yaml",
                         ["grpo.use_vllm=false", "grpo.vllm_server_gpus=null", f"run.output_dir={tmp_path}",
                          "run.report_to=[]", "grpo.top_p=0.9", "grpo.top_k=20", "grpo.min_p=0.05",
                          "grpo.repetition_penalty=1.05"])
    device = loading.DeviceSettings(use_cpu=True, bf16=False, gradient_checkpointing=False, device="cpu")
    args = grpo.grpo_args(config, device, [1.0])
    assert (args.temperature, args.top_p, args.top_k, args.min_p, args.repetition_penalty) == (
        0.7, 0.9, 20, 0.05, 1.05)
    assert grpo.rollout_sampling(args) == {
        "temperature": 0.7, "top_p": 0.9, "top_k": 20, "min_p": 0.05, "repetition_penalty": 1.05,
        "max_tokens": config.episode.token_budget, "seed": "the trainer's processes: set_seed(424242)",
        "engine": "transformers generate"}



def test_the_recorded_rollout_seed_is_the_engine_s():
    """vLLM's rollouts are not seeded by the trainer's set_seed: TRL seeds a colocated engine with the
    process index // tensor parallel size, and trl vllm-serve leaves vLLM's default."""
    from types import SimpleNamespace

    plain = SimpleNamespace(use_vllm=False, seed=424242)
    colocate = SimpleNamespace(use_vllm=True, vllm_mode="colocate", vllm_tensor_parallel_size=2, seed=424242)
    server = SimpleNamespace(use_vllm=True, vllm_mode="server", seed=424242)
    assert grpo.rollout_seed(plain) == "the trainer's processes: set_seed(424242)"
    assert "process index // vllm_tensor_parallel_size (2)" in grpo.rollout_seed(colocate)
    assert "424242" not in grpo.rollout_seed(colocate) + grpo.rollout_seed(server)
    assert "vLLM's default is 0" in grpo.rollout_seed(server)

def test_trls_sampler_reads_the_rows_in_order_a_step_s_problems_at_a_time():
    """With the GRPOConfig py4 builds, TRL's own train sampler takes the rows as laid out: step k
    generates for problems k·P … k·P + P − 1 (P = problems_per_step) — epoch 0's order, then epoch 1's —
    each G times, and nothing past the last row."""
    from types import SimpleNamespace

    from datasets import Dataset
    from trl import GRPOTrainer

    from py4.config import load_config
    from py4.train import loading

    config = load_config(grpo.GRPOStageConfig, "configs/train/gemma4_31b/grpo.yaml",
                         ["grpo.use_vllm=false", "grpo.vllm_server_gpus=null", "run.output_dir=unused",
                          "run.report_to=[]", "problems.limit=48"])
    device = loading.DeviceSettings(use_cpu=True, bf16=False, gradient_checkpointing=False, device="cpu")
    args = grpo.grpo_args(config, device, [1.0])
    rows = grpo.problem_rows(config.problems, config.episode, config.optimisation.seed)
    per_step, generations = config.grpo.problems_per_step, config.grpo.num_generations
    trainer = SimpleNamespace(args=args, num_generations=args.num_generations, num_iterations=args.num_iterations,
                              shuffle_dataset=args.shuffle_dataset, train_dataset=Dataset.from_list(rows))
    order = list(GRPOTrainer._get_train_sampler(trainer))
    block = len(order) // (len(rows) // per_step)
    steps = [order[i:i + block] for i in range(0, len(order), block)]
    assert len(steps) == len(rows) // per_step == 6
    for k, step in enumerate(steps):
        expected = list(range(k * per_step, (k + 1) * per_step))
        assert list(dict.fromkeys(step)) == expected and all(step.count(i) % generations == 0 for i in expected)
    epochs = [[rows[i]["epoch"] for i in dict.fromkeys(s)] for s in steps]
    assert epochs == [[0] * per_step] * 3 + [[1] * per_step] * 3
    first = [rows[i]["problem_id"] for s in steps[:3] for i in dict.fromkeys(s)]
    second = [rows[i]["problem_id"] for s in steps[3:] for i in dict.fromkeys(s)]
    assert sorted(first) == sorted(second) and first != second  # each epoch one whole pass, in its own order
