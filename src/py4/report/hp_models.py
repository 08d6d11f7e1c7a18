"""The 'models' part of the hyperparameter table: midtraining, Dolci SFT, the chat-vector graft."""

from __future__ import annotations

from py4.campaign.spec import HubPin, Recorded
from py4.report import formats
from py4.report.hp_sources import NOT_RECORDED, NotRecorded, Sources, TableError, files_of
from py4.report.hp_table import (NUMBER_WORDS, Group, checkpointing, geometry, nickname, precision,
                                 schedule_words)

# Loss wording per stage: what each stage's trainer supervises (src/py4/train/<stage>.py).
LOSS_WORDS = {"midtrain": "next-token on all tokens", "sft": "assistant tokens only", "eft": "assistant turn only"}

ARMS = ("iso", "prop", "control")
ARM_NAMES = {"iso": "iso-token arm", "prop": "prop-token arm", "control": "control arm"}


def midtraining(sources: Sources) -> Group:
    spec, corpus = sources.spec, sources.spec.corpus
    ratio = "1:1" if corpus.replay_ratio == 1.0 else f"1:{formats.number(corpus.replay_ratio)}"
    replay = nickname(spec.replay.name) if spec.replay else "replay"
    group = Group("models", "Midtraining", f"full-parameter, one pass over "
                  f"{NUMBER_WORDS.get(corpus.copies, corpus.copies)} copies of the Python-4 corpus mixed {ratio} "
                  f"with {replay}")
    iso_paths = [model.files.of("midtrain", "iso") for model in sources.models]
    out_dir = spec.out_dir.rstrip("/")
    for model, path in zip(sources.models, iso_paths, strict=True):
        base = sources.midtrain(path).model.path
        if base != model.base.hub_id.replace("{out}", out_dir):  # smoke: {out}/assets/base
            raise TableError(f"{path}: model.path {base!r} is not {model.base.hub_id!r} "
                             f"(models.*.base in {sources.spec_path})")
    group.add("Base model (pretrained)", [HubPin(hub_id=sources.midtrain(path).model.path).name for path in iso_paths],
              f"{files_of(iso_paths)} (model.path, model.revision); {sources.spec_path} models.*.base "
              "(run_manifest.json inputs.model hub_id/revision of each midtrain run)")
    _tokens_per_copy(sources, group)
    _training_tokens(sources, group)
    _steps(sources, group)
    _optimisation(sources, group, "midtrain", iso_paths, "long", with_parallelism=True)
    return group


def _prop_corpora(sources: Sources) -> list[Recorded]:
    """Each model's prop-token arm: Python-4 tokens per copy (recorded)."""
    prop_corpora = [model.prop_corpus for model in sources.models if model.prop_corpus is not None]
    if len(prop_corpora) != len(sources.models):
        raise TableError(f"{sources.spec_path}: models.*.prop_corpus is required for the table")
    return prop_corpora


def _tokens_per_copy(sources: Sources, group: Group) -> None:
    corpus = sources.spec.corpus
    prop_corpora = _prop_corpora(sources)
    src = (f"{sources.spec_path} corpus.iso (recorded: {corpus.iso.provenance}); models.*.prop_corpus (recorded: "
           + "; ".join(f"{model.label}: {prop.provenance}"
                       for model, prop in zip(sources.models, prop_corpora, strict=True))
           + "); control = 0")
    n_models = len(sources.models)
    group.label("Python-4 tokens per copy")
    group.add("iso-token arm", [formats.millions(corpus.iso.value)] * n_models, src, sub=True)
    group.add("prop-token arm", [formats.millions(prop.value) for prop in prop_corpora], src, sub=True)
    group.add("control arm", ["0"] * n_models, src, sub=True)
    mixes = [model.files.per("mix").get("iso") for model in sources.models]
    replay = sources.spec.replay
    if replay is None:  # smoke: a built-in replay stream named by the mix config
        builtin = [str(sources.mix(path).replay.builtin or "?") for path in mixes]
        group.add("Replay corpus", [f"built-in {formats.texttt(name)} text" for name in builtin],
                  f"{files_of(mixes)} (replay.builtin; no replay in {sources.spec_path})")
        return
    group.add("Replay corpus", [f"{nickname(replay.name)}, {formats.texttt(replay.name)}"] * n_models,
              f"{sources.spec_path} replay ({replay.hub_id}@{replay.revision}); {files_of(mixes)} "
              "(replay.hub_id, copies, seed)")


def _mix_tokens(sources: Sources, per_copy: int) -> int:
    corpus = sources.spec.corpus
    return round(per_copy * corpus.copies * (1 + corpus.replay_ratio))


def _training_tokens(sources: Sources, group: Group) -> None:
    iso = _mix_tokens(sources, sources.spec.corpus.iso.value)
    src = (f"derived: Python-4 tokens per copy x corpus.copies ({sources.spec.corpus.copies}) x "
           f"(1 + corpus.replay_ratio) in {sources.spec_path}; the control mix is token-matched to the iso mix "
           "(configs/data/campaign/mix_*_control.yaml control_target_manifest); py4 data mix writes "
           "total_mix_tokens to step_schedule.json")
    group.label("Training tokens")
    group.add("iso-token and control arms", [formats.millions(iso)] * len(sources.models), src, sub=True)
    group.add("prop-token arm", [formats.millions(_mix_tokens(sources, prop.value)) for prop in _prop_corpora(sources)],
              src, sub=True)


def _steps(sources: Sources, group: Group) -> None:
    group.label("Optimizer steps")
    schedule_paths = [path for model in sources.models for path in model.files.per("schedules").values()]
    midtrain_paths = [path for model in sources.models for path in model.files.per("midtrain").values()]
    src = (f"derived by py4.data.schedule.compute_schedule from {files_of(schedule_paths)} (total_tokens, seq_len, "
           "micro x accum x GPUs, rounding: ceil for Gemma, floor of the GLM-tokenizer count for GLM); equals "
           f"optimisation.max_steps of {files_of(midtrain_paths)}")
    if not all(arm in model.files.per("schedules") for model in sources.models for arm in ARMS):
        # smoke: no as-run schedules; `py4 data mix` computes each arm's at run time
        for arm in ARMS:
            group.add(ARM_NAMES[arm], [NOT_RECORDED] * len(sources.models),
                      f"{sources.spec_path}: models.*.files.schedules not given", sub=True)
        return
    for arm in ARMS:
        values = []
        for model in sources.models:
            schedule = sources.schedule(model.files.per("schedules")[arm])
            configured = sources.midtrain(model.files.of("midtrain", arm)).optimisation.max_steps
            if configured != schedule.max_steps:
                raise TableError(f"{model.files.of('midtrain', arm)}: optimisation.max_steps {configured} but "
                                 f"{model.files.per('schedules')[arm]} computes {schedule.max_steps}")
            values.append(formats.thousands(schedule.max_steps))
        group.add(ARM_NAMES[arm], values, src, sub=True)
    iso_schedules = [sources.schedule(model.files.per("schedules")["iso"]) for model in sources.models]
    group.add("Tokens per step", [f"{formats.thousands(schedule.tokens_per_step)} ({schedule.sequences_per_step} "
                                  f"packed sequences of {formats.thousands(schedule.seq_len)})"
                                  for schedule in iso_schedules],
              f"derived: seq_len x micro x accum x GPUs of "
              f"{files_of([model.files.per('schedules')['iso'] for model in sources.models])}")


def _optimisation(sources: Sources, group: Group, stage: str, paths: list[str], warmup_style: str,
                  with_parallelism: bool) -> None:
    load = sources.midtrain if stage == "midtrain" else sources.sft
    settings = [load(path).optimisation for path in paths]
    files = files_of(paths)
    launches = files_of([sources.launch_file(opt.gpus) for opt in settings])
    group.add("Micro $\\times$ accum. $\\times$ GPUs", [geometry(opt) for opt in settings],
              f"{files} (optimisation.micro_batch, grad_accum, gpus); {sources.spec_path} models.*.gpus")
    group.add("Optimizer", [formats.optimizer(opt.optim) for opt in settings], f"{files} (optimisation.optim)")
    lr_src = f"{files} (optimisation.learning_rate, lr_scheduler, min_lr_rate, warmup)"
    group.add("Peak learning rate", [formats.power_of_ten(opt.learning_rate) for opt in settings], lr_src)
    group.add("Schedule", [schedule_words(opt, warmup_style) for opt in settings], lr_src)
    clip_src = f"{files} (optimisation.weight_decay, max_grad_norm)"
    group.add("Weight decay", [formats.number(opt.weight_decay) for opt in settings], clip_src)
    group.add("Gradient clipping", [formats.one_decimal(opt.max_grad_norm) for opt in settings], clip_src)
    run_src = (f"src/py4/train/{stage}.py (labels); {files} (optimisation.gradient_checkpointing, seed); {launches} "
               "(mixed_precision, fsdp_version, fsdp_activation_checkpointing)")
    group.add("Loss", [LOSS_WORDS[stage]] * len(settings), run_src)
    group.add("Precision / parallelism", [precision(sources, opt, with_parallelism) for opt in settings], run_src)
    group.add("Seed", [str(opt.seed) for opt in settings], run_src)
    assert all(isinstance(checkpointing(sources, opt), bool) for opt in settings)


def sft(sources: Sources) -> Group:
    group = Group("models", "Instruction SFT (Dolci)",
                  "full-parameter, from each arm's midtraining endpoint; makes the chat parents")
    paths = [model.files.get("sft") for model in sources.models]
    data_paths = [model.files.get("sft_data") for model in sources.models]
    if sources.spec.sft_rows is None or sources.spec.sft_data is None:  # smoke: local instructions, nothing recorded
        group.add("Data", [NotRecorded().value] * len(paths),
                  f"{sources.spec_path}: no sft_data / sft_rows recorded; {files_of(data_paths)}")
    else:
        rows = sources.spec.sft_rows.value
        for path in data_paths:
            if sources.pack(path).expected_rows_kept != rows["kept"]:
                raise TableError(f"{path}: expected_rows_kept differs from sft_rows in {sources.spec_path}")
        group.add("Data", [f"{formats.texttt(sources.spec.sft_data.hub_id)}, {formats.thousands(rows['kept'])} "
                           "filtered rows"] * len(paths),
                  f"{sources.spec_path} sft_data, sft_rows (recorded: {sources.spec.sft_rows.provenance}); "
                  f"{files_of(data_paths)} (instructions.hub_id, filter strict_alternation)")
    steps, tokens_per_step, capped = [], [], []
    for path, data_path in zip(paths, data_paths, strict=True):
        optimisation, pack = sources.sft(path).optimisation, sources.pack(data_path)
        cap = pack.schedule.max_steps_cap if pack.schedule else None
        if optimisation.max_steps != cap:
            raise TableError(f"{data_path}: schedule.max_steps_cap {cap} differs from optimisation.max_steps "
                             f"{optimisation.max_steps} of {path}")
        steps.append(optimisation.max_steps)
        tokens_per_step.append((optimisation.global_batch * pack.seq_len, pack.seq_len))
        capped.append(cap is not None)
    step_src = (f"{files_of(paths)} (optimisation.max_steps); {files_of(data_paths)} (schedule.max_steps_cap: the cap "
                "binds inside one epoch of the filtered rows)")
    # smoke: no step cap in the files (the pack's schedule decides at run time)
    group.add("Optimizer steps", [NOT_RECORDED if n is None else formats.thousands(n) for n in steps], step_src)
    group.add("Tokens per step", [f"{formats.thousands(tokens)} (packed sequences of {formats.thousands(seq_len)})"
                                  for tokens, seq_len in tokens_per_step],
              f"derived: seq_len of {files_of(data_paths)} x micro x accum x GPUs of {files_of(paths)}")
    group.add("Total tokens", [NOT_RECORDED if n is None else formats.millions(n * tokens)
                               + (" (less than one epoch)" if is_capped else "")
                               for n, (tokens, _), is_capped in zip(steps, tokens_per_step, capped, strict=True)],
              step_src)
    _optimisation(sources, group, "sft", paths, "short", with_parallelism=True)
    return group


def graft(sources: Sources) -> Group:
    configs = [sources.graft(model) for model in sources.models]
    group = Group("models", "Chat-vector graft", "$W_{\\text{graft}} = W_{\\text{mid}} + \\lambda\\,(W_{\\text{it}} - "
                  "W_{\\text{base}})$; the RL substrate, no SFT")
    n_models = len(sources.models)
    group.add("Grafted onto ($W_{\\text{mid}}$)", ["each arm's midtraining endpoint (before SFT)"] * n_models,
              "src/py4/campaign/dag.py (graft node: mid = the arm's midtrain output); graft run_manifest.json "
              "inputs.mid")
    group.add("Chat vector ($W_{\\text{it}} - W_{\\text{base}}$)",
              [f"{model.it.name} $-$ {model.it_base.name}" for model in sources.models],
              f"{sources.spec_path} models.*.it, models.*.it_base (pins: "
              + "; ".join(f"{model.it.name}@{model.it.revision} / {model.it_base.name}@{model.it_base.revision}"
                          for model in sources.models) + ")")
    files = files_of([model.files.get("graft") for model in sources.models if model.files.get("graft")])
    fields = "(lambda_, accumulate_dtype, output_dtype, missing)"
    src = (f"{files} {fields}, unset ones at src/py4/graft/config.py GraftConfig's defaults" if files
           else f"src/py4/graft/config.py GraftConfig {fields}") + "; src/py4/graft/plan.py"
    group.add("$\\lambda$", [formats.one_decimal(config.lambda_) for config in configs], src)
    group.add("Tensors", ["every shared tensor, incl.\\ embeddings and norms"] * n_models, src)
    group.add("Arithmetic", [f"{_dtype_words(config.accumulate_dtype)} accumulate, stored "
                             f"{_dtype_words(config.output_dtype)}" for config in configs], src)
    return group


def _dtype_words(dtype: str) -> str:
    """float32 -> fp32, bfloat16 -> bf16 (as the paper writes them)."""
    return {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float64": "fp64"}[dtype]
