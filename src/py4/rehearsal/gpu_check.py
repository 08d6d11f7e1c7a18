"""The GPU check: what only an accelerator can settle, on one GPU, in one script of at most 9 minutes.

    python -m py4.rehearsal.gpu_check --out DIR                  # on the GPU
    python -m py4.rehearsal.gpu_check --out DIR --tiny           # the same code paths, tiny sizes (CPU)
    python -m py4.rehearsal.gpu_check --out DIR --tiny --steps layers_gemma4_31b,lora_drift

Each probe runs in a child process of its own under its own timeout and writes one JSON
(``DIR/<probe>.json``: status, seconds, facts; for a failure the error and the log's tail); a
failed probe is recorded and the next one runs, and probes that read its output are skipped.
The default probes (``DEFAULT_STEPS``):

1. ``layers_gemma4_31b`` (``py4.rehearsal.gpu_probes``): one sliding and one full-attention layer
   of Gemma-4 31B at the real widths (head dims 256 / 512, 16 / 4 KV heads, ``attention_k_eq_v``)
   with the real 262,144-row embedding and tied head, one training step at 8,192 tokens in bf16:
   peak memory and seconds per layer and for the logits/loss, the SDPA kernels that ran and
   which ones can run these head dims at all, the whole model's step extrapolated.
2. ``layer_glm45_moe``: one GLM-4.5-Air MoE layer (128 routed experts, top 8, one shared) and
   its 151,552-row head, the same measurements.
3. ``lora_drift``: 130 merge/unmerge cycles of PEFT on a 4,096² bf16 projection with a rank-64
   LoRA (TRL's sync to vLLM) against ``py4.train.weight_sync``'s exact sync.
4. ``build`` + ``midtrain``: FSDP2 save and resume in the trainer environment: the Gemma-4 12B
   stand-in class (``Gemma4UnifiedForConditionalGeneration``, real head dims and KV heads,
   the real vocabulary rows) trained by ``configs/train/gemma4_12b/midtrain_iso.yaml`` under
   ``accelerate launch`` with ``configs/accelerate/fsdp2.yaml`` on 1 process: 4 steps,
   checkpoints every 2, then resumed from checkpoint-2; dtypes of the saved model and of the
   sharded checkpoint's parameters and optimizer state.
5. ``grpo_tools``: two GRPO steps of ``configs/train/gemma4_31b/grpo.yaml`` (the one
   override: generation with transformers, as the rehearsal's boundary) on the tiny Gemma-4 -it
   stand-in with its chat template and the episode tools, in the device's transformers.

The older steps (``graft``, ``packed_attention``, ``sft``, ``lora``, ``graft_large``) run the
rest of the 12B pipeline at the ``build`` step's size when named in ``--steps``.

The report: ``DIR/gpu_check_report.json`` and ``DIR/GPU_CHECK_REPORT.md`` (per probe: status,
seconds, facts; then a go/no-go line per campaign stage, :func:`verdicts`). Logs, models and runs
go to ``--work`` (not ``DIR``, which the device tool brings back: at most 8 files). ``--tiny``
uses tiny sizes and runs on CPU (gloo), so the tests prove the paths without a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

PROBES: tuple[str, ...] = ("layers_gemma4_31b", "layer_glm45_moe", "lora_drift", "grpo_tools")
PIPELINE: tuple[str, ...] = ("build", "midtrain", "graft", "packed_attention", "sft", "lora", "graft_large")
STEPS: tuple[str, ...] = PROBES + PIPELINE
DEFAULT_STEPS: tuple[str, ...] = ("layers_gemma4_31b", "layer_glm45_moe", "lora_drift", "build", "midtrain",
                                  "grpo_tools")
NEEDS: dict[str, tuple[str, ...]] = {
    "midtrain": ("build",), "graft": ("midtrain",), "packed_attention": ("graft",),
    "sft": ("graft",), "lora": ("graft",), "graft_large": (),
}
REPO = Path(__file__).resolve().parents[3]
MIDTRAIN_CONFIG = "configs/train/gemma4_12b/midtrain_iso.yaml"
SFT_CONFIG = "configs/train/gemma4_12b/sft.yaml"
EFT_CONFIG = "configs/train/gemma4_12b/eft.yaml"
GRAFT_CONFIG = "configs/graft/gemma4_12b.yaml"
GRPO_CONFIG = "configs/train/gemma4_31b/grpo.yaml"
EFT_31B_CONFIG = "configs/train/gemma4_31b/eft.yaml"
PROCESSES = 1
"""The FSDP2 stages' process count here: their ``optimisation.gpus`` and the launch's ``--num_processes``."""
# Overrides every training stage gets here: one process, no TensorBoard, no progress bars.
RUN_OVERRIDES = (f"optimisation.gpus={PROCESSES}", "run.report_to=[]", "run.progress_bar=false",
                 "model.revision=null")


@dataclass(frozen=True)
class Scale:
    """The sizes of one check: ``FULL`` on the GPU, ``TINY`` the same path on a CPU."""

    name: str
    hidden: int | None  # None: the tiny stand-in's own text sizes (py4.rehearsal.standins)
    intermediate: int | None
    layers: int
    vocab: int | None  # None: the tokenizer's length padded (the tiny stand-in's)
    sliding_window: int | None
    shard_size: str
    seq_len: int  # midtraining / SFT block length
    lora_lengths: tuple[int, int]  # the two LoRA lengths (4,096 twice, then 12,288)
    large_graft_params: int
    large_graft_shard: str
    step_timeout_s: dict[str, int]
    lora_width: int
    lora_rank: int
    lora_alpha: int
    lora_cycles: int


FULL = Scale(
    name="h200", hidden=512, intermediate=2048, layers=6, vocab=262_144,
    sliding_window=1024, shard_size="1GB", seq_len=4096, lora_lengths=(4096, 12288),
    large_graft_params=2_500_000_000, large_graft_shard="5GB",
    step_timeout_s={"layers_gemma4_31b": 110, "layer_glm45_moe": 80, "lora_drift": 45, "build": 45,
                    "midtrain": 130, "grpo_tools": 120,
                    "graft": 45, "packed_attention": 45, "sft": 90, "lora": 120, "graft_large": 120},
    lora_width=4096, lora_rank=64, lora_alpha=128, lora_cycles=130,
)
TINY = Scale(
    name="tiny", hidden=None, intermediate=None, layers=6, vocab=None,
    sliding_window=None, shard_size="400KB", seq_len=128, lora_lengths=(128, 384),
    large_graft_params=2_500_000, large_graft_shard="5MB",
    step_timeout_s=dict.fromkeys(STEPS, 300),
    lora_width=64, lora_rank=8, lora_alpha=16, lora_cycles=130,
)


@dataclass
class StepResult:
    step: str
    status: str  # done | failed | timeout | skipped
    seconds: float
    facts: dict[str, Any]
    error: str | None = None
    log: str | None = None


# --- the work folder ----------------------------------------------------------------------------

class Work:
    """Where each step reads and writes: one JSON per probe and the report in ``out`` (the device
    tool brings ``$OUT`` back: at most 8 files), logs, models, runs and data in ``root``."""

    def __init__(self, out: Path, root: Path | None = None):
        self.out = out
        self.root = root = root or out / "work"
        self.base, self.it = root / "models" / "base", root / "models" / "it"
        self.midtrain, self.graft = root / "runs" / "midtrain", root / "runs" / "graft"
        self.sft, self.lora = root / "runs" / "sft", root / "runs" / "lora"
        self.grpo = root / "runs" / "grpo"
        self.data, self.logs, self.facts = root / "data", root / "logs", root / "facts"

    def fact_file(self, step: str) -> Path:
        """What the step's child writes ({facts} or {error})."""
        return self.facts / f"{step}.json"

    def probe_file(self, step: str) -> Path:
        """The step's result as reported (status, seconds, facts, error, log tail)."""
        return self.out / f"{step}.json"


def _on_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


def _peak_memory() -> dict[str, Any]:
    import torch

    if not torch.cuda.is_available():
        return {"peak_memory_gib": None, "device": "cpu"}
    return {"peak_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
            "device": torch.cuda.get_device_name()}


def _saved_dtypes(folder: Path) -> dict[str, int]:
    """{dtype: tensor count} over the folder's safetensors files (headers only)."""
    from py4.graft.checkpoint import read_safetensors_header

    counts: dict[str, int] = {}
    for shard in sorted(folder.glob("*.safetensors")):
        header, _ = read_safetensors_header(shard)
        for name, entry in header.items():
            if name != "__metadata__":
                counts[entry["dtype"]] = counts.get(entry["dtype"], 0) + 1
    return counts


def changed_tensors(before: Path, after: Path) -> dict[str, int]:
    """How many tensors of ``after`` differ from ``before`` (same names): training moved the weights.

    At a learning rate of 1e-5 a few steps move the fp32 master weights by less than bf16's
    spacing for many of them, so "unchanged" counts in a bf16 save are expected, not a failure."""
    from safetensors import safe_open

    def tensors(folder: Path) -> dict[str, tuple[Path, str]]:
        found = {}
        for shard in sorted(folder.glob("*.safetensors")):
            with safe_open(str(shard), "pt") as handle:
                found.update({name: (shard, name) for name in handle.keys()})
        return found

    old, new = tensors(before), tensors(after)
    changed = 0
    for name in sorted(set(old) & set(new)):
        with safe_open(str(old[name][0]), "pt") as a, safe_open(str(new[name][0]), "pt") as b:
            x, y = a.get_tensor(name), b.get_tensor(name)
            changed += int(x.shape != y.shape or x.dtype != y.dtype or not bool((x == y).all()))
    return {"tensors_compared": len(set(old) & set(new)), "tensors_changed": changed}


# --- step 1: the ~1B stand-ins ------------------------------------------------------------------

def gemma4_check_config(tokenizer, scale: Scale):
    """The 12B stand-in's ``Gemma4UnifiedConfig`` (real head dims and KV heads) with ``scale``'s sizes."""
    from py4.rehearsal.standins import gemma4_12b_config

    sizes = {field: value for field, value in (
        ("hidden_size", scale.hidden), ("intermediate_size", scale.intermediate), ("vocab_size", scale.vocab),
        ("vocab_size_per_layer_input", scale.vocab), ("sliding_window", scale.sliding_window)) if value is not None}
    return gemma4_12b_config(tokenizer, num_hidden_layers=scale.layers, sizes=sizes)


def step_build(work: Work, scale: Scale) -> dict[str, Any]:
    """Base and -it 12B stand-ins as build_standin writes them, at ``scale``, in ``scale.shard_size`` shards."""
    import torch

    from py4.rehearsal import standins

    tokenizer = standins.build_tokenizer("gemma4_12b")
    config = gemma4_check_config(tokenizer, scale)
    t0 = time.monotonic()
    # On the GPU the random init of ~1B parameters takes seconds instead of a minute.
    with torch.device("cuda" if _on_gpu() else "cpu"):
        model = standins._random_model(config, seed=0)
    facts: dict[str, Any] = {"parameters": sum(p.numel() for p in model.parameters()),
                             "text_parameters": sum(p.numel() for n, p in model.named_parameters()
                                                    if "language_model" in n),
                             "init_s": round(time.monotonic() - t0, 1)}
    model = model.cpu()
    for kind, folder in (("base", work.base), ("it", work.it)):
        if kind == "it":
            standins._add_it_delta(model, seed=0)
        model.generation_config.update(**standins._generation_config(tokenizer, "gemma4_12b", kind))
        model.save_pretrained(folder, max_shard_size=scale.shard_size)
        tokenizer.save_pretrained(folder)
        facts[f"{kind}_shards"] = len(list(folder.glob("*.safetensors")))
        facts[f"{kind}_dtypes"] = _saved_dtypes(folder)
    facts["class"] = type(model).__name__
    facts["vocab"] = config.text_config.vocab_size
    return facts


# --- packed data --------------------------------------------------------------------------------

def _documents(tokenizer, count: int, length: int, seed: int) -> list[list[int]]:
    """``count`` token lists of ``length`` from standard-library text (real tokens of the tokenizer)."""
    import random

    from py4.chat.smoke_tokenizer import stdlib_texts

    text = "".join(stdlib_texts(200_000 + 8 * count * length))
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    rng = random.Random(seed)
    starts = [rng.randrange(0, max(1, len(ids) - length)) for _ in range(count)]
    return [ids[s:s + length] for s in starts]


def write_packed(folder: Path, tokenizer, rows: int, seq_len: int, docs_per_row: int, assistant_only: bool) -> Path:
    """A packed dataset as ``py4 data`` writes it: documents kept apart (position ids restart).

    ``assistant_only``: the first half of each document is unsupervised (−100), as a packed SFT
    conversation's user turn is.
    """
    from datasets import Dataset

    doc_len = seq_len // docs_per_row
    columns: dict[str, list] = {"input_ids": [], "labels": [], "position_ids": []}
    for docs in _chunks(_documents(tokenizer, rows * docs_per_row, doc_len, seed=1), docs_per_row):
        ids, labels, positions = [], [], []
        for doc in docs:
            ids += doc
            labels += ([-100] * (len(doc) // 2) + doc[len(doc) // 2:]) if assistant_only else doc
            positions += list(range(len(doc)))
        columns["input_ids"].append(ids)
        columns["labels"].append(labels)
        columns["position_ids"].append(positions)
    Dataset.from_dict(columns).save_to_disk(str(folder))
    return folder


def _chunks(items: list, size: int) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)]


# --- steps 2 and 5: FSDP2 stages under accelerate launch ----------------------------------------

def accelerate_config(work: Work) -> Path:
    """The campaign's FSDP2 config (with ``use_cpu`` without a GPU), nothing else changed."""
    from py4.campaign.node import ACCELERATE_CONFIG
    from py4.rehearsal.assets import write_accelerate_configs

    mapping = write_accelerate_configs(REPO / "configs" / "accelerate", work.root / "accelerate",
                                       use_cpu=not _on_gpu())
    return Path(mapping[str(REPO / ACCELERATE_CONFIG)])


def launch_stage(work: Work, stage: str, config: str, overrides: list[str], log: Path) -> dict:
    """``accelerate launch -m py4.rehearsal.gpu_check --worker STAGE``; returns the worker's facts.

    No timeout here: the step's timeout kills its whole process group, the workers included."""
    facts_file = work.facts / f"{stage}-worker.json"
    facts_file.unlink(missing_ok=True)
    from py4.campaign.node import accelerate_launch

    argv = accelerate_launch(str(accelerate_config(work)), PROCESSES, "-m", "py4.rehearsal.gpu_check",
                             "--worker", stage, "--worker-config", str(REPO / config), "--worker-facts",
                             str(facts_file), "--", *RUN_OVERRIDES, *overrides)
    with log.open("a") as out:
        out.write("$ " + " ".join(argv) + "\n")
        out.flush()
        proc = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, cwd=REPO, env=_child_env())
    if proc.returncode != 0:
        raise RuntimeError(f"{stage} exited {proc.returncode} (see {log})")
    return json.loads(facts_file.read_text())


def _loss_callback():
    from transformers import TrainerCallback

    class Losses(TrainerCallback):
        def __init__(self):
            self.losses: list[float] = []

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "loss" in logs:
                self.losses.append(round(float(logs["loss"]), 4))

    return Losses()


def run_worker(stage: str, config_path: str, overrides: list[str], facts_file: Path) -> None:
    """Inside ``accelerate launch``: the py4 stage from its config + overrides, facts to ``facts_file``."""
    import torch

    from py4.config import load_config
    from py4.train.common import check_optimizer
    from py4.stages import get_stage

    entry = get_stage(stage)
    module, config_type = entry.module(), entry.config_class()
    config = load_config(config_type, config_path, overrides)
    check_optimizer(config.optimisation, config_path)
    losses = _loss_callback()
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    result = module.run(config, callbacks=[losses])
    if int(os.environ.get("RANK", "0")) == 0:
        manifest = json.loads((Path(result.output_dir) / "run_manifest.json").read_text())
        facts = {**asdict(result), "losses": losses.losses, **_peak_memory(),
                 "saved_model": manifest.get("saved_model"), "loading": manifest.get("loading"),
                 "saved_dtypes": _saved_dtypes(Path(result.model_dir))}
        facts_file.write_text(json.dumps(facts, indent=2) + "\n")


def step_midtrain(work: Work, scale: Scale, log: Path) -> dict[str, Any]:
    """4 FSDP2 steps with checkpoints every 2, then the same run resumed from checkpoint-2."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(work.base)
    data = write_packed(work.data / "midtrain", tokenizer, rows=8, seq_len=scale.seq_len, docs_per_row=4,
                        assistant_only=False)
    overrides = [f"model.path={work.base}", f"data.path={data}", "data.schedule=null", "optimisation.max_steps=4",
                 "optimisation.grad_accum=1", "run.save_steps=2", f"run.output_dir={work.midtrain}"]
    first = launch_stage(work, "midtrain", MIDTRAIN_CONFIG, overrides, log)
    # Drop what steps 3-4 wrote: the rerun must resume from checkpoint-2 and train them again.
    shutil.rmtree(work.midtrain / "checkpoint-4")
    shutil.rmtree(work.midtrain / "model")
    resumed = launch_stage(work, "midtrain", MIDTRAIN_CONFIG, overrides, log)
    if not (resumed["resumed_from"] or "").endswith("checkpoint-2") or resumed["global_step"] != 4:
        raise RuntimeError(f"resume: expected checkpoint-2 → step 4, got {resumed['resumed_from']} → "
                           f"{resumed['global_step']}")
    resumed["checkpoint_dtypes"] = checkpoint_dtypes(work.midtrain / "checkpoint-2")
    _drop_checkpoints(work.midtrain)
    resumed["weights"] = changed_tensors(work.base, work.midtrain / "model")
    if resumed["weights"]["tensors_changed"] == 0:
        raise RuntimeError(f"midtraining saved the base weights unchanged ({resumed['weights']})")
    # Steps 3-4 again from the restored optimizer, scheduler, RNG and data position: the same losses.
    return {"first_run": _stage_facts(first), "resumed_run": _stage_facts(resumed),
            "resumed_losses_match": _close(first["losses"][2:], resumed["losses"])}


def checkpoint_dtypes(checkpoint: Path) -> dict[str, dict[str, int]]:
    """{folder: {dtype: tensor count}} of a checkpoint's torch.distributed.checkpoint folders (the
    FSDP2 shards of the trained parameters and of the optimizer state), read from their metadata."""
    from torch.distributed.checkpoint import FileSystemReader

    found: dict[str, dict[str, int]] = {}
    for folder in sorted(p for p in checkpoint.iterdir() if p.is_dir() and (p / ".metadata").exists()):
        counts: dict[str, int] = {}
        for entry in FileSystemReader(str(folder)).read_metadata().state_dict_metadata.values():
            dtype = getattr(getattr(entry, "properties", None), "dtype", None)
            if dtype is not None:
                key = str(dtype).removeprefix("torch.")
                counts[key] = counts.get(key, 0) + 1
        found[folder.name] = counts
    return found


def _close(a: list[float], b: list[float], rel: float = 1e-2) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= rel * max(1.0, abs(x)) for x, y in zip(a, b, strict=True))


def _drop_checkpoints(run_dir: Path) -> None:
    """The sharded fp32 weights + optimizer checkpoints (12 GB each at 1B): the disk holds 64 GiB."""
    for checkpoint in run_dir.glob("checkpoint-*"):
        shutil.rmtree(checkpoint)


def _stage_facts(facts: dict) -> dict:
    keys = ("global_step", "losses", "train_loss", "resumed_from", "peak_memory_gib", "device", "saved_model",
            "saved_dtypes", "loading", "trainable_parameters", "adapted_modules", "weights", "supervised_tokens",
            "checkpoint_dtypes")
    return {k: facts.get(k) for k in keys}


def step_sft(work: Work, scale: Scale, log: Path) -> dict[str, Any]:
    """One packed SFT step (assistant-only labels) from the graft, under FSDP2."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(work.graft)
    data = write_packed(work.data / "sft", tokenizer, rows=2, seq_len=scale.seq_len, docs_per_row=4,
                        assistant_only=True)
    overrides = [f"model.path={work.graft}", "model.tokenizer_path=null", "model.tokenizer_revision=null",
                 f"data.path={data}", "data.schedule=null", "optimisation.max_steps=1", "optimisation.micro_batch=1",
                 "optimisation.grad_accum=1", "optimisation.warmup=0", f"run.output_dir={work.sft}"]
    facts = _stage_facts(launch_stage(work, "sft", SFT_CONFIG, overrides, log))
    _drop_checkpoints(work.sft)
    facts["weights"] = changed_tensors(work.graft, work.sft / "model")
    # The loss mask: only the second half of each packed document (the "assistant turn") is supervised.
    from datasets import load_from_disk

    rows = load_from_disk(str(data))
    supervised = sum(sum(label != -100 for label in row) for row in rows["labels"])
    facts["supervised_tokens"] = {"supervised": supervised, "tokens": sum(len(row) for row in rows["input_ids"])}
    return facts


# --- step 3 and 7: grafts -----------------------------------------------------------------------

def run_graft(mid: Path, it: Path, base: Path, out: Path, shard_size: str) -> dict[str, Any]:
    from py4.config import load_config
    from py4.graft.config import GraftConfig
    from py4.graft.engine import run

    config = load_config(GraftConfig, str(REPO / GRAFT_CONFIG),
                         [f"mid={mid}", f"it={it}", f"base={base}", f"out={out}", f"max_shard_size={shard_size}",
                          "input_hashes=metadata", "overwrite=true"])
    t0 = time.monotonic()
    result = run(config, show_progress=False)
    return {"seconds": round(time.monotonic() - t0, 1), "stream_s": round(result.stream_seconds, 1),
            "grafted": len(result.grafted), "mid_rounded": len(result.mid_rounded), "shards": len(result.shards),
            "total_gb": round(result.total_size / 1e9, 2), "peak_rss_gib": round(result.peak_rss_bytes / 2**30, 2),
            "verified": len(result.verified), "mid_dtypes": _saved_dtypes(mid), "out_dtypes": _saved_dtypes(out)}


def step_graft(work: Work, scale: Scale) -> dict[str, Any]:
    return run_graft(work.midtrain / "model", work.it, work.base, work.graft, scale.shard_size)


def write_synthetic_checkpoint(folder: Path, params: int, shard_size: str, value: float) -> None:
    """bf16 tensors of 4096 × 8192 (as a 12B layer's projections) filling ``params``, in shards."""
    import torch
    from safetensors.torch import save_file

    from py4.graft.config import parse_size

    width = 8192 if params >= 10**8 else 64
    rows = 4096 if params >= 10**8 else 32
    per_shard = max(1, parse_size(shard_size) // (rows * width * 2))
    count = max(1, params // (rows * width))
    folder.mkdir(parents=True, exist_ok=True)
    names = [f"model.language_model.layers.{i}.mlp.up_proj.weight" for i in range(count)]
    index: dict[str, str] = {}
    shards = _chunks(names, per_shard)
    for number, chunk in enumerate(shards, start=1):
        file = f"model-{number:05d}-of-{len(shards):05d}.safetensors"
        save_file({name: torch.full((rows, width), value + i * 1e-3, dtype=torch.bfloat16)
                   for i, name in enumerate(chunk)}, str(folder / file), metadata={"format": "pt"})
        index.update(dict.fromkeys(chunk, file))
    total = count * rows * width * 2
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total},
                                                                       "weight_map": index}))
    (folder / "config.json").write_text(json.dumps({"model_type": "gemma4", "dtype": "bfloat16"}))


def step_graft_large(work: Work, scale: Scale) -> dict[str, Any]:
    root = work.root / "graft_large"
    t0 = time.monotonic()
    for role, value in (("mid", 0.5), ("it", 0.25), ("base", 0.125)):
        write_synthetic_checkpoint(root / role, scale.large_graft_params, scale.large_graft_shard, value)
    write_s = round(time.monotonic() - t0, 1)
    facts = run_graft(root / "mid", root / "it", root / "base", root / "out", scale.large_graft_shard)
    facts["inputs_write_s"] = write_s
    for role in ("mid", "it", "base", "out"):  # free the disk for the steps after
        shutil.rmtree(root / role, ignore_errors=True)
    return facts


# --- step 4: packed attention -------------------------------------------------------------------

def _load_for_inference(folder: Path):
    import torch
    from transformers import AutoModelForCausalLM

    dtype = torch.bfloat16 if _on_gpu() else torch.float32
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, attn_implementation="sdpa")
    return model.to("cuda" if _on_gpu() else "cpu").eval()


def step_packed_attention(work: Work, scale: Scale) -> dict[str, Any]:
    """A document's logits packed after another (position ids restarting) vs alone; running ids as a control."""
    import torch
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(work.graft)
    model = _load_for_inference(work.graft)
    length = scale.seq_len // 2
    first, second = _documents(tokenizer, 2, length, seed=2)
    device = model.device

    def logits(ids: list[int], positions: list[int]):
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids], device=device),
                        position_ids=torch.tensor([positions], device=device), use_cache=False)
        return out.logits[0, -length:].float()

    alone = logits(second, list(range(length)))
    packed = logits(first + second, list(range(length)) * 2)
    running = logits(first + second, list(range(2 * length)))
    packed_diff = float((packed - alone).abs().max())
    running_diff = float((running - alone).abs().max())
    scale_of_logits = float(alone.abs().max())
    # bf16 kernels differ between a 2-document and a 1-document call: equal within bf16 rounding.
    tolerance = 0.05 * scale_of_logits if _on_gpu() else 1e-4 * max(1.0, scale_of_logits)
    facts = {"tokens_per_document": length, "max_abs_diff_packed_vs_alone": packed_diff,
             "max_abs_diff_running_positions_vs_alone": running_diff, "max_abs_logit": scale_of_logits,
             "tolerance": tolerance, "dtype": str(model.dtype),
             "argmax_equal": bool((packed.argmax(-1) == alone.argmax(-1)).all())}
    if packed_diff > tolerance:
        raise RuntimeError(f"packed logits differ from the document alone by {packed_diff} (> {tolerance}): {facts}")
    if running_diff <= packed_diff:
        raise RuntimeError(f"control: running position ids did not change the logits ({facts})")
    return facts


# --- step 6: LoRA -------------------------------------------------------------------------------

def write_dose(folder: Path, tokenizer, rows: int, tokens: int) -> Path:
    """Chat rows whose rendering is about ``tokens`` long (the assistant turn most of it)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for doc in _documents(tokenizer, rows, tokens, seed=3):
        text = tokenizer.decode(doc)
        lines.append(json.dumps({"messages": [{"role": "user", "content": "Explain this module."},
                                               {"role": "assistant", "content": text}]}))
    (folder / "data.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def _eft(work: Work, out: Path, length: int, steps: int):
    """py4's EFT stage from the campaign config: r 64 on the language model, checkpointing on."""
    import torch
    from transformers import AutoTokenizer

    from py4.config import load_config
    from py4.train import eft

    tokenizer = AutoTokenizer.from_pretrained(work.graft)
    dose = write_dose(work.data / f"dose_{length}", tokenizer, rows=steps, tokens=length)
    config = load_config(eft.EFTConfig, str(REPO / EFT_CONFIG), [
        *RUN_OVERRIDES, f"model.path={work.graft}", f"data.path={dose}", f"data.max_length={length}",
        f"optimisation.max_steps={steps}", "optimisation.grad_accum=1", "optimisation.gradient_checkpointing=true",
        f"run.output_dir={out}", "run.resume=never"])
    losses = _loss_callback()
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    t0 = time.monotonic()
    result = eft.run(config, callbacks=[losses])
    manifest = json.loads((out / "run_manifest.json").read_text())
    return config, {"seconds": round(time.monotonic() - t0, 1), "max_length": length, "global_step": result.global_step,
                    "losses": losses.losses, "adapted_modules": result.adapted_modules,
                    "trainable_parameters": result.trainable_parameters, **_peak_memory(),
                    "lora": manifest.get("lora"), "adapter_dtypes": _saved_dtypes(Path(result.model_dir))}


def _merged_vs_unmerged(work: Work, adapter: Path, tokenizer) -> dict[str, Any]:
    import torch
    from peft import PeftModel

    model = PeftModel.from_pretrained(_load_for_inference(work.graft), str(adapter)).eval()
    ids = torch.tensor([_documents(tokenizer, 1, 64, seed=4)[0]], device=model.device)
    with torch.no_grad():
        with model.disable_adapter():
            without = model(input_ids=ids).logits.float()
        unmerged = model(input_ids=ids).logits.float()
        merged = model.merge_and_unload()(input_ids=ids).logits.float()
    diff = float((merged - unmerged).abs().max())
    effect = float((unmerged - without).abs().max())
    tolerance = 0.05 * float(unmerged.abs().max()) if _on_gpu() else 1e-3
    facts = {"max_abs_diff_merged_vs_unmerged": diff, "max_abs_diff_adapter_vs_none": effect, "tolerance": tolerance}
    if diff > tolerance:
        raise RuntimeError(f"merged logits differ from unmerged by {diff} (> {tolerance})")
    if effect == 0.0:
        raise RuntimeError("the trained adapter does not change the logits (lora_B still zero?)")
    return facts


def step_lora(work: Work, scale: Scale) -> dict[str, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from py4.train.eft import check_lora_targets, expected_adapted_modules

    short, long = scale.lora_lengths
    config, first = _eft(work, work.lora / f"len_{short}", short, steps=2)
    _, second = _eft(work, work.lora / f"len_{long}", long, steps=1)
    # py4's own count, checked against what PEFT adapted in both runs.
    meta = AutoModelForCausalLM.from_pretrained(work.graft, device_map="meta")
    targets = check_lora_targets(meta, config.lora)
    expected = expected_adapted_modules(meta.config, config.lora)
    for run in (first, second):
        if run["adapted_modules"] != expected:
            raise RuntimeError(f"adapted {run['adapted_modules']} modules, py4 expects {expected}")
    if any("vision" in name for name in targets):
        raise RuntimeError("a LoRA target lies in the vision tower")
    tokenizer = AutoTokenizer.from_pretrained(work.graft)
    merge = _merged_vs_unmerged(work, work.lora / f"len_{short}" / "model", tokenizer)
    return {"expected_adapted_modules": expected, f"tokens_{short}": first, f"tokens_{long}": second,
            "merge": merge}


# --- the probes of py4.rehearsal.gpu_probes ------------------------------------------------------

def step_layers_gemma4_31b(work: Work, scale: Scale) -> dict[str, Any]:
    from py4.rehearsal import gpu_probes

    return gpu_probes.layer_probe(gpu_probes.gemma4_31b_spec(tiny=scale is TINY))


def step_layer_glm45_moe(work: Work, scale: Scale) -> dict[str, Any]:
    from py4.rehearsal import gpu_probes

    return gpu_probes.layer_probe(gpu_probes.glm45_moe_spec(tiny=scale is TINY))


def step_lora_drift(work: Work, scale: Scale) -> dict[str, Any]:
    from py4.rehearsal import gpu_probes

    return gpu_probes.lora_drift_probe(scale.lora_width, scale.lora_rank, scale.lora_alpha, scale.lora_cycles)


# --- GRPO with tools ----------------------------------------------------------------------------

def warm_start_adapter(model_dir: Path, out: Path) -> Path:
    """The campaign EFT's LoRA (``configs/train/gemma4_31b/eft.yaml``'s ``lora``) on ``model_dir``, with
    a small random B as after training (`py4.train.eft.stand_in_warm_start`)."""
    from py4.config import read_yaml
    from py4.train.eft import LoraSpec, stand_in_warm_start

    return stand_in_warm_start(model_dir, out, LoraSpec(**(read_yaml(str(REPO / EFT_31B_CONFIG)).get("lora") or {})))


def step_grpo_tools(work: Work, scale: Scale) -> dict[str, Any]:
    """Two steps of the campaign's GRPO config on the tiny Gemma-4 -it stand-in, tools and template included."""
    import importlib.metadata

    import torch

    from py4.config import load_config
    from py4.rehearsal.standins import FAMILY_TEMPLATES, build_standin
    from py4.train import grpo

    model_dir = build_standin("gemma4", "it", work.root / "models" / "gemma4-it-tiny", seed=0)
    adapter = warm_start_adapter(model_dir, work.root / "models" / "warm_start")
    shutil.rmtree(work.grpo, ignore_errors=True)
    overrides = [*RUN_OVERRIDES, f"model.path={model_dir}", f"adapter={adapter}",
                 # the rehearsal's boundary: generation inside the trainer (no vLLM on the device)
                 "grpo.use_vllm=false", "grpo.vllm_mode=colocate", "grpo.vllm_server_base_url=null",
                 "grpo.vllm_tensor_parallel_size=1", "grpo.vllm_server_gpus=null",
                 # sizes
                 "grpo.num_generations=4", "grpo.problems_per_step=1", "episode.max_tool_calls=2",
                 "episode.token_budget=96", "episode.max_turn_tokens=96", "problems.limit=2", "problems.epochs=1",
                 "optimisation.micro_batch=2", "optimisation.grad_accum=2", "optimisation.max_steps=2",
                 f"run.output_dir={work.grpo}", "run.save_steps=2", "run.logging_steps=1", "run.resume=never"]
    if scale is TINY:
        # CPU only: with checkpointing on, transformers' generation runs without a KV cache (each token
        # recomputes the whole prompt): minutes on a loaded CPU. The GPU runs the config's setting.
        overrides.append("optimisation.gradient_checkpointing=false")
    config = load_config(grpo.GRPOStageConfig, str(REPO / GRPO_CONFIG), overrides)
    losses = _loss_callback()
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    t0 = time.monotonic()
    result = grpo.run(config, callbacks=[losses])
    manifest = json.loads((work.grpo / "run_manifest.json").read_text())
    log = manifest.get("reward_log") or []
    facts = {"seconds": round(time.monotonic() - t0, 1), "global_step": result.global_step,
             "losses": losses.losses, "transformers": importlib.metadata.version("transformers"),
             "trl": importlib.metadata.version("trl"),
             "chat_template": f"trl/chat_templates/{FAMILY_TEMPLATES['gemma4']}",
             "adapted_modules": manifest.get("adapted_modules"), "reward_functions": manifest.get("reward_functions"),
             "tool_call_frequency": [entry.get("tools/call_frequency") for entry in log],
             "rewards": [entry.get("reward") for entry in log], "tool_batching": manifest.get("tool_batching"),
             **_peak_memory()}
    if result.global_step != 2:
        raise RuntimeError(f"GRPO stopped at step {result.global_step}, expected 2 ({facts})")
    return facts


# --- the verdict per campaign stage -------------------------------------------------------------

def verdicts(results: list[StepResult]) -> list[tuple[str, str, str]]:
    """(campaign stage, GO | NO-GO | NOT RUN, why) from the probes' outcomes."""
    by = {r.step: r for r in results}

    def state(*steps: str) -> str | None:
        missing = [s for s in steps if s not in by or by[s].status == "skipped"]
        if missing:
            return "NOT RUN"
        failed = [s for s in steps if by[s].status != "done"]
        return "NO-GO" if failed else None

    lines: list[tuple[str, str, str]] = []
    mid = state("build", "midtrain")
    if mid is None:
        facts = by["midtrain"].facts
        resumed = facts.get("resumed_run") or {}
        ok = facts.get("resumed_losses_match") and set(resumed.get("saved_dtypes") or {}) == {"BF16"}
        mid = "GO" if ok else "NO-GO"
        why = (f"FSDP2 save + resume: losses match {facts.get('resumed_losses_match')}, saved "
               f"{resumed.get('saved_dtypes')}, checkpoint {resumed.get('checkpoint_dtypes')}")
    else:
        why = _why(by, ("build", "midtrain"))
    lines.append(("midtraining and SFT (FSDP2, save and resume)", mid, why))
    for step, stage in (("layers_gemma4_31b", "Gemma-4 31B at 8,192 tokens (sliding + full layer, 262k head)"),
                        ("layer_glm45_moe", "GLM-4.5-Air MoE layer at 8,192 tokens (128 experts, top 8)")):
        verdict = state(step)
        if verdict is None:
            facts = by[step].facts
            verdict = "GO"
            why = (f"per layer {json.dumps(facts.get('per_layer_type'))}; logits/loss "
                   f"{json.dumps(facts.get('logits_loss'))}; sdpa {sorted(facts.get('sdpa_ops_default') or {})}")
        else:
            why = _why(by, (step,))
        lines.append((stage, verdict, why))
    verdict = state("grpo_tools")
    why = (f"2 steps, {by['grpo_tools'].facts.get('transformers')} transformers, tool calls "
           f"{by['grpo_tools'].facts.get('tool_call_frequency')}" if verdict is None else _why(by, ("grpo_tools",)))
    lines.append(("GRPO with tools and the Gemma-4 -it template (trainer environment)", verdict or "GO", why))
    verdict = state("lora_drift")
    if verdict is None:
        exact = by["lora_drift"].facts.get("exact_fp32_cast_once") or {}
        peft_drift = by["lora_drift"].facts.get("peft_merge_unmerge") or {}
        good = not exact.get("wrote_base") and exact.get("last_merged_max_err_ulps_at_working_magnitude", 9.0) <= 1.0
        verdict = "GO" if good else "NO-GO"
        why = (f"exact sync: base written {exact.get('wrote_base')}, max error "
               f"{exact.get('last_merged_max_err_ulps_at_working_magnitude')} ulp at the working magnitude "
               f"({exact.get('last_merged_elements_off_by_one_ulp_or_more')} elements >= 1 ulp of the result); "
               f"PEFT merge/unmerge moved {peft_drift.get('base_elements_moved')} of "
               f"{peft_drift.get('base_elements')} base weights (max {peft_drift.get('base_max_drift_in_ulps')} ulp)")
    else:
        why = _why(by, ("lora_drift",))
    lines.append(("GRPO weight sync to vLLM (LoRA merge)", verdict, why))
    return lines


def _why(by: dict[str, StepResult], steps: tuple[str, ...]) -> str:
    return "; ".join(f"{s}: {by[s].status} ({by[s].error})" if s in by else f"{s}: not chosen" for s in steps)


# --- running the steps --------------------------------------------------------------------------

def _child_env() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    src = str(REPO / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    return env


def run_step_here(step: str, work: Work, scale: Scale) -> dict[str, Any]:
    """One step in this process (the child the parent started); its facts."""
    log = work.logs / f"{step}.log"
    if step == "build":
        return step_build(work, scale)
    if step == "midtrain":
        return step_midtrain(work, scale, log)
    if step == "graft":
        return step_graft(work, scale)
    if step == "packed_attention":
        return step_packed_attention(work, scale)
    if step == "sft":
        return step_sft(work, scale, log)
    if step == "lora":
        return step_lora(work, scale)
    if step == "graft_large":
        return step_graft_large(work, scale)
    if step == "layers_gemma4_31b":
        return step_layers_gemma4_31b(work, scale)
    if step == "layer_glm45_moe":
        return step_layer_glm45_moe(work, scale)
    if step == "lora_drift":
        return step_lora_drift(work, scale)
    if step == "grpo_tools":
        return step_grpo_tools(work, scale)
    raise KeyError(f"unknown step {step!r} (steps: {', '.join(STEPS)})")


def run_step(step: str, work: Work, scale: Scale, timeout: float) -> StepResult:
    """The step in a child process under ``timeout``: its status, seconds and facts."""
    for folder in (work.logs, work.facts):
        folder.mkdir(parents=True, exist_ok=True)
    log, facts_file = work.logs / f"{step}.log", work.fact_file(step)
    facts_file.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "py4.rehearsal.gpu_check", "--out", str(work.out), "--work", str(work.root),
            "--child", step,
            *(["--tiny"] if scale is TINY else [])]
    t0 = time.monotonic()
    status, error = "done", None
    with log.open("w") as handle:
        handle.write("$ " + " ".join(argv) + "\n")
        handle.flush()
        proc = subprocess.Popen(argv, stdout=handle, stderr=subprocess.STDOUT, cwd=REPO, env=_child_env(),
                                start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)  # the step's whole process group (accelerate's workers too)
            proc.wait()
            status, error = "timeout", f"over its {timeout:.0f} s budget"
    seconds = round(time.monotonic() - t0, 1)
    record = json.loads(facts_file.read_text()) if facts_file.exists() else {}
    if status == "done" and record.get("error"):
        status, error = "failed", record["error"]
    elif status == "done" and proc.returncode != 0:
        status, error = "failed", f"exited {proc.returncode}"
    tail = None if status == "done" else "".join(log.read_text(errors="replace").splitlines(True)[-25:])
    result = StepResult(step, status, seconds, record.get("facts", {}), error, tail)
    work.probe_file(step).write_text(json.dumps(asdict(result), indent=2, default=str) + "\n")
    return result


def child_main(step: str, work: Work, scale: Scale) -> int:
    """Run ``step``; write {facts} or {error} to its fact file."""
    import traceback

    try:
        facts = run_step_here(step, work, scale)
        record: dict[str, Any] = {"facts": facts}
    except Exception as exc:  # noqa: BLE001 — recorded in the report, the parent continues
        traceback.print_exc()
        record = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
    work.fact_file(step).write_text(json.dumps(record, indent=2, default=str) + "\n")
    return 0 if "facts" in record else 1


def environment() -> dict[str, Any]:
    import importlib.metadata as md

    versions = {}
    for package in ("torch", "transformers", "accelerate", "peft", "trl", "datasets", "safetensors"):
        try:
            versions[package] = md.version(package)
        except md.PackageNotFoundError:
            versions[package] = None
    import torch

    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    return {"python": sys.version.split()[0], "packages": versions, "device": device}


def write_report(out: Path, scale: Scale, results: list[StepResult], budget_s: float) -> dict[str, Any]:
    """The report (JSON and markdown); the steps' facts are in their own JSON files beside it."""
    from py4.runs import provenance

    stages = verdicts(results)
    report = {"scale": scale.name, "budget_s": budget_s, "environment": environment(), "provenance": provenance(),
              "ok": all(r.status == "done" for r in results),
              "steps": [{"step": r.step, "status": r.status, "seconds": r.seconds, "error": r.error} for r in results],
              "verdicts": [{"stage": stage, "verdict": verdict, "why": why} for stage, verdict, why in stages]}
    (out / "gpu_check_report.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    lines = [f"# GPU check ({scale.name})", "", f"Environment: `{json.dumps(report['environment'])}`", "",
             "| campaign stage | verdict | why |", "|---|---|---|"]
    lines += [f"| {stage} | {verdict} | {why.replace('|', '/')} |" for stage, verdict, why in stages]
    lines += ["", "| step | status | seconds | facts |", "|---|---|---|---|"]
    for r in results:
        facts = json.dumps(r.facts, default=str).replace("|", "\\|")
        if len(facts) > 1500:
            facts = facts[:1500] + f"… (all in {r.step}.json)"
        lines.append(f"| {r.step} | {r.status} | {r.seconds} | {facts} |")
    for r in results:
        if r.status != "done":
            lines += ["", f"## {r.step}: {r.status}", "", f"{r.error}", "", "```", (r.log or "").rstrip(), "```"]
    (out / "GPU_CHECK_REPORT.md").write_text("\n".join(lines) + "\n")
    return report


def run_checks(out: Path, scale: Scale, steps: tuple[str, ...] = DEFAULT_STEPS, budget_s: float = 520.0,
               work_dir: Path | None = None) -> dict[str, Any]:
    """Every chosen step in order, each in its own child under its timeout (capped by what is left
    of ``budget_s``); a step whose inputs failed is skipped. Writes and returns the report.

    ``work_dir`` holds the models and runs (default ``out/work``)."""
    out.mkdir(parents=True, exist_ok=True)
    work = Work(out, work_dir)
    deadline = time.monotonic() + budget_s
    results: list[StepResult] = []
    status: dict[str, str] = {}
    for step in steps:
        missing = [need for need in NEEDS.get(step, ()) if need in steps and status.get(need) != "done"]
        left = deadline - time.monotonic()
        if missing or left < 5:
            why = f"needs {', '.join(missing)}" if missing else "the total budget is spent"
            results.append(StepResult(step, "skipped", 0.0, {}, why))
            work.probe_file(step).write_text(json.dumps(asdict(results[-1]), indent=2) + "\n")
        else:
            results.append(run_step(step, work, scale, min(scale.step_timeout_s[step], left)))
            print(f"{step}: {results[-1].status} in {results[-1].seconds} s", flush=True)
        status[step] = results[-1].status
        write_report(out, scale, results, budget_s)  # a report even if the machine goes away mid-run
    return write_report(out, scale, results, budget_s)


MEASURED_MODELS = {"layers_gemma4_31b": "gemma4_31b", "layer_glm45_moe": "glm45_air"}
"""Which probe measures which campaign model (the keys of ``benchmarks/gpu/measured.json``)."""


def measured_figures(report_dir: Path, source: str, date: str) -> dict[str, Any]:
    """``benchmarks/gpu/measured.json`` (``py4.campaign.memory_plan``'s schema) from a GPU run's probe
    JSONs: per model, the whole model's step on one GPU extrapolated from the measured layers with
    activation checkpointing (the campaign's FSDP2 setting), the logits/loss and one decoder layer's
    peak per token (each phase's own: its peak over what was live when it began), the step's peak.
    Probes that did not finish on a GPU give nothing."""
    figures: dict[str, Any] = {"source": source, "date": date, "tokens_per_s_per_gpu": {},
                               "logits_bytes_per_token": {}, "block_activation_bytes_per_token": {},
                               "peak_bytes": {}}
    for probe, model in MEASURED_MODELS.items():
        path = report_dir / f"{probe}.json"
        if not path.is_file():
            continue
        result = json.loads(path.read_text())
        facts = result.get("facts") or {}
        if result.get("status") != "done" or facts.get("device") in (None, "cpu"):
            continue
        tokens = facts["tokens"]
        estimate = facts["model_step_estimate"]
        figures["tokens_per_s_per_gpu"][model] = estimate["tokens_per_s_with_activation_checkpointing"]
        logits = (facts.get("logits_loss") or {}).get("own_peak_gib")
        if logits is not None:
            figures["logits_bytes_per_token"][model] = round(logits * 2**30 / tokens, 1)
        layer_peaks = [v["own_peak_gib"] for v in (facts.get("per_layer_type") or {}).values()
                       if v.get("own_peak_gib") is not None]
        if layer_peaks:
            figures["block_activation_bytes_per_token"][model] = round(max(layer_peaks) * 2**30 / tokens, 1)
        if facts.get("step_peak_above_start_gib") is not None and facts.get("weights_and_grads_gib") is not None:
            figures["peak_bytes"][model] = int((facts["step_peak_above_start_gib"] + facts["weights_and_grads_gib"])
                                               * 2**30)
        if facts.get("gpu_total_bytes"):
            figures["gpu_total_bytes"] = facts["gpu_total_bytes"]
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m py4.rehearsal.gpu_check", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "runs/gpu_check")))
    parser.add_argument("--work", type=Path, default=None,
                        help="models, runs and data (GBs at 1B scale; default OUT/work)")
    parser.add_argument("--tiny", "--cpu", action="store_true", dest="tiny", help="tiny sizes (the CPU test)")
    parser.add_argument("--steps", default=",".join(DEFAULT_STEPS), help=f"comma-separated subset of {','.join(STEPS)}")
    parser.add_argument("--budget-s", type=float, default=520.0, help="total seconds for all steps")
    parser.add_argument("--measured", type=Path, metavar="REPORT_DIR",
                        help="print benchmarks/gpu/measured.json made from a GPU run's probe JSONs in REPORT_DIR")
    parser.add_argument("--source", default="scripts/gpu_check.sh on one GPU", help="with --measured: what ran")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--worker-config", help=argparse.SUPPRESS)
    parser.add_argument("--worker-facts", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("overrides", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    scale = TINY if args.tiny else FULL
    if args.measured:
        import datetime

        date = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
        print(json.dumps(measured_figures(args.measured, args.source, date), indent=2))
        return 0
    if args.worker:
        run_worker(args.worker, args.worker_config, args.overrides, args.worker_facts)
        return 0
    if args.child:
        return child_main(args.child, Work(args.out, args.work), scale)
    steps = tuple(s.strip() for s in args.steps.split(",") if s.strip())
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        parser.error(f"--steps: unknown {unknown}; expected a subset of {', '.join(STEPS)}")
    report = run_checks(args.out, scale, steps, args.budget_s, args.work)
    print(f"report: {args.out / 'GPU_CHECK_REPORT.md'}")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
