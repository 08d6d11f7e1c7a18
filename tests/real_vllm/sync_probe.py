"""Run by ``test_weight_sync_vllm.py`` in the vLLM environment (.venv-vllm): py4's exact weight sync
into a colocated vLLM engine (vLLM's CPU build, float32, TRL's engine arguments), twice, each time
scoring fixed token sequences with the engine (prompt log-probabilities) and with the trained
PEFT model (transformers), as the GRPO trainer scores a rollout.

``sync_probe.py OUT MODEL_DIR KIND``: KIND ``causal`` (the smoke model, a causal LM) or ``gemma4``
(a Gemma-4 stand-in in its multimodal class, the engine built language-model-only as the
rehearsal's GRPO segments build it). Writes to OUT, per synced state (W1, W2, each a different
random LoRA) and sequence, the largest per-token difference of the engine's log-probabilities from
the trainer's under that state and under the other one.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path


def main(out: str, model_dir: str, kind: str) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    # TRL's colocated engine: one process, vLLM's external launcher.
    os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText
    from vllm import LLM, SamplingParams

    from py4.train.eft import LoraSpec
    from py4.train.weight_sync import exact_named_params

    gemma4 = kind == "gemma4"
    auto = AutoModelForImageTextToText if gemma4 else AutoModelForCausalLM
    spec = LoraSpec(r=8, alpha=16, target_scope=r"language_model\.layers\.\d+\.(self_attn|mlp)" if gemma4 else None)
    model = get_peft_model(auto.from_pretrained(model_dir, dtype=torch.float32), spec.peft_config()).eval()
    engine_args = {"language_model_only": True} if gemma4 else {}
    llm = LLM(model=model_dir, dtype="float32", max_model_len=256, max_num_seqs=2, seed=0,
              distributed_executor_backend="external_launcher", max_num_batched_tokens=4096,
              logprobs_mode="processed_logprobs", kv_cache_memory_bytes=1 << 30, **engine_args)
    runner = llm.llm_engine.model_executor.driver_worker.model_runner

    def fix_name(name: str, extra_prefixes=None) -> str:  # TRL's _fix_param_name_to_vllm
        for prefix in ["_checkpoint_wrapped_module.", *(extra_prefixes or [])]:
            name = name.replace(prefix, "")
        return name

    def set_lora(seed: int) -> None:
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, param in model.named_parameters():
                if "lora_" in name:
                    param.copy_(torch.randn(param.shape, generator=generator) * 0.05)

    def trainer_logps(ids: list[int]) -> list[float]:
        with torch.no_grad():
            logps = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), -1)
        return [logps[i - 1, ids[i]].item() for i in range(1, len(ids))]

    def engine_logps(ids: list[int]) -> list[float]:
        done = llm.generate([{"prompt_token_ids": ids}], SamplingParams(max_tokens=1, prompt_logprobs=0),
                            use_tqdm=False)[0]
        return [d[t].logprob for d, t in zip(done.prompt_logprobs[1:], ids[1:], strict=True)]

    def sync() -> None:  # as py4's ExactSync...VLLMGeneration.sync_weights on vLLM's CPU build
        runner.reload_weights(weights_iterator=exact_named_params(model, fix_name))
        llm.reset_prefix_cache()

    config = json.loads((Path(model_dir) / "config.json").read_text())
    text = config.get("text_config", config)
    vocab = text["vocab_size"]
    placeholders = [config[k] for k in ("image_token_id", "audio_token_id", "video_token_id") if k in config]
    special = set(placeholders) | {config.get("pad_token_id") or 0, 0, 1, 2}
    plain = [2] + [t for t in range(vocab // 3, vocab) if t not in special][:24]
    sequences = {"plain": plain}
    if placeholders:  # a rollout that sampled a multimodal placeholder id as text
        sequences["placeholder"] = plain[:8] + [placeholders[0]] + plain[8:]
    states = {"W1": 1, "W2": 2}
    result: dict = {"placeholders": placeholders}
    for state, seed in states.items():
        set_lora(seed)
        sync()
        scored = {name: engine_logps(ids) for name, ids in sequences.items()}
        for other, other_seed in states.items():
            set_lora(other_seed)
            for name, ids in sequences.items():
                diffs = [abs(a - b) for a, b in zip(scored[name], trainer_logps(ids), strict=True)]
                result[f"{state}/{name}/vs_{other}"] = max(diffs)
        set_lora(seed)
    Path(out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main(*sys.argv[1:4])
