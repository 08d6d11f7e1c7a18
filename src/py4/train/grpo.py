"""GRPO with the Boa episode environment, continuing the warm-start LoRA.

TRL's ``GRPOTrainer`` with ``environment_factory``: one environment instance per
rollout, ``reset(**row)`` per problem, its public methods (``run_code``, ``submit``)
as tools, and its ``get_reward()`` as the reward (the environment computes the
outcome — certified / uncertified / no submission / truncated — itself).
``reward_functions`` adds further TRL reward functions (``module:function`` and a weight),
summed with the environment's reward (weight 1) before the group advantage.

The reference's hyperparameters are the config type's defaults (docs/training.md, the stage
table); the warm-start LoRA itself is continued (``is_trainable=True``: no second adapter, a
fresh optimizer state, a vision tower frozen). Rollouts: plain generation on CPU; at campaign
scale vLLM in server mode (the 31B config: a ``trl vllm-serve`` process with tensor parallel 4
on GPUs of its own, the trainer on another; the launch recipe is docs/training.md, "GRPO with
vLLM"). ``vllm_mode`` defaults to TRL's colocate, which the 31B layout cannot use (its tensor
parallelism must divide the world size). The vLLM pre-flight (``py4.train.vllm_preflight``)
refuses an impossible layout when the config loads and checks vLLM, the server and the GPU split
before any weights load.

Weight sync to vLLM: TRL merges the LoRA into the bf16 base and unmerges it after each sync,
which moves the frozen base; the trainer here sends exactly merged weights instead and never
writes the base (``py4.train.weight_sync``).

Tool calls: TRL runs a round's tool calls one rollout at a time; the trainer here
(``batched_tools_trainer``, ``grpo.batch_tool_calls``) runs each round's Boa work at once. It
overrides TRL's private ``GRPOTrainer._tool_call_loop`` because TRL 1.16 has no public hook
around a tool round: the subclass only opens a batching context around TRL's own loop and calls
it unchanged, so a TRL release that renames or reshapes the method fails loudly (no override
takes effect, or the call's arguments no longer fit) rather than running a different loop.

    py4 train grpo --config configs/train/smoke/grpo.yaml
"""

from __future__ import annotations

import functools
import random
import time
from typing import Any

import pydantic

from py4.config import StrictModel, reference_parts, resolve_reference
from py4.episodes.config import EpisodeConfig
from py4.train import common, loading, vllm_preflight
from py4.train.grpo_settings import GRPOSettings
from py4.train.packed import StageResult, common_recorder, finish, stop_at_max_steps
from py4.train.vllm_engine import colocated_engine
from py4.train.weight_sync import placeholder_ids, use_exact_sync



class ProblemSet(StrictModel):
    split: common.TrainingSplit = "grpo"
    bank_version: str = "v1"
    bank_dir: str | None = None
    """The bank's folder (shipped layout; a campaign's pinned bank); None: the shipped bank. The
    environment looks a row's problem up in this bank."""
    limit: int | None = None
    """Use only the first N problems of the split (smoke runs)."""
    epochs: int = 2
    """The dataset is the split once per epoch, each epoch in its own order (seed + epoch)."""


class RewardFunction(StrictModel):
    """An additional TRL reward function, added to the environment's reward.

    The function is called as TRL calls reward functions — keywords ``prompts``,
    ``completions``, ``completion_ids``, ``environments`` (one per completion), the dataset
    columns (``problem_id``, ``epoch``), ``trainer_state`` — and returns one float (or None)
    per completion, in order; completions ``i·G … i·G + G − 1`` are the ``G`` samples of one
    problem. The total reward is the weighted sum over functions, the environment's weight being 1.
    """

    function: str
    """``module:function``, imported when the run starts."""
    weight: float = 1.0

    @pydantic.field_validator("function")
    @classmethod
    def _import_path(cls, value: str) -> str:
        reference_parts(value, "function")
        return value


class GRPOStageConfig(StrictModel):
    model: loading.ModelSource
    adapter: str | None = None
    """The warm-start LoRA folder, continued as the policy (no second adapter)."""
    episode: EpisodeConfig = EpisodeConfig()
    """Tool-call limit (16), token budget of the whole tool loop (10,240 = TRL's
    max_completion_length), run timeout, output cap, diagnostics, thinking, system prompt, rewards."""
    environment_factory: str = "py4.episodes.environment:environment_factory"
    """``module:function(episode_config, tokenizer=...)`` returning TRL's zero-argument factory."""
    reward_functions: list[RewardFunction] = []
    """Rewards added to the environment's (default none: the environment's reward alone)."""
    problems: ProblemSet = ProblemSet()
    grpo: GRPOSettings = GRPOSettings()
    optimisation: common.Optimisation = common.Optimisation(
        learning_rate=1e-5, lr_scheduler="constant", min_lr_rate=None, warmup=0, weight_decay=0.0,
        optim="adamw_torch", seed=424242, micro_batch=1, grad_accum=128, max_steps=64,
    )
    run: common.RunSettings

    @pydantic.model_validator(mode="after")
    def _batch_shape(self) -> "GRPOStageConfig":
        opt, g = self.optimisation, self.grpo
        completions = opt.micro_batch * opt.grad_accum * opt.gpus
        if completions != g.problems_per_step * g.num_generations:
            raise ValueError(f"micro_batch × grad_accum × gpus = {completions} completions per step, but "
                             f"problems_per_step × num_generations = {g.problems_per_step * g.num_generations}")
        return self

    @pydantic.model_validator(mode="after")
    def _vllm_layout(self) -> "GRPOStageConfig":
        problems = vllm_preflight.vllm_layout_problems(self.grpo, self.optimisation.gpus)
        if problems:
            raise ValueError("; ".join(problems))
        return self


def make_environment_factory(config: "GRPOStageConfig", tokenizer):
    """TRL's zero-argument environment factory; raises ReferenceNotFound (a ConfigError and an
    ImportError) naming a missing module/function."""
    build = resolve_reference(config.environment_factory, "environment_factory", kind="function")
    if config.problems.bank_dir is None:  # the environment's own default: the shipped bank
        return build(config.episode, tokenizer=tokenizer)
    from py4.problems.bank import load_bank

    bank = {p.id: p for p in load_bank(config.problems.bank_version, config.problems.bank_dir)}
    return build(config.episode, tokenizer=tokenizer, problems=bank)


def reward_functions(config: "GRPOStageConfig") -> tuple[list, list[float]]:
    """The reward functions handed to TRL and their weights (TRL appends the environment's, weight 1).

    ``note_completion_lengths`` comes first: it marks trajectories that used the whole token
    budget as truncated before the environment's ``get_reward`` scores them. Raises ReferenceNotFound.
    """
    from py4.episodes.environment import note_completion_lengths

    extra = [resolve_reference(r.function, f"reward_functions[{i}].function", kind="function")
             for i, r in enumerate(config.reward_functions)]
    return [note_completion_lengths, *extra], [1.0, *(r.weight for r in config.reward_functions)]


def environment_tools(factory) -> list[dict]:
    """JSON schemas of the environment's tools, as TRL renders them into the prompt."""
    import inspect

    from transformers.utils import get_json_schema

    cls = factory.func if isinstance(factory, functools.partial) else factory
    return [get_json_schema(fn) for name, fn in inspect.getmembers(cls, predicate=inspect.isfunction)
            if name not in ("reset", "get_reward") and not name.startswith("_")]


def problem_rows(problems: ProblemSet, episode: EpisodeConfig, seed: int) -> list[dict[str, Any]]:
    """One row per problem per epoch; epoch e is the split in the order of Random(seed + e)."""
    from py4.episodes.environment import initial_messages
    from py4.problems.bank import load_bank

    chosen = [p for p in load_bank(problems.bank_version, problems.bank_dir) if p.split == problems.split]
    if problems.limit is not None:
        chosen = chosen[:problems.limit]
    if not chosen:
        raise common.TrainingError(f"problems.split: no problems in split {problems.split!r} "
                                   f"of bank {problems.bank_dir or problems.bank_version}")
    rows = []
    for epoch in range(problems.epochs):
        order = list(chosen)
        random.Random(seed + epoch).shuffle(order)
        rows += [{"prompt": initial_messages(p, episode), "problem_id": p.id, "epoch": epoch} for p in order]
    return rows


def long_prompts(rows: list[dict], tokenizer, tools: list[dict], limit: int, thinking: bool) -> list[tuple[str, int]]:
    """(problem id, prompt tokens) of every problem whose prompt, rendered with the tools, is over ``limit``
    (each problem once: its prompt is the same in every epoch)."""
    over, seen = [], set()
    for row in rows:
        if row["problem_id"] in seen:
            continue
        seen.add(row["problem_id"])
        ids = tokenizer.apply_chat_template(row["prompt"], tools=tools, add_generation_prompt=True,
                                            enable_thinking=thinking, tokenize=True, return_dict=False)
        if len(ids) > limit:
            over.append((row["problem_id"], len(ids)))
    return over


def check_prompt_lengths(over: list[tuple[str, int]], limit: int) -> None:
    """Raise TrainingError naming the problems whose prompts are too long.

    They are refused, not dropped: the schedule is whole epochs of the split (64 steps = 2 epochs
    of 512 problems at 16 a step, each segment one epoch in its own order), and a dropped row would
    shift every later step off its epoch and run the last ones into a replay of epoch 0."""
    if not over:
        return
    shown = ", ".join(f"{pid} ({n} tokens)" for pid, n in over[:20]) + (", ..." if len(over) > 20 else "")
    raise common.TrainingError(
        f"grpo.max_prompt_length = {limit}: {len(over)} problem prompt(s) rendered with the tools are longer: "
        f"{shown}; every epoch must be a whole pass over the split, so none is dropped: raise "
        f"grpo.max_prompt_length (the server's context must hold it plus episode.token_budget) or choose "
        f"problems without them (problems.split / problems.limit)")


def step_plan_problems(per_epoch: int, epochs: int, per_step: int, max_steps: int | None) -> list[str]:
    """Why ``max_steps`` steps of ``per_step`` problems would not follow the rows (``epochs`` passes of
    ``per_epoch`` problems, laid out one after the other and read in order): steps past the last row
    (TRL would start the rows again: epoch 0's order replayed), or a step mixing two epochs."""
    if not max_steps or max_steps < 0:
        max_steps = per_epoch * epochs // per_step
    problems = []
    needed, rows = max_steps * per_step, per_epoch * epochs
    if needed > rows:
        problems.append(f"optimisation.max_steps = {max_steps} steps × grpo.problems_per_step = {per_step} need "
                        f"{needed} problem rows, but problems.epochs = {epochs} × {per_epoch} problems give {rows}: "
                        f"the last {(needed - rows + per_step - 1) // per_step} step(s) would replay epoch 0's order; "
                        f"set optimisation.max_steps to {rows // per_step} or fewer")
    straddled = [e for e in range(1, epochs) if e * per_epoch < needed and (e * per_epoch) % per_step]
    if straddled:
        problems.append(f"{per_epoch} problems per epoch is not a multiple of grpo.problems_per_step = {per_step}: "
                        f"step {straddled[0] * per_epoch // per_step + 1} would mix epochs {straddled[0] - 1} and "
                        f"{straddled[0]}; choose problems.limit or problems_per_step so that each epoch is whole steps")
    return problems


def load_policy(config: GRPOStageConfig, device: loading.DeviceSettings):
    """The model with the warm-start adapter made trainable (or bare), vision tower frozen."""
    model = loading.load_model(config.model, device)
    frozen_vision = 0
    if config.adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, config.adapter, is_trainable=True)
    for name, param in model.named_parameters():
        if param.requires_grad and ("vision" in name or "visual" in name):
            param.requires_grad_(False)
            frozen_vision += 1
    return model, frozen_vision


@functools.cache
def batched_tools_trainer():
    """``GRPOTrainer`` whose tool loop runs each round's Boa work at once.

    TRL 1.16's ``_tool_call_loop`` calls the tools of a round one sample at a time (128
    rollouts × up to 16 calls × up to 5 s of timeout each, in series). This subclass opens
    :class:`~py4.episodes.tool_batching.ToolRounds` around TRL's own loop: the first tool call
    of a round runs every call's Boa work of that round together (``Executor.run_many``),
    and each environment then answers TRL's calls in TRL's order from those results.
    Rewards and transcripts are those of the plain loop (tests/episodes/test_tool_batching.py).
    """
    from trl import GRPOTrainer

    from py4.episodes.tool_batching import ToolRounds

    class BatchedToolsGRPOTrainer(GRPOTrainer):
        tool_batching = {"rounds": 0, "boa_calls": 0}  # per instance once a loop ran (for the manifest)

        def _tool_call_loop(self, prompts, prompt_ids, completion_ids, completions, *args, **kwargs):
            rounds = ToolRounds(self.environments or [], completions)
            try:
                with rounds:
                    return super()._tool_call_loop(prompts, prompt_ids, completion_ids, completions, *args, **kwargs)
            finally:
                self.tool_batching = {"rounds": self.tool_batching["rounds"] + rounds.rounds,
                                      "boa_calls": self.tool_batching["boa_calls"] + rounds.batched}

    return BatchedToolsGRPOTrainer


# GRPOConfig fields (TRL 1.16's own, beyond TrainingArguments) that :func:`grpo_kwargs` may set.
GRPO_FIELDS: tuple[str, ...] = (
    "use_vllm", "vllm_mode", "vllm_tensor_parallel_size", "vllm_server_base_url", "num_generations", "loss_type",
    "scale_rewards", "reward_weights", "beta", "epsilon", "epsilon_high", "mask_truncated_completions",
    "temperature", "max_completion_length", "max_tool_calling_iterations", "chat_template_kwargs",
    "shuffle_dataset", "steps_per_generation", "log_completions",
)


def config_fields(available) -> frozenset[str]:
    """Every GRPOConfig field py4 may set when the class has the field names ``available``."""
    return common.trainer_fields(available) | frozenset(GRPO_FIELDS)


def grpo_kwargs(config: GRPOStageConfig, device: loading.DeviceSettings, reward_weights: list[float],
                available=None) -> dict:
    """The GRPOConfig keywords; ``available``: its field names (default: the installed GRPOConfig's)."""
    if available is None:
        from trl import GRPOConfig

        available = common.installed_fields(GRPOConfig)
    g = config.grpo
    kwargs = common.trainer_kwargs(config.optimisation, config.run, device, config.optimisation.max_steps or -1,
                                   available)
    kwargs["use_vllm"] = g.use_vllm
    if g.use_vllm:
        kwargs.update(vllm_mode=g.vllm_mode, vllm_tensor_parallel_size=g.vllm_tensor_parallel_size)
        if g.vllm_server_base_url:
            kwargs["vllm_server_base_url"] = g.vllm_server_base_url
    kwargs.update(
        num_generations=g.num_generations, loss_type=g.loss_type, scale_rewards=g.scale_rewards,
        reward_weights=reward_weights, beta=g.beta, epsilon=g.epsilon, epsilon_high=g.epsilon_high,
        mask_truncated_completions=g.mask_truncated_completions, temperature=g.temperature, top_p=g.top_p,
        top_k=g.top_k, min_p=g.min_p, repetition_penalty=g.repetition_penalty,
        max_completion_length=config.episode.token_budget, max_tool_calling_iterations=config.episode.max_tool_calls,
        chat_template_kwargs={"enable_thinking": config.episode.enable_thinking}, shuffle_dataset=False,
        steps_per_generation=config.optimisation.grad_accum, log_completions=False,
    )
    return kwargs


def grpo_args(config: GRPOStageConfig, device: loading.DeviceSettings, reward_weights: list[float]):
    """The GRPOConfig; raises TrainingError when the installed one lacks a field py4 sets."""
    from trl import GRPOConfig

    kwargs = grpo_kwargs(config, device, reward_weights)
    common.check_fields(GRPOConfig, kwargs, "GRPO")
    return GRPOConfig(**kwargs)


def rollout_seed(args) -> str:
    """Where the rollouts' randomness is seeded. No request carries a seed: the ``num_generations``
    samples of one prompt must differ. ``generate`` draws from the trainer's ``set_seed(seed)``;
    TRL 1.16 builds a colocated engine with ``LLM(seed=process index // vllm_tensor_parallel_size)``;
    ``trl vllm-serve`` passes no seed, so its engine has vLLM's default (``ModelConfig.seed``, 0)."""
    if not args.use_vllm:
        return f"the trainer's processes: set_seed({args.seed})"
    if args.vllm_mode == "colocate":
        return (f"the colocated engine's, set by TRL: process index // vllm_tensor_parallel_size "
                f"({args.vllm_tensor_parallel_size}); 0 on the first process")
    return "the server's engine: trl vllm-serve sets none, vLLM's default is 0"


def rollout_sampling(args) -> dict[str, Any]:
    """The sampling the trainer's rollouts use, read back from its GRPOConfig (what TRL sends)."""
    from py4.episodes.sampling import effective_sampling

    engine = f"vLLM {args.vllm_mode}" if args.use_vllm else "transformers generate"
    extra = dict(args.generation_kwargs or {})
    return {**effective_sampling(args, max_tokens=args.max_completion_length,
                                 seed=extra.pop("seed", rollout_seed(args)),
                                 engine=engine), **({"generation_kwargs": extra} if extra else {})}


def vllm_generation_record(generation) -> dict[str, Any]:
    """The manifest's account of the rollouts vLLM generated: mode, where vLLM ran (colocated: its
    platform in the trainer's process, cpu or cuda; server: the server's URL), weight syncs,
    prompts generated for, the sampling TRL handed vLLM and, for a model with multimodal placeholder
    ids, how many of them the completions hold (all noted by ``py4.train.weight_sync``)."""
    from vllm.platforms import current_platform

    where = ({"platform": current_platform.device_type} if generation.mode == "colocate"
             else {"server": getattr(generation, "server_base_url", None)})
    return {"mode": generation.mode, **where, "weight_syncs": generation.weight_syncs,
            "prompts_generated": generation.prompts_generated, "sampling_sent": generation.sampling_sent,
            **({"placeholder_tokens_sampled": generation.placeholders_sampled} if placeholder_ids(generation.model)
               else {})}


def run(config: GRPOStageConfig, callbacks=()) -> StageResult:
    """Run GRPO; raises ReferenceNotFound (an ImportError) when the environment or a reward function is missing,
    VllmLaunchError (a TrainingGuardError) when a vLLM launch cannot work — checked before any
    weights load — and TrainingGuardError on guards."""
    from datasets import Dataset
    from trl import GRPOTrainer

    opt, settings, g = config.optimisation, config.run, config.grpo
    common.check_world_size(opt)
    vllm_server = vllm_preflight.check_vllm_launch(config.grpo, config.episode.token_budget)  # before anything loads
    device = loading.device_settings(opt.gradient_checkpointing)
    common.check_checkpointing(opt, device)  # FSDP's own and the Trainer's both on: refused here, not by transformers
    with common_recorder(settings.output_dir, config, "grpo") as recorder:
        if vllm_server is not None:
            recorder.set(vllm=vllm_server)
        recorder.add_input("model", hash_content=False, **loading.model_provenance(config.model))
        if config.adapter:
            recorder.add_input("adapter", path=config.adapter)
        from py4.problems.bank import bank_provenance

        recorder.add_input("bank", hash_content=False,
                           **bank_provenance(config.problems.bank_version, config.problems.bank_dir))
        tokenizer = loading.load_tokenizer(config.model)
        factory = make_environment_factory(config, tokenizer)
        rewards, weights = reward_functions(config)
        rows = problem_rows(config.problems, config.episode, opt.seed)
        check_prompt_lengths(long_prompts(rows, tokenizer, environment_tools(factory), g.max_prompt_length,
                                          config.episode.enable_thinking), g.max_prompt_length)
        per_epoch = len(rows) // config.problems.epochs
        plan = step_plan_problems(per_epoch, config.problems.epochs, g.problems_per_step, opt.max_steps)
        if plan:
            raise common.TrainingError("; ".join(plan))
        resumed_from = common.resume_checkpoint(settings)
        args = grpo_args(config, device, weights)  # a field this transformers lacks stops here, not after loading
        model, frozen_vision = load_policy(config, device)
        from py4.train.callbacks import CheckpointCards, GuardCallback, LRTrace, StopAtStep, TrackerRuns

        lr_trace = LRTrace()
        extra = [StopAtStep(g.stop_at_step)] if g.stop_at_step else []
        trainer_class = batched_tools_trainer() if g.batch_tool_calls else GRPOTrainer
        with colocated_engine(g) as engines:  # TRL builds vLLM's engine here
            trainer = trainer_class(model=model, reward_funcs=rewards, args=args,
                                    train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                                    environment_factory=factory,
                                    callbacks=[GuardCallback(), lr_trace, TrackerRuns(), CheckpointCards(), *extra,
                                               *callbacks])
        exact_sync = use_exact_sync(trainer)
        if exact_sync:  # vLLM gets W + scale·B·A computed apart; the base is never written
            recorder.set(weight_sync="exact: W + scale·B·A in fp32, cast once; base not modified")
        recorder.set(sampling=rollout_sampling(trainer.args))
        summary = common.trainable_summary(trainer.model)
        recorder.set(problems=per_epoch, prompts_over_max_length=0,
                     adapted_modules=summary["adapted_modules"], vision_params_frozen=frozen_vision,
                     reward_functions=list(trainer.reward_func_names),
                     reward_weights=[float(w) for w in trainer.reward_weights])
        stop_at_max_steps(trainer, g.stop_at_step)  # resumed at the segment's end: no step more
        t0 = time.monotonic()
        trainer.train(resume_from_checkpoint=resumed_from)
        history = [h for h in trainer.state.log_history if "reward" in h]
        logged = ("reward", "frac_reward", "tools", "step")
        recorder.set(reward_log=[{k: v for k, v in h.items() if k.startswith(logged)} for h in history])
        if exact_sync:  # what vLLM did: the rollouts' engine, its weight syncs, the prompts it generated for
            recorder.set(vllm_generation={**vllm_generation_record(trainer.vllm_generation),
                                          **({"engine_arguments": engines[0]} if engines else {})})
        if g.batch_tool_calls:  # tool rounds whose Boa work ran at once, and the Boa calls in them
            recorder.set(tool_batching=dict(trainer.tool_batching))
        return finish(recorder, trainer, lr_trace, settings.output_dir, resumed_from, tokenizer, t0, config.model)
