"""A tiny random Gemma-3 model over a character tokenizer: probe scorers' test model (built in a second).

One token per character, so every text tokenizes the same alone or joined, and token offsets
are character offsets (the endpoint's ``text_offset``). ``bos=False`` gives the tokenizer no BOS
(as GLM-4.5's has none) over the same vocabulary, so the model's weights stay the same.
"""

from __future__ import annotations

from pathlib import Path


def char_tokenizer(texts, bos: bool = True):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = sorted({c for t in texts for c in t})
    vocab = {"<pad>": 0, "<bos>": 1, "<eos>": 2, "<end_of_turn>": 3, **{c: i + 4 for i, c in enumerate(chars)}}
    raw = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    raw.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    return PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="<pad>", bos_token="<bos>" if bos else None,
                                   eos_token="<eos>")


def char_model(pairs, sliding_window: int = 512, seed: int = 0, bos: bool = True):
    """(model, tokenizer) covering every character of ``pairs``' prefixes and spans."""
    from py4.train.tiny_model import TinyModelSpec, build_tiny_model

    tok = char_tokenizer((p[k] for p in pairs for k in ("prefix", "p4", "py3", "suffix")), bos=bos)
    return build_tiny_model(TinyModelSpec(sliding_window=sliding_window, seed=seed), tok), tok


def saved_char_model(pairs, out: Path, seed: int = 0, bos: bool = True) -> Path:
    from py4.train.tiny_model import save_model

    model, tok = char_model(pairs, seed=seed, bos=bos)
    save_model(model, tok, out)
    return out
