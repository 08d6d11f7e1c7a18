"""Helpers for the data pipeline tests (imported by conftest.py and the test modules)."""

from __future__ import annotations

import json
from pathlib import Path

# trim_blocks pitfall (STACK.md): HF renders with trim_blocks, so newlines are written as
# {{ '\n' }} expressions, never as literal text right after a block tag.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}"
    "{{ '<|assistant|>\n' }}{% generation %}{{ message['content'] }}{{ '<|end|>' }}{% endgeneration %}{{ '\n' }}"
    "{% else %}"
    "{{ '<|' + message['role'] + '|>\n' + message['content'] + '<|end|>\n' }}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)
SPECIALS = ["<pad>", "<bos>", "<eos>", "<|user|>", "<|assistant|>", "<|system|>", "<|tool|>", "<|end|>"]

WORDS = ("the quick brown fox jumps over a lazy dog while python four code runs fn let nil true false "
         "range slice index value list dict set print return import use catch throw").split()


def sentence(i: int, n: int = 12) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n + i % 5)) + "."


def build_tokenizer(template: str = CHAT_TEMPLATE):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=512, special_tokens=SPECIALS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([sentence(i) for i in range(200)] + ["def f(x):\n    return x + 1\n"] * 20, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>",
                                   chat_template=template)

def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def conversation(i: int, turns: int = 1, system: bool = False) -> list[dict]:
    messages = [{"role": "system", "content": f"system prompt {i}"}] if system else []
    for t in range(turns):
        messages.append({"role": "user", "content": f"question {i}.{t} " + sentence(i + t, 6)})
        messages.append({"role": "assistant", "content": f"answer {i}.{t} " + sentence(i + t + 3, 8)})
    return messages
