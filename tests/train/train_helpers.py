"""Test-side helpers: parameter snapshots, a simulated kill, packed-data fixtures via py4.data."""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import TrainerCallback


class ParamSnapshot(TrainerCallback):
    """Copies every parameter at train begin; at train end lists which changed (trainable or not)."""

    def __init__(self) -> None:
        self.before: dict[str, torch.Tensor] = {}
        self.trainable: set[str] = set()
        self.changed: set[str] = set()
        self.unchanged_trainable: set[str] = set()
        self.changed_frozen: set[str] = set()
        self.ended = False

    def assert_every_trainable_changed_and_nothing_else(self) -> None:
        """Fails unless the run ended, had trainable parameters, moved all of them and no frozen one."""
        assert self.ended, "the snapshot never saw the end of training"
        assert self.trainable, "no trainable parameter"
        assert not self.unchanged_trainable, \
            f"trainable parameters that did not move: {sorted(self.unchanged_trainable)}"
        assert not self.changed_frozen, f"frozen parameters that moved: {sorted(self.changed_frozen)}"

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self.before = {n: p.detach().clone() for n, p in model.named_parameters()}
        self.trainable = {n for n, p in model.named_parameters() if p.requires_grad}

    def on_train_end(self, args, state, control, model=None, **kwargs):
        for name, param in model.named_parameters():
            differs = not torch.equal(self.before[name], param.detach())
            if differs:
                self.changed.add(name)
            if name in self.trainable and not differs:
                self.unchanged_trainable.add(name)
            if name not in self.trainable and differs:
                self.changed_frozen.add(name)
        self.ended = True


def sample_index_reward(completion_ids: list[list[int]], **_) -> list[float]:
    """A GRPO reward (``reward_functions`` hook) equal to each completion's index in the batch.

    The samples of a group are consecutive, so their rewards always differ: under Dr. GRPO
    every advantage is then non-zero even when the environment scores the whole group alike.
    """
    return [float(i) for i in range(len(completion_ids))]


class KillAt(TrainerCallback):
    """Simulates a killed run: raises KeyboardInterrupt once ``step`` optimizer steps are done."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= self.step:
            raise KeyboardInterrupt(f"simulated kill at step {state.global_step}")


class FirstBatch(TrainerCallback):
    """Keeps the first training batch the model sees (for loss-mask checks)."""

    def __init__(self) -> None:
        self.batch = None

    def on_step_begin(self, args, state, control, train_dataloader=None, **kwargs):
        if self.batch is None and train_dataloader is not None:
            self.batch = next(iter(train_dataloader))


def pack_text(out: Path, tokenizer_dir: Path, docs: list[str], seq_len: int, micro_batch: int, warmup: float) -> Path:
    """Midtraining-style packed blocks (every token supervised) + step_schedule.json, via py4.data."""
    import json

    from py4.data.configs import PackConfig
    from py4.data.pack import run_pack

    src = out.parent / f"{out.name}_docs"
    src.mkdir(parents=True, exist_ok=True)
    (src / "docs.jsonl").write_text("".join(json.dumps({"id": str(i), "text": d}) + "\n" for i, d in enumerate(docs)))
    config = PackConfig(out_dir=str(out), format="text", text=[{"path": str(src)}], tokenizer=str(tokenizer_dir),
                        seq_len=seq_len, schedule={"micro_batch": micro_batch, "grad_accum": 1, "gpus": 1,
                                                   "rounding": "floor", "warmup": warmup})
    run_pack(config)
    return out


def pack_chat(out: Path, tokenizer_dir: Path, instructions_dir: Path, seq_len: int, max_sequences: int) -> Path:
    """SFT-style packed conversations (assistant-only labels), via py4.data."""
    from py4.data.configs import PackConfig
    from py4.data.pack import run_pack

    config = PackConfig(out_dir=str(out), format="chat", instructions={"path": str(instructions_dir), "filter": "none"},
                        tokenizer=str(tokenizer_dir), seq_len=seq_len, max_sequences=max_sequences,
                        chat_template_kwargs={"enable_thinking": False},
                        schedule={"micro_batch": 2, "grad_accum": 1, "gpus": 1, "rounding": "floor", "warmup": 1})
    run_pack(config)
    return out
