"""Campaign spec -> DAG of runs.

corpus -> subsets -> mixes (packed, with step schedules) -> midtrain per arm -> SFT (the chat
parents); midtrain endpoint -> graft; EFT doses on each chat parent (+ the matrix dose);
EFT-512 warm start + GRPO (in resumed segments) on the GRPO model's graft; evaluation of
every model on the test splits (smoke scale: also train_sanity, the EFT-trained problems).

Every node is one `py4 ...` command with its own run folder under the campaign's out_dir.
Paths in the spec may use `{out}` (the campaign's out_dir).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, replace
from typing import Any

from py4.campaign.dataset_pins import use_pinned_datasets
from py4.campaign.node import Node
from py4.campaign.node_meta import (DoseMeta, EFTMeta, EvalMeta, GRPOSegmentMeta, HeldoutLossMeta, NodeMeta,
                                    ProbeMeta, SanityBankMeta, SubsetMeta)
from py4.campaign.spec import CampaignSpec, ModelSpec
from py4.config import ConfigError
from py4.errors import Py4Error
from py4.evaluate.serve import plan_server
from py4.overrides import Override, overrides
from py4.stages import StageCall, check, get_stage
from py4.stages import load as load_stage_config

# The graft is built on each arm's midtraining endpoint (before SFT); the hyperparameter
# table's 'Grafted onto' row cites this.
GRAFT_ONTO = "midtrain"


class DagError(Py4Error, ValueError):
    """The spec does not expand to a valid DAG (unknown input, cycle, duplicate id): the user's
    campaign to fix, so every command shows it as one line (exit 2)."""


class _Builder:
    def __init__(self, spec: CampaignSpec):
        self.spec = spec
        self.out = spec.out_dir.rstrip("/")
        self.nodes: dict[str, Node] = {}

    def p(self, text: str | None) -> str | None:
        return text.replace("{out}", self.out) if text else text

    def add(self, node: Node) -> Node:
        if node.id in self.nodes:
            raise DagError(f"duplicate run id {node.id!r}")
        self.nodes[node.id] = node
        return node

    def smoke(self) -> bool:
        return self.spec.scale == "smoke"

    def tokenizer_overrides(self, key: str) -> list[Override]:
        return overrides({key: f"{self.out}/assets/tokenizer"} if self.smoke() else {})

    def gpus(self, count: int) -> int:
        """A run's GPUs: none at smoke scale (CPU), else ``count``."""
        return 0 if self.smoke() else count


def build_dag(spec: CampaignSpec, check: bool = True) -> list[Node]:
    """Expand a campaign into its runs, in a dependency (topological) order.

    Raises DagError for a node that names an unknown input, or (with ``check``) a training run
    that cannot run as its stage config says (`set_training_gpus`, which reads every training
    config with its overrides). All the nodes' overrides are checked against their stages'
    config types by `check_dag` (``py4 campaign plan`` and ``run``). Without ``check`` (what reads
    a campaign's records: status, cancel, the results report) a config that does not load or
    does not fit leaves its run's GPU count unread instead: a broken config must not stop
    anyone from seeing or cancelling what runs.
    """
    b = _Builder(spec)
    _global_nodes(b)
    for key, model in spec.models.items():
        _model_nodes(b, key, model)
    _compare_probes_with_control(b)
    b.nodes = use_pinned_datasets(spec, b.nodes)  # the Hub datasets the spec pins, read by its runs
    for node in b.nodes.values():
        node.overrides += overrides(spec.stage_overrides.get(node.stage, []))
    nodes = topological(list(b.nodes.values()))
    set_training_gpus(nodes, spec, check=check)
    return nodes


def training_config(call: StageCall) -> Any | None:
    """A training run's stage config as the call resolves it (the config type's defaults, the
    file, then every override the call carries, in order: the node's own, the spec's
    stage_overrides, a rehearsal's per-model ones). None for a stage whose config has no
    ``optimisation`` (eft_dose, eval, ...).

    Raises ConfigError when the call's config does not load.
    """
    stage = get_stage(call.stage)
    if stage.config_type is None or "optimisation" not in stage.config_class().model_fields:
        return None
    return load_stage_config(call)


def set_training_gpus(nodes: list[Node], spec: CampaignSpec, check: bool = True) -> None:
    """Each training run's ``gpus``: ``optimisation.gpus`` of its call's resolved config
    (`training_config`), the one source of its Slurm request, its ``--num_processes`` and the
    world size the stage checks. Call it again after adding overrides to built nodes (the
    rehearsal's per-model ones). At smoke scale a training run is this process on the CPU: it
    asks for no GPU.

    Raises DagError listing every run whose layout cannot run (fewer than one GPU; more than one
    at smoke scale, where nothing is launched, or for a stage with no launch module; a global
    batch other than its step schedule's), or, when a training config does not load, every
    problem of every run (`check_dag`). Without ``check`` it raises nothing: a run whose config
    does not load keeps the GPU count it had (`unresolved_training_runs` lists them).
    """
    problems, unloadable = [], False
    schedule_makers = {f"{n.run_dir}/step_schedule.json": n for n in nodes if n.stage in ("pack", "mix")}
    for node in nodes:
        try:
            config = training_config(node.call)
        except ConfigError:
            unloadable = True
            continue
        if config is None:
            continue
        gpus = config.optimisation.gpus
        node.gpus = 0 if spec.scale == "smoke" else gpus
        problem = _layout_problem(node.stage, gpus, spec.scale == "smoke")
        if problem:
            problems.append(f"run {node.id}: {node.config}: optimisation.gpus is {gpus}{problem}")
        maker = schedule_makers.get(str(getattr(getattr(config, "data", None), "schedule", None)))
        try:
            problems += _schedule_problem(node, config.optimisation, maker) if maker is not None else []
        except ConfigError:  # the pack's or mix's own config: check_dag names it
            unloadable = True
    if not check:
        return
    if unloadable:
        check_dag(nodes)  # raises, naming each run, file and field (as `py4 campaign plan` does)
    if problems:
        raise DagError(f"{len(problems)} training run(s) cannot run as configured:\n"
                       + "\n".join(f"  - {p}" for p in problems))


def unresolved_training_runs(nodes: list[Node]) -> list[str]:
    """Ids of the training runs whose stage config does not load (from this folder, with their
    overrides): their GPU count, and so their command line, is unknown."""
    unresolved = []
    for node in nodes:
        try:
            training_config(node.call)
        except ConfigError:
            unresolved.append(node.id)
    return unresolved


def _schedule_problem(node: Node, optimisation: Any, maker: Node) -> list[str]:
    """The run's global batch against the one its step schedule is counted for (the run that
    packs its data): a run stepping with another batch would stop after the schedule's steps
    having trained on more or less data than the schedule says (py4.train.common.check_schedule
    refuses it when the run starts; here it is refused before anything runs)."""
    schedule = load_stage_config(maker.call).schedule
    if schedule is None:
        return []
    per_step = schedule.micro_batch * schedule.grad_accum * schedule.gpus
    if per_step == optimisation.global_batch:
        return []
    return [f"run {node.id}: {node.config}: optimisation trains {optimisation.global_batch} sequences per step "
            f"(micro_batch {optimisation.micro_batch} × grad_accum {optimisation.grad_accum} × gpus "
            f"{optimisation.gpus}), but run {maker.id} ({maker.config}) counts its step schedule for {per_step} "
            f"(schedule.micro_batch {schedule.micro_batch} × grad_accum {schedule.grad_accum} × gpus "
            f"{schedule.gpus}): set both the same"]


def _layout_problem(stage: str, gpus: int, smoke: bool) -> str | None:
    """Why ``gpus`` processes of ``stage`` cannot run (the text after 'optimisation.gpus is N'), or None."""
    if gpus < 1:
        return "; a training run needs at least 1"
    if gpus > 1 and smoke:
        return ", but at smoke scale a training run is one CPU process in the runner (set it to 1)"
    if gpus > 1 and not get_stage(stage).multi_gpu:
        return f", but stage {stage} does not run as {gpus} processes (py4.stages: multi_gpu)"
    return None


def check_dag(nodes: list[Node]) -> None:
    """Every node's call loads against its stage's types (config file, flags, overrides), before
    anything runs. Raises DagError listing each problem with its run, stage and field."""
    problems = [f"run {n.id} ({n.stage}): {p}" for n in nodes for p in check(n.call)]
    if problems:
        raise DagError(f"{len(problems)} problem(s) in the campaign's runs:\n"
                       + "\n".join(f"  - {p}" for p in problems))


def _global_nodes(b: _Builder) -> None:
    spec, out = b.spec, b.out
    deps: list[str] = []
    if spec.smoke_assets:
        b.add(Node(id="assets", stage="assets", config=spec.smoke_assets, options={"out": f"{out}/assets"},
                   run_dir=f"{out}/assets"))
        deps = ["assets"]
    c = spec.corpus
    b.add(Node(id="corpus", stage="corpus", config=c.config, options={"out": f"{out}/corpus", "progress": False},
               overrides=[*b.tokenizer_overrides("tokenizer.name_or_path"), *overrides(c.overrides)],
               run_dir=f"{out}/corpus", inputs=deps))
    _subset(b, "corpus_iso", c.iso.value, NodeMeta(arm="iso"))


def _subset(b: _Builder, name: str, tokens: int, meta: NodeMeta) -> str:
    if name in b.nodes:
        return name
    full = b.spec.corpus.full.value if b.spec.corpus.full else None
    if full is not None and tokens >= full:
        return "corpus"  # the whole corpus is the arm's corpus (GLM prop-token)
    b.add(Node(id=name, stage="subset", run_dir=f"{b.out}/{name}", inputs=["corpus"],
               options={"corpus": f"{b.out}/corpus", "target_tokens": tokens, "seed": 42, "out": f"{b.out}/{name}"},
               meta=SubsetMeta(model=meta.model, arm=meta.arm, target_tokens=tokens)))
    return name


def _model_nodes(b: _Builder, key: str, m: ModelSpec) -> None:
    out, spec = b.out, b.spec
    base = f"{out}/{key}"
    smoke_dep = ["assets"] if spec.smoke_assets else []
    sft_data = f"{base}/sft_data"
    b.add(Node(id=f"{key}/sft_data", stage="pack", config=m.files.get("sft_data"), run_dir=sft_data, inputs=smoke_dep,
               overrides=[*overrides({"out_dir": sft_data}), *b.tokenizer_overrides("tokenizer"),
                          *overrides({"instructions.path": f"{out}/assets/instructions"} if b.smoke() else {})],
               meta=NodeMeta(model=key)))
    corpus_of = {"iso": "corpus_iso"}
    if "prop" in spec.arms:
        corpus_of["prop"] = _subset(b, f"corpus_prop_{key}", m.prop_corpus.value, NodeMeta(model=key, arm="prop"))
    _probe(b, f"{key}/base", b.p(m.base.hub_id), None, smoke_dep, {"model": key, "arm": None, "kind": "base"})
    for arm in spec.arms:
        _arm_nodes(b, key, m, arm, corpus_of, sft_data)
    if spec.heldout_loss:
        _heldout_loss(b, key, m)


def _arm_nodes(b: _Builder, key: str, m: ModelSpec, arm: str, corpus_of: dict, sft_data: str) -> None:
    out, spec, smoke = b.out, b.spec, b.smoke()
    d = f"{out}/{key}/{arm}"
    meta = {"model": key, "arm": arm}
    mix = f"{d}/data"
    mix_inputs = ["assets"] if spec.smoke_assets else []
    if arm == "control":
        # Token-matched to the iso arm's mix as built: its manifest is the target, not a number
        # the config file may record (a control mix takes exactly one of the two).
        source = {"control_target_tokens": None, "control_target_manifest": f"{out}/{key}/iso/data"}
        mix_inputs.append(f"{key}/iso/mix")
    else:
        source = {"corpus": f"{out}/{corpus_of[arm]}"}
        mix_inputs.append(corpus_of[arm])
    b.add(Node(id=f"{key}/{arm}/mix", stage="mix", config=m.files.of("mix", arm), run_dir=mix, inputs=mix_inputs,
               meta=NodeMeta(**meta),
               overrides=[*overrides({"out_dir": mix}), *b.tokenizer_overrides("tokenizer"), *overrides(source)]))
    mid_cfg = m.files.of("midtrain", arm)
    mid = overrides({"data.path": mix, "data.schedule": f"{mix}/step_schedule.json", "run.output_dir": f"{d}/midtrain",
                     **(_source("model.path", "model.revision", b.p(m.base.hub_id), m.base.revision) if smoke else {})})
    b.add(Node(id=f"{key}/{arm}/midtrain", stage="midtrain", config=mid_cfg, overrides=mid, run_dir=f"{d}/midtrain",
               inputs=[f"{key}/{arm}/mix"], meta=NodeMeta(**meta)))
    sft = overrides({"model.path": f"{d}/midtrain/model", "data.path": sft_data,
                     "data.schedule": f"{sft_data}/step_schedule.json", "run.output_dir": f"{d}/sft",
                     **(_source("model.tokenizer_path", "model.tokenizer_revision", b.p(m.it.hub_id), m.it.revision)
                        if smoke else {})})
    b.add(Node(id=f"{key}/{arm}/sft", stage="sft", config=m.files.get("sft"), overrides=sft, run_dir=f"{d}/sft",
               inputs=[f"{key}/{arm}/midtrain", f"{key}/sft_data"], meta=NodeMeta(**meta)))
    b.add(Node(id=f"{key}/{arm}/graft", stage="graft", config=m.files.get("graft"), run_dir=f"{d}/graft",
               options={"mid": f"{d}/{GRAFT_ONTO}/model", "it": b.p(m.it.hub_id), "base": b.p(m.it_base.hub_id),
                        "out": f"{d}/graft", "progress": False, "it_revision": m.it.revision,
                        "base_revision": m.it_base.revision},
               inputs=[f"{key}/{arm}/{GRAFT_ONTO}"], meta=NodeMeta(**meta)))
    _eval(b, f"{key}/{arm}/graft", f"{d}/graft", {**meta, "model_kind": "graft"})
    _eval(b, f"{key}/{arm}/sft", f"{d}/sft/model", {**meta, "model_kind": "eft", "dose": 0})
    _probe(b, f"{key}/{arm}/midtrain", f"{d}/midtrain/model", None, [f"{key}/{arm}/midtrain"],
           {**meta, "kind": "midtrain"})
    _probe(b, f"{key}/{arm}/sft", f"{d}/sft/model", None, [f"{key}/{arm}/sft"], {**meta, "kind": "sft", "dose": 0})
    _probe(b, f"{key}/{arm}/graft", f"{d}/graft", None, [f"{key}/{arm}/graft"], {**meta, "kind": "graft"})
    _eft_doses(b, key, m, arm, d, meta)
    if spec.grpo and spec.grpo.model == key and spec.grpo.arm == arm:
        _grpo(b, key, m, d, meta)


@dataclass(frozen=True, kw_only=True)
class Dose:
    """One EFT dose to build (`py4 train eft_dose`): ``rows`` rows of ``split`` for ``parent``."""

    name: str
    """The dose's folder and run name under the arm: ``eft_dose_<rows>``."""
    rows: int
    split: str
    allow_held_out: bool
    parent: str
    """The model folder its replay answers are sampled from."""
    parent_node: str
    draw_from: str | None = None
    """A larger dose's folder name whose rows this one is drawn from (nested doses)."""


def _dose_node(b: _Builder, key: str, m: ModelSpec, d: str, dose: Dose, meta: dict) -> str:
    e = b.spec.eft
    replay = round(dose.rows * e.replay_fraction)
    cfg = m.files.get("eft_dose")
    given = overrides({"out": f"{d}/{dose.name}", "gold": dose.rows - replay, "replay": replay, "split": dose.split,
                       "allow_held_out_rules": dose.allow_held_out, "replay_settings.parent.path": dose.parent,
                       "replay_settings.temperature": e.replay_temperature})
    if b.smoke():
        # Only the folder: the config's own filter stays (the smoke set keeps its tool transcripts).
        given += overrides({"replay_settings.instructions.path": f"{b.out}/assets/instructions"})
    inputs = [dose.parent_node]
    if dose.draw_from:
        given += overrides({"draw_from": f"{d}/{dose.draw_from}"})
        inputs.append(f"{key}/{meta['arm']}/{dose.draw_from}")
    node_id = f"{key}/{meta['arm']}/{dose.name}"
    # One process (not an accelerate launch), but it samples its replay answers from the parent on
    # the GPUs it sees (device_map="auto"): a Slurm job asks for as many as serving the model takes.
    serve = b.spec.evaluation.serve
    generate = b.gpus(serve.tensor_parallel.get(key, 1) if serve else m.gpus)
    b.add(Node(id=node_id, stage="eft_dose", config=cfg, overrides=given, run_dir=f"{d}/{dose.name}", inputs=inputs,
               meta=DoseMeta(**meta, rows=dose.rows, generate_gpus=generate)))
    return node_id


def _eft_doses(b: _Builder, key: str, m: ModelSpec, arm: str, d: str, meta: dict) -> None:
    e = b.spec.eft
    doses = sorted((x for x in e.doses if x > 0), reverse=True)
    parent, parent_node = f"{d}/sft/model", f"{key}/{arm}/sft"
    plan = [Dose(name=f"eft_dose_{x}", rows=x, split=e.eft_split, allow_held_out=False, parent=parent,
                 parent_node=parent_node, draw_from=f"eft_dose_{doses[0]}" if i else None)
            for i, x in enumerate(doses)]
    if e.matrix_dose:
        plan.append(Dose(name=f"eft_dose_{e.matrix_dose}", rows=e.matrix_dose, split=e.matrix_split,
                         allow_held_out=e.matrix_allow_held_out_rules, parent=parent, parent_node=parent_node))
    for dose in plan:
        rows = dose.rows
        dose_id = _dose_node(b, key, m, d, dose, meta)
        extra = {}
        sched = m.files.per("eft_schedules").get(str(rows))
        if b.smoke() is False and sched:
            extra["optimisation.epochs"] = _epochs_of(sched)
        if dose.allow_held_out:
            extra["data.allow_held_out_rules"] = True
        run = f"{d}/eft_{rows}"
        given = [*overrides({"model.path": parent, "data.path": f"{d}/{dose.name}", "run.output_dir": run, **extra}),
                 *overrides(e.overrides)]
        b.add(Node(id=f"{key}/{arm}/eft_{rows}", stage="eft", config=m.files.get("eft"), overrides=given, run_dir=run,
                   inputs=[parent_node, dose_id], meta=EFTMeta(**meta, dose=rows, matrix=rows == e.matrix_dose)))
        _eval(b, f"{key}/{arm}/eft_{rows}", f"{run}/model", {**meta, "model_kind": "eft", "dose": rows,
                                                              "matrix": rows == e.matrix_dose}, base=parent)
        _probe(b, f"{key}/{arm}/eft_{rows}", parent, f"{run}/model", [f"{key}/{arm}/eft_{rows}"],
               {**meta, "kind": "eft", "dose": rows, "matrix": rows == e.matrix_dose})


def _epochs_of(schedule_path: str) -> int:
    from py4.config import read_yaml

    return int(read_yaml(schedule_path).get("epochs", 1))


def _grpo(b: _Builder, key: str, m: ModelSpec, d: str, meta: dict) -> None:
    g = b.spec.grpo
    graft, graft_node = f"{d}/graft", f"{key}/{g.arm}/graft"
    warm_dose = Dose(name=f"eft_dose_{g.warmstart_dose}", rows=g.warmstart_dose, split=b.spec.eft.eft_split,
                     allow_held_out=False, parent=graft, parent_node=graft_node)
    dose_id = _dose_node(b, key, m, d, warm_dose, meta)
    warm = f"{d}/eft{g.warmstart_dose}_warmstart"
    cfg = m.files.get("eft512_warmstart")
    given = [*overrides({"model.path": graft, "data.path": f"{d}/{warm_dose.name}", "run.output_dir": warm}),
             *overrides(_warmstart_overrides(b.spec))]
    b.add(Node(id=f"{key}/{g.arm}/warmstart", stage="eft", config=cfg, overrides=given, run_dir=warm,
               inputs=[graft_node, dose_id], meta=EFTMeta(**meta, dose=g.warmstart_dose)))
    _eval(b, f"{key}/{g.arm}/warmstart", f"{warm}/model", {**meta, "model_kind": "grpo", "step": 0}, base=graft)
    _probe(b, f"{key}/{g.arm}/warmstart", graft, f"{warm}/model", [f"{key}/{g.arm}/warmstart"],
           {**meta, "kind": "grpo", "step": 0, "dose": g.warmstart_dose})
    previous, run = f"{key}/{g.arm}/warmstart", f"{d}/grpo"
    for i, stop in enumerate(g.segments):
        last = i == len(g.segments) - 1
        given = overrides({"model.path": graft, "adapter": f"{warm}/model", "run.output_dir": run,
                           **({} if last else {"grpo.stop_at_step": stop})})
        node_id = f"{key}/{g.arm}/grpo" + ("" if last else f"_to{stop}")
        # Segments share one run folder (resume from checkpoint); each has its own completion record.
        # One training process (the config's optimisation.gpus); the node also holds the vLLM
        # rollout server, so it reserves the model's whole node (models.*.gpus).
        b.add(Node(id=node_id, stage="grpo", config=m.files.get("grpo"), overrides=given, run_dir=run,
                   inputs=[previous],
                   meta=GRPOSegmentMeta(**meta, segment_end=stop, reserve_gpus=b.gpus(m.gpus))))
        previous = node_id
    for step in b.spec.evaluation.grpo_steps:
        _eval(b, f"{key}/{g.arm}/grpo@{step}", f"{run}/checkpoint-{step}", {**meta, "model_kind": "grpo", "step": step},
              after=previous, base=graft)
        _probe(b, f"{key}/{g.arm}/grpo@{step}", graft, f"{run}/checkpoint-{step}", [previous],
               {**meta, "kind": "grpo", "step": step, "dose": g.warmstart_dose})
    _eval(b, f"{key}/{g.arm}/grpo", f"{run}/model", {**meta, "model_kind": "grpo", "step": g.segments[-1]}, base=graft)
    _probe(b, f"{key}/{g.arm}/grpo", graft, f"{run}/model", [previous],
           {**meta, "kind": "grpo", "step": g.segments[-1], "dose": g.warmstart_dose})


def _warmstart_overrides(spec: CampaignSpec) -> list[str]:
    e = spec.eft
    return list(e.overrides if e.warmstart_overrides is None else e.warmstart_overrides)


def _source(field: str, revision_field: str, value: str, revision: str | None) -> dict[str, str]:
    """``field`` set to a model the smoke spec names, with its revision when it pins one (a Hub id)."""
    return {field: value, **({revision_field: revision} if revision else {})}


def _eval(b: _Builder, model_node: str, model_path: str, meta: dict, after: str | None = None,
          base: str | None = None) -> None:
    """The model's evaluation on the test splits; with a sanity split, a second run on it alone.

    ``base``: ``model_path`` is a LoRA adapter trained on that model folder (served together).
    """
    ev = b.spec.evaluation
    run = f"{b.out}/eval/{model_node.replace('/', '__')}"
    weights = (model_path, base)
    _eval_node(b, f"eval:{model_node}", run, weights, list(ev.splits), [after or model_node],
               overrides(ev.overrides), {**meta, "model_node": model_node})
    if ev.sanity_split:
        _sanity_bank(b)
        _eval_node(b, f"eval:{model_node}:{ev.sanity_split}", f"{run}__{ev.sanity_split}", weights,
                   [ev.sanity_split], [after or model_node, "sanity_bank"],
                   [*overrides(ev.overrides), *overrides(ev.sanity_overrides),
                    *overrides({"bank_dir": f"{b.out}/sanity_bank"})],
                   {**meta, "model_node": model_node})


def _eval_node(b: _Builder, node_id: str, run: str, weights: tuple[str, str | None], splits: list[str],
               inputs: list[str], given: list[Override], meta: dict) -> None:
    """``py4 eval`` of one model: in-process (local policy), or through the server it is given."""
    ev = b.spec.evaluation
    model_path, base = weights
    server, served = None, {}
    if ev.serve is None:
        model, gpus = {"model": model_path}, b.gpus(1)
    else:
        server = plan_server(ev.serve, model_path, name=node_id.removeprefix("eval:"), base=base,
                             model_key=meta["model"], scratch=f"{run}/served_model")
        # The client sends the served name (not the weights' path), and names the weights for the
        # record and the training run's trackers; tool results are counted with the model's own
        # tokenizer; text tool calls are read in the family's format.
        model, gpus = {"endpoint": server.base_url, "model": server.request_model}, server.gpus
        served = {"policy.tokenizer": base or model_path, "policy.weights": model_path,
                  **({"policy.family": server.family} if server.family else {}),
                  **({"policy.engine": server.engine} if server.engine != "vllm" else {})}
    b.add(Node(id=node_id, stage="eval", config=ev.config, run_dir=run, inputs=inputs, gpus=gpus, server=server,
               options={"out": run, **model, "split": splits, "progress": False},
               overrides=[*overrides(served), *given],
               meta=EvalMeta(**meta, splits=tuple(splits), weights=model_path, base=base)))


def _sanity_bank(b: _Builder) -> None:
    """Smoke: a bank whose `train_sanity` split is the gold problems of the smallest EFT dose."""
    if "sanity_bank" in b.nodes:
        return
    first_model = next(iter(b.spec.models))
    rows = min(x for x in b.spec.eft.doses if x > 0)
    dose_dir = f"{b.out}/{first_model}/iso/eft_dose_{rows}"
    b.add(Node(id="sanity_bank", stage="sanity_bank", options={"dose": dose_dir, "out": f"{b.out}/sanity_bank"},
               run_dir=f"{b.out}/sanity_bank", inputs=[f"{first_model}/iso/eft_dose_{rows}"],
               meta=SanityBankMeta(dose=rows)))


def probe_dir(out: str, model_node: str) -> str:
    """Where the probes of a model land: ``<out>/probes/<model node, / as __>`` (results.json, results.md)."""
    return f"{out.rstrip('/')}/probes/{model_node.replace('/', '__').replace('@', '_at_')}"


def _probe(b: _Builder, model_node: str, model_path: str, adapter: str | None, inputs: list[str], meta: dict) -> None:
    """``py4 eval probes`` of one model (``adapter``: a LoRA trained on ``model_path``).

    Every model but the base reads the base's results as its floor (``--base``: the base's
    scores are reused, ``minus_base`` in its results.json), so it runs after the base's.
    """
    spec = b.spec.probes
    if spec is None:
        return
    run = probe_dir(b.out, model_node)
    options: dict[str, Any] = {"model": model_path, "out": run, "progress": False, "adapter": adapter}
    if meta["kind"] != "base":
        base_node = f"{meta['model']}/base"
        options["base"] = f"{probe_dir(b.out, base_node)}/results.json"
        inputs = [*inputs, f"probes:{base_node}"]
    if spec.limit and meta["kind"] not in spec.full_kinds:
        options["limit"] = spec.limit
    # As many GPUs as serving the model for evaluation takes (one; GLM-4.5-Air: its tensor-parallel width).
    serve = b.spec.evaluation.serve
    gpus = b.gpus(serve.tensor_parallel.get(meta["model"], 1) if serve else 1)
    b.add(Node(id=f"probes:{model_node}", stage="probes", options=options, run_dir=run, inputs=list(inputs),
               gpus=gpus, meta=ProbeMeta(**meta, model_node=model_node, weights=model_path, adapter=adapter)))


def _compare_probes_with_control(b: _Builder) -> None:
    """A Python-4 arm's probe run also scores the paired difference against the control arm's
    model of the same name (``minus_compare`` in its results.json), so it waits for that run.
    Models only one arm has (the GRPO chain) have no counterpart and are left alone."""
    if b.spec.probes is None or not b.spec.probes.compare_control:
        return
    for node in [n for n in b.nodes.values() if isinstance(n.meta, ProbeMeta)]:
        arm = node.meta.arm
        if arm in (None, "control"):
            continue
        control = node.meta.model_node.replace(f"/{arm}/", "/control/", 1)
        if f"probes:{control}" in b.nodes:
            node.options["compare"] = f"{probe_dir(b.out, control)}/results.json"
            node.inputs.append(f"probes:{control}")
            node.meta = replace(node.meta, compare=control)


def _heldout_loss(b: _Builder, key: str, m: ModelSpec) -> None:
    """Loss of the base and each arm's midtrained model on held-out Python-4 documents.

    The held-out documents: the campaign's corpus config generated again with the spec's
    overrides (another seed), minus any document whose text is in the training corpus.
    """
    h, out = b.spec.heldout_loss, b.out
    if "heldout_corpus" not in b.nodes:
        c = b.spec.corpus
        b.add(Node(id="heldout_corpus", stage="heldout_corpus", config=c.config,
                   options={"out": f"{out}/heldout_corpus", "progress": False},
                   overrides=[*b.tokenizer_overrides("tokenizer.name_or_path"), *overrides(c.overrides),
                              *overrides(h.overrides)],
                   run_dir=f"{out}/heldout_corpus", inputs=["assets"] if b.spec.smoke_assets else []))
    models = {"base": (b.p(m.base.hub_id), ["assets"] if b.spec.smoke_assets else [])}
    models.update({arm: (f"{out}/{key}/{arm}/midtrain/model", [f"{key}/{arm}/midtrain"]) for arm in b.spec.arms})
    for name, (path, inputs) in models.items():
        run = f"{out}/heldout_loss/{key}__{name}"
        b.add(Node(id=f"heldout_loss:{key}/{name}", stage="heldout_loss", run_dir=run,
                   options={"model": path, "docs": f"{out}/heldout_corpus", "exclude": [f"{out}/corpus"],
                            "max_tokens": h.max_tokens, "out": run},
                   inputs=["heldout_corpus", "corpus", *inputs], gpus=b.gpus(m.gpus),
                   meta=HeldoutLossMeta(model=key, arm=None if name == "base" else name,
                                        kind="base" if name == "base" else "midtrain", weights=path)))


def topological(nodes: list[Node]) -> list[Node]:
    """Nodes in dependency order (stable: spec order among ready nodes). Raises DagError."""
    by_id = {n.id: n for n in nodes}
    for n in nodes:
        for i in n.inputs:
            if i not in by_id:
                raise DagError(f"run {n.id!r} needs unknown run {i!r}")
    done: set[str] = set()
    order: list[Node] = []
    pending = list(nodes)
    while pending:
        ready = [n for n in pending if all(i in done for i in n.inputs)]
        if not ready:
            raise DagError("cycle among runs: " + ", ".join(n.id for n in pending[:5]))
        # Take the first ready node in spec order, so chains run depth-first-ish and stay readable.
        node = ready[0]
        order.append(node)
        done.add(node.id)
        pending.remove(node)
    return order


def select(nodes: list[Node], pattern: str | None) -> list[Node]:
    """Nodes whose id matches the glob `pattern` (all when None), plus nothing else."""
    if not pattern:
        return nodes
    return [n for n in nodes if fnmatch.fnmatch(n.id, pattern) or pattern in n.id]
