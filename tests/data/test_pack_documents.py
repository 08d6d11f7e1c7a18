"""Midtraining packing keeps documents apart or concatenates them, as the mix config says.

``documents: apart`` restarts the position ids at every document; transformers then builds
a block-causal mask from them (``masking_utils.find_packed_sequence_indices``), so a
token's logits do not depend on the document packed before it. ``concatenated`` numbers
every row 0..seq_len-1 and documents attend across their boundaries. Both are checked
through the training collator and a ``Trainer``-prepared model for the three model classes
the study trains: Gemma-3 (smoke), Gemma-4 (conditional generation) and GLM-4.5 (MoE).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from py4.data.configs import MixConfig
from py4.data.mix import run_mix
from py4.data.pack_text import BlockPacker
from py4.data.packed_io import load_packed

REPO = Path(__file__).resolve().parents[2]


class _Blocks:
    """A PackedDatasetWriter stand-in that keeps the written blocks."""

    def __init__(self):
        self.input_ids, self.positions = [], []

    def write_blocks(self, input_ids, labels, position_ids):
        assert np.array_equal(input_ids, labels)
        self.input_ids += [row.copy() for row in input_ids]
        self.positions += [np.asarray(row).copy() for row in position_ids]


def _pack(documents: list[np.ndarray], seq_len: int, mode: str) -> _Blocks:
    writer = _Blocks()
    packer = BlockPacker(seq_len, writer, blocks_per_batch=2, documents=mode)
    for doc in documents:
        packer.add(doc)
    packer.finish()
    return writer


def test_apart_restarts_position_ids_at_every_document_and_row():
    # lengths 5, 3, 9, 1, 4, 2 in rows of 8: the 9-token document crosses a row boundary.
    docs = [np.full(n, i + 1, dtype=np.int32) for i, n in enumerate([5, 3, 9, 1, 4, 2])]
    apart = _pack(docs, 8, "apart")
    assert [list(p) for p in apart.positions] == [
        [0, 1, 2, 3, 4, 0, 1, 2],
        [0, 1, 2, 3, 4, 5, 6, 7],  # the 9-token document's first 8 tokens
        [0, 0, 0, 1, 2, 3, 0, 1],  # its last token restarts at 0 in the next row; then 1, 4, 2
    ]
    concatenated = _pack(docs, 8, "concatenated")
    assert [list(p) for p in concatenated.positions] == [list(range(8))] * 3
    assert all(np.array_equal(a, c) for a, c in zip(apart.input_ids, concatenated.input_ids, strict=True))


def test_mix_with_documents_apart_restarts_positions_at_every_bos(tmp_path, corpus_dir, replay_dir, tokenizer_dir,
                                                                   tokenizer):
    common = {"corpus": str(corpus_dir), "tokenizer": str(tokenizer_dir), "seq_len": 64,
              "replay": {"path": str(replay_dir)}, "add_bos": True, "add_eos": False}
    apart = run_mix(MixConfig.model_validate({**common, "out_dir": str(tmp_path / "apart"), "documents": "apart"}))
    plain = run_mix(MixConfig.model_validate({**common, "out_dir": str(tmp_path / "plain"),
                                              "documents": "concatenated"}))
    assert apart["packing"]["documents"] == "apart" and plain["packing"]["documents"] == "concatenated"
    rows_apart, rows_plain = load_packed(tmp_path / "apart"), load_packed(tmp_path / "plain")
    assert len(rows_apart) == len(rows_plain) > 2
    bos, restarts = tokenizer.bos_token_id, 0
    for a, p in zip(rows_apart, rows_plain, strict=True):
        ids, pos = np.asarray(a["input_ids"]), np.asarray(a["position_ids"])
        assert np.array_equal(ids, p["input_ids"]) and np.array_equal(p["position_ids"], np.arange(64))
        starts = np.flatnonzero(pos == 0)
        # A restart at every document (its BOS) and at the row start, nowhere else; +1 in between.
        assert set(starts) == set(np.flatnonzero(ids == bos)) | {0}
        assert np.all(np.diff(pos)[np.diff(pos) != 1] == -pos[:-1][np.diff(pos) != 1])
        restarts += len(starts)
    assert restarts > len(rows_apart)  # several documents share a row


@pytest.mark.parametrize("path", sorted((REPO / "configs/data").glob("*/mix_*.yaml")), ids=lambda p: p.name)
def test_every_shipped_mix_states_how_documents_are_packed(path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    expected = "apart" if path.parent.name == "campaign" else "concatenated"
    assert data.get("documents") == expected, f"{path}: documents must be stated ({expected})"


# ----- the model side: does a token see the document packed before it? -----

class _StubTokenizer:
    """Enough of a tokenizer for the stand-ins' config builders (ids of their special tokens)."""

    unk_token_id = None
    unk_token = None

    def __init__(self, tokens, size=300):
        self._ids = {t: i for i, t in enumerate(tokens)}
        self._size = size

    def __len__(self):
        return self._size

    def convert_tokens_to_ids(self, token):
        return self._ids.get(token)


def _tiny_model(family: str):
    import torch
    from transformers import AutoModelForCausalLM, Gemma3ForCausalLM, Gemma3TextConfig

    from py4.rehearsal import standins

    torch.manual_seed(0)
    if family == "gemma3":  # the smoke model's class and shape (py4.train.tiny_model)
        return Gemma3ForCausalLM(Gemma3TextConfig(
            vocab_size=300, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
            head_dim=32, intermediate_size=128, sliding_window=512, attn_implementation="sdpa"))
    tokens = standins.GEMMA4_TOKENS if family == "gemma4" else standins.GLM45_TOKENS
    tokenizer = _StubTokenizer(tokens.special)
    config = standins.gemma4_config(tokenizer) if family == "gemma4" else standins.glm45_config(tokenizer)
    return AutoModelForCausalLM.from_config(config)


def _logits_of_last_document(trainer, collator, documents, mode: str, seq_len: int):
    """Logits of the last document's tokens, packed after the others in one row."""
    import torch

    packed = _pack(documents, seq_len, mode)
    assert len(packed.input_ids) == 1
    batch = collator([{"input_ids": packed.input_ids[0], "labels": packed.input_ids[0],
                       "position_ids": packed.positions[0]}])
    with torch.no_grad():
        logits = trainer.model(**batch).logits[0]  # the call Trainer.compute_loss makes
    return logits[seq_len - len(documents[-1]):]


@pytest.mark.smoke
@pytest.mark.parametrize("family", ["gemma3", "gemma4", "glm45"])
def test_a_tokens_logits_ignore_the_document_before_it_only_when_apart(tmp_path, family):
    import torch
    from transformers import Trainer, TrainingArguments

    from py4.train.packed import PackedBlockCollator

    model = _tiny_model(family).float()
    assert model.config._attn_implementation == "sdpa"
    # The Trainer sets config.use_cache from its arguments (False): a forward that builds a
    # KV cache would skip the packed-sequence detection, so the check runs on a prepared model.
    trainer = Trainer(model=model, args=TrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to=[]))
    trainer.model.eval()  # no dropout: the same inputs give the same logits
    collator = PackedBlockCollator(pad_token_id=0)
    g = torch.Generator().manual_seed(1)
    doc = torch.randint(10, 290, (30,), generator=g).numpy().astype(np.int32)
    before = [torch.randint(10, 290, (n,), generator=g).numpy().astype(np.int32) for n in (23, 7)]
    alone = _logits_of_last_document(trainer, collator, [doc], "apart", 30)
    kept_apart = _logits_of_last_document(trainer, collator, [*before, doc], "apart", 60)
    concatenated = _logits_of_last_document(trainer, collator, [*before, doc], "concatenated", 60)
    torch.testing.assert_close(kept_apart, alone, rtol=1e-4, atol=1e-4)
    assert (concatenated - alone).abs().max() > 1e-2  # the earlier documents are attended to
