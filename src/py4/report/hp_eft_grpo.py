"""The 'eft' and 'grpo' parts of the hyperparameter table."""

from __future__ import annotations

from py4.report import formats as F
from py4.report.hp_models import LOSS_WORDS
from py4.report.hp_sources import NOT_RECORDED, NotRecorded, Sources, TableError, files_of, recorded
from py4.report.hp_table import Group, geometry, nickname, opt, precision, scheduler_head, schedule_words, warmup_words


def dose_split(rows: int, replay_fraction: float) -> tuple[int, int]:
    """(gold, replay) of a dose: replay = round(rows x fraction). 1,024 -> (922, 102), 256 -> (230, 26)."""
    replay = round(rows * replay_fraction)
    return rows - replay, replay


def _replay_name(S: Sources) -> str:
    return nickname(S.spec.sft_data.name) if S.spec.sft_data else "instruction"


def eft_data(S: Sources) -> Group:
    e = S.spec.eft
    replay = _replay_name(S)
    g = Group("eft", "EFT data", f"Boa-certified Python-4 gold solutions to held-in-rule problems, plus {replay} replay")
    n = len(S.models)
    doses = sorted((d for d in e.doses if d > 0), reverse=True)
    src = (f"derived: {S.spec_path} eft.doses, eft.replay_fraction ({e.replay_fraction}) -> replay = round(rows x "
           "fraction); smaller doses drawn from the largest (py4 train eft_dose draw_from); src/py4/train/eft_data.py")
    g.label("Training rows")
    for i, d in enumerate(doses):
        gold, rep = dose_split(d, e.replay_fraction)
        text = (f"{gold} Python-4 gold + {rep} {replay} replay" if i == 0
                else f"{gold} gold + {rep} replay, drawn from the {F.thousands(doses[0])}")
        g.add(f"{F.thousands(d)}-row dose", [text] * n, src, sub=True)
    g.add("Replay rows", [f"{replay} prompts answered by the parent being tuned ($T$ = {F.number(e.replay_temperature)})"] * n,
          f"{S.spec_path} eft.replay_temperature; src/py4/train/eft_data.py replay_rows (parent = the model tuned)")
    paths = [m.files.eft for m in S.models]
    allowed = [S.get(p, "data.allow_held_out_rules") for p in paths]
    g.add("Held-out rules in targets", ["none" if not a else "allowed" for a in allowed],
          f"{files_of(paths)} (data.allow_held_out_rules); py4 train eft refuses a dose with held-out rules; "
          "dose manifest held_out_rules_in_targets")
    return g


def lora(S: Sources) -> Group:
    g = Group("eft", "LoRA adapter", "on each chat parent")
    paths = [m.files.eft for m in S.models]
    loras = [S.get(p, "lora") for p in paths]
    src = f"{files_of(paths)} (lora.r, alpha, dropout, bias, target_modules)"
    g.add("Rank $r$", [str(x["r"]) for x in loras], src)
    g.add("$\\alpha$", [str(x["alpha"]) for x in loras], src)
    g.add("Dropout", [F.number(x["dropout"]) for x in loras], src)
    g.add("Target modules", [F.projections(x["target_modules"]) for x in loras], src)
    rec = [recorded(m.recorded, "adapted_modules") for m in S.models]
    if len({isinstance(r, NotRecorded) for r in rec}) > 1:
        raise TableError(f"{S.spec_path}: models.*.recorded.adapted_modules is recorded for some models only")
    g.add("Adapted modules", [str(r.value) for r in rec],
          f"{S.spec_path} models.*.recorded.adapted_modules (recorded: " + "; ".join(r.provenance for r in rec) + ")")
    g.add("Bias", [x.get("bias", "none") for x in loras], src)
    return g


def eft_optimisation(S: Sources) -> Group:
    g = Group("eft", "Optimisation")
    paths = [m.files.eft for m in S.models]
    opts = [opt(S, p) for p in paths]
    files = files_of(paths)
    g.add("Epochs", [F.number(o["epochs"]) for o in opts], f"{files} (optimisation.epochs)")
    g.add("Global batch", [f"{o['micro_batch'] * o['grad_accum'] * o['gpus']} rows" for o in opts],
          f"derived: micro x accum x GPUs of {files}")
    g.label("Optimizer steps")
    doses = sorted((d for d in S.spec.eft.doses if d > 0), reverse=True)
    for d in doses:
        if not all(str(d) in m.files.eft_schedules for m in S.models):  # smoke: rows / batch at run time
            g.add(f"{F.thousands(d)}-row dose", [NOT_RECORDED] * len(S.models),
                  f"{S.spec_path}: models.*.files.eft_schedules has no {d}-row schedule", sub=True)
            continue
        scheds = [m.files.eft_schedules[str(d)] for m in S.models]
        values = []
        for o, p in zip(opts, scheds):
            s = S.schedule(p)
            if s.sequences_per_step != o["micro_batch"] * o["grad_accum"] * o["gpus"] or s.epochs != o["epochs"]:
                raise TableError(f"{p}: batch geometry or epochs differ from the EFT config")
            values.append(F.thousands(s.max_steps))
        g.add(f"{F.thousands(d)}-row dose", values,
              f"derived by py4.data.schedule.compute_schedule (rows / global batch x epochs) from {files_of(scheds)}",
              sub=True)
    g.add("Micro $\\times$ accum. $\\times$ GPUs", [geometry(o) for o in opts], f"{files} (optimisation.micro_batch, grad_accum, gpus)")
    lr_src = f"{files} (optimisation.optim, learning_rate, lr_scheduler, min_lr_rate, warmup, weight_decay, max_grad_norm)"
    g.add("Optimizer", [F.optimizer(o["optim"]) for o in opts], lr_src)
    g.add("Peak learning rate", [F.power_of_ten(o["learning_rate"]) for o in opts], lr_src)
    g.add("Schedule", [schedule_words(o, "short") for o in opts], lr_src)
    g.add("Weight decay", [F.number(o["weight_decay"]) for o in opts], lr_src)
    g.add("Gradient clipping", [F.one_decimal(o["max_grad_norm"]) for o in opts], lr_src)
    data = [S.get(p, "data") for p in paths]
    g.add("Sequence length", [F.thousands(d["max_length"]) + (", packed" if d.get("packing") else ", no packing")
                              for d in data], f"{files} (data.max_length, data.packing)")
    g.add("Loss", [LOSS_WORDS["eft"]] * len(paths), "src/py4/train/eft.py (prompt tokens labelled -100; the assistant turn supervised)")
    g.add("Precision", [precision(S, o, with_parallelism=False) for o in opts],
          f"{files} (optimisation.gradient_checkpointing); configs/accelerate/fsdp2_4gpu.yaml (GLM, 4 GPUs)")
    g.add("Seed", [str(o["seed"]) for o in opts], f"{files} (optimisation.seed)")
    rec = [recorded(m.recorded, "eft_trainer") for m in S.models]
    g.add("Trainer", [r.value for r in rec], f"{S.spec_path} models.*.recorded.eft_trainer (recorded: "
          + "; ".join(r.provenance for r in rec) + ")")
    return g


def _grpo_model(S: Sources):
    if S.spec.grpo is None:
        raise TableError(f"{S.spec_path}: no grpo section")
    m = S.spec.models[S.spec.grpo.model]
    if not (m.files.eft512_warmstart and m.files.grpo):
        raise TableError(f"{S.spec_path}: models.{S.spec.grpo.model}.files needs eft512_warmstart and grpo")
    return m


def warm_start(S: Sources) -> Group:
    m = _grpo_model(S)
    d = S.spec.grpo.warmstart_dose
    path = m.files.eft512_warmstart
    o, lo, data = opt(S, path), S.get(path, "lora"), S.get(path, "data")
    g = Group("grpo", "Warm start", f"EFT-{d}: one LoRA on the bare graft; the step-0 model")
    gold, rep = dose_split(d, S.spec.eft.replay_fraction)
    src = (f"{path} (lora, data, optimisation); {S.spec_path} grpo.warmstart_dose, eft.replay_fraction; "
           "src/py4/train/eft_data.py (gold rows rendered with enable_thinking false; replay rows keep the parent's thinking)")
    held = "held-in " if not data.get("allow_held_out_rules") else ""
    g.add("Training rows", [f"{d} = {gold} {held}Python-4 gold + {rep} {_replay_name(S)} replay"], src)
    g.add("Code rows", ["rendered without thinking"], src)
    g.add("Replay rows", ["the graft's own thinking, kept and supervised"], src)
    g.add("LoRA rank / $\\alpha$ / dropout", [f"{lo['r']} / {lo['alpha']} / {F.number(lo['dropout'])}"], src)
    g.add("LoRA target modules", [F.projections(lo["target_modules"])], src)
    g.add("Epochs", [F.number(o["epochs"])], src)
    batch = o["micro_batch"] * o["grad_accum"] * o["gpus"]
    g.add("Global batch", [f"{batch} rows"], src)
    # Approximate: replay rows the parent fails to answer are dropped (the as-run replicate kept 510 rows).
    g.add("Optimizer steps", [f"$\\approx${d // batch * int(o['epochs'])}"], f"derived: rows / global batch x epochs; {src}")
    g.add("Learning rate", [f"{F.power_of_ten(o['learning_rate'])}, {scheduler_head(o, short=True)}, {warmup_words(o)}"], src)
    g.add("Sequence length", [F.thousands(data["max_length"])], src)
    g.add("Seed", [str(o["seed"])], src)
    return g


def policy(S: Sources) -> Group:
    m = _grpo_model(S)
    path = m.files.grpo
    cfg, o = S.yaml(path), opt(S, path)
    gr, probs = cfg["grpo"], cfg["problems"]
    g = Group("grpo", "Policy optimisation", "GRPO, continuing the warm-start LoRA")
    if not cfg.get("adapter"):
        raise TableError(f"{path}: adapter (the warm-start LoRA) is not set")
    g.add("Policy adapter", ["the warm-start LoRA itself, continued with fresh optimizer state (no second adapter); "
                             "vision tower frozen"], f"{path} (adapter); src/py4/train/grpo.py (adapter loading, frozen modules)")
    per_step, k = gr["problems_per_step"], gr["num_generations"]
    steps, epochs = o["max_steps"], probs["epochs"]
    n_problems = per_step * steps // epochs
    src = f"{path} (problems, grpo, optimisation); {S.spec_path} grpo.segments"
    g.add("Training problems", [f"{n_problems} held-in-rule problems (disjoint from the EFT rows and both test splits)"],
          f"derived: problems_per_step x max_steps / problems.epochs; {src}; py4.problems.splits (split {probs['split']})")
    g.add("Problems per step", [str(per_step)], src)
    g.add("Samples per problem ($k$)", [str(k)], src)
    completions = per_step * k
    if completions != o["micro_batch"] * o["grad_accum"] * o["gpus"]:
        raise TableError(f"{path}: problems_per_step x num_generations != micro x accum x gpus")
    g.add("Completions per step", [f"{completions} (per-device batch {o['micro_batch']}, {o['grad_accum']} accumulation "
                                   "steps, one generation round per step)"], src)
    segs = S.spec.grpo.segments
    parts = " + ".join(str(b - a) for a, b in zip([0, *segs[:-1]], segs))
    times = {1: "once", 2: "twice"}.get(epochs, f"{epochs} times")
    resumed = f" resumed from checkpoint-{segs[-2]}" if len(segs) > 1 else ""
    g.add("Optimizer steps", [f"{steps} ({parts}{resumed}); each problem seen {times}"], src)
    g.add("Learning rate", [f"{F.power_of_ten(o['learning_rate'])}, {scheduler_head(o, short=True)}, {warmup_words(o)}"], src)
    loss = {"dr_grpo": "Dr.\\ GRPO", "grpo": "GRPO", "dapo": "DAPO"}[gr["loss_type"]]
    scaled = "unscaled rewards" if gr["scale_rewards"] == "none" else f"rewards scaled by {gr['scale_rewards']}"
    g.add("Loss", [f"{loss}, {scaled}"], src)
    g.add("KL coefficient $\\beta$", [F.number(gr["beta"]) + (" (no KL term)" if gr["beta"] == 0 else "")], src)
    g.add("Clip range $\\epsilon$ / $\\epsilon_{\\text{high}}$", [f"{F.number(gr['epsilon'])} / {F.number(gr['epsilon_high'])}"], src)
    g.add("Truncated completions", ["masked out of the loss" if gr["mask_truncated_completions"] else "kept in the loss"], src)
    g.add("Temperature", [F.number(gr["temperature"])], src)
    g.add("Prompt length", [f"$\\le$ {F.thousands(gr['max_prompt_length'])} tokens"], src)
    ep = _episode(S, path)
    g.add("Completion length", [f"$\\le$ {F.thousands(ep.token_budget)} tokens over the whole tool loop"],
          f"{path} (episode.token_budget: TRL's max_completion_length over the tool loop)")
    g.add("Thinking", ["on" if ep.enable_thinking else "off"], f"{path} (episode.enable_thinking)")
    g.add("Seed", [str(o["seed"])], src)
    return g


def _episode(S: Sources, path: str):
    """The GRPO config's `episode` section, validated (defaults filled) by py4.episodes.EpisodeConfig."""
    from py4.config import validate_config
    from py4.episodes.config import EpisodeConfig

    return validate_config(EpisodeConfig, S.yaml(path).get("episode") or {}, f"{path}: episode")


def environment(S: Sources) -> Group:
    m = _grpo_model(S)
    path = m.files.grpo
    ep = _episode(S, path)
    env = {"max_tool_calls": ep.max_tool_calls, "run_timeout_s": ep.run_timeout_s, "output_cap": ep.output_cap,
           "diagnostics": ep.diagnostics}
    g = Group("grpo", "Environment and reward", f"Boa Python-4 interpreter, pinned {S.spec.report.boa_pin}")
    src = (f"{path} (episode.max_tool_calls, run_timeout_s, output_cap, diagnostics); "
           "src/py4/episodes/environment.py (tools run_code, submit); src/py4/episodes/config.py")
    g.add("Tools", [f"{F.texttt('run_code')}, {F.texttt('submit')}"], src)
    g.add("Tool calls per episode", [f"$\\le$ {env['max_tool_calls']}"], src)
    g.add("Run timeout", [f"{F.number(env['run_timeout_s'])} s"], src)
    g.add("Output cap", [f"{F.thousands(env['output_cap'])} characters"], src)
    g.add("Diagnostics", ["generic (squashed)" if env["diagnostics"] == "generic" else "verbatim"], src)
    r = ep.rewards
    rsrc = (f"{path} (episode.rewards: certified, uncertified, no_submission, truncated); "
            "src/py4/episodes/config.py RewardTable; src/py4/boa/certify.py (certified)")
    g.label("Reward")
    g.add("certified solution", [f"{F.signed(r.certified)} (compiles, passes every test, no interpreter warning)"], rsrc, sub=True)
    g.add("submitted, uncertified", [F.signed(r.uncertified)], rsrc, sub=True)
    g.add("no submission", [F.signed(r.no_submission)], rsrc, sub=True)
    g.add("truncated", [F.signed(r.truncated)], rsrc, sub=True)
    return g


def stack(S: Sources) -> Group:
    m = _grpo_model(S)
    gr = S.get(m.files.grpo, "grpo")
    sw = recorded(S.spec.recorded, "grpo_software")
    wall = recorded(S.spec.recorded, "grpo_wall_clock")
    g = Group("grpo", "Stack and hardware")
    rollouts = (f" ({gr['vllm_mode']} rollouts, tensor parallel {gr['vllm_tensor_parallel_size']})"
                if gr.get("use_vllm") else "")
    src = (f"{S.spec_path} recorded.grpo_software (recorded: {sw.provenance}); {m.files.grpo} (grpo.use_vllm, vllm_mode, "
           f"vllm_tensor_parallel_size); {S.spec_path} models.{S.spec.grpo.model}.gpus; recorded.grpo_wall_clock "
           f"({wall.provenance})")
    g.add("Software", [f"{sw.value}{rollouts}"], src)
    g.add("Hardware", [f"{m.gpus} $\\times$ {m.gpu_type}"], src)
    g.add("Wall clock", [wall.value], src)
    return g
