"""The 'eft' and 'grpo' parts of the hyperparameter table."""

from __future__ import annotations

from py4.campaign.spec import GRPOSpec, ModelSpec
from py4.report import formats
from py4.report.hp_models import LOSS_WORDS
from py4.report.hp_sources import NOT_RECORDED, NotRecorded, Sources, TableError, files_of, recorded
from py4.report.hp_table import (Group, geometry, nickname, precision, scheduler_head, schedule_words,
                                 warmup_words)

# Every grpo.loss_type value (TRL 1.16's GRPOConfig.loss_type) by the name of the paper or method
# TRL's docstring gives it (tests/report/test_hyperparameters.py checks the keys against the Literal).
LOSS_TYPE_NAMES = {"grpo": "GRPO", "dr_grpo": "Dr.\\ GRPO", "dapo": "DAPO", "bnpo": "BNPO", "cispo": "CISPO",
                   "sapo": "SAPO", "luspo": "LUSPO", "vespo": "VESPO"}


def dose_split(rows: int, replay_fraction: float) -> tuple[int, int]:
    """(gold, replay) of a dose: replay = round(rows x fraction). 1,024 -> (922, 102), 256 -> (230, 26)."""
    replay = round(rows * replay_fraction)
    return rows - replay, replay


def _replay_name(sources: Sources) -> str:
    return nickname(sources.spec.sft_data.name) if sources.spec.sft_data else "instruction"


def _trained_doses(sources: Sources) -> list[int]:
    """The EFT doses that are runs (0 is the parent itself), largest first."""
    return sorted((dose for dose in sources.spec.eft.doses if dose > 0), reverse=True)


def eft_data(sources: Sources) -> Group:
    eft = sources.spec.eft
    replay = _replay_name(sources)
    group = Group("eft", "EFT data",
                  f"Boa-certified Python-4 gold solutions to held-in-rule problems, plus {replay} replay")
    n_models = len(sources.models)
    doses = _trained_doses(sources)
    src = (f"derived: {sources.spec_path} eft.doses, eft.replay_fraction ({eft.replay_fraction}) -> replay = "
           "round(rows x fraction); smaller doses drawn from the largest (py4 train eft_dose draw_from); "
           "src/py4/train/eft_data.py")
    group.label("Training rows")
    for i, dose in enumerate(doses):
        gold, replay_rows = dose_split(dose, eft.replay_fraction)
        text = (f"{gold} Python-4 gold + {replay_rows} {replay} replay" if i == 0
                else f"{gold} gold + {replay_rows} replay, drawn from the {formats.thousands(doses[0])}")
        group.add(f"{formats.thousands(dose)}-row dose", [text] * n_models, src, sub=True)
    group.add("Replay rows", [f"{replay} prompts answered by the parent being tuned "
                              f"($T$ = {formats.number(eft.replay_temperature)})"] * n_models,
              f"{sources.spec_path} eft.replay_temperature; src/py4/train/eft_data.py replay_rows "
              "(parent = the model tuned)")
    paths = [model.files.get("eft") for model in sources.models]
    allowed = [sources.eft(path).data.allow_held_out_rules for path in paths]
    group.add("Held-out rules in targets", ["allowed" if allow else "none" for allow in allowed],
              f"{files_of(paths)} (data.allow_held_out_rules); py4 train eft refuses a dose with held-out rules; "
              "dose manifest held_out_rules_in_targets")
    return group


def lora(sources: Sources) -> Group:
    group = Group("eft", "LoRA adapter", "on each chat parent")
    paths = [model.files.get("eft") for model in sources.models]
    adapters = [sources.eft(path).lora for path in paths]
    src = f"{files_of(paths)} (lora.r, alpha, dropout, bias, target_modules)"
    group.add("Rank $r$", [str(adapter.r) for adapter in adapters], src)
    group.add("$\\alpha$", [str(adapter.alpha) for adapter in adapters], src)
    group.add("Dropout", [formats.number(adapter.dropout) for adapter in adapters], src)
    group.add("Target modules", [formats.projections(adapter.target_modules) for adapter in adapters], src)
    adapted = [recorded(model.recorded, "adapted_modules") for model in sources.models]
    if len({isinstance(fact, NotRecorded) for fact in adapted}) > 1:
        raise TableError(f"{sources.spec_path}: models.*.recorded.adapted_modules is recorded for some models only")
    group.add("Adapted modules", [str(fact.value) for fact in adapted],
              f"{sources.spec_path} models.*.recorded.adapted_modules (recorded: "
              + "; ".join(fact.provenance for fact in adapted) + ")")
    group.add("Bias", [adapter.bias for adapter in adapters], src)
    return group


def eft_optimisation(sources: Sources) -> Group:
    group = Group("eft", "Optimisation")
    paths = [model.files.get("eft") for model in sources.models]
    configs = [sources.eft(path) for path in paths]
    settings = [config.optimisation for config in configs]
    files = files_of(paths)
    group.add("Epochs", [formats.number(opt.epochs) for opt in settings], f"{files} (optimisation.epochs)")
    group.add("Global batch", [f"{opt.global_batch} rows" for opt in settings],
              f"derived: micro x accum x GPUs of {files}")
    group.label("Optimizer steps")
    for dose in _trained_doses(sources):
        if not all(str(dose) in model.files.per("eft_schedules") for model in sources.models):  # smoke: at run time
            group.add(f"{formats.thousands(dose)}-row dose", [NOT_RECORDED] * len(sources.models),
                      f"{sources.spec_path}: models.*.files.eft_schedules has no {dose}-row schedule", sub=True)
            continue
        schedule_paths = [model.files.per("eft_schedules")[str(dose)] for model in sources.models]
        values = []
        for opt, schedule_path in zip(settings, schedule_paths, strict=True):
            schedule = sources.schedule(schedule_path)
            if schedule.sequences_per_step != opt.global_batch or schedule.epochs != opt.epochs:
                raise TableError(f"{schedule_path}: batch geometry or epochs differ from the EFT config")
            values.append(formats.thousands(schedule.max_steps))
        group.add(f"{formats.thousands(dose)}-row dose", values,
                  f"derived by py4.data.schedule.compute_schedule (rows / global batch x epochs) from "
                  f"{files_of(schedule_paths)}", sub=True)
    group.add("Micro $\\times$ accum. $\\times$ GPUs", [geometry(opt) for opt in settings],
              f"{files} (optimisation.micro_batch, grad_accum, gpus)")
    lr_src = (f"{files} (optimisation.optim, learning_rate, lr_scheduler, min_lr_rate, warmup, weight_decay, "
              "max_grad_norm)")
    group.add("Optimizer", [formats.optimizer(opt.optim) for opt in settings], lr_src)
    group.add("Peak learning rate", [formats.power_of_ten(opt.learning_rate) for opt in settings], lr_src)
    group.add("Schedule", [schedule_words(opt, "short") for opt in settings], lr_src)
    group.add("Weight decay", [formats.number(opt.weight_decay) for opt in settings], lr_src)
    group.add("Gradient clipping", [formats.one_decimal(opt.max_grad_norm) for opt in settings], lr_src)
    group.add("Sequence length", [formats.thousands(config.data.max_length)
                                  + (", packed" if config.data.packing else ", no packing") for config in configs],
              f"{files} (data.max_length, data.packing)")
    group.add("Loss", [LOSS_WORDS["eft"]] * len(paths),
              "src/py4/train/eft.py (prompt tokens labelled -100; the assistant turn supervised)")
    launches = files_of([sources.launch_file(opt.gpus) for opt in settings])  # GLM's 4 GPUs
    group.add("Precision", [precision(sources, opt, with_parallelism=False) for opt in settings],
              f"{files} (optimisation.gradient_checkpointing, gpus)"
              + (f"; {launches} (mixed_precision, fsdp_activation_checkpointing)" if launches else ""))
    group.add("Seed", [str(opt.seed) for opt in settings], f"{files} (optimisation.seed)")
    trainers = [recorded(model.recorded, "eft_trainer") for model in sources.models]
    group.add("Trainer", [fact.value for fact in trainers], f"{sources.spec_path} models.*.recorded.eft_trainer "
              "(recorded: " + "; ".join(fact.provenance for fact in trainers) + ")")
    return group


def _grpo_run(sources: Sources) -> tuple[GRPOSpec, ModelSpec]:
    """The campaign's GRPO section and the model it runs on (which names both GRPO config files)."""
    grpo = sources.spec.grpo
    if grpo is None:
        raise TableError(f"{sources.spec_path}: no grpo section")
    model = sources.spec.models[grpo.model]
    if not (model.files.get("eft512_warmstart") and model.files.get("grpo")):
        raise TableError(f"{sources.spec_path}: models.{grpo.model}.files needs eft512_warmstart and grpo")
    return grpo, model


def warm_start(sources: Sources) -> Group:
    grpo, model = _grpo_run(sources)
    path, dose = model.files.get("eft512_warmstart"), grpo.warmstart_dose
    config = sources.eft(path)
    opt, adapter, data = config.optimisation, config.lora, config.data
    group = Group("grpo", "Warm start", f"EFT-{dose}: one LoRA on the bare graft; the step-0 model")
    gold, replay_rows = dose_split(dose, sources.spec.eft.replay_fraction)
    src = (f"{path} (lora, data, optimisation); {sources.spec_path} grpo.warmstart_dose, eft.replay_fraction; "
           "src/py4/train/eft_data.py (gold rows rendered with enable_thinking false; replay rows keep the parent's "
           "thinking)")
    held = "" if data.allow_held_out_rules else "held-in "
    group.add("Training rows", [f"{dose} = {gold} {held}Python-4 gold + {replay_rows} {_replay_name(sources)} replay"],
              src)
    group.add("Code rows", ["rendered without thinking"], src)
    group.add("Replay rows", ["the graft's own thinking, kept and supervised"], src)
    group.add("LoRA rank / $\\alpha$ / dropout",
              [f"{adapter.r} / {adapter.alpha} / {formats.number(adapter.dropout)}"], src)
    group.add("LoRA target modules", [formats.projections(adapter.target_modules)], src)
    group.add("Epochs", [formats.number(opt.epochs)], src)
    batch = opt.global_batch
    group.add("Global batch", [f"{batch} rows"], src)
    # Approximate: replay rows the parent fails to answer are dropped (the as-run replicate kept 510 rows).
    group.add("Optimizer steps", [f"$\\approx${dose // batch * int(opt.epochs)}"],
              f"derived: rows / global batch x epochs; {src}")
    group.add("Learning rate", [f"{formats.power_of_ten(opt.learning_rate)}, {scheduler_head(opt, short=True)}, "
                                f"{warmup_words(opt)}"], src)
    group.add("Sequence length", [formats.thousands(data.max_length)], src)
    group.add("Seed", [str(opt.seed)], src)
    return group


def policy(sources: Sources) -> Group:
    grpo, model = _grpo_run(sources)
    path = model.files.get("grpo")
    config = sources.grpo(path)
    opt, settings, problems, episode = config.optimisation, config.grpo, config.problems, config.episode
    group = Group("grpo", "Policy optimisation", "GRPO, continuing the warm-start LoRA")
    if not config.adapter:
        raise TableError(f"{path}: adapter (the warm-start LoRA) is not set")
    group.add("Policy adapter", ["the warm-start LoRA itself, continued with fresh optimizer state (no second "
                                 "adapter); vision tower frozen"],
              f"{path} (adapter); src/py4/train/grpo.py (adapter loading, frozen modules)")
    per_step, samples = settings.problems_per_step, settings.num_generations
    steps = opt.max_steps
    if steps is None:
        raise TableError(f"{path}: optimisation.max_steps is not set (the GRPO run's length)")
    n_problems = per_step * steps // problems.epochs
    src = f"{path} (problems, grpo, optimisation); {sources.spec_path} grpo.segments"
    group.add("Training problems", [f"{n_problems} held-in-rule problems (disjoint from the EFT rows and both test "
                                    "splits)"],
              f"derived: problems_per_step x max_steps / problems.epochs; {src}; py4.problems.splits "
              f"(split {problems.split})")
    group.add("Problems per step", [str(per_step)], src)
    group.add("Samples per problem ($k$)", [str(samples)], src)
    completions = per_step * samples
    if completions != opt.global_batch:
        raise TableError(f"{path}: problems_per_step x num_generations != micro x accum x gpus")
    group.add("Completions per step", [f"{completions} (per-device batch {opt.micro_batch}, {opt.grad_accum} "
                                       "accumulation steps, one generation round per step)"], src)
    segments = grpo.segments
    # Each segment runs from the previous stop point (the first from 0); no segments give no parts.
    parts = " + ".join(str(end - start) for start, end in zip([0, *segments[:-1]], segments, strict=False))
    times = {1: "once", 2: "twice"}.get(problems.epochs, f"{problems.epochs} times")
    resumed = f" resumed from checkpoint-{segments[-2]}" if len(segments) > 1 else ""
    group.add("Optimizer steps", [f"{steps} ({parts}{resumed}); each problem seen {times}"], src)
    group.add("Learning rate", [f"{formats.power_of_ten(opt.learning_rate)}, {scheduler_head(opt, short=True)}, "
                                f"{warmup_words(opt)}"], src)
    scaled = ("unscaled rewards" if settings.scale_rewards == "none"
              else f"rewards scaled by {settings.scale_rewards}")
    group.add("Loss", [f"{LOSS_TYPE_NAMES[settings.loss_type]}, {scaled}"], src)
    group.add("KL coefficient $\\beta$",
              [formats.number(settings.beta) + (" (no KL term)" if settings.beta == 0 else "")],
              src)
    group.add("Clip range $\\epsilon$ / $\\epsilon_{\\text{high}}$",
              [f"{formats.number(settings.epsilon)} / {formats.number(settings.epsilon_high)}"], src)
    group.add("Truncated completions", ["masked out of the loss" if settings.mask_truncated_completions
                                        else "kept in the loss"], src)
    group.add("Temperature", [formats.number(settings.temperature)], src)
    group.add("Prompt length", [f"$\\le$ {formats.thousands(settings.max_prompt_length)} tokens"], src)
    group.add("Completion length",
              [f"$\\le$ {formats.thousands(episode.token_budget)} tokens over the whole tool loop"],
              f"{path} (episode.token_budget: TRL's max_completion_length over the tool loop)")
    group.add("Thinking", ["on" if episode.enable_thinking else "off"], f"{path} (episode.enable_thinking)")
    group.add("Seed", [str(opt.seed)], src)
    return group


def environment(sources: Sources) -> Group:
    path = _grpo_run(sources)[1].files.get("grpo")
    episode = sources.grpo(path).episode
    group = Group("grpo", "Environment and reward", f"Boa Python-4 interpreter, pinned {sources.spec.report.boa_pin}")
    src = (f"{path} (episode.max_tool_calls, run_timeout_s, output_cap, diagnostics); "
           "src/py4/episodes/environment.py (tools run_code, submit); src/py4/episodes/config.py")
    group.add("Tools", [f"{formats.texttt('run_code')}, {formats.texttt('submit')}"], src)
    group.add("Tool calls per episode", [f"$\\le$ {episode.max_tool_calls}"], src)
    group.add("Run timeout", [f"{formats.number(episode.run_timeout_s)} s"], src)
    group.add("Output cap", [f"{formats.thousands(episode.output_cap)} characters"], src)
    group.add("Diagnostics", ["generic (squashed)" if episode.diagnostics == "generic" else "verbatim"], src)
    rewards = episode.rewards
    reward_src = (f"{path} (episode.rewards: certified, uncertified, no_submission, truncated); "
                  "src/py4/episodes/config.py RewardTable; src/py4/boa/certify.py (certified)")
    group.label("Reward")
    group.add("certified solution", [f"{formats.signed(rewards.certified)} (compiles, passes every test, no "
                                     "interpreter warning)"], reward_src, sub=True)
    group.add("submitted, uncertified", [formats.signed(rewards.uncertified)], reward_src, sub=True)
    group.add("no submission", [formats.signed(rewards.no_submission)], reward_src, sub=True)
    group.add("truncated", [formats.signed(rewards.truncated)], reward_src, sub=True)
    return group


def stack(sources: Sources) -> Group:
    grpo, model = _grpo_run(sources)
    settings = sources.grpo(model.files.get("grpo")).grpo
    software = recorded(sources.spec.recorded, "grpo_software")
    wall_clock = recorded(sources.spec.recorded, "grpo_wall_clock")
    group = Group("grpo", "Stack and hardware")
    rollouts = (f" ({settings.vllm_mode} rollouts, tensor parallel {settings.vllm_tensor_parallel_size})"
                if settings.use_vllm else "")
    src = (f"{sources.spec_path} recorded.grpo_software (recorded: {software.provenance}); {model.files.get('grpo')} "
           f"(grpo.use_vllm, vllm_mode, vllm_tensor_parallel_size); {sources.spec_path} "
           f"models.{grpo.model}.gpus; recorded.grpo_wall_clock ({wall_clock.provenance})")
    group.add("Software", [f"{software.value}{rollouts}"], src)
    group.add("Hardware", [f"{model.gpus} $\\times$ {model.gpu_type}"], src)
    group.add("Wall clock", [wall_clock.value], src)
    return group
