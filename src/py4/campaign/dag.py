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
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any

from py4.campaign.spec import CampaignSpec, ModelSpec
from py4.evaluate.serve import ServerPlan, plan_server

# The graft is built on each arm's midtraining endpoint (before SFT); the hyperparameter
# table's 'Grafted onto' row cites this.
GRAFT_ONTO = "midtrain"


@dataclass
class Node:
    id: str
    stage: str
    argv: list[str]
    run_dir: str
    inputs: list[str] = field(default_factory=list)
    gpus: int = 0
    config: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    server: ServerPlan | None = None
    """An evaluation through a served endpoint: the server the runner starts around this run."""

    @property
    def launch_argv(self) -> list[str] | None:
        """Multi-GPU training runs start under accelerate + FSDP2 (configs/accelerate/); None otherwise.

        accelerate is started by this interpreter (``python -m accelerate.commands.launch``), not
        as a bare ``accelerate`` looked up on PATH: the runner must work from ``.venv/bin/py4``
        without an activated venv, and must never pick up another environment's accelerate.
        """
        if self.gpus > 1 and self.argv[:1] == ["train"]:
            return [sys.executable, "-m", "accelerate.commands.launch",
                    "--config_file", f"configs/accelerate/fsdp2_{self.gpus}gpu.yaml",
                    "-m", "py4.train", *self.argv[1:]]
        return None

    @property
    def command(self) -> str:
        launch = self.launch_argv
        return shlex.join(launch) if launch else "py4 " + shlex.join(self.argv)

    def to_json(self) -> dict[str, Any]:
        out = {"id": self.id, "stage": self.stage, "command": self.command, "argv": self.argv,
               "run_dir": self.run_dir, "inputs": self.inputs, "gpus": self.gpus, "config": self.config,
               "meta": self.meta}
        if self.server:
            out["server"] = self.server.to_json()
        return out


class DagError(ValueError):
    """The spec does not expand to a valid DAG (unknown input, cycle, duplicate id)."""


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

    def tokenizer_overrides(self, key: str) -> list[str]:
        return [f"{key}={self.out}/assets/tokenizer"] if self.smoke() else []


def _gpus(spec_gpus: int, smoke: bool) -> int:
    return 0 if smoke else spec_gpus


def build_dag(spec: CampaignSpec) -> list[Node]:
    """Expand a campaign into its runs, in a dependency (topological) order.

    Raises DagError for a node that names an unknown input.
    """
    b = _Builder(spec)
    _global_nodes(b)
    for key, model in spec.models.items():
        _model_nodes(b, key, model)
    _compare_probes_with_control(b)
    for node in b.nodes.values():
        node.argv += spec.stage_overrides.get(node.stage, [])
    return topological(list(b.nodes.values()))


def _global_nodes(b: _Builder) -> None:
    spec, out = b.spec, b.out
    deps: list[str] = []
    if spec.smoke_assets:
        b.add(Node("assets", "assets", ["smoke", "assets", "--out", f"{out}/assets", "--config", spec.smoke_assets],
                   f"{out}/assets", config=spec.smoke_assets))
        deps = ["assets"]
    c = spec.corpus
    b.add(Node("corpus", "corpus", ["corpus", "generate", "--config", c.config, "--out", f"{out}/corpus",
                                    "--no-progress", *b.tokenizer_overrides("tokenizer.name_or_path"),
                                    *c.overrides],
               f"{out}/corpus", deps, config=c.config))
    _subset(b, "corpus_iso", c.iso.value, {"arm": "iso"})


def _subset(b: _Builder, name: str, tokens: int, meta: dict) -> str:
    if name in b.nodes:
        return name
    full = b.spec.corpus.full.value if b.spec.corpus.full else None
    if full is not None and tokens >= full:
        return "corpus"  # the whole corpus is the arm's corpus (GLM prop-token)
    b.add(Node(name, "subset", ["corpus", "subset", "--corpus", f"{b.out}/corpus", "--target-tokens", str(tokens),
                                "--seed", "42", "--out", f"{b.out}/{name}"], f"{b.out}/{name}", ["corpus"],
               meta={**meta, "target_tokens": tokens}))
    return name


def _model_nodes(b: _Builder, key: str, m: ModelSpec) -> None:
    out, spec = b.out, b.spec
    base = f"{out}/{key}"
    smoke_dep = ["assets"] if spec.smoke_assets else []
    sft_data = f"{base}/sft_data"
    b.add(Node(f"{key}/sft_data", "pack", ["data", "pack", "--config", m.files.sft_data, f"out_dir={sft_data}",
                                          *b.tokenizer_overrides("tokenizer"),
                                          *([f"instructions.path={out}/assets/instructions"] if b.smoke() else [])],
               sft_data, smoke_dep, config=m.files.sft_data, meta={"model": key}))
    corpus_of = {"iso": "corpus_iso"}
    if "prop" in spec.arms:
        corpus_of["prop"] = _subset(b, f"corpus_prop_{key}", m.prop_corpus.value, {"arm": "prop", "model": key})
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
    mix_args = ["data", "mix", "--config", m.files.mix[arm], f"out_dir={mix}", *b.tokenizer_overrides("tokenizer")]
    mix_inputs = ["assets"] if spec.smoke_assets else []
    if arm == "control":
        mix_args.append(f"control_target_manifest={out}/{key}/iso/data")
        mix_inputs.append(f"{key}/iso/mix")
    else:
        mix_args.append(f"corpus={out}/{corpus_of[arm]}")
        mix_inputs.append(corpus_of[arm])
    b.add(Node(f"{key}/{arm}/mix", "mix", mix_args, mix, mix_inputs, config=m.files.mix[arm], meta=meta))
    mid_cfg = m.files.midtrain[arm]
    b.add(Node(f"{key}/{arm}/midtrain", "midtrain",
               ["train", "midtrain", "--config", mid_cfg, f"data.path={mix}", f"data.schedule={mix}/step_schedule.json",
                f"run.output_dir={d}/midtrain", *([f"model.path={b.p(m.base.hub_id)}"] if smoke else [])],
               f"{d}/midtrain", [f"{key}/{arm}/mix"], _gpus(_config_gpus(mid_cfg), smoke), mid_cfg, meta))
    b.add(Node(f"{key}/{arm}/sft", "sft",
               ["train", "sft", "--config", m.files.sft, f"model.path={d}/midtrain/model", f"data.path={sft_data}",
                f"data.schedule={sft_data}/step_schedule.json", f"run.output_dir={d}/sft",
                *([f"model.tokenizer_path={b.p(m.it.hub_id)}"] if smoke else [])],
               f"{d}/sft", [f"{key}/{arm}/midtrain", f"{key}/sft_data"], _gpus(_config_gpus(m.files.sft), smoke), m.files.sft, meta))
    graft = ["graft", "--mid", f"{d}/{GRAFT_ONTO}/model", "--it", b.p(m.it.hub_id), "--base", b.p(m.it_base.hub_id),
             "--out", f"{d}/graft", "--no-progress", *(["--config", m.files.graft] if m.files.graft else [])]
    for flag, pin in (("--it-revision", m.it), ("--base-revision", m.it_base)):
        if pin.revision:
            graft += [flag, pin.revision]
    b.add(Node(f"{key}/{arm}/graft", "graft", graft, f"{d}/graft", [f"{key}/{arm}/{GRAFT_ONTO}"], 0, m.files.graft, meta))
    _eval(b, f"{key}/{arm}/graft", f"{d}/graft", {**meta, "model_kind": "graft"})
    _eval(b, f"{key}/{arm}/sft", f"{d}/sft/model", {**meta, "model_kind": "eft", "dose": 0})
    _probe(b, f"{key}/{arm}/midtrain", f"{d}/midtrain/model", None, [f"{key}/{arm}/midtrain"], {**meta, "kind": "midtrain"})
    _probe(b, f"{key}/{arm}/sft", f"{d}/sft/model", None, [f"{key}/{arm}/sft"], {**meta, "kind": "sft", "dose": 0})
    _probe(b, f"{key}/{arm}/graft", f"{d}/graft", None, [f"{key}/{arm}/graft"], {**meta, "kind": "graft"})
    _eft_doses(b, key, m, arm, d, meta)
    if spec.grpo and spec.grpo.model == key and spec.grpo.arm == arm:
        _grpo(b, key, m, d, meta)


def _dose_node(b: _Builder, key: str, m: ModelSpec, d: str, name: str, parent: str, parent_node: str, rows: int,
               split: str, allow_held_out: bool, draw_from: str | None, meta: dict) -> str:
    e = b.spec.eft
    replay = round(rows * e.replay_fraction)
    cfg = m.files.eft_dose
    args = ["train", "eft_dose", "--config", cfg, f"out={d}/{name}", f"gold={rows - replay}", f"replay={replay}",
            f"split={split}", f"allow_held_out_rules={'true' if allow_held_out else 'false'}",
            f"replay_settings.parent.path={parent}", f"replay_settings.temperature={e.replay_temperature}"]
    if b.smoke():
        args.append(f"replay_settings.instructions={b.out}/assets/instructions")
    inputs = [parent_node]
    if draw_from:
        args.append(f"draw_from={d}/{draw_from}")
        inputs.append(f"{key}/{meta['arm']}/{draw_from}")
    node_id = f"{key}/{meta['arm']}/{name}"
    # One process (not an accelerate launch), but it samples its replay answers from the parent on
    # the GPUs it sees (device_map="auto"): a Slurm job asks for as many as serving the model takes.
    serve = b.spec.evaluation.serve
    generate = _gpus(serve.tensor_parallel.get(key, 1) if serve else m.gpus, b.smoke())
    b.add(Node(node_id, "eft_dose", args, f"{d}/{name}", inputs, 0, cfg,
               {**meta, "rows": rows, **({"generate_gpus": generate} if generate else {})}))
    return node_id


def _eft_doses(b: _Builder, key: str, m: ModelSpec, arm: str, d: str, meta: dict) -> None:
    e = b.spec.eft
    doses = sorted((x for x in e.doses if x > 0), reverse=True)
    parent, parent_node = f"{d}/sft/model", f"{key}/{arm}/sft"
    plan = [(x, e.eft_split, False, f"eft_dose_{doses[0]}" if i else None) for i, x in enumerate(doses)]
    if e.matrix_dose:
        plan.append((e.matrix_dose, e.matrix_split, e.matrix_allow_held_out_rules, None))
    for rows, split, allow, draw in plan:
        dose_id = _dose_node(b, key, m, d, f"eft_dose_{rows}", parent, parent_node, rows, split, allow, draw, meta)
        extra = []
        sched = m.files.eft_schedules.get(str(rows))
        if b.smoke() is False and sched:
            extra.append(f"optimisation.epochs={_epochs_of(sched)}")
        if allow:
            extra.append("data.allow_held_out_rules=true")
        extra += e.overrides
        run = f"{d}/eft_{rows}"
        b.add(Node(f"{key}/{arm}/eft_{rows}", "eft",
                   ["train", "eft", "--config", m.files.eft, f"model.path={parent}", f"data.path={d}/eft_dose_{rows}",
                    f"run.output_dir={run}", *extra],
                   run, [parent_node, dose_id], _gpus(_config_gpus(m.files.eft), b.smoke()),
                   m.files.eft, {**meta, "dose": rows, "matrix": rows == e.matrix_dose}))
        _eval(b, f"{key}/{arm}/eft_{rows}", f"{run}/model", {**meta, "model_kind": "eft", "dose": rows,
                                                              "matrix": rows == e.matrix_dose}, base=parent)
        _probe(b, f"{key}/{arm}/eft_{rows}", parent, f"{run}/model", [f"{key}/{arm}/eft_{rows}"],
               {**meta, "kind": "eft", "dose": rows, "matrix": rows == e.matrix_dose})


def _config_gpus(path: str) -> int:
    """optimisation.gpus of a stage config (1 when unset)."""
    from py4.config import read_yaml

    return int((read_yaml(path).get("optimisation") or {}).get("gpus", 1))


def _epochs_of(schedule_path: str) -> int:
    from py4.config import read_yaml

    return int(read_yaml(schedule_path).get("epochs", 1))


def _grpo(b: _Builder, key: str, m: ModelSpec, d: str, meta: dict) -> None:
    g = b.spec.grpo
    graft, graft_node = f"{d}/graft", f"{key}/{g.arm}/graft"
    dose_id = _dose_node(b, key, m, d, f"eft_dose_{g.warmstart_dose}", graft, graft_node, g.warmstart_dose,
                         b.spec.eft.eft_split, False, None, meta)
    warm = f"{d}/eft{g.warmstart_dose}_warmstart"
    b.add(Node(f"{key}/{g.arm}/warmstart", "eft",
               ["train", "eft", "--config", m.files.eft512_warmstart, f"model.path={graft}",
                f"data.path={d}/eft_dose_{g.warmstart_dose}", f"run.output_dir={warm}", *_warmstart_overrides(b.spec)],
               warm, [graft_node, dose_id], _gpus(_config_gpus(m.files.eft512_warmstart), b.smoke()), m.files.eft512_warmstart, {**meta, "dose": g.warmstart_dose}))
    _eval(b, f"{key}/{g.arm}/warmstart", f"{warm}/model", {**meta, "model_kind": "grpo", "step": 0}, base=graft)
    _probe(b, f"{key}/{g.arm}/warmstart", graft, f"{warm}/model", [f"{key}/{g.arm}/warmstart"],
           {**meta, "kind": "grpo", "step": 0, "dose": g.warmstart_dose})
    previous, run = f"{key}/{g.arm}/warmstart", f"{d}/grpo"
    for i, stop in enumerate(g.segments):
        last = i == len(g.segments) - 1
        args = ["train", "grpo", "--config", m.files.grpo, f"model.path={graft}", f"adapter={warm}/model",
                f"run.output_dir={run}", *([] if last else [f"grpo.stop_at_step={stop}"])]
        node_id = f"{key}/{g.arm}/grpo" + ("" if last else f"_to{stop}")
        # Segments share one run folder (resume from checkpoint); each has its own completion record.
        # One training process (the config's optimisation.gpus); the node also holds the vLLM
        # rollout server, so it reserves the model's whole node (models.*.gpus).
        b.add(Node(node_id, "grpo", args, run, [previous], _gpus(_config_gpus(m.files.grpo), b.smoke()), m.files.grpo,
                   {**meta, "segment_end": stop, "shared_run_dir": True,
                    "reserve_gpus": 0 if b.smoke() else m.gpus}))
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


def _eval(b: _Builder, model_node: str, model_path: str, meta: dict, after: str | None = None,
          base: str | None = None) -> None:
    """The model's evaluation on the test splits; with a sanity split, a second run on it alone.

    ``base``: ``model_path`` is a LoRA adapter trained on that model folder (served together).
    """
    ev = b.spec.evaluation
    run = f"{b.out}/eval/{model_node.replace('/', '__')}"
    weights = (model_path, base)
    _eval_node(b, f"eval:{model_node}", run, weights, list(ev.splits), [after or model_node],
               list(ev.overrides), {**meta, "model_node": model_node})
    if ev.sanity_split:
        _sanity_bank(b)
        _eval_node(b, f"eval:{model_node}:{ev.sanity_split}", f"{run}__{ev.sanity_split}", weights,
                   [ev.sanity_split], [after or model_node, "sanity_bank"],
                   [*ev.overrides, *ev.sanity_overrides, f"bank_dir={b.out}/sanity_bank"],
                   {**meta, "model_node": model_node})


def _eval_node(b: _Builder, node_id: str, run: str, weights: tuple[str, str | None], splits: list[str],
               inputs: list[str], overrides: list[str], meta: dict) -> None:
    """``py4 eval`` of one model: in-process (local policy), or through the server it is given."""
    ev = b.spec.evaluation
    model_path, base = weights
    server, served = None, []
    if ev.serve is None:
        model_args, gpus = ["--model", model_path], 0 if b.smoke() else 1
    else:
        server = plan_server(ev.serve, model_path, name=node_id.removeprefix("eval:"), base=base,
                             model_key=meta["model"], scratch=f"{run}/served_model")
        # The client sends the served name (not the weights' path); tool results are counted
        # with the model's own tokenizer; text tool calls are read in the family's format.
        model_args, gpus = ["--endpoint", server.base_url, "--model", server.request_model], server.gpus
        served = [f"policy.tokenizer={base or model_path}", *([f"policy.family={server.family}"] if server.family else [])]
    args = ["eval", "--out", run, *model_args, "--split", ",".join(splits), "--no-progress"]
    if ev.config:
        args += ["--config", ev.config]
    b.add(Node(node_id, "eval", [*args, *served, *overrides], run, inputs, gpus, ev.config,
               {**meta, "splits": splits, "weights": model_path, **({"base": base} if base else {})}, server))


def _sanity_bank(b: _Builder) -> None:
    """Smoke: a bank whose `train_sanity` split is the gold problems of the smallest EFT dose."""
    if "sanity_bank" in b.nodes:
        return
    first_model = next(iter(b.spec.models))
    rows = min(x for x in b.spec.eft.doses if x > 0)
    dose_dir = f"{b.out}/{first_model}/iso/eft_dose_{rows}"
    b.add(Node("sanity_bank", "sanity_bank", ["campaign", "sanity-bank", "--dose", dose_dir, "--out", f"{b.out}/sanity_bank"],
               f"{b.out}/sanity_bank", [f"{first_model}/iso/eft_dose_{rows}"], meta={"dose": rows}))


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
    args = ["eval", "probes", "--model", model_path, "--out", run, "--no-progress"]
    if adapter:
        args += ["--adapter", adapter]
    if meta["kind"] != "base":
        base_node = f"{meta['model']}/base"
        args += ["--base", f"{probe_dir(b.out, base_node)}/results.json"]
        inputs = [*inputs, f"probes:{base_node}"]
    if spec.limit and meta["kind"] not in spec.full_kinds:
        args += ["--limit", str(spec.limit)]
    # As many GPUs as serving the model for evaluation takes (one; GLM-4.5-Air: its tensor-parallel width).
    serve = b.spec.evaluation.serve
    gpus = _gpus(serve.tensor_parallel.get(meta["model"], 1) if serve else 1, b.smoke())
    b.add(Node(f"probes:{model_node}", "probes", args, run, list(inputs), gpus,
               meta={**meta, "model_node": model_node, "weights": model_path, **({"adapter": adapter} if adapter else {})}))


def _compare_probes_with_control(b: _Builder) -> None:
    """A Python-4 arm's probe run also scores the paired difference against the control arm's
    model of the same name (``minus_compare`` in its results.json), so it waits for that run.
    Models only one arm has (the GRPO chain) have no counterpart and are left alone."""
    if b.spec.probes is None or not b.spec.probes.compare_control:
        return
    for node in [n for n in b.nodes.values() if n.stage == "probes"]:
        arm = node.meta.get("arm")
        if arm in (None, "control"):
            continue
        control = node.meta["model_node"].replace(f"/{arm}/", "/control/", 1)
        if f"probes:{control}" in b.nodes:
            node.argv += ["--compare", f"{probe_dir(b.out, control)}/results.json"]
            node.inputs.append(f"probes:{control}")
            node.meta["compare"] = control


def _heldout_loss(b: _Builder, key: str, m: ModelSpec) -> None:
    """Loss of the base and each arm's midtrained model on held-out Python-4 documents.

    The held-out documents: the campaign's corpus config generated again with the spec's
    overrides (another seed), minus any document whose text is in the training corpus.
    """
    h, out = b.spec.heldout_loss, b.out
    if "heldout_corpus" not in b.nodes:
        c = b.spec.corpus
        b.add(Node("heldout_corpus", "heldout_corpus",
                   ["corpus", "generate", "--config", c.config, "--out", f"{out}/heldout_corpus", "--no-progress",
                    *b.tokenizer_overrides("tokenizer.name_or_path"), *c.overrides, *h.overrides],
                   f"{out}/heldout_corpus", ["assets"] if b.spec.smoke_assets else [], config=c.config))
    models = {"base": (b.p(m.base.hub_id), ["assets"] if b.spec.smoke_assets else [])}
    models.update({arm: (f"{out}/{key}/{arm}/midtrain/model", [f"{key}/{arm}/midtrain"]) for arm in b.spec.arms})
    for name, (path, inputs) in models.items():
        run = f"{out}/heldout_loss/{key}__{name}"
        b.add(Node(f"heldout_loss:{key}/{name}", "heldout_loss",
                   ["smoke", "heldout-loss", "--model", path, "--docs", f"{out}/heldout_corpus",
                    "--exclude", f"{out}/corpus", "--max-tokens", str(h.max_tokens), "--out", run],
                   run, ["heldout_corpus", "corpus", *inputs], 0 if b.smoke() else m.gpus,
                   meta={"model": key, "arm": None if name == "base" else name, "kind": "base" if name == "base" else "midtrain",
                         "weights": path}))


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
