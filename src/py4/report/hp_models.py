"""The 'models' part of the hyperparameter table: midtraining, Dolci SFT, the chat-vector graft."""

from __future__ import annotations

from py4.campaign.spec import HubPin
from py4.report import formats as F
from py4.report.hp_sources import NOT_RECORDED, NotRecorded, Sources, TableError, files_of
from py4.report.hp_table import (NUMBER_WORDS, Group, checkpointing, geometry, nickname, opt, precision,
                                 schedule_words)

# Loss wording per stage: what each stage's trainer supervises (src/py4/train/<stage>.py).
LOSS_WORDS = {"midtrain": "next-token on all tokens", "sft": "assistant tokens only", "eft": "assistant turn only"}


def _mid(S: Sources, arm: str) -> list[str]:
    return [m.files.midtrain[arm] for m in S.models]


def midtraining(S: Sources) -> Group:
    spec, c = S.spec, S.spec.corpus
    ratio = "1:1" if c.replay_ratio == 1.0 else f"1:{F.number(c.replay_ratio)}"
    replay = nickname(spec.replay.name) if spec.replay else "replay"
    g = Group("models", "Midtraining", f"full-parameter, one pass over {NUMBER_WORDS.get(c.copies, c.copies)} "
              f"copies of the Python-4 corpus mixed {ratio} with {replay}")
    mids = _mid(S, "iso")
    out_dir = spec.out_dir.rstrip("/")
    for m, path in zip(S.models, mids):
        if S.get(path, "model.path") != m.base.hub_id.replace("{out}", out_dir):  # smoke: {out}/assets/base
            raise TableError(f"{path}: model.path {S.get(path, 'model.path')!r} is not {m.base.hub_id!r} "
                             f"(models.*.base in {S.spec_path})")
    g.add("Base model (pretrained)", [HubPin(hub_id=S.get(p, "model.path")).name for p in mids],
          f"{files_of(mids)} (model.path, model.revision); {S.spec_path} models.*.base (run_manifest.json "
          "inputs.model hub_id/revision of each midtrain run)")
    _tokens_per_copy(S, g)
    _training_tokens(S, g)
    _steps(S, g)
    _optimisation(S, g, "midtrain", mids, "long", with_parallelism=True)
    return g


def _tokens_per_copy(S: Sources, g: Group) -> None:
    c = S.spec.corpus
    props = [m.prop_corpus for m in S.models]
    if any(p is None for p in props):
        raise TableError(f"{S.spec_path}: models.*.prop_corpus is required for the table")
    src = (f"{S.spec_path} corpus.iso (recorded: {c.iso.provenance}); models.*.prop_corpus (recorded: "
           + "; ".join(f"{m.label}: {m.prop_corpus.provenance}" for m in S.models) + "); control = 0")
    g.label("Python-4 tokens per copy")
    g.add("iso-token arm", [F.millions(c.iso.value)] * len(S.models), src, sub=True)
    g.add("prop-token arm", [F.millions(p.value) for p in props], src, sub=True)
    g.add("control arm", ["0"] * len(S.models), src, sub=True)
    mixes = [m.files.mix.get("iso") for m in S.models]
    replay = S.spec.replay
    if replay is None:  # smoke: a built-in replay stream named by the mix config
        builtin = [str((S.get(p, "replay") or {}).get("builtin", "?")) for p in mixes]
        g.add("Replay corpus", [f"built-in {F.texttt(b)} text" for b in builtin],
              f"{files_of(mixes)} (replay.builtin; no replay in {S.spec_path})")
        return
    g.add("Replay corpus", [f"{nickname(replay.name)}, {F.texttt(replay.name)}"] * len(S.models),
          f"{S.spec_path} replay ({replay.hub_id}@{replay.revision}); {files_of(mixes)} (replay.hub_id, copies, seed)")


def _mix_tokens(S: Sources, per_copy: int) -> int:
    c = S.spec.corpus
    return round(per_copy * c.copies * (1 + c.replay_ratio))


def _training_tokens(S: Sources, g: Group) -> None:
    iso = _mix_tokens(S, S.spec.corpus.iso.value)
    src = (f"derived: Python-4 tokens per copy x corpus.copies ({S.spec.corpus.copies}) x (1 + corpus.replay_ratio) "
           f"in {S.spec_path}; the control mix is token-matched to the iso mix (configs/data/campaign/mix_*_control.yaml "
           "control_target_manifest); py4 data mix writes total_mix_tokens to step_schedule.json")
    g.label("Training tokens")
    g.add("iso-token and control arms", [F.millions(iso)] * len(S.models), src, sub=True)
    g.add("prop-token arm", [F.millions(_mix_tokens(S, m.prop_corpus.value)) for m in S.models], src, sub=True)


def _steps(S: Sources, g: Group) -> None:
    g.label("Optimizer steps")
    names = {"iso": "iso-token arm", "prop": "prop-token arm", "control": "control arm"}
    scheds = [p for m in S.models for p in m.files.schedules.values()]
    src = (f"derived by py4.data.schedule.compute_schedule from {files_of(scheds)} (total_tokens, seq_len, micro x accum "
           "x GPUs, rounding: ceil for Gemma, floor of the GLM-tokenizer count for GLM); equals optimisation.max_steps "
           f"of {files_of([p for m in S.models for p in m.files.midtrain.values()])}")
    if not all(arm in m.files.schedules for m in S.models for arm in ("iso", "prop", "control")):
        # smoke: no as-run schedules; `py4 data mix` computes each arm's at run time
        for arm in ("iso", "prop", "control"):
            g.add(names[arm], [NOT_RECORDED] * len(S.models), f"{S.spec_path}: models.*.files.schedules not given", sub=True)
        return
    for arm in ("iso", "prop", "control"):
        values = []
        for m in S.models:
            sched = S.schedule(m.files.schedules[arm])
            configured = S.get(m.files.midtrain[arm], "optimisation.max_steps")
            if configured != sched.max_steps:
                raise TableError(f"{m.files.midtrain[arm]}: optimisation.max_steps {configured} but "
                                 f"{m.files.schedules[arm]} computes {sched.max_steps}")
            values.append(F.thousands(sched.max_steps))
        g.add(names[arm], values, src, sub=True)
    tps = [S.schedule(m.files.schedules["iso"]) for m in S.models]
    g.add("Tokens per step", [f"{F.thousands(s.tokens_per_step)} ({s.sequences_per_step} packed sequences of "
                              f"{F.thousands(s.seq_len)})" for s in tps],
          f"derived: seq_len x micro x accum x GPUs of {files_of([m.files.schedules['iso'] for m in S.models])}")


def _optimisation(S: Sources, g: Group, stage: str, paths: list[str], warmup_style: str,
                  with_parallelism: bool) -> None:
    opts = [opt(S, p) for p in paths]
    files = files_of(paths)
    accs = files_of([f"configs/accelerate/fsdp2_{o['gpus']}gpu.yaml" for o in opts if o["gpus"] > 1])
    g.add("Micro $\\times$ accum. $\\times$ GPUs", [geometry(o) for o in opts],
          f"{files} (optimisation.micro_batch, grad_accum, gpus); {S.spec_path} models.*.gpus")
    g.add("Optimizer", [F.optimizer(o["optim"]) for o in opts], f"{files} (optimisation.optim)")
    lr_src = f"{files} (optimisation.learning_rate, lr_scheduler, min_lr_rate, warmup)"
    g.add("Peak learning rate", [F.power_of_ten(o["learning_rate"]) for o in opts], lr_src)
    g.add("Schedule", [schedule_words(o, warmup_style) for o in opts], lr_src)
    clip_src = f"{files} (optimisation.weight_decay, max_grad_norm)"
    g.add("Weight decay", [F.number(o["weight_decay"]) for o in opts], clip_src)
    g.add("Gradient clipping", [F.one_decimal(o["max_grad_norm"]) for o in opts], clip_src)
    run_src = (f"src/py4/train/{stage}.py (labels); {files} (optimisation.gradient_checkpointing, seed); {accs} "
               "(mixed_precision, fsdp_version, fsdp_activation_checkpointing)")
    g.add("Loss", [LOSS_WORDS[stage]] * len(opts), run_src)
    g.add("Precision / parallelism", [precision(S, o, with_parallelism) for o in opts], run_src)
    g.add("Seed", [str(o["seed"]) for o in opts], run_src)
    assert all(isinstance(checkpointing(S, o), bool) for o in opts)


def sft(S: Sources) -> Group:
    g = Group("models", "Instruction SFT (Dolci)",
              "full-parameter, from each arm's midtraining endpoint; makes the chat parents")
    paths = [m.files.sft for m in S.models]
    data = [m.files.sft_data for m in S.models]
    if S.spec.sft_rows is None or S.spec.sft_data is None:  # smoke: local instruction data, nothing recorded
        g.add("Data", [NotRecorded().value] * len(paths), f"{S.spec_path}: no sft_data / sft_rows recorded; {files_of(data)}")
    else:
        rows = S.spec.sft_rows.value
        for d in data:
            if S.get(d, "expected_rows_kept") != rows["kept"]:
                raise TableError(f"{d}: expected_rows_kept differs from sft_rows in {S.spec_path}")
        g.add("Data", [f"{F.texttt(S.spec.sft_data.hub_id)}, {F.thousands(rows['kept'])} filtered rows"] * len(paths),
              f"{S.spec_path} sft_data, sft_rows (recorded: {S.spec.sft_rows.provenance}); {files_of(data)} "
              "(instructions.hub_id, filter strict_alternation)")
    opts = [opt(S, p) for p in paths]
    steps, tps, bound = [], [], []
    for o, d in zip(opts, data):
        seq_len = S.get(d, "seq_len")
        cap = S.get(d, "schedule").get("max_steps_cap")
        if o["max_steps"] != cap:
            raise TableError(f"{d}: schedule.max_steps_cap {cap} differs from optimisation.max_steps {o['max_steps']}")
        steps.append(o["max_steps"])
        tps.append((o["micro_batch"] * o["grad_accum"] * o["gpus"] * seq_len, seq_len))
        bound.append(cap is not None)
    step_src = (f"{files_of(paths)} (optimisation.max_steps); {files_of(data)} (schedule.max_steps_cap: the cap binds "
                "inside one epoch of the filtered rows)")
    # smoke: no step cap in the files (the pack's schedule decides at run time)
    g.add("Optimizer steps", [NOT_RECORDED if s is None else F.thousands(s) for s in steps], step_src)
    g.add("Tokens per step", [f"{F.thousands(t)} (packed sequences of {F.thousands(L)})" for t, L in tps],
          f"derived: seq_len of {files_of(data)} x micro x accum x GPUs of {files_of(paths)}")
    g.add("Total tokens", [NOT_RECORDED if s is None else F.millions(s * t) + (" (less than one epoch)" if b else "")
                           for s, (t, _), b in zip(steps, tps, bound)], step_src)
    _optimisation(S, g, "sft", paths, "short", with_parallelism=True)
    return g


def graft(S: Sources) -> Group:
    from py4.graft.config import GraftConfig

    fields = GraftConfig.model_fields
    lam = fields["lambda_"].default
    acc = fields["accumulate_dtype"].default.replace("float", "fp")
    out = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}[fields["output_dtype"].default]
    g = Group("models", "Chat-vector graft", "$W_{\\text{graft}} = W_{\\text{mid}} + \\lambda\\,(W_{\\text{it}} - "
              "W_{\\text{base}})$; the RL substrate, no SFT")
    n = len(S.models)
    g.add("Grafted onto ($W_{\\text{mid}}$)", ["each arm's midtraining endpoint (before SFT)"] * n,
          "src/py4/campaign/dag.py (graft node: mid = the arm's midtrain output); graft run_manifest.json inputs.mid")
    g.add("Chat vector ($W_{\\text{it}} - W_{\\text{base}}$)", [f"{m.it.name} $-$ {m.it_base.name}" for m in S.models],
          f"{S.spec_path} models.*.it, models.*.it_base (pins: "
          + "; ".join(f"{m.it.name}@{m.it.revision} / {m.it_base.name}@{m.it_base.revision}" for m in S.models) + ")")
    src = "src/py4/graft/config.py GraftConfig (lambda_, accumulate_dtype, output_dtype, missing); src/py4/graft/plan.py"
    g.add("$\\lambda$", [F.one_decimal(lam)] * n, src)
    g.add("Tensors", ["every shared tensor, incl.\\ embeddings and norms"] * n, src)
    g.add("Arithmetic", [f"{acc} accumulate, stored {out}"] * n, src)
    return g
