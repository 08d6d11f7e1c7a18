"""A local transformers model as a policy: batched generation, the model's own chat template.

Prompts are rendered with ``tokenizer.apply_chat_template(messages, tools=…,
add_generation_prompt=True, enable_thinking=…)``; turns are parsed with the tokenizer's
response schema (``py4.episodes.parsing.parse_with_tokenizer``). Generation stops at
the tokenizer's EOS and at ``<end_of_turn>`` when the vocabulary has it.

A LoRA adapter folder (``adapter_config.json``: an EFT or GRPO run's ``model/``) is loaded
on its base model and merged before generation (``load_model``): the same function as the
unmerged adapter (a test compares the logits), several times faster to sample from.
"""

from __future__ import annotations

from pathlib import Path

from py4.episodes.parsing import parse_with_tokenizer
from py4.errors import Py4Error
from py4.episodes.policy import Turn, TurnRequest
from py4.episodes.sampling import generation_config, openai_sampling

END_OF_TURN = "<end_of_turn>"


def is_adapter(path: str | Path) -> bool:
    """Whether ``path`` is a PEFT adapter folder (rather than a full model)."""
    return (Path(path) / "adapter_config.json").is_file()


def load_model(path: str | Path, merge: bool = True):
    """A causal LM in float32 from a model folder, or from an adapter folder on its base.

    An adapter is loaded on the base model its ``adapter_config.json`` names and, with
    ``merge`` (default), merged into it (``merge_and_unload``; modules trained in full, such
    as embeddings, replace the base's). Raises OSError when a folder holds no loadable model.
    """
    import torch
    from transformers import AutoModelForCausalLM

    if not is_adapter(path):
        return AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=torch.float32)
    from peft import AutoPeftModelForCausalLM

    model = AutoPeftModelForCausalLM.from_pretrained(str(path), local_files_only=True, dtype=torch.float32)
    return model.merge_and_unload() if merge else model


class LocalModelPolicy:
    """``path``: a model folder with its tokenizer (local files only).

    Raises OSError when the folder holds no loadable model or tokenizer, and Py4Error when
    its tokenizer has no chat template (episodes are chats: a base model cannot take them).
    """

    def __init__(self, path: str, *, temperature: float = 0.7, top_p: float = 1.0, top_k: int = 0,
                 min_p: float = 0.0, repetition_penalty: float = 1.0, seed: int = 0,
                 batch_size: int = 8, device: str = "cpu"):
        import torch
        from transformers import AutoTokenizer

        from py4.threads import use_cpu_threads

        use_cpu_threads()
        self.name = f"local:{path}"
        self.temperature, self.top_p, self.batch_size, self.device = temperature, top_p, batch_size, device
        self.top_k, self.min_p, self.repetition_penalty = top_k, min_p, repetition_penalty
        self.sampling_effective = {**openai_sampling(self), "max_tokens": "per turn: the episode's token budget left",
                                   "seed": f"torch.manual_seed({seed}) once", "engine": "transformers generate"}
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        if not self.tokenizer.chat_template:  # checked before the weights load
            raise Py4Error(f"{path}: its tokenizer has no chat template, and every evaluation episode is a "
                           "chat; evaluate an instruction-tuned model (an -it folder, a graft or an SFT run), "
                           "not a base model")
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = load_model(path).to(device)
        self.model.eval()
        self.stop_ids = sorted({i for i in (self.tokenizer.eos_token_id,
                                            self.tokenizer.convert_tokens_to_ids(END_OF_TURN))
                                if isinstance(i, int) and i != self.tokenizer.unk_token_id})
        self._generator = torch.Generator(device=device).manual_seed(seed)
        torch.manual_seed(seed)

    def act(self, requests: list[TurnRequest]) -> list[Turn]:
        turns: list[Turn] = []
        for start in range(0, len(requests), self.batch_size):
            turns.extend(self._batch(requests[start:start + self.batch_size]))
        return turns

    def _batch(self, requests: list[TurnRequest]) -> list[Turn]:
        import torch

        prompts = [self.tokenizer.apply_chat_template(r.messages, tools=r.tools, add_generation_prompt=True,
                                                      enable_thinking=r.enable_thinking, tokenize=False)
                   for r in requests]
        enc = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        config = generation_config(self, max(r.max_new_tokens for r in requests), eos_token_id=self.stop_ids,
                                   pad_token_id=self.tokenizer.pad_token_id)
        with torch.no_grad():  # every sampling field set: none comes from the model's generation_config.json
            out = self.model.generate(**enc, generation_config=config)
        prompt_len = enc["input_ids"].shape[1]
        return [self._turn(out[i, prompt_len:].tolist(), r, prompts[i]) for i, r in enumerate(requests)]

    def _turn(self, ids: list[int], request: TurnRequest, prompt: str) -> Turn:
        stop = next((i for i, t in enumerate(ids) if t in self.stop_ids), None)
        finished = stop is not None and stop < request.max_new_tokens
        ids = ids[:stop + 1] if finished else ids[:request.max_new_tokens]
        text = self.tokenizer.decode(ids, skip_special_tokens=False)
        parsed = parse_with_tokenizer(self.tokenizer, text, prefix=prompt)
        return Turn(text, parsed, len(ids), finished)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def close(self) -> None:
        self.model = None
