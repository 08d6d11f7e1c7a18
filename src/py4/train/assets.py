"""Smoke assets: a local tokenizer, a tiny *base* model and a tiny *-it* model.

They stand in for the Hub's base and instruction-tuned checkpoints at smoke scale;
nothing is downloaded. ``py4 smoke assets --out DIR`` writes::

    DIR/tokenizer/          byte-level BPE + chat template + response template
    DIR/instructions/       the smoke instruction set (data.jsonl, manifest.json)
    DIR/base/               Gemma3ForCausalLM from a config, freshly initialised
    DIR/it/                 base + SFT on the instruction set (chat format, tool calls)
    DIR/smoke_manifest.json settings, hashes, timings, the -it check's outcome

Same settings, same bytes (seeded initialisation and training, deterministic
tokenizer training). The -it model is checked after training: greedy generation on
held-out episode prompts must produce a parseable tool call.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pydantic

from py4.config import StrictModel
from py4.fileio import read_json_object
from py4.train.errors import TrainingGuardError
from py4.train.tiny_model import TinyModelSpec

MANIFEST_NAME = "smoke_manifest.json"


class InstructionSettings(StrictModel):
    n_qa: int = pydantic.Field(60, ge=0)
    n_episodes: int = pydantic.Field(400, ge=0)
    seed: int = 0
    held_out: int = 8
    """Episode rows kept out of the -it SFT, used to check tool calling."""


class ItTraining(StrictModel):
    """The SFT that turns the tiny base into the tiny -it model (tiny-model values, not the table's)."""

    steps: int = 160
    learning_rate: float = 6e-3
    micro_batch: int = 16
    max_length: int = 512
    packing: bool = False
    """Off: padding-free packing builds one long block-diagonal attention, slower at this size."""
    plain_loss: bool = True
    """The model's own loss instead of TRL's fused LM head (same loss; ~2x faster here)."""
    seed: int = 0


class SmokeAssetsConfig(StrictModel):
    vocab_size: int = 3072
    tokenizer_text_bytes: int = 4_000_000
    model: TinyModelSpec = TinyModelSpec()
    instructions: InstructionSettings = InstructionSettings()
    it_training: ItTraining = ItTraining()
    check_prompts: int = 4
    """Held-out prompts greedily decoded after training; every one must yield a tool call."""


def _split_instructions(rows: list[dict], held_out: int) -> tuple[list[dict], list[dict]]:
    episodes = [i for i, r in enumerate(rows) if r["source"] == "episode"]
    held = set(episodes[-held_out:]) if held_out else set()
    return [r for i, r in enumerate(rows) if i not in held], [rows[i] for i in sorted(held)]


def _train_it(base_dir: Path, out_dir: Path, rows: list[dict], settings: ItTraining) -> dict[str, Any]:
    """SFT the base on ``rows`` (assistant-only, packed) and save the -it model."""
    import transformers

    from py4.train import common, loading, sft

    transformers.logging.set_verbosity_error()
    source = loading.ModelSource(path=str(base_dir))
    device = loading.device_settings(False)
    tokenizer = loading.load_tokenizer(source)
    model = loading.load_model(source, device)
    opt = common.Optimisation(
        learning_rate=settings.learning_rate, lr_scheduler="cosine", min_lr_rate=None, warmup=0.05,
        weight_decay=0.0, optim="adamw_torch", seed=settings.seed, micro_batch=settings.micro_batch,
        gradient_checkpointing=False,
    )
    work = out_dir.parent / ".it_training"
    run = common.RunSettings(output_dir=str(work), logging_steps=max(1, settings.steps // 10),
                             save_steps=10**9, save_total_limit=None, report_to=[], resume="never", progress_bar=False)
    trainer = sft.build_chat_trainer(model, tokenizer, sft.chat_dataset(rows), opt, run, device,
                                     settings.steps, settings.max_length, packing=settings.packing,
                                     plain_loss=settings.plain_loss)
    trainer.args.save_strategy = "no"
    output = trainer.train()
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    _remove_tree(work)
    return {"train_loss": round(float(output.training_loss), 4), "steps": trainer.state.global_step}


def _remove_tree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def check_tool_calling(model_dir: str | Path, rows: list[dict], limit: int) -> list[dict[str, Any]]:
    """Greedy-decode held-out episode prompts; one record per prompt with the parsed reply."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True, dtype=torch.float32)
    model.eval()
    records = []
    for row in rows[:limit]:
        prompt = tokenizer.apply_chat_template(row["messages"][:2], tools=row["tools"], add_generation_prompt=True,
                                               enable_thinking=False, return_dict=True, return_tensors="pt")
        with torch.no_grad():
            out = model.generate(**prompt, max_new_tokens=160, do_sample=False)
        completion = out[0, prompt["input_ids"].shape[1]:].tolist()
        try:
            parsed = tokenizer.parse_response(completion, prefix=tokenizer.decode(prompt["input_ids"][0]))
        except ValueError:  # a malformed call: the JSON inside <tool_call> does not parse
            parsed = {}
        records.append({"prompt": row["messages"][1]["content"], "completion": tokenizer.decode(completion),
                        "tool_calls": parsed.get("tool_calls") or []})
    return records


def build_smoke_assets(out: str | Path, config: SmokeAssetsConfig = SmokeAssetsConfig(), force: bool = False) -> Path:
    """Write the smoke assets into ``out``; a complete earlier build is reused unless ``force``.

    Raises TrainingGuardError (a RuntimeError) when the -it model fails its tool-calling check (train
    it longer: ``it_training``).
    """
    from py4.data.smoke_instructions import build_smoke_instructions, write_smoke_instructions
    from py4.runs import atomic_write_json, provenance_fields, tree_sha256
    from py4.chat.smoke_tokenizer import stdlib_texts, train_tokenizer
    from py4.train.tiny_model import build_tiny_model, save_model

    from py4.run_progress import report
    from py4.threads import use_cpu_threads

    out = Path(out)
    manifest_path = out / MANIFEST_NAME
    if manifest_path.exists() and not force:
        previous = read_json_object(manifest_path)
        if previous.get("config") == config.model_dump(mode="json") and previous.get("status") == "done":
            return out
    use_cpu_threads()
    report("phase 1/4: tokenizer", 0)
    timings: dict[str, float] = {}
    t = time.monotonic()
    ins = config.instructions
    rows = build_smoke_instructions(n_qa=ins.n_qa, n_episodes=ins.n_episodes, seed=ins.seed)
    write_smoke_instructions(rows, out / "instructions", n_qa=ins.n_qa, n_episodes=ins.n_episodes, seed=ins.seed)
    train_rows, held_rows = _split_instructions(rows, ins.held_out)
    chat_text = (json.dumps(r["messages"], ensure_ascii=False) for r in train_rows)
    tokenizer = train_tokenizer(_chain(stdlib_texts(config.tokenizer_text_bytes), chat_text), config.vocab_size)
    tokenizer.save_pretrained(out / "tokenizer")
    timings["tokenizer_s"] = time.monotonic() - t

    t = time.monotonic()
    report("phase 2/4: base model", 0)
    save_model(build_tiny_model(config.model, tokenizer), tokenizer, out / "base")
    timings["base_s"] = time.monotonic() - t

    t = time.monotonic()
    it_summary = _train_it(out / "base", out / "it", train_rows, config.it_training)
    timings["it_sft_s"] = time.monotonic() - t
    report("phase 4/4: tool-call check", 0)
    check = check_tool_calling(out / "it", held_rows, config.check_prompts)
    ok = bool(check) and all(record["tool_calls"] for record in check)
    atomic_write_json(manifest_path, {
        "status": "done" if ok else "failed",
        "config": config.model_dump(mode="json"),
        "hashes": {name: tree_sha256(out / name) for name in ("tokenizer", "base", "it", "instructions")},
        "it_training": it_summary,
        "tool_call_check": check,
        "held_out_rows": held_rows,
        "timings": {k: round(v, 2) for k, v in timings.items()},
        **provenance_fields(),
    })
    if not ok:
        raise TrainingGuardError(f"the -it model did not emit a parseable tool call on every held-out prompt "
                                 f"(see {manifest_path}): train it longer (it_training.steps)")
    return out


def _chain(*iterables):
    for iterable in iterables:
        yield from iterable


def held_out_episode_rows(assets_dir: str | Path) -> list[dict]:
    """The held-out episode rows recorded by :func:`build_smoke_assets`."""
    manifest = read_json_object(Path(assets_dir) / MANIFEST_NAME,
                                missing="no smoke assets manifest (py4 smoke assets --out DIR writes it)")
    return manifest["held_out_rows"]
