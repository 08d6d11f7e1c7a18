"""The `vllm` tier: py4 against a real ``vllm serve`` of vLLM's CPU build (``make test-vllm``).

One server for the whole session, started as the campaign runner starts an evaluation's server
(``py4.evaluate.serve.plan_server``: Gemma-4's tool-call and reasoning parsers, an adapter as a
LoRA module with ``--enable-lora --max-lora-rank 64``) from ``.venv-vllm`` (``make vllm-env``),
and stopped when the session ends. It serves:

- ``<name>.base``: a tiny Gemma-4 language model (``Gemma4ForCausalLM``, the stand-in's tokenizer
  and chat template), fine-tuned here (``caller.py``) to answer the evaluation's first prompt with
  one ``run_code`` and one ``submit`` call in Gemma-4's own call format, so that greedy decoding
  through vLLM's parser is certain. A small language model (head size 32), not a stand-in's
  multimodal class, so that the lesson trains in seconds; the stand-ins themselves are served as
  their own classes by ``test_gemma4_sft_served.py`` and ``test_standins_served.py``.
- ``<name>``: a LoRA adapter on it, trained a few steps on the same lesson (its replies checked
  to stay greedy), the evaluated weights as an EFT node's are.

The server's own settings beyond the campaign's command line: ``--dtype float32`` (probe
log-probabilities compared with local scoring within 1e-4), ``--max-model-len`` and a 1 GiB KV cache
(``VLLM_CPU_KVCACHE_SPACE``; the machine is shared).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chat_server import alive, free_port
from vllm_tier import LIMIT_SEED, MODEL_KEY, NODE, SPLIT, VLLM, caller_prompts, caller_reply

@pytest.fixture(scope="session")
def vllm_program() -> Path:
    if not (VLLM.is_file() and os.access(VLLM, os.X_OK)):
        pytest.fail(f"{VLLM} is missing: build the vLLM environment first (make vllm-env; make test-vllm does)")
    return VLLM


@pytest.fixture(scope="session")
def problem():
    from py4.evaluate.harness import select_problems
    from py4.problems.bank import load_bank

    return select_problems(load_bank(), SPLIT, 1, LIMIT_SEED)[0]


@pytest.fixture(scope="session")
def gemma4_lm(tmp_path_factory) -> Path:
    """A tiny Gemma-4 language model (``Gemma4ForCausalLM``, float32) with the stand-in's tokenizer and
    Gemma-4's real chat template: head size 32 (vLLM's CPU attention has kernels for it; the
    rehearsal's stand-ins keep the real models' head sizes, 256 and 512), 6 layers, one in six global."""
    import torch
    from transformers import Gemma4ForCausalLM, Gemma4TextConfig, GenerationConfig

    from py4.rehearsal.standins import build_tokenizer, padded_vocab

    out = tmp_path_factory.mktemp("gemma4") / "language_model"
    tokenizer = build_tokenizer("gemma4")
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in ("<pad>", "<eos>", "<bos>", "<turn|>")}
    vocab = padded_vocab(tokenizer)
    config = Gemma4TextConfig(
        vocab_size=vocab, vocab_size_per_layer_input=vocab, hidden_size=64, intermediate_size=128,
        num_hidden_layers=6, num_attention_heads=2, num_key_value_heads=1, head_dim=32, global_head_dim=32,
        hidden_size_per_layer_input=0, attention_k_eq_v=True, sliding_window=16, max_position_embeddings=131072,
        pad_token_id=ids["<pad>"], eos_token_id=ids["<eos>"], bos_token_id=ids["<bos>"])
    torch.manual_seed(0)
    Gemma4ForCausalLM(config).to(torch.float32).save_pretrained(out)
    tokenizer.save_pretrained(out)
    # what an -it model's generation config says: its turn end stops generation as its EOS does
    GenerationConfig(eos_token_id=[ids["<eos>"], ids["<turn|>"]], pad_token_id=ids["<pad>"],
                     bos_token_id=ids["<bos>"]).save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def caller(gemma4_lm, problem, tmp_path_factory) -> tuple[Path, Path]:
    """(model folder, LoRA adapter on it): both answer the problem's first prompt with :func:`caller_reply`."""
    from transformers import AutoTokenizer

    from caller import Lesson, train_reply_adapter, train_reply_model

    tokenizer = AutoTokenizer.from_pretrained(gemma4_lm)
    reply = tokenizer(caller_reply(problem), add_special_tokens=False)["input_ids"]
    lessons = [Lesson(p, reply) for p in caller_prompts(tokenizer, problem)]
    root = tmp_path_factory.mktemp("caller")
    train_reply_model(gemma4_lm, lessons, root / "model")
    train_reply_adapter(root / "model", lessons, root / "adapter")
    return root / "model", root / "adapter"


@pytest.fixture(scope="session")
def served(vllm_program, caller, tmp_path_factory):
    """The running server (``py4.evaluate.serve.RunningServer``); stopped, with all it spawned, at the end."""
    from py4.evaluate.serve import ServeConfig, plan_server, serving

    config = ServeConfig(engine="vllm", executable=str(vllm_program), port=free_port(),
                         family={MODEL_KEY: "gemma4"}, max_model_len=8192, ready_timeout_s=1800,
                         extra_args=["--dtype", "float32"])
    model, adapter = caller
    plan = plan_server(config, str(adapter), name=NODE, base=str(model), model_key=MODEL_KEY)
    log = tmp_path_factory.mktemp("server") / "server.log"
    previous = os.environ.get("VLLM_CPU_KVCACHE_SPACE")
    os.environ["VLLM_CPU_KVCACHE_SPACE"] = "1"  # GiB; vLLM's CPU default takes a share of the machine
    try:
        with serving(plan, log) as server:
            yield server
            pid = server.process.pid
    finally:
        if previous is None:
            os.environ.pop("VLLM_CPU_KVCACHE_SPACE", None)
        else:
            os.environ["VLLM_CPU_KVCACHE_SPACE"] = previous
    assert not alive(pid), f"the vLLM server (pid {pid}) outlived its fixture"
