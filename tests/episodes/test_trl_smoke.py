"""Py4Environment inside TRL's GRPOTrainer(environment_factory=...): one step with the tiny -it model."""

from __future__ import annotations

import pytest

from py4.data.smoke_instructions import PROBLEM_TEMPLATES
from py4.episodes import EpisodeConfig, Episode, dataset_rows, environment_factory, note_completion_lengths
from py4.problems.schema import Problem


def smoke_problems() -> list[Problem]:
    return [template.problem(f"smoke/{i}", 4 + i, template.names[1], "grpo", ["P4-12"])
            for i, template in enumerate(PROBLEM_TEMPLATES[:2])]


@pytest.mark.smoke
@pytest.mark.timeout(1800)  # the first run builds the smoke assets (minutes on a busy 2-core machine)
def test_grpo_trainer_runs_the_environment(smoke_assets, tmp_path):
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = AutoTokenizer.from_pretrained(smoke_assets / "it", local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(smoke_assets / "it", local_files_only=True)
    problems = smoke_problems()
    config = EpisodeConfig(token_budget=256, enable_thinking=False)
    train = datasets.Dataset.from_list(dataset_rows(problems, config))
    args = GRPOConfig(output_dir=str(tmp_path / "grpo"), use_cpu=True, bf16=False, max_steps=1,
                      per_device_train_batch_size=4, num_generations=2, max_completion_length=config.token_budget,
                      max_tool_calling_iterations=config.max_tool_calls + 1, report_to=[], logging_steps=1,
                      chat_template_kwargs={"enable_thinking": False}, gradient_checkpointing=False,
                      temperature=0.7, beta=0.0, save_strategy="no")
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, train_dataset=train, args=args,
                          reward_funcs=[note_completion_lengths],
                          environment_factory=environment_factory(config, problems={p.id: p for p in problems},
                                                                  tokenizer=tokenizer))
    trainer.train()
    episodes = [env.episode for env in trainer.environments]
    assert len(episodes) == 4 and all(isinstance(e, Episode) for e in episodes)
    assert all(e.outcome in ("certified", "uncertified", "no_submission", "truncated") for e in episodes)
    # the -it model calls tools: TRL ran them through the environment
    assert any(e.events for e in episodes), [e.summary() for e in episodes]
