"""`py4 campaign rehearse`: the campaign's DAG, from its own stage configs, on tiny stand-ins.

1. Assets (``assets``): stand-in models as Hub snapshots at the campaign's pins, stand-in
   datasets in the offline datasets cache, the campaign's accelerate config on CPU processes.
2. The campaign spec is loaded with the rehearsal's size-only overrides
   (configs/rehearsal/<campaign>.yaml) and expanded by the campaign's own ``build_dag``.
3. The campaign's runner (skip-done, resume) runs the nodes, each as a child process in an
   offline environment that reads only the rehearsal's caches, with the interpreter of the
   environment the campaign runs its stage in (``environments``: GRPO in .venv-vllm, the
   rest in this one); multi-GPU nodes start under
   ``accelerate launch`` with the campaign's FSDP2 config (use_cpu changed) as many processes as
   their stage config's ``optimisation.gpus`` says once the rehearsal's overrides are in.
4. A report (REHEARSAL_REPORT.md + rehearsal_report.json): each node's status, seconds,
   key facts from its run manifest, and the end of its log when it failed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Literal

import pydantic

from py4.config import StrictModel, load_config
from py4.rehearsal.logs import last_error
from py4.errors import Py4Error


class DataSizes(StrictModel):
    dolmino_docs: int = pydantic.Field(160, ge=1)
    dolci_kept: int = pydantic.Field(48, ge=1)
    dolci_dropped: int = pydantic.Field(8, ge=0)


class Boundary(StrictModel):
    """A campaign setting a CPU cannot run at all, and the one override that steps around it."""

    stage: str | None = None
    """The stage whose nodes get ``overrides`` (key=value of the stage config)."""
    overrides: list[str] = []
    campaign_overrides: list[str] = []
    """key=value overrides of the campaign spec."""
    why: str


class AccelerateCopy(StrictModel):
    """What the rehearsal changes in the campaign's accelerate config. Not the process count: a
    run's is its stage config's ``optimisation.gpus`` (``stage_overrides`` set it), given on the
    launch's command line (`py4.campaign.node.Node.launch_argv`)."""

    use_cpu: bool = True


class RehearsalConfig(StrictModel):
    """configs/rehearsal/<campaign>.yaml: size-only overrides of a campaign (see that file)."""

    kind: Literal["campaign.rehearsal"] = "campaign.rehearsal"
    campaign: str
    data: DataSizes = DataSizes()
    campaign_overrides: list[str] = []
    corpus: list[str] = []
    stage_overrides: dict[str, list[str]] = {}
    model_stage_overrides: dict[str, dict[str, list[str]]] = {}
    boundaries: dict[str, Boundary] = {}

    @pydantic.model_validator(mode="after")
    def _stages_named(self) -> "RehearsalConfig":
        unnamed = [k for k, b in self.boundaries.items() if b.overrides and not b.stage]
        if unnamed:
            raise ValueError(f"boundaries: {', '.join(unnamed)}: stage overrides need a stage")
        return self
    accelerate: AccelerateCopy = AccelerateCopy()
    resume_drill: list[str] = []
    """Stages whose runs are killed once their first checkpoint is complete and then started
    again, so that the rest of the run resumes from it (``run.resume: auto``)."""
    environments: dict[str, str] = {}
    """Stage -> the virtual environment (a folder, relative to the working directory) whose
    interpreter runs that stage's nodes, as the campaign runs them there; other stages run with
    this interpreter. The campaign's GRPO trainer runs in the vLLM-side environment
    (``make vllm-env``: .venv-vllm; docs/training.md, "GRPO with vLLM")."""


def stage_interpreters(environments: dict[str, str]) -> dict[str, str]:
    """Stage -> the Python of its environment (``<venv>/bin/python``, the venv's own link: not
    resolved, which would leave the environment for the interpreter it was made from)."""
    return {stage: str(Path(venv).absolute() / "bin" / "python") for stage, venv in environments.items()}


def missing_environments(nodes, selected: set[str], interpreters: dict[str, str]) -> list[str]:
    """``stage: interpreter`` for each stage of the chosen nodes whose environment's Python is not there."""
    stages = sorted({n.stage for n in nodes if n.id in selected and n.stage in interpreters})
    return [f"{stage}: {interpreters[stage]}" for stage in stages if not Path(interpreters[stage]).is_file()]


def default_rehearsal_config(campaign_file: str | Path) -> Path:
    """configs/rehearsal/<campaign file name>."""
    return Path("configs/rehearsal") / Path(campaign_file).name


def load_rehearsal(path: str | Path) -> RehearsalConfig:
    return load_config(RehearsalConfig, path)


class Layout:
    """The rehearsal folder."""

    def __init__(self, root: str | Path):
        self.root = Path(root).resolve()
        self.hub = self.root / "hf" / "hub"
        self.datasets = self.root / "hf" / "datasets"
        self.standins = self.root / "standins"
        self.dolci = self.root / "dolci"
        self.accelerate = self.root / "accelerate"
        self.campaign = self.root / "campaign"
        self.logs = self.root / "logs"
        self.inventory = self.root / "assets.json"

    def env(self) -> dict[str, str]:
        """The child processes' environment: offline, only the rehearsal's caches."""
        from py4.rehearsal.hub_cache import offline_env

        return {**os.environ, **offline_env(self.hub), "HF_DATASETS_CACHE": str(self.datasets),
                "HF_HOME": str(self.root / "hf"), "PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false",
                "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}

    def port(self) -> int:
        """A port for this folder's evaluation servers: 20000-39999, from the folder's path."""
        import hashlib

        return 20000 + int(hashlib.sha1(str(self.root).encode()).hexdigest(), 16) % 20000

    def substitute(self, items: list[str]) -> list[str]:
        return [s.replace("{rehearsal}", str(self.root)).replace("{out}", str(self.campaign)) for s in items]


def prepare_assets(spec, config: RehearsalConfig, layout: Layout, log: Callable[[str], None] = print) -> dict:
    """Stand-ins, caches and the accelerate config (rebuilt only when missing). Returns the inventory."""
    from py4.rehearsal import assets

    # What the assets depend on: the data sizes and the accelerate copy's settings (not the overrides).
    from py4.rehearsal.standins import STANDIN_VERSION

    basis = {**config.model_dump(mode="json", include={"data", "accelerate"}), "standins": STANDIN_VERSION}
    if layout.inventory.exists():
        inventory = json.loads(layout.inventory.read_text())
        if inventory.get("basis") == basis:
            log(f"assets: reusing {layout.inventory}")
            return inventory
    t0 = time.monotonic()
    models = assets.install_models(spec, layout.hub, layout.standins)
    data = assets.install_datasets(spec, layout.datasets, layout.dolci, config.data)
    accelerate = assets.write_accelerate_configs(Path("configs/accelerate"), layout.accelerate,
                                                 use_cpu=config.accelerate.use_cpu)
    inventory = {"basis": basis, "models": models, "datasets": data,
                 "accelerate": accelerate, "seconds": round(time.monotonic() - t0, 1)}
    assets.write_inventory(layout.inventory, inventory)
    log(f"assets: {len(models)} model snapshots, {len(data)} datasets in {inventory['seconds']} s -> {layout.root}")
    return inventory


def rehearsal_spec(config: RehearsalConfig, campaign_file: str | Path, layout: Layout):
    """The campaign spec with the rehearsal's size-only overrides and output folder."""
    from py4.campaign.spec import load_campaign

    boundary_overrides = [o for b in config.boundaries.values() for o in b.campaign_overrides]
    spec = load_campaign(campaign_file, [f"out_dir={layout.campaign}", *config.campaign_overrides, *boundary_overrides])
    if spec.evaluation.serve is not None:
        # Each rehearsal folder serves on its own port, so two rehearsals (or a test and a run)
        # never meet on the spec's port; the same folder keeps its port (the nodes' fingerprints).
        serve = spec.evaluation.serve.model_copy(update={"port": layout.port()})
        spec = spec.model_copy(update={"evaluation": spec.evaluation.model_copy(update={"serve": serve})})
    corpus = spec.corpus.model_copy(update={"overrides": [*spec.corpus.overrides, *layout.substitute(config.corpus)]})
    merged: dict[str, list[str]] = {k: list(v) for k, v in spec.stage_overrides.items()}
    for stage, items in config.stage_overrides.items():
        merged.setdefault(stage, []).extend(layout.substitute(items))
    for boundary in config.boundaries.values():
        if boundary.overrides:
            merged.setdefault(boundary.stage, []).extend(boundary.overrides)
    return spec.model_copy(update={"corpus": corpus, "stage_overrides": merged})


def rehearsal_nodes(spec, config: RehearsalConfig, layout: Layout):
    """The campaign's own DAG, plus the per-model overrides; the training runs' GPUs (their
    process counts) read again from their stage configs with those overrides in."""
    from py4.campaign.dag import build_dag, set_training_gpus
    from py4.overrides import overrides

    nodes = build_dag(spec, check=False)  # checked below, once the per-model overrides are in
    for node in nodes:
        extra = config.model_stage_overrides.get(node.meta.model or "", {}).get(node.stage, [])
        node.overrides += overrides(layout.substitute(extra))
    set_training_gpus(nodes, spec)
    return nodes


def choose(nodes, model: str | None, only: str | None) -> set[str]:
    """Ids to run: those of ``model`` and/or matching ``only``, plus everything they need."""
    from py4.campaign.dag import select

    chosen = [n for n in nodes if model is None or n.meta.model == model]
    chosen = select(chosen, only)
    by_id = {n.id: n for n in nodes}
    wanted: set[str] = set()
    stack = [n.id for n in chosen]
    while stack:
        node_id = stack.pop()
        if node_id not in wanted:
            wanted.add(node_id)
            stack.extend(by_id[node_id].inputs)
    return wanted


class ChildExecutor:
    """Runs each node as a child process in the rehearsal's environment, logging to logs/."""

    def __init__(self, layout: Layout, accelerate_configs: dict[str, str], resume_drill: tuple[str, ...] = (),
                 interpreters: dict[str, str] | None = None):
        self.layout = layout
        self.interpreters = dict(interpreters or {})
        self.accelerate_configs = accelerate_configs
        self.resume_drill = set(resume_drill)
        self.seconds: dict[str, float] = {}
        self.drills: dict[str, str] = {}

    def python(self, node) -> str:
        """The interpreter that runs ``node``: its stage's environment's (``environments``), or this one."""
        return self.interpreters.get(node.stage, sys.executable)

    def command(self, node) -> list[str]:
        launch = node.launch_argv
        if not launch:
            return [self.python(node), "-m", "py4", *node.argv]
        # Keep the DAG's launch arguments from --config_file on (--num_processes too); start them
        # with the node's interpreter's accelerate (however the DAG spells the launcher) and the CPU copy.
        argv = list(launch[launch.index("--config_file"):])
        argv[1] = self.accelerate_configs.get(argv[1], argv[1])
        return [self.python(node), "-m", "accelerate.commands.launch", *argv]

    def log_path(self, node) -> Path:
        return self.layout.logs / (node.id.replace("/", "__").replace(":", "__").replace("@", "_at_") + ".log")

    def __call__(self, node) -> None:
        from py4.campaign.runner import RunFailed

        cmd = self.command(node)
        path = self.log_path(node)
        path.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        drill = node.stage in self.resume_drill and not _checkpoints(node.run_dir)
        with open(path, "a", encoding="utf-8") as log:
            if drill:
                self.drills[node.id] = self._kill_at_first_checkpoint(cmd, node, log)
            log.write(f"$ {' '.join(cmd)}\n")
            log.flush()
            proc = subprocess.run(cmd, env=self.layout.env(), stdout=log, stderr=subprocess.STDOUT)
        self.seconds[node.id] = round(time.monotonic() - t0, 1)
        if proc.returncode != 0:
            raise RunFailed(f"exit {proc.returncode}; log {path}: {last_error(path)}")

    def _kill_at_first_checkpoint(self, cmd: list[str], node, log) -> str:
        """Start the run, kill its process group once a checkpoint is complete; say what happened."""
        import contextlib
        import signal

        log.write(f"$ {' '.join(cmd)}   # resume drill: killed at its first complete checkpoint\n")
        log.flush()
        proc = subprocess.Popen(cmd, env=self.layout.env(), stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        processes = node.gpus if node.launch_argv else 1
        while proc.poll() is None:
            done = [c for c in _checkpoints(node.run_dir) if _complete(c, processes)]
            if done:
                # torchrun starts its workers in sessions of their own: kill the whole tree.
                for pid in [*_descendants(proc.pid), proc.pid]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                proc.wait()
                present = ", ".join(c.name for c in _checkpoints(node.run_dir))
                log.write(f"\n# resume drill: killed after {done[0].name} (on disk: {present})\n")
                return f"killed after {done[0].name}, restarted (on disk: {present})"
            time.sleep(0.1)
        return f"finished (exit {proc.returncode}) before any checkpoint was complete: no resume rehearsed"


def _descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children first found, read from /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, stack = [], list(children.get(pid, []))
    while stack:
        child = stack.pop()
        found.append(child)
        stack.extend(children.get(child, []))
    return found


def _complete(checkpoint: Path, processes: int) -> bool:
    """Whether a checkpoint is whole with every process's part in it: process 0 writes
    trainer_state.json last of its files, but each other process writes its RNG state apart."""
    from py4.train.common import checkpoint_problem

    names = [f"rng_state_{i}.pth" for i in range(processes)] if processes > 1 else ["rng_state.pth"]
    return checkpoint_problem(checkpoint) is None and all((checkpoint / name).is_file() for name in names)


def _checkpoints(run_dir: str | Path) -> list[Path]:
    return sorted(Path(run_dir).glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1]))


def missing_campaign_extras() -> list[str]:
    """Requirements of pyproject's ``campaign`` extra whose module this interpreter cannot find."""
    import importlib.util
    import re
    import tomllib

    pyproject = Path("pyproject.toml")
    if not pyproject.exists():
        return []
    extras = tomllib.loads(pyproject.read_text()).get("project", {}).get("optional-dependencies", {})
    missing = []
    for requirement in extras.get("campaign", []):
        name = re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0]
        if importlib.util.find_spec(name.replace("-", "_")) is None:
            missing.append(requirement)
    return missing


def rehearse(campaign_file: str | Path, out: str | Path, config_file: str | Path | None = None,
             model: str | None = None, only: str | None = None, log: Callable[[str], None] = print) -> dict:
    """Prepare assets, run the chosen part of the DAG, write the report. Returns the report."""
    from py4.campaign.runner import default_executors, run_campaign
    from py4.rehearsal.report import build_report, write_report

    config = load_rehearsal(config_file or default_rehearsal_config(campaign_file))
    layout = Layout(out)
    spec = rehearsal_spec(config, campaign_file, layout)
    if model is not None and model not in spec.models:
        raise Py4Error(f"--model {model!r}: not a model of {campaign_file} ({', '.join(spec.models)})")
    # Children inherit the offline environment, the servers the runner starts for evaluations too.
    os.environ.update({k: v for k, v in layout.env().items() if k not in ("OMP_NUM_THREADS",)})
    inventory = prepare_assets(spec, config, layout, log)
    missing = missing_campaign_extras()
    if missing:
        log(f"warning: the campaign extra is not importable here ({', '.join(missing)}): stages that need it "
            "will fail; make rehearsal installs it (pip install -e '.[campaign]' torch==2.13.0), or put it on "
            "PYTHONPATH")
    nodes = rehearsal_nodes(spec, config, layout)
    selected = choose(nodes, model, only)
    interpreters = stage_interpreters(config.environments)
    absent = missing_environments(nodes, selected, interpreters)
    if absent:
        raise Py4Error(f"the rehearsal runs these stages in their own environment (environments in "
                       f"{config_file or default_rehearsal_config(campaign_file)}), which is missing: "
                       f"{'; '.join(absent)}; build it with make vllm-env")
    executor = ChildExecutor(layout, inventory["accelerate"], tuple(config.resume_drill), interpreters)
    t0 = time.monotonic()
    summary = run_campaign(nodes, layout.campaign, {s: executor for s in default_executors()}, selected,
                           progress=False, log=log)
    report = build_report(nodes, selected, layout, executor, summary, config, campaign_file,
                          round(time.monotonic() - t0, 1))
    report["missing_campaign_extras"] = missing
    write_report(report, layout.root)
    return report
