"""Tiny, randomly initialised stand-ins for the campaign's models: the real architectures, smaller.

``build_standin(family, kind, out_dir, seed)`` writes a normal model folder (config.json,
bf16 safetensors shards + index, tokenizer files, chat_template.jinja,
generation_config.json; for Gemma-4 also processor_config.json) that loads with
``AutoModelForCausalLM`` / ``AutoTokenizer`` (Gemma-4: and ``AutoProcessor``, as vLLM's multimodal
Gemma-4 classes build it when their media inputs are on):

- ``gemma4``: Gemma-4 31B, ``Gemma4ForConditionalGeneration`` (what ``google/gemma-4-31B*``
  resolves to), a small vision tower, no audio tower.
- ``gemma4_12b``: Gemma-4 12B, ``Gemma4UnifiedForConditionalGeneration`` (``gemma4_unified``: what
  ``google/gemma-4-12B*`` resolves to), its encoder-free vision and audio embedders.
- ``glm45``: GLM-4.5-Air, ``Glm4MoeForCausalLM``, plus the extra multi-token-prediction layer
  ``model.layers.<N>.*`` that the Hub checkpoints carry and transformers drops on load (so a
  model saved by transformers lacks it).

Each text config is the real one (``py4.train.model_shape.PINNED_CONFIGS``: the pinned repos'
``config.json`` fields, each with the public copy it was read from) with only the fields of
:data:`SIZE_CHANGES` replaced: layers, hidden and MLP widths, routed experts, the vocabulary rows
(the stand-in tokenizer's, padded) and the sliding window (a length, like the rehearsal's
sequence lengths). Head dims (sliding and global), attention and KV heads per layer type,
``attention_k_eq_v``, per-layer embeddings, the layer-type pattern, tied embeddings, MoE routing
(top-k, shared expert, dense first layers) and MTP are the real models'. docs/rehearsal.md lists
the changes.

``kind`` is ``base`` or ``it``. Both share the base weights drawn from ``seed``; the -it
stand-in adds a small seeded delta so that ``it - base`` (the chat vector a graft adds) is
a real, non-zero difference. Tokenizers are byte-level BPE trained offline on standard
library text (as ``py4.chat.smoke_tokenizer`` does), carrying the family's special tokens
and a chat template as TRL's package ships it (``trl/chat_templates``): not the pinned -it
revisions' own files, which are not available offline; :func:`file_provenance` says so per file,
and ``py4 campaign preflight`` checks the real ones. A Gemma-4 tokenizer names its media tokens as the
real one's ``tokenizer_config.json`` does (``image_token``, ``boi_token``, ``eoi_token`` and the audio
three: :data:`GEMMA4_MEDIA_TOKENS`, which ``Gemma4Processor`` reads), and its
``processor_config.json`` is the real processor's (:data:`GEMMA4_PROCESSORS`: image, video and
audio settings, none of which depends on the model's sizes; the stand-ins' vision configs keep the
real ``patch_size`` and ``pooling_kernel_size`` these assume).

Everything is deterministic for a given seed: the same seed writes the same tensors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Family = Literal["gemma4", "gemma4_12b", "glm45"]
Kind = Literal["base", "it"]
FAMILIES: tuple[str, ...] = ("gemma4", "gemma4_12b", "glm45")
KINDS: tuple[str, ...] = ("base", "it")

BPE_VOCAB_SIZE = 1024  # learned merges + alphabet; special and format tokens come on top
TOKENIZER_TEXT_BYTES = 600_000  # of stdlib text: trains in about a second, deterministic
MAX_SHARD_SIZE = "400KB"  # several shards per stand-in, so the graft streams over shards
IT_DELTA_SCALE = 0.02  # std of the seeded difference between -it and base weights

# Gemma-4: the -it revisions the campaign pins (google/gemma-4-{12B,31B}-it) are not among those
# trl/chat_templates/README.md names (all google/gemma-4-E2B-it commits); the stand-ins carry the
# current one, gemma4_v5.jinja (E2B-it at 8995379). GLM: glm4moe.jinja, "the original GLM-4-MoE
# template" (no revision named). file_provenance records both as not the pinned files.
GEMMA4_TEMPLATE = "gemma4_v5.jinja"
GLM45_TEMPLATE = "glm4moe.jinja"


@dataclass(frozen=True)
class FamilyTokens:
    """A family's tokenizer vocabulary beyond BPE: special tokens first, then format tokens."""

    special: tuple[str, ...]
    """Structural tokens (turns, media, bos/eos/pad): ``skip_special_tokens`` drops them."""
    format: tuple[str, ...]
    """Tool-call / reasoning markup: single tokens, kept when decoding (parsers read them)."""
    pad: str
    eos: str
    bos: str | None
    unk: str | None
    it_stop: tuple[str, ...]
    """Extra end-of-turn tokens an -it generation_config stops on."""
    add_bos: bool
    """Whether encoding plain text prepends ``bos`` (Gemma does, GLM does not)."""


GEMMA4_TOKENS = FamilyTokens(
    special=("<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<|turn>", "<turn|>",
             "<|image>", "<image|>", "<|image|>", "<|audio>", "<audio|>", "<|audio|>", "<|video|>",
             "<|think|>"),
    format=("<|channel>", "<channel|>", "<|tool>", "<tool|>", "<|tool_call>", "<tool_call|>",
            "<|tool_response>", "<tool_response|>", '<|"|>'),
    pad="<pad>", eos="<eos>", bos="<bos>", unk="<unk>", it_stop=("<turn|>",), add_bos=True,
)
GLM45_TOKENS = FamilyTokens(
    special=("<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>",
             "<|assistant|>", "<|observation|>", "<|begin_of_image|>", "<|end_of_image|>",
             "<|begin_of_video|>", "<|end_of_video|>"),
    format=("<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>",
            "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<tools>", "</tools>", "/nothink"),
    pad="<|endoftext|>", eos="<|endoftext|>", bos=None, unk=None,
    it_stop=("<|user|>", "<|observation|>"), add_bos=False,
)
GEMMA4_MEDIA_TOKENS = {"image_token": "<|image|>", "boi_token": "<|image>", "eoi_token": "<image|>",
                       "audio_token": "<|audio|>", "boa_token": "<|audio>", "eoa_token": "<audio|>"}
"""The media tokens a Gemma-4 tokenizer names by role (the real ``tokenizer_config.json``'s keys), which
``Gemma4Processor`` and ``Gemma4UnifiedProcessor`` read when they are built. All are special tokens of
the stand-in vocabulary already: naming them changes no token id and no decoding."""
FAMILY_TOKENS = {"gemma4": GEMMA4_TOKENS, "gemma4_12b": GEMMA4_TOKENS, "glm45": GLM45_TOKENS}
FAMILY_TEMPLATES = {"gemma4": GEMMA4_TEMPLATE, "gemma4_12b": GEMMA4_TEMPLATE, "glm45": GLM45_TEMPLATE}
FAMILY_CLASSES = {"gemma4": "Gemma4ForConditionalGeneration", "gemma4_12b": "Gemma4UnifiedForConditionalGeneration",
                  "glm45": "Glm4MoeForCausalLM"}
FAMILY_MODEL_TYPES = {"gemma4": "gemma4", "gemma4_12b": "gemma4_unified", "glm45": "glm4_moe"}
REAL_MODELS = {"gemma4": "google/gemma-4-31B-it", "gemma4_12b": "google/gemma-4-12B-it", "glm45": "zai-org/GLM-4.5-Air"}
"""The pinned Hub model whose architecture each stand-in family keeps (base and -it share it)."""

# The embedding rows are the tokenizer's length rounded up to a multiple of this, as the real
# checkpoints pad theirs (GLM-4.5: 151,552 rows for a 151,365-token tokenizer); uneven rows would
# also make FSDP shards of different sizes on 2 ranks, which the real models never have.
VOCAB_MULTIPLE = 128
# Bump when what build_standin writes changes: rehearsal folders rebuild their stand-ins.
STANDIN_VERSION = 4


def _gemma4_processor(processor: str, prefix: str, audio: dict) -> dict:
    """A Gemma-4 ``processor_config.json``: the processor's own settings and its image, video and
    audio processors', as transformers' classes save them by default (the image block equals the one
    google publishes for gemma-4-e2b-it)."""
    frames = {"do_convert_rgb": True, "do_rescale": True, "do_resize": True, "image_mean": [0.0, 0.0, 0.0],
              "image_std": [1.0, 1.0, 1.0], "patch_size": 16, "pooling_kernel_size": 3, "resample": 3,
              "rescale_factor": 1 / 255}
    return {
        "audio_ms_per_token": 40, "audio_seq_length": 750, "feature_extractor": audio,
        "image_processor": {**frames, "do_normalize": False, "image_processor_type": f"{prefix}ImageProcessor",
                            "max_soft_tokens": 280},
        "image_seq_length": 280, "processor_class": processor,
        "video_processor": {**frames, "do_normalize": True, "do_sample_frames": True, "max_soft_tokens": 70,
                            "num_frames": 32, "return_metadata": False,
                            "video_processor_type": f"{prefix}VideoProcessor"},
    }


GEMMA4_PROCESSORS: dict[str, dict] = {
    "gemma4": _gemma4_processor("Gemma4Processor", "Gemma4", {
        "dither": 0.0, "feature_extractor_type": "Gemma4AudioFeatureExtractor", "feature_size": 128,
        "fft_length": 512, "fft_overdrive": False, "frame_length": 320, "hop_length": 160,
        "input_scale_factor": 1.0, "max_frequency": 8000.0, "mel_floor": 0.001, "min_frequency": 0.0,
        "padding_side": "right", "padding_value": 0.0, "per_bin_mean": None, "per_bin_stddev": None,
        "preemphasis": 0.0, "preemphasis_htk_flavor": True, "return_attention_mask": True, "sampling_rate": 16000}),
    "gemma4_12b": _gemma4_processor("Gemma4UnifiedProcessor", "Gemma4Unified", {
        "audio_samples_per_token": 640, "feature_extractor_type": "Gemma4UnifiedAudioFeatureExtractor",
        "feature_size": 640, "padding_side": "right", "padding_value": 0.0, "return_attention_mask": True,
        "sampling_rate": 16000}),
}
"""Per Gemma-4 family, its ``processor_config.json`` (Gemma4Processor for the 31B,
Gemma4UnifiedProcessor for the 12B's ``gemma4_unified``): what transformers 5.17 (.venv-vllm's,
the version vLLM loads it with) saves for a processor built from its classes' defaults."""

# The GLM stand-in's layers: the real first dense layer, then one MoE layer; the MTP layer is layer
# index GLM45_LAYERS (46 on GLM-4.5-Air).
GLM45_LAYERS = 2
GEMMA4_LAYERS = 6  # the real pattern's first period: five sliding layers, then one full
SLIDING_WINDOW = 16  # real 1,024: shorter than the rehearsal's sequences, so the window takes effect

SIZE_CHANGES: dict[str, dict[str, object]] = {
    "gemma4": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": GEMMA4_LAYERS,
               "sliding_window": SLIDING_WINDOW, "vocab_size": "tokenizer", "vocab_size_per_layer_input": "tokenizer"},
    "gemma4_12b": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": GEMMA4_LAYERS,
                   "sliding_window": SLIDING_WINDOW, "vocab_size": "tokenizer",
                   "vocab_size_per_layer_input": "tokenizer"},
    "glm45": {"hidden_size": 64, "intermediate_size": 128, "moe_intermediate_size": 32,
              "num_hidden_layers": GLM45_LAYERS, "n_routed_experts": 16, "vocab_size": "tokenizer"},
}
"""Per family, the real text-config fields the stand-in replaces (``"tokenizer"``: the stand-in
tokenizer's length padded to :data:`VOCAB_MULTIPLE`); every other field of the real text config is
kept. ``layer_types`` is the real pattern cut to the stand-in's layer count."""


def real_text_config(family: str) -> dict:
    """The real model's text-config fields (``PINNED_CONFIGS``), as the stand-in starts from them."""
    from py4.train.model_shape import PINNED_CONFIGS

    config = PINNED_CONFIGS[REAL_MODELS[_check_family(family)]]["config"]
    return dict(config.get("text_config", config))


def real_source(family: str) -> str:
    """Where the real model's fields were read (a public copy of the pinned repo's config.json)."""
    from py4.train.model_shape import PINNED_CONFIGS

    return PINNED_CONFIGS[REAL_MODELS[_check_family(family)]]["source"]


def standin_text_fields(family: str, vocab: int) -> dict:
    """The stand-in's text-config fields: the real ones with :data:`SIZE_CHANGES` applied."""
    fields = real_text_config(family)
    for key in ("model_type", "architectures"):
        fields.pop(key, None)
    for key, value in SIZE_CHANGES[family].items():
        fields[key] = vocab if value == "tokenizer" else value
    if "layer_types" in fields:
        fields["layer_types"] = list(fields["layer_types"][:fields["num_hidden_layers"]])
    return fields


def chat_template_text(family: str) -> str:
    """The family's real chat template, as TRL's package ships it (no network)."""
    import trl

    path = Path(trl.__file__).parent / "chat_templates" / FAMILY_TEMPLATES[_check_family(family)]
    return path.read_text(encoding="utf-8")


def _check_family(family: str) -> str:
    if family not in FAMILIES:
        raise ValueError(f"unknown stand-in family {family!r}: expected one of {', '.join(FAMILIES)}")
    return family


def build_tokenizer(family: str):
    """A fast byte-level BPE tokenizer with ``family``'s special tokens and chat template."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    from py4.chat.smoke_tokenizer import stdlib_texts

    tokens = FAMILY_TOKENS[_check_family(family)]
    core = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=BPE_VOCAB_SIZE + len(tokens.special),
        min_frequency=2,
        special_tokens=list(tokens.special),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(stdlib_texts(TOKENIZER_TEXT_BYTES), trainer=trainer)
    if tokens.add_bos and tokens.bos is not None:
        bos_id = core.token_to_id(tokens.bos)
        core.post_processor = processors.TemplateProcessing(
            single=f"{tokens.bos} $A", pair=f"{tokens.bos} $A $B", special_tokens=[(tokens.bos, bos_id)])
    core.add_tokens([AddedToken(t, special=False, normalized=False) for t in tokens.format])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token=tokens.bos,
        eos_token=tokens.eos,
        pad_token=tokens.pad,
        unk_token=tokens.unk,
        model_max_length=131072,
        padding_side="left",
        **({"extra_special_tokens": GEMMA4_MEDIA_TOKENS} if tokens is GEMMA4_TOKENS else {}),
    )
    tokenizer.chat_template = chat_template_text(family)
    return tokenizer


def padded_vocab(tokenizer) -> int:
    return -(-len(tokenizer) // VOCAB_MULTIPLE) * VOCAB_MULTIPLE


def _token_id(tokenizer, token: str) -> int:
    token_id = tokenizer.convert_tokens_to_ids(token)
    if token_id is None or (token_id == tokenizer.unk_token_id and token != tokenizer.unk_token):
        raise ValueError(f"stand-in tokenizer lacks {token!r}")
    return token_id


def _gemma4_token_ids(tokenizer) -> dict[str, int]:
    return {t: _token_id(tokenizer, t) for t in GEMMA4_TOKENS.special}


def gemma4_config(tokenizer, num_hidden_layers: int = GEMMA4_LAYERS):
    """The Gemma-4 31B stand-in's ``Gemma4Config``: the real text config at the stand-in's sizes,
    a 2-layer vision tower, no audio tower."""
    from transformers import Gemma4Config

    ids = _gemma4_token_ids(tokenizer)
    text = standin_text_fields("gemma4", padded_vocab(tokenizer))
    text.update(num_hidden_layers=num_hidden_layers, max_position_embeddings=131072,
                layer_types=real_text_config("gemma4")["layer_types"][:num_hidden_layers],
                pad_token_id=ids["<pad>"], eos_token_id=ids["<eos>"], bos_token_id=ids["<bos>"])
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                  num_key_value_heads=2, head_dim=16)
    config = Gemma4Config(
        text_config=text, vision_config=vision, audio_config=None,
        boi_token_id=ids["<|image>"], eoi_token_id=ids["<image|>"], image_token_id=ids["<|image|>"],
        video_token_id=ids["<|video|>"], boa_token_id=ids["<|audio>"], eoa_token_index=ids["<audio|>"],
        audio_token_id=ids["<|audio|>"], tie_word_embeddings=text["tie_word_embeddings"],
    )
    # The pad/eos/bos ids also live at the top level, where generate() and the trainers look.
    config.pad_token_id, config.eos_token_id, config.bos_token_id = ids["<pad>"], ids["<eos>"], ids["<bos>"]
    return config


def gemma4_12b_config(tokenizer, num_hidden_layers: int = GEMMA4_LAYERS, sizes: dict | None = None):
    """The Gemma-4 12B stand-in's ``Gemma4UnifiedConfig``: the real text config at the stand-in's
    sizes with its encoder-free vision and audio embedders (projecting into the stand-in's width).

    ``sizes``: other values for size fields (the GPU check's larger widths, the real vocabulary rows)."""
    from transformers import Gemma4UnifiedConfig

    ids = _gemma4_token_ids(tokenizer)
    text = standin_text_fields("gemma4_12b", padded_vocab(tokenizer))
    text.update(sizes or {})
    text.update(num_hidden_layers=num_hidden_layers, max_position_embeddings=131072,
                layer_types=real_text_config("gemma4_12b")["layer_types"][:num_hidden_layers],
                pad_token_id=ids["<pad>"], eos_token_id=ids["<eos>"], bos_token_id=ids["<bos>"])
    hidden = text["hidden_size"]
    config = Gemma4UnifiedConfig(
        text_config=text, vision_config={"mm_embed_dim": hidden, "output_proj_dims": hidden},
        audio_config={},
        boi_token_id=ids["<|image>"], eoi_token_id=ids["<image|>"], image_token_id=ids["<|image|>"],
        video_token_id=ids["<|video|>"], boa_token_id=ids["<|audio>"], eoa_token_index=ids["<audio|>"],
        audio_token_id=ids["<|audio|>"], tie_word_embeddings=text["tie_word_embeddings"],
    )
    config.pad_token_id, config.eos_token_id, config.bos_token_id = ids["<pad>"], ids["<eos>"], ids["<bos>"]
    return config


def glm45_config(tokenizer, num_hidden_layers: int = GLM45_LAYERS):
    """The GLM-4.5-Air stand-in's ``Glm4MoeConfig``: the real config at the stand-in's sizes (the real
    first dense layer, then MoE layers with the real top-8 routing over fewer experts, one shared
    expert, one MTP layer)."""
    from transformers import Glm4MoeConfig

    pad = _token_id(tokenizer, GLM45_TOKENS.pad)
    fields = standin_text_fields("glm45", padded_vocab(tokenizer))
    fields.update(num_hidden_layers=num_hidden_layers, max_position_embeddings=131072,
                  pad_token_id=pad, eos_token_id=pad, bos_token_id=None)
    return Glm4MoeConfig(**fields)


FAMILY_CONFIGS = {"gemma4": gemma4_config, "gemma4_12b": gemma4_12b_config, "glm45": glm45_config}


def file_provenance(family: str) -> dict[str, dict[str, object]]:
    """Per file of a stand-in folder: what it is made from, and whether it is the pinned revision's own.

    ``pinned: False`` means a check that depends on the file's exact bytes (TRL's template
    recognition, the tool-call parsers on the template's rendering, tokenizer agreement) is not
    proven by the rehearsal for the real model; ``py4 campaign preflight`` checks it against the
    real file."""
    real = REAL_MODELS[_check_family(family)]
    template = FAMILY_TEMPLATES[family]
    return {
        "config.json": {"from": f"{real}'s architecture ({real_source(family)}); sizes changed: "
                                f"{', '.join(sorted(SIZE_CHANGES[family]))}", "pinned": False},
        "chat_template.jinja": {"from": f"trl/chat_templates/{template} (TRL {_trl_version()}), not {real}'s own",
                                "pinned": False},
        "tokenizer.json": {"from": "a byte-level BPE trained offline with the family's special tokens, "
                                   f"not {real}'s vocabulary", "pinned": False},
        "generation_config.json": {"from": "the family's stop tokens and sampling defaults, stand-in ids",
                                   "pinned": False},
        **({"processor_config.json": {"from": f"{GEMMA4_PROCESSORS[family]['processor_class']}'s defaults "
                                              f"(transformers 5.17), not {real}'s own", "pinned": False}}
           if family in GEMMA4_PROCESSORS else {}),
    }


def _trl_version() -> str:
    import importlib.metadata

    return importlib.metadata.version("trl")


def _random_model(config, seed: int):
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    return model.to(torch.bfloat16)  # the Hub checkpoints are bf16


def _add_it_delta(model, seed: int) -> None:
    """Move every weight by a small seeded amount (-it = base + chat vector)."""
    import torch

    generator = torch.Generator().manual_seed(seed + 1_000_003)
    with torch.no_grad():
        for _, param in sorted(model.named_parameters()):
            noise = torch.randn(param.shape, generator=generator, dtype=torch.float32) * IT_DELTA_SCALE
            param.add_(noise.to(param.dtype))


def _generation_config(tokenizer, family: str, kind: str) -> dict:
    tokens = FAMILY_TOKENS[family]
    eos = [_token_id(tokenizer, tokens.eos)]
    if kind == "it":
        eos += [_token_id(tokenizer, t) for t in tokens.it_stop]
    config = {"eos_token_id": eos if len(eos) > 1 else eos[0], "pad_token_id": _token_id(tokenizer, tokens.pad)}
    if tokens.bos is not None:
        config["bos_token_id"] = _token_id(tokenizer, tokens.bos)
    if kind == "it":
        config.update(do_sample=True, temperature=1.0, top_p=0.95)
    return config


def mtp_tensors(config, seed: int, it_delta: bool = False) -> dict:
    """GLM-4.5's multi-token-prediction layer as the Hub checkpoints store it.

    ``model.layers.<N>.*`` with N = num_hidden_layers: one more MoE decoder layer plus the
    MTP projections (``eh_proj``, ``enorm``, ``hnorm``, ``shared_head.norm``). Drawn from a
    model one layer deeper so its tensors have the real layer's names and shapes.
    """
    import torch
    from transformers import AutoModelForCausalLM

    depth = config.num_hidden_layers
    deeper = type(config)(**{**config.to_dict(), "num_hidden_layers": depth + 1})
    torch.manual_seed(seed + 7)
    model = AutoModelForCausalLM.from_config(deeper).to(torch.bfloat16)
    if it_delta:  # the -it checkpoint's MTP layer moved with the rest of the model
        _add_it_delta(model, seed)
    prefix = f"model.layers.{depth}."
    tensors = {name: t.detach().clone().contiguous() for name, t in _saved_state(model).items()
               if name.startswith(prefix)}
    hidden = config.hidden_size
    generator = torch.Generator().manual_seed(seed + (13 if it_delta else 11))
    eh_proj = torch.randn(hidden, 2 * hidden, generator=generator) * 0.02
    tensors[prefix + "eh_proj.weight"] = eh_proj.to(torch.bfloat16)
    for norm in ("enorm", "hnorm", "shared_head.norm"):
        tensors[f"{prefix}{norm}.weight"] = (1 + torch.randn(hidden, generator=generator) * 0.02).to(torch.bfloat16)
    return tensors


def _saved_state(model) -> dict:
    """The tensors as save_pretrained writes them (Hub names, e.g. per-expert weights)."""
    import tempfile

    from safetensors.torch import load_file

    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        state = {}
        for shard in sorted(Path(tmp).glob("*.safetensors")):
            state.update(load_file(shard))
    return state


def _append_to_last_shard(out_dir: Path, tensors: dict) -> None:
    """Write ``tensors`` into the folder's last shard and its index, as the Hub files have them."""
    from safetensors.torch import load_file, save_file

    index_path = out_dir / "model.safetensors.index.json"
    if index_path.exists():
        index = json.loads(index_path.read_text())
        last = sorted(set(index["weight_map"].values()))[-1]
    else:  # a single shard: give it an index so the weight map lists the MTP tensors too
        last = "model.safetensors"
        index = {"metadata": {}, "weight_map": {k: last for k in load_file(out_dir / last)}}
    merged = load_file(out_dir / last)
    merged.update(tensors)
    save_file(merged, out_dir / last, metadata={"format": "pt"})
    for name in tensors:
        index["weight_map"][name] = last
    total = 0
    for shard in sorted(set(index["weight_map"].values())):
        total += sum(t.numel() * t.element_size() for t in load_file(out_dir / shard).values())
    index.setdefault("metadata", {})["total_size"] = total
    index["weight_map"] = dict(sorted(index["weight_map"].items()))
    index_path.write_text(json.dumps(index, indent=2) + "\n")


def build_standin(family: str, kind: str, out_dir: str | Path, seed: int = 0) -> Path:
    """Write a tiny ``family`` (gemma4 | glm45) ``kind`` (base | it) stand-in to ``out_dir``.

    Returns ``out_dir``. The same (family, seed) gives the same base weights for both kinds,
    so ``it - base`` is the seeded chat vector only.
    """
    _check_family(family)
    if kind not in KINDS:
        raise ValueError(f"unknown stand-in kind {kind!r}: expected one of {', '.join(KINDS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(family)
    config = FAMILY_CONFIGS[family](tokenizer)
    model = _random_model(config, seed)
    if kind == "it":
        _add_it_delta(model, seed)
    model.generation_config.update(**_generation_config(tokenizer, family, kind))
    model.save_pretrained(out, max_shard_size=MAX_SHARD_SIZE)
    tokenizer.save_pretrained(out)
    if family in GEMMA4_PROCESSORS:
        processor = json.dumps(GEMMA4_PROCESSORS[family], indent=2, sort_keys=True)
        (out / "processor_config.json").write_text(processor + "\n")
    if family == "glm45":
        _append_to_last_shard(out, mtp_tensors(config, seed, it_delta=kind == "it"))
    (out / "standin.json").write_text(json.dumps(
        {"family": family, "kind": kind, "seed": seed, "version": STANDIN_VERSION, "class": FAMILY_CLASSES[family],
         "real_model": REAL_MODELS[family], "size_changes": SIZE_CHANGES[family],
         "chat_template": f"trl/chat_templates/{FAMILY_TEMPLATES[family]}", "files": file_provenance(family)},
        indent=2) + "\n")
    return out
