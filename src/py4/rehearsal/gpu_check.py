"""The GPU check of issue 17: the rehearsal's key paths at ~1B scale, in bf16, on one accelerator.

    python -m py4.rehearsal.gpu_check --out DIR                  # ~1B Gemma-4, on the GPU
    python -m py4.rehearsal.gpu_check --out DIR --tiny           # the same code path, tiny sizes (CPU)
    python -m py4.rehearsal.gpu_check --out DIR --tiny --steps build,midtrain

What a CPU rehearsal cannot show (docs/rehearsal.md, "Boundaries"): bf16 mixed precision
under FSDP2, memory at a real width and vocabulary, flash/sdpa kernels on packed sequences,
activation checkpointing at 4,096 and 12,288 tokens. Each step below runs the project's own
code (``py4.train`` stages from the campaign's stage configs with size-only overrides,
``py4.graft``) in a child process of its own, under its own timeout; a failed step is
recorded and the next one runs. Steps that need an earlier step's output say so and are
skipped when it failed.

1. ``build``: a randomly initialised ``Gemma4ForConditionalGeneration`` (vocab 262,144, hidden
   1,536, 18 layers: ~1B parameters), base and -it (base + seeded delta), bf16, 1 GB shards.
2. ``midtrain``: ``configs/train/gemma4_12b/midtrain_iso.yaml`` under ``accelerate launch`` with
   ``configs/accelerate/fsdp2.yaml`` on 1 process: 4 steps, checkpoints every 2;
   then checkpoint-4 and the final model are removed and the run resumes from checkpoint-2.
   Records the saved dtype, losses and peak memory.
3. ``graft``: ``configs/graft/gemma4_12b.yaml`` on that output (mid) with the stand-ins (it, base).
4. ``packed_attention``: the graft's logits for a document packed after another one (position
   ids restarting) against the document alone; a control with running position ids must differ.
5. ``sft``: ``configs/train/gemma4_12b/sft.yaml``, one packed step (assistant-only labels) under FSDP2.
6. ``lora``: ``configs/train/gemma4_12b/eft.yaml`` (r 64, language model only, py4's own
   ``check_lora_targets`` count) with activation checkpointing: two steps at 4,096 tokens, one at
   12,288; then the adapter's logits merged and unmerged.
7. ``graft_large``: synthetic mid/it/base checkpoints of ~2.5B parameters in 5 GB shards grafted
   by ``py4.graft`` (seconds, peak RSS).

The report: ``DIR/gpu_check_report.json`` and ``DIR/GPU_CHECK_REPORT.md`` (per step: status,
seconds, facts such as losses, dtypes, peak memory, adapted modules; the error and the log's
tail for a failure), logs under ``DIR/logs/``. ``--tiny`` uses the tiny stand-in sizes of
``py4.rehearsal.standins`` and runs on CPU (gloo), so the tests prove the path without a GPU.
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

STEPS: tuple[str, ...] = ("build", "midtrain", "graft", "packed_attention", "sft", "lora", "graft_large")
NEEDS: dict[str, tuple[str, ...]] = {
    "midtrain": ("build",), "graft": ("midtrain",), "packed_attention": ("graft",),
    "sft": ("graft",), "lora": ("graft",), "graft_large": (),
}
REPO = Path(__file__).resolve().parents[3]
MIDTRAIN_CONFIG = "configs/train/gemma4_12b/midtrain_iso.yaml"
SFT_CONFIG = "configs/train/gemma4_12b/sft.yaml"
EFT_CONFIG = "configs/train/gemma4_12b/eft.yaml"
GRAFT_CONFIG = "configs/graft/gemma4_12b.yaml"
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
    heads: int | None
    kv_heads: int | None
    head_dim: int | None
    vocab: int | None  # None: the tokenizer's length padded (the tiny stand-in's)
    sliding_window: int | None
    shard_size: str
    seq_len: int  # midtraining / SFT block length
    lora_lengths: tuple[int, int]  # the two LoRA lengths (4,096 twice, then 12,288)
    large_graft_params: int
    large_graft_shard: str
    step_timeout_s: dict[str, int]


FULL = Scale(
    name="1b", hidden=1536, intermediate=6144, layers=18, heads=8, kv_heads=1, head_dim=256, vocab=262_144,
    sliding_window=512, shard_size="1GB", seq_len=4096, lora_lengths=(4096, 12288),
    large_graft_params=2_500_000_000, large_graft_shard="5GB",
    step_timeout_s={"build": 90, "midtrain": 200, "graft": 45, "packed_attention": 45, "sft": 90, "lora": 120,
                    "graft_large": 120},
)
TINY = Scale(
    name="tiny", hidden=None, intermediate=None, layers=6, heads=None, kv_heads=None, head_dim=None, vocab=None,
    sliding_window=None, shard_size="400KB", seq_len=128, lora_lengths=(128, 384),
    large_graft_params=2_500_000, large_graft_shard="5MB",
    step_timeout_s=dict.fromkeys(STEPS, 300),
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
    """Where each step reads and writes: logs, facts and the report in ``out`` (small: the device
    tool brings ``$OUT`` back), models, runs and data in ``root`` (GBs at 1B scale)."""

    def __init__(self, out: Path, root: Path | None = None):
        self.out = out
        self.root = root = root or out / "work"
        self.base, self.it = root / "models" / "base", root / "models" / "it"
        self.midtrain, self.graft = root / "runs" / "midtrain", root / "runs" / "graft"
        self.sft, self.lora = root / "runs" / "sft", root / "runs" / "lora"
        self.data, self.logs, self.facts = root / "data", out / "logs", out / "facts"

    def fact_file(self, step: str) -> Path:
        return self.facts / f"{step}.json"


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
    """The stand-in's ``Gemma4Config`` (tiny vision tower) with ``scale``'s text sizes."""
    from py4.rehearsal.standins import gemma4_config

    config = gemma4_config(tokenizer, num_hidden_layers=scale.layers)
    text = config.text_config
    for field, value in (("hidden_size", scale.hidden), ("intermediate_size", scale.intermediate),
                         ("num_attention_heads", scale.heads), ("num_key_value_heads", scale.kv_heads),
                         ("head_dim", scale.head_dim), ("global_head_dim", scale.head_dim),
                         ("vocab_size", scale.vocab), ("vocab_size_per_layer_input", scale.vocab),
                         ("sliding_window", scale.sliding_window)):
        if value is not None:
            setattr(text, field, value)
    return config


def step_build(work: Work, scale: Scale) -> dict[str, Any]:
    """Base and -it stand-ins as build_standin writes them, at ``scale``, in ``scale.shard_size`` shards."""
    import torch

    from py4.rehearsal import standins

    tokenizer = standins.build_tokenizer("gemma4")
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
        model.generation_config.update(**standins._generation_config(tokenizer, "gemma4", kind))
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
    from py4.campaign.dag import ACCELERATE_CONFIG
    from py4.rehearsal.assets import write_accelerate_configs

    mapping = write_accelerate_configs(REPO / "configs" / "accelerate", work.root / "accelerate",
                                       use_cpu=not _on_gpu())
    return Path(mapping[str(REPO / ACCELERATE_CONFIG)])


def launch_stage(work: Work, stage: str, config: str, overrides: list[str], log: Path) -> dict:
    """``accelerate launch -m py4.rehearsal.gpu_check --worker STAGE``; returns the worker's facts.

    No timeout here: the step's timeout kills its whole process group, the workers included."""
    facts_file = work.facts / f"{stage}-worker.json"
    facts_file.unlink(missing_ok=True)
    from py4.campaign.dag import accelerate_launch

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
    _drop_checkpoints(work.midtrain)
    resumed["weights"] = changed_tensors(work.base, work.midtrain / "model")
    if resumed["weights"]["tensors_changed"] == 0:
        raise RuntimeError(f"midtraining saved the base weights unchanged ({resumed['weights']})")
    # Steps 3-4 again from the restored optimizer, scheduler, RNG and data position: the same losses.
    return {"first_run": _stage_facts(first), "resumed_run": _stage_facts(resumed),
            "resumed_losses_match": _close(first["losses"][2:], resumed["losses"])}


def _close(a: list[float], b: list[float], rel: float = 1e-2) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= rel * max(1.0, abs(x)) for x, y in zip(a, b, strict=True))


def _drop_checkpoints(run_dir: Path) -> None:
    """The sharded fp32 weights + optimizer checkpoints (12 GB each at 1B): the disk holds 64 GiB."""
    for checkpoint in run_dir.glob("checkpoint-*"):
        shutil.rmtree(checkpoint)


def _stage_facts(facts: dict) -> dict:
    keys = ("global_step", "losses", "train_loss", "resumed_from", "peak_memory_gib", "device", "saved_model",
            "saved_dtypes", "loading", "trainable_parameters", "adapted_modules", "weights", "supervised_tokens")
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
    return StepResult(step, status, seconds, record.get("facts", {}), error, tail)


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
    report = {"scale": scale.name, "budget_s": budget_s, "environment": environment(),
              "ok": all(r.status == "done" for r in results), "steps": [asdict(r) for r in results]}
    (out / "gpu_check_report.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    lines = [f"# GPU check ({scale.name})", "", f"Environment: `{json.dumps(report['environment'])}`", "",
             "| step | status | seconds | facts |", "|---|---|---|---|"]
    for r in results:
        facts = json.dumps(r.facts, default=str).replace("|", "\\|")
        lines.append(f"| {r.step} | {r.status} | {r.seconds} | {facts} |")
    for r in results:
        if r.status != "done":
            lines += ["", f"## {r.step}: {r.status}", "", f"{r.error}", "", "```", (r.log or "").rstrip(), "```"]
    (out / "GPU_CHECK_REPORT.md").write_text("\n".join(lines) + "\n")
    return report


def run_checks(out: Path, scale: Scale, steps: tuple[str, ...] = STEPS, budget_s: float = 540.0,
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
        else:
            results.append(run_step(step, work, scale, min(scale.step_timeout_s[step], left)))
            print(f"{step}: {results[-1].status} in {results[-1].seconds} s", flush=True)
        status[step] = results[-1].status
        write_report(out, scale, results, budget_s)  # a report even if the machine goes away mid-run
    return write_report(out, scale, results, budget_s)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m py4.rehearsal.gpu_check", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "runs/gpu_check")))
    parser.add_argument("--work", type=Path, default=None,
                        help="models, runs and data (GBs at 1B scale; default OUT/work)")
    parser.add_argument("--tiny", "--cpu", action="store_true", dest="tiny", help="tiny sizes (the CPU test)")
    parser.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated subset of {','.join(STEPS)}")
    parser.add_argument("--budget-s", type=float, default=540.0, help="total seconds for all steps")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--worker-config", help=argparse.SUPPRESS)
    parser.add_argument("--worker-facts", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("overrides", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    scale = TINY if args.tiny else FULL
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
