"""GRPO's run manifest records the sampling TRL handed vLLM, in either mode, as vLLM got it.

TRL builds the colocated engine's ``SamplingParams`` itself (``VLLMGeneration.generate``), and in
server mode sends the parameters as keywords of its client's ``generate``; the config's values are
what py4 asked for, this record is what was sent. The generation here is TRL 1.16's own
``VLLMGeneration.generate`` with py4's subclass (made without ``__init__``, which would start vLLM),
in front of a recording engine or server client. vLLM is not installed in this environment, so
TRL's module has no ``SamplingParams``: a stand-in class that keeps its keywords takes its place.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from accelerate import Accelerator
from trl.distributed import DistributedBackend
from trl.generation import vllm_generation
from trl.generation.vllm_generation import VLLMGeneration

from py4.train.weight_sync import exact_sync_class

SAMPLING = {"temperature": 0.6, "top_p": 0.9, "top_k": 20, "min_p": 0.05, "repetition_penalty": 1.1}


class SamplingParams:
    """Stands in for vLLM's: the keywords as attributes."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


class Engine:
    """A colocated ``LLM``: one completion of two tokens per prompt; the sampling it was given."""

    def __init__(self):
        self.given = []

    def generate(self, prompts, sampling_params=None, use_tqdm=False):
        self.given.append(sampling_params)
        completion = SimpleNamespace(token_ids=[7, 8], logprobs=None)
        return [SimpleNamespace(prompt_token_ids=p["prompt_token_ids"], outputs=[completion]) for p in prompts]


class Client:
    """``trl vllm-serve``'s client: the request's keywords."""

    def __init__(self):
        self.given = []

    def generate(self, prompts, features=None, **kwargs):
        self.given.append(kwargs)
        n = kwargs["n"]
        return {"prompt_ids": prompts, "completion_ids": [[7, 8]] * (len(prompts) * n), "logprobs": None}


def generation(mode: str, **extra):
    gen = object.__new__(exact_sync_class(VLLMGeneration))
    gen.accelerator = Accelerator(cpu=True)
    gen._dist = DistributedBackend(gen.accelerator)
    gen.model = torch.nn.Linear(2, 2)
    gen.mode, gen.enable_sleep_mode, gen.tensor_parallel_size = mode, False, 1
    gen.max_completion_length, gen.logprobs, gen.structured_outputs_regex = 32, 0, None
    gen.generation_kwargs = extra
    for name, value in SAMPLING.items():
        setattr(gen, name, value)
    gen.llm, gen.vllm_client = (Engine(), None) if mode == "colocate" else (None, Client())
    return gen


@pytest.mark.parametrize("mode", ["colocate", "server"])
def test_the_sampling_vllm_got_is_recorded(mode, monkeypatch):
    monkeypatch.setattr(vllm_generation, "SamplingParams", SamplingParams, raising=False)
    gen = generation(mode)
    engine = gen.llm or gen.vllm_client
    gen.generate([[1, 2, 3], [1, 2, 3]], None, num_generations=2)
    gen.generate([[4, 5], [4, 5]], None, num_generations=2)
    expected = {**SAMPLING, "max_tokens": 32, "n": 1 if mode == "colocate" else 2}
    assert gen.sampling_sent == expected and gen.sampling_calls == 2 and gen.prompts_generated == 4
    assert "generate" not in vars(engine) and len(engine.given) == 2  # the engine's own method again


def test_extra_generation_keywords_and_a_change_between_calls_are_recorded(monkeypatch):
    monkeypatch.setattr(vllm_generation, "SamplingParams", SamplingParams, raising=False)
    gen = generation("colocate", seed=5, logit_bias={3: -100.0})
    gen.generate([[1, 2]], None, num_generations=1)
    assert gen.sampling_sent == {**SAMPLING, "max_tokens": 32, "n": 1, "seed": 5, "logit_bias": {3: -100.0}}
    gen.temperature = 1.0
    gen.generate([[1, 2]], None, num_generations=1)
    assert gen.sampling_sent["changed_at_call"] == 2 and gen.sampling_sent["changed_to"]["temperature"] == 1.0


def test_multimodal_placeholder_ids_in_completions_are_counted(monkeypatch):
    """Gemma-4's image/video/audio placeholder ids are embedded by vLLM but swapped for pad by
    transformers' forward: every one a rollout samples is counted (each completion here is [7, 8])."""
    from py4.train.weight_sync import placeholder_ids

    monkeypatch.setattr(vllm_generation, "SamplingParams", SamplingParams, raising=False)
    gen = generation("colocate")
    gen.model.config = SimpleNamespace(image_token_id=7, video_token_id=9, audio_token_id=None)
    assert placeholder_ids(gen.model) == {7, 9} and placeholder_ids(torch.nn.Linear(2, 2)) == frozenset()
    gen.generate([[1, 2], [3, 4], [5, 6]], None, num_generations=1)
    assert gen.placeholders_sampled == 3
    gen.model.config.image_token_id = 11
    gen.generate([[1, 2]], None, num_generations=1)
    assert gen.placeholders_sampled == 3


def test_a_server_mode_process_without_the_client_records_nothing_and_generates_as_trl():
    """TRL gives only the main process a server client; on the others the recording stands aside."""
    gen = generation("server")
    del gen.vllm_client
    with gen._recording_sampling():
        pass
    assert gen.sampling_sent is None and gen.sampling_calls == 0
