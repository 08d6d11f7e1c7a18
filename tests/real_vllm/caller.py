"""Teach a tiny model a fixed reply, so that greedy decoding through a real server is certain.

A randomly initialised stand-in never writes a tool call, and vLLM has no per-request
``sequence_bias`` (transformers-only). Instead the stand-in's language model is fine-tuned
(every weight: a LoRA alone cannot move the random model's tied embeddings, whose logits stay
near 1) to continue each given prompt with its reply, and an adapter is then trained on it a few
steps on the same lessons: the adapter is what the campaign evaluates (an EFT output served as a
LoRA module). Each stops only when, with teacher forcing, every reply token is the argmax by at
least ``margin`` logits (so greedy decoding reproduces each reply exactly, and numeric differences
between this transformers and vLLM's CPU kernels, ~1e-5, cannot flip a token); otherwise it
raises. Everything is seeded: the same inputs train the same weights.

Lessons whose prompts share a long start (the LLM corpus's prompts share a ~2,700-token system
prompt) can be trained with ``shared_prefix``: each step runs that start once, without gradient,
and each lesson's rest on its key-value cache, so only the rest is learned through (the start's
states follow the weights every step). The stopping check is then repeated on whole sequences.
"""

from __future__ import annotations

import copy
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
MARGIN = 2.0


@dataclass(frozen=True)
class Lesson:
    """One prompt (token ids as the server renders them) and the reply the model must write."""

    prompt: list[int]
    reply: list[int]


def train_reply_model(base: str | Path, lessons: list[Lesson], out: str | Path, *, margin: float = MARGIN,
                      max_steps: int = 400, lr: float = 3e-3, seed: int = 0, shared_prefix: bool = False) -> dict:
    """Fine-tune ``base`` until every lesson's reply is greedy with ``margin``; a model folder at ``out``.

    ``shared_prefix``: run the lessons' common start once per step, without gradient (module docstring).
    Returns {"steps", "min_margin"}. Raises AssertionError when ``max_steps`` do not suffice.
    """
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
    result = _train(model, model.parameters(), lessons, margin, max_steps, lr, shared_prefix)
    model.save_pretrained(str(out))
    for item in Path(base).iterdir():  # tokenizer, chat template, generation config
        if item.is_file() and not (out / item.name).exists() and not item.name.startswith("model"):
            shutil.copy(item, Path(out) / item.name)
    return result


def train_reply_adapter(model_dir: str | Path, lessons: list[Lesson], out: str | Path, *, rank: int = 16,
                        margin: float = MARGIN, steps: int = 10, lr: float = 1e-3, seed: int = 0) -> dict:
    """A LoRA on ``model_dir`` trained ``steps`` steps on ``lessons``; its replies still greedy with ``margin``."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from py4.threads import use_cpu_threads

    use_cpu_threads()
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
    model = get_peft_model(model, LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.0,
                                             target_modules=LORA_TARGETS))
    trainable = [p for p in model.parameters() if p.requires_grad]
    batches = _batches(lessons)
    optimiser = torch.optim.AdamW(trainable, lr=lr, weight_decay=0.0)
    for _ in range(steps):
        _step(model, optimiser, batches)
    worst = min(_reply_margin(model, ids, start) for ids, start in batches)
    assert worst >= margin, f"the adapter's replies are no longer greedy with margin {margin} ({worst:.2f})"
    assert any(float(p.detach().abs().max()) > 0 for n, p in model.named_parameters() if "lora_B" in n), \
        "adapter unchanged"
    model.save_pretrained(str(out))
    return {"steps": steps, "min_margin": worst}


def _batches(lessons: list[Lesson]):
    import torch

    return [(torch.tensor([lesson.prompt + lesson.reply]), len(lesson.prompt)) for lesson in lessons]


def _step(model, optimiser, batches) -> None:
    model.train()
    optimiser.zero_grad()
    loss = sum(_reply_loss(model, ids, start) for ids, start in batches) / len(batches)
    loss.backward()
    optimiser.step()


def _train(model, parameters, lessons: list[Lesson], margin: float, max_steps: int, lr: float,
           shared_prefix: bool = False) -> dict:
    import torch

    from py4.threads import use_cpu_threads

    use_cpu_threads()  # torch's default (every core) stalls this loop on a loaded machine
    batches = _batches(lessons)
    prefix = _common_start(lessons) if shared_prefix else 0
    optimiser = torch.optim.AdamW(parameters, lr=lr, weight_decay=0.0)
    worst = float("-inf")
    for step in range(1, max_steps + 1):
        if prefix:
            _step_on_prefix(model, optimiser, batches, prefix)
        else:
            _step(model, optimiser, batches)
        if step % 10 == 0:
            worst = (min(_prefix_margins(model, batches, prefix)) if prefix
                     else min(_reply_margin(model, ids, start) for ids, start in batches))
            if worst >= margin and prefix:  # the cached path passed: check the whole sequences, as served
                worst = min(_reply_margin(model, ids, start) for ids, start in batches)
            if worst >= margin:
                return {"steps": step, "min_margin": worst}
    raise AssertionError(f"the model did not learn its replies in {max_steps} steps (worst margin {worst:.2f})")


def _common_start(lessons: list[Lesson]) -> int:
    """Tokens every prompt starts with, short of each prompt's last (whose logits predict the reply)."""
    return min(len(os.path.commonprefix([lesson.prompt for lesson in lessons])),
               *(len(lesson.prompt) - 1 for lesson in lessons))


def _prefix_cache(model, batches, prefix: int):
    import torch

    with torch.no_grad():
        return model(input_ids=batches[0][0][:, :prefix], use_cache=True).cache


def _rest_logits(model, cache, ids, start: int, prefix: int):
    """The reply positions' logits, the sequence's first ``prefix`` tokens read from ``cache``."""
    logits = model(input_ids=ids[:, prefix:], cache=copy.deepcopy(cache), use_cache=True).logits
    return logits[0, start - 1 - prefix:-1].float()


def _step_on_prefix(model, optimiser, batches, prefix: int) -> None:
    import torch

    model.train()
    optimiser.zero_grad()
    cache = _prefix_cache(model, batches, prefix)
    loss = sum(torch.nn.functional.cross_entropy(_rest_logits(model, cache, ids, start, prefix), ids[0, start:])
               for ids, start in batches) / len(batches)
    loss.backward()
    optimiser.step()


def _prefix_margins(model, batches, prefix: int) -> list[float]:
    import torch

    model.eval()
    with torch.no_grad():
        cache = _prefix_cache(model, batches, prefix)
        return [_margin(_rest_logits(model, cache, ids, start, prefix), ids[0, start:]) for ids, start in batches]


def _reply_loss(model, ids, start: int):
    import torch

    logits = model(input_ids=ids).logits[0, start - 1:-1]
    return torch.nn.functional.cross_entropy(logits.float(), ids[0, start:])


def _reply_margin(model, ids, start: int) -> float:
    """min over reply positions of (target logit - best other logit), teacher-forced."""
    import torch

    model.eval()
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, start - 1:-1].float()
    return _margin(logits, ids[0, start:])


def _margin(logits, target) -> float:
    """min over positions of (target logit - best other logit)."""
    chosen = logits.gather(1, target[:, None])[:, 0]
    others = logits.scatter(1, target[:, None], float("-inf")).max(dim=1).values
    return float((chosen - others).min())
