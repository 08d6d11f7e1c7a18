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


class FirstRolloutCallsATool(TrainerCallback):
    """Makes the first rollout of the first generation call ``run_code`` for certain: its
    completion is forced, token by token, to the tool call the chat template renders for
    ``{"name": "run_code", "arguments": {"code": CODE}}`` and the end of the turn. The call is then
    parsed, run by the environment (Boa) and rewarded by it as any sampled call would be; the
    other rollouts are sampled as usual. (A sampled tool call is only likely: under another thread
    count the same seed samples other tokens.)"""

    CODE = "print(1)"

    def __init__(self) -> None:
        self.forced: list[int] = []

    def on_train_begin(self, args, state, control, model=None, processing_class=None, **kwargs):
        import torch
        from transformers import LogitsProcessor, LogitsProcessorList

        from py4.chat.smoke_format import END_OF_TURN

        messages = [{"role": "user", "content": "x"}]
        call = {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "run_code", "arguments": {"code": self.CODE}}}]}
        options = dict(args.chat_template_kwargs or {})
        prompt = processing_class.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, **options)
        whole = processing_class.apply_chat_template([*messages, call], tokenize=False, **options)
        assert whole.startswith(prompt), "the chat template is not prefix-preserving"
        completion = whole[len(prompt):]
        completion = completion[:completion.index(END_OF_TURN) + len(END_OF_TURN)]
        script = processing_class(completion, add_special_tokens=False)["input_ids"]
        helper = self

        class Forced(LogitsProcessor):
            def __init__(self, start: int) -> None:
                self.start = start

            def __call__(self, input_ids, scores):
                at = input_ids.shape[1] - self.start
                if at < len(script):
                    scores[0] = torch.full_like(scores[0], -float("inf"))
                    scores[0, script[at]] = 0.0
                    helper.forced.append(script[at])
                return scores

        generate = model.generate

        def first_forced(*a, **kw):
            if not helper.forced:  # the first call only: later turns and steps are the model's own
                ids = kw.get("input_ids", a[0] if a else None)
                kw["logits_processor"] = LogitsProcessorList([*(kw.get("logits_processor") or []),
                                                              Forced(ids.shape[1])])
            return generate(*a, **kw)

        model.generate = first_forced
