"""Config types of the data pipeline (``py4 data mix|pack|schedule|inspect --config FILE``).

Each YAML under ``configs/data/`` names its type in ``kind`` (``data.mix``, ``data.pack``,
``data.schedule``, ``data.inspect``); :data:`CONFIG_KINDS` maps the kind to the type.
Defaults live here only.
"""

from __future__ import annotations

from typing import Any, Literal

import pydantic

from py4.config import StrictModel, require_pinned
from py4.data.instructions import InstructionSourceSpec
from py4.data.sources import TextSourceSpec

__all__ = ["ScheduleSpec", "DocumentPacking", "MixConfig", "PackConfig", "ScheduleConfig", "InspectConfig",
           "CONFIG_KINDS", "config_type_for"]


class ScheduleSpec(StrictModel):
    """How a stage steps through the data; the token total comes from the data itself."""

    micro_batch: int = pydantic.Field(1, ge=1)
    grad_accum: int = pydantic.Field(1, ge=1)
    gpus: int = pydantic.Field(1, ge=1)
    rounding: Literal["ceil", "floor"] = pydantic.Field(
        "floor", description="campaign: ceil for Gemma iso/control, floor elsewhere")
    warmup: float | None = pydantic.Field(None, ge=0, description="steps (>= 1) or a ratio (< 1) of max steps")
    max_steps_cap: int | None = pydantic.Field(None, ge=1, description="upper bound on steps (SFT: 48)")
    epochs: int = pydantic.Field(1, ge=1)


class _TokenizerFields(StrictModel):
    tokenizer: str = pydantic.Field(..., description="local folder or Hub id of the run's tokenizer")
    tokenizer_revision: str | None = pydantic.Field(None, description="Hub commit; required with a Hub id")
    seq_len: int = pydantic.Field(8192, ge=8)

    @pydantic.model_validator(mode="after")
    def _tokenizers_pinned(self):
        require_pinned(self.tokenizer, self.tokenizer_revision, "tokenizer", "tokenizer_revision")
        require_pinned(getattr(self, "count_tokenizer", None), getattr(self, "count_tokenizer_revision", None),
                       "count_tokenizer", "count_tokenizer_revision")
        return self


# How documents share a packed midtraining row (py4.data.pack_text.BlockPacker).
DocumentPacking = Literal["apart", "concatenated"]


class MixConfig(_TokenizerFields):
    """Midtraining mix: N copies of the corpus shuffled into an equal-token replay stream, packed."""

    kind: Literal["data.mix"] = "data.mix"
    out_dir: str
    arm: Literal["corpus", "control"] = pydantic.Field("corpus", description="corpus = corpus copies + replay "
                                                       "(iso-/prop-token arms); control = replay only")
    corpus: str | None = pydantic.Field(None, description="corpus folder (manifest.json + *.jsonl shards)")
    copies: int = pydantic.Field(4, ge=1)
    replay: TextSourceSpec
    replay_ratio: float = pydantic.Field(1.0, gt=0, description="replay tokens per corpus token (1.0 = equal-token)")
    control_target_tokens: int | None = pydantic.Field(None, ge=1, description="control arm: replay tokens to take")
    control_target_manifest: str | None = pydantic.Field(None, description="control arm: a corpus arm's output "
                                                         "folder or manifest.json; its total_mix_tokens is the target")
    count_tokenizer: str | None = pydantic.Field(None, description="counting basis for the equal-token match and "
                                                 "the control target, when it is not the run's tokenizer (the "
                                                 "campaign counted with the Gemma-3 tokenizer; GLM runs packed with "
                                                 "their own)")
    count_tokenizer_revision: str | None = None
    seed: int = 42
    """The mix's shuffle and the replay sample's (shard order, shuffle buffer): 42 as in the as-run mix."""
    replay_order: Literal["shards", "by_source"] = pydantic.Field(
        "shards", description="shards: every replay shard pooled in a seeded order through one shuffle buffer, as "
        "the campaign ran; by_source: sources interleaved by byte share (py4.data.replay_sample)")
    replay_shuffle_buffer: int = pydantic.Field(10_000, ge=1, description="replay documents held by the sample's "
                                                "shuffle buffer (per source with by_source; 10,000 as run)")
    add_bos: bool = True
    add_eos: bool = True
    documents: DocumentPacking = pydantic.Field(
        "concatenated", description="apart: position ids restart at 0 at every document (and row), so attention "
        "does not cross a document boundary; concatenated: 0..seq_len-1 in every row, documents attend to the "
        "ones before them in the row. Every shipped mix config states it (campaign: apart, as the seed runs' "
        "axolotl sample packing did; smoke: concatenated)")
    encode_batch_docs: int = pydantic.Field(256, ge=1)
    schedule: ScheduleSpec | None = None
    expected_total_mix_tokens: int | None = pydantic.Field(None, description="campaign record (checked, not used)")
    expected_max_steps: int | None = pydantic.Field(None, description="campaign record (checked, not used)")
    keep_work: bool = pydantic.Field(False, description="keep the tokenized documents under .work/")

    @pydantic.model_validator(mode="after")
    def _arm_inputs(self) -> "MixConfig":
        if self.arm == "corpus" and self.corpus is None:
            raise ValueError("arm 'corpus' needs corpus: <folder>")
        if self.arm == "control":
            if self.corpus is not None:
                raise ValueError("arm 'control' is replay only: remove corpus")
            if (self.control_target_tokens is None) == (self.control_target_manifest is None):
                raise ValueError("arm 'control' needs exactly one of control_target_tokens or control_target_manifest")
        return self


class PackConfig(_TokenizerFields):
    """Packing without mixing: chat conversations (SFT) or plain text documents."""

    kind: Literal["data.pack"] = "data.pack"
    out_dir: str
    format: Literal["chat", "text"] = "chat"
    instructions: InstructionSourceSpec | None = None
    text: list[TextSourceSpec] | None = None
    long_conversations: Literal["split", "drop"] = pydantic.Field("split", description="longer than seq_len: split "
                                                                  "at turn boundaries, or drop; both counted")
    pad_to_seq_len: bool = pydantic.Field(True, description="chat: pad every packed row to seq_len (labels -100)")
    open_bins: int = pydantic.Field(64, ge=1, description="chat: rows kept open for first-fit packing")
    max_sequences: int | None = pydantic.Field(None, ge=1, description="stop after this many packed rows")
    add_bos: bool = True
    add_eos: bool = True
    render_batch: int = pydantic.Field(64, ge=1)
    num_proc: int = pydantic.Field(1, ge=1, description="chat: processes rendering conversations (same output)")
    chat_template_kwargs: dict[str, Any] = pydantic.Field(default_factory=dict,
                                                          description="e.g. enable_thinking: false")
    chat_template: str | None = pydantic.Field(None, description="a .jinja file replacing the tokenizer's template "
                                               "(needs {% generation %} markers)")
    chat_template_family: str | None = pydantic.Field(
        None, description="chat: the family whose training template gives the assistant mask when the tokenizer's "
        "template has no {% generation %} markers (smoke, gemma4, glm4moe); default: recognised by the template text")
    schedule: ScheduleSpec | None = None
    expected_rows_total: int | None = pydantic.Field(None, description="campaign record: rows before the filter")
    expected_rows_kept: int | None = pydantic.Field(None, description="campaign record: rows the filter keeps")
    expected_max_steps: int | None = None

    @pydantic.model_validator(mode="after")
    def _inputs(self) -> "PackConfig":
        if self.format == "chat" and (self.instructions is None or self.text is not None):
            raise ValueError("format 'chat' needs instructions: {...} (and no text)")
        if self.format == "text" and (not self.text or self.instructions is not None):
            raise ValueError("format 'text' needs text: [ {...}, ... ] (and no instructions)")
        if self.chat_template_family is not None:
            from py4.chat.templates import get_family

            get_family(self.chat_template_family)  # ValueError naming the families
        return self


class ScheduleConfig(ScheduleSpec):
    """A step schedule from given counts (``py4 data schedule``)."""

    kind: Literal["data.schedule"] = "data.schedule"
    seq_len: int = pydantic.Field(8192, ge=1)
    total_tokens: int | None = pydantic.Field(None, ge=1)
    total_tokens_from: str | None = pydantic.Field(None, description="a mix/pack output folder or manifest.json")
    rows: int | None = pydantic.Field(None, ge=1, description="unpacked stages (EFT): rows per epoch")
    out_dir: str | None = None
    expected_max_steps: int | None = pydantic.Field(None, description="the campaign's value, checked")
    note: str | None = None

    @pydantic.model_validator(mode="after")
    def _one_size(self) -> "ScheduleConfig":
        given = [k for k in ("total_tokens", "total_tokens_from", "rows") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of total_tokens, total_tokens_from, rows (given: {given or 'none'})")
        return self


class InspectConfig(StrictModel):
    kind: Literal["data.inspect"] = "data.inspect"
    dataset: str
    index: int = pydantic.Field(0, ge=0)
    tokenizer: str | None = pydantic.Field(None, description="default: the one in the dataset's manifest.json")
    tokenizer_revision: str | None = None
    max_tokens: int | None = pydantic.Field(None, ge=1)
    show_tokens: bool = False


CONFIG_KINDS = {"data.mix": MixConfig, "data.pack": PackConfig, "data.schedule": ScheduleConfig,
                "data.inspect": InspectConfig}


def config_type_for(kind: str) -> type[StrictModel]:
    """The config type of a ``kind``; raises KeyError listing the kinds."""
    try:
        return CONFIG_KINDS[kind]
    except KeyError:
        raise KeyError(f"unknown data config kind {kind!r}; choices: {', '.join(CONFIG_KINDS)}") from None
