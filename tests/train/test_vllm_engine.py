"""The colocated vLLM engine's arguments beyond TRL's: ``grpo.vllm_language_model_only`` and
``grpo.vllm_kv_cache_memory_bytes`` reach TRL's own ``LLM(...)`` call (``py4.train.vllm_engine``).

TRL's real ``VLLMGeneration`` builds the engine here with a recording stand-in for vLLM's ``LLM``
(this environment has no vLLM): what it receives is what vLLM would. The tier that runs it with
vLLM itself is tests/real_vllm/test_grpo_vllm.py (the rehearsal's Gemma-4 GRPO segment).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from py4.config import ConfigError, load_config
from py4.train import grpo
from py4.train.errors import TrainingError
from py4.train.vllm_engine import (colocate_engine_arguments, colocate_engine_kwargs, colocated_engine,
                                   own_rendezvous_port)

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "train" / "gemma4_31b" / "grpo.yaml"
COLOCATE = ["grpo.vllm_mode=colocate", "grpo.vllm_tensor_parallel_size=1", "grpo.vllm_server_gpus=null",
            "grpo.vllm_server_base_url=null"]


def config(*overrides: str) -> grpo.GRPOStageConfig:
    return load_config(grpo.GRPOStageConfig, CONFIG, list(overrides))


def test_the_settings_become_the_engine_keywords():
    g = config(*COLOCATE, "grpo.vllm_language_model_only=true", "grpo.vllm_kv_cache_memory_bytes=2147483648",
               "grpo.vllm_dtype=float32").grpo
    assert colocate_engine_kwargs(g) == {"language_model_only": True, "kv_cache_memory_bytes": 2147483648,
                                         "dtype": "float32"}
    assert colocate_engine_kwargs(config(*COLOCATE).grpo) == {}  # the campaign's: TRL's call as it is


def test_only_a_colocated_engine_gets_a_port_and_keywords(trl_without_vllm):
    settings = ["grpo.vllm_language_model_only=false", "grpo.vllm_dtype=float32"]
    environ: dict[str, str] = {}
    with colocated_engine(config(*COLOCATE, *settings).grpo, environ) as engines:
        build_engine(trl_without_vllm)
    assert engines == [{"dtype": "float32"}] and int(environ["MASTER_PORT"]) > 0
    for no_engine in (config(), config(*COLOCATE, *settings, "grpo.use_vllm=false")):  # a server; no vLLM
        environ = {}
        with colocated_engine(no_engine.grpo, environ) as engines:
            assert trl_without_vllm.LLM is RecordingLLM
        assert engines == [] and environ == {}


@pytest.mark.parametrize("overrides, expected", [
    (["grpo.vllm_kv_cache_memory_bytes=1024"], "grpo.vllm_kv_cache_memory_bytes is for vllm_mode: colocate"),
    (["grpo.vllm_language_model_only=true"], "grpo.vllm_language_model_only is for vllm_mode: colocate"),
    (["grpo.vllm_dtype=float32"], "grpo.vllm_dtype is for vllm_mode: colocate"),
])
def test_impossible_settings_stop_at_config_load(overrides, expected):
    with pytest.raises(ConfigError, match=expected):
        config(*overrides)


class RecordingLLM:
    calls: list[dict] = []

    def __init__(self, **kwargs):
        RecordingLLM.calls.append(kwargs)


@pytest.fixture
def trl_without_vllm(monkeypatch):
    """TRL's vllm_generation module as if vLLM were installed, its LLM a recorder; the variables
    TRL's colocate set-up writes restored afterwards."""
    from trl.generation import vllm_generation

    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.setenv(name, "0" if "RANK" in name else ("1" if name == "WORLD_SIZE" else "29555"))
    monkeypatch.setenv("MASTER_ADDR", "localhost")
    monkeypatch.setattr(vllm_generation, "is_vllm_available", lambda *a, **k: True)
    monkeypatch.setattr(vllm_generation, "LLM", RecordingLLM, raising=False)
    RecordingLLM.calls = []
    return vllm_generation


def build_engine(vllm_generation):
    """TRL's VLLMGeneration in colocate mode, as GRPOTrainer constructs it (one process)."""
    model = torch.nn.Linear(2, 2)
    model.name_or_path = "/models/policy"
    accelerator = SimpleNamespace(state=SimpleNamespace(deepspeed_plugin=None, fsdp_plugin=None), num_processes=1,
                                  process_index=0, local_process_index=0, wait_for_everyone=lambda: None)
    return vllm_generation.VLLMGeneration(model=model, accelerator=accelerator, processing_class=None,
                                          mode="colocate", tensor_parallel_size=1)


def test_trl_builds_its_colocated_engine_with_the_added_keywords(trl_without_vllm):
    g = config(*COLOCATE, "grpo.vllm_language_model_only=true", "grpo.vllm_kv_cache_memory_bytes=1024").grpo
    with colocate_engine_arguments(colocate_engine_kwargs(g)) as engines:
        build_engine(trl_without_vllm)
    (call,) = RecordingLLM.calls
    assert call["language_model_only"] is True and call["kv_cache_memory_bytes"] == 1024
    assert call["model"] == "/models/policy" and call["distributed_executor_backend"] == "external_launcher"
    assert engines == [{"language_model_only": True, "kv_cache_memory_bytes": 1024}]
    assert trl_without_vllm.LLM is RecordingLLM  # put back when the block ends
    build_engine(trl_without_vllm)
    assert "language_model_only" not in RecordingLLM.calls[-1]


def test_without_settings_trl_module_is_untouched(trl_without_vllm):
    with colocate_engine_arguments({}) as engines:
        assert trl_without_vllm.LLM is RecordingLLM
        build_engine(trl_without_vllm)
    assert engines == [] and "language_model_only" not in RecordingLLM.calls[0]


def test_a_keyword_trl_already_passes_is_refused(trl_without_vllm):
    with pytest.raises(TrainingError, match=r"already sets \['seed'\]"):
        with colocate_engine_arguments({"seed": 3}):
            build_engine(trl_without_vllm)
    assert trl_without_vllm.LLM is RecordingLLM


def test_a_trl_without_the_engine_name_fails_loudly(monkeypatch):
    from trl.generation import vllm_generation

    monkeypatch.delattr(vllm_generation, "LLM", raising=False)
    with pytest.raises(TrainingError, match="has no LLM"):
        with colocate_engine_arguments({"kv_cache_memory_bytes": 1}):
            pass


def test_an_unlaunched_process_gets_a_kernel_assigned_rendezvous_port():
    environ: dict[str, str] = {}
    port = own_rendezvous_port(environ)
    assert port is not None and environ["MASTER_PORT"] == port and int(port) > 0
    assert environ["MASTER_ADDR"] == "127.0.0.1"
    launched = {"MASTER_PORT": "29500", "WORLD_SIZE": "2"}
    assert own_rendezvous_port(launched) is None and launched == {"MASTER_PORT": "29500", "WORLD_SIZE": "2"}
    assert own_rendezvous_port({"WORLD_SIZE": "1"}) is None  # a launcher's process: its launcher's port
