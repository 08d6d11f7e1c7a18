"""A byte-level BPE tokenizer trained locally, wrapped with the smoke chat format.

Stands in for a Hub tokenizer at smoke scale: nothing is downloaded. The training
text is local and the same on every machine with the same Python: the standard
library's sources (docstrings and code), plus whatever extra texts the caller passes
(the smoke instruction set, so that chat words tokenize sensibly).
"""

from __future__ import annotations

import sysconfig
from collections.abc import Iterable, Iterator
from pathlib import Path

from py4.chat import smoke_format

DEFAULT_VOCAB_SIZE = 3072
# The stdlib packages read for tokenizer text, in this order (sorted files inside).
STDLIB_PACKAGES = ("json", "email", "collections", "asyncio", "concurrent", "importlib", "unittest", "logging")
STDLIB_TOP_LEVEL_LIMIT = 120  # top-level modules read, sorted by name


def stdlib_files() -> list[Path]:
    """Python files of the running interpreter's standard library, in a fixed order.

    Raises FileNotFoundError when the standard library's sources are not installed.
    """
    root = Path(sysconfig.get_paths()["stdlib"])
    if not (root / "os.py").exists():
        raise FileNotFoundError(f"standard-library sources not found under {root}")
    files = sorted(root.glob("*.py"))[:STDLIB_TOP_LEVEL_LIMIT]
    for package in STDLIB_PACKAGES:
        files.extend(sorted(p for p in (root / package).rglob("*.py") if "test" not in p.parts))
    return files


def stdlib_texts(max_bytes: int = 4_000_000) -> Iterator[str]:
    """Chunks of standard-library source text, about ``max_bytes`` in all, deterministic."""
    used = 0
    for path in stdlib_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if used + len(text) > max_bytes:
            text = text[: max(0, max_bytes - used)]
        used += len(text)
        yield text
        if used >= max_bytes:
            return


def train_tokenizer(texts: Iterable[str], vocab_size: int = DEFAULT_VOCAB_SIZE):
    """Train byte-level BPE on ``texts`` and wrap it as a chat-ready PreTrainedTokenizerFast.

    The special tokens take ids 0..5 (pad, eos, bos, unk, start/end of turn); the
    tool-call and think markers are added as non-special tokens. Encoding plain text
    prepends ``<bos>`` as Gemma's tokenizer does; chat rendering writes ``<bos>`` itself.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(smoke_format.SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(texts, trainer=trainer)
    bos_id = core.token_to_id(smoke_format.BOS)
    core.post_processor = processors.TemplateProcessing(
        single=f"{smoke_format.BOS} $A", pair=f"{smoke_format.BOS} $A $B", special_tokens=[(smoke_format.BOS, bos_id)]
    )
    core.add_tokens([AddedToken(t, special=False, normalized=False) for t in smoke_format.FORMAT_TOKENS])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token=smoke_format.BOS,
        eos_token=smoke_format.EOS,
        pad_token=smoke_format.PAD,
        unk_token=smoke_format.UNK,
        extra_special_tokens={"start_of_turn_token": smoke_format.START_OF_TURN,
                              "end_of_turn_token": smoke_format.END_OF_TURN},
        model_max_length=16384,
        padding_side="left",
    )
    tokenizer.chat_template = smoke_format.CHAT_TEMPLATE
    tokenizer.response_template = smoke_format.RESPONSE_TEMPLATE
    return tokenizer
