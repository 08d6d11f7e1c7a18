"""vLLM in GRPO (``py4.train.vllm_preflight``): impossible layouts fail when the config loads; the launch
pre-flight (vLLM in the trainer's process, its version, the GPU split, the server) fails before any
weights load, each problem named with its field and what was expected.

The server side is a fake HTTP server answering the GET endpoints TRL 1.16's ``VLLMClient`` reads
before it syncs weights (``/health``, ``/v1/models``, ``/server_info``, ``/get_world_size``; see
trl/generation/vllm_client.py). It checks our pre-flight's reading of those answers, not vLLM; the
vllm tier (tests/real_vllm/test_grpo_vllm.py) runs the pre-flight against a real `trl vllm-serve`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from chat_server import ChatServer

from py4.config import ConfigError, load_config
from py4.train import grpo, vllm_preflight

CAMPAIGN = "configs/train/gemma4_31b/grpo.yaml"
ROOT = Path(__file__).resolve().parents[2]


def _load(*overrides: str) -> grpo.GRPOStageConfig:
    return load_config(grpo.GRPOStageConfig, ROOT / CAMPAIGN, list(overrides))


def _problems(*overrides: str) -> str:
    with pytest.raises(ConfigError) as caught:
        _load(*overrides)
    assert CAMPAIGN in str(caught.value)  # the file is named
    return str(caught.value)


def test_trl_vllm_range_is_the_installed_trls():
    import importlib.util

    source = Path(importlib.util.find_spec("trl.import_utils").origin).read_text()
    low, high = re.search(r'Version\("([\d.]+)"\) <= _vllm_base_version <= Version\("([\d.]+)"\)', source).groups()
    assert vllm_preflight.TRL_VLLM_RANGE == (low, high)


def test_the_campaign_config_is_a_possible_layout():
    g = _load().grpo
    layout = (g.use_vllm, g.vllm_mode, g.vllm_tensor_parallel_size, g.vllm_server_gpus)
    assert layout == (True, "server", 4, [4, 5, 6, 7])


def test_colocate_with_tensor_parallel_beyond_the_world_size_is_rejected():
    text = _problems("grpo.vllm_mode=colocate", "grpo.vllm_server_gpus=null")
    assert "grpo.vllm_tensor_parallel_size = 4 with grpo.vllm_mode = colocate" in text
    assert "optimisation.gpus = 1" in text and "divisible by 4" in text
    # colocate with a tensor parallel size that divides the world size is possible
    ok = _load("grpo.vllm_mode=colocate", "grpo.vllm_server_gpus=null", "grpo.vllm_tensor_parallel_size=2",
               "optimisation.gpus=2", "optimisation.grad_accum=64")
    assert ok.grpo.vllm_tensor_parallel_size == 2
    assert "vllm_server_gpus is for vllm_mode: server" in _problems(
        "grpo.vllm_mode=colocate", "grpo.vllm_tensor_parallel_size=1")


@pytest.mark.parametrize("overrides, expected", [
    (["grpo.vllm_server_base_url=null"], "grpo.vllm_mode = server needs grpo.vllm_server_base_url"),
    (["grpo.vllm_server_base_url=http://localhost"], "expected http://HOST:PORT"),
    (["grpo.vllm_server_base_url=localhost:8000"], "expected http://HOST:PORT"),
    (["grpo.vllm_server_gpus=[4,5]"], "has 2 GPU(s), but grpo.vllm_tensor_parallel_size = 4"),
    (["grpo.vllm_server_gpus=[4,4,5,6]"], "expected distinct GPU indices"),
])
def test_server_mode_needs_an_address_and_one_gpu_per_rank(overrides, expected):
    assert expected in _problems(*overrides)


def test_without_vllm_nothing_is_checked():
    config = _load("grpo.use_vllm=false", "grpo.vllm_server_base_url=null", "grpo.vllm_mode=colocate",
                   "grpo.vllm_server_gpus=null")
    assert vllm_preflight.check_vllm_launch(config.grpo, config.episode.token_budget, environ={}) is None


# ---------------------------------------------------------------- the server, faked


def vllm_serve(state: dict):
    """What `trl vllm-serve` (vLLM 0.31, VLLM_SERVER_DEV_MODE=1) answers to TRL's client's GETs,
    as a ChatServer's ``get``; ``state`` says how the server is set up (a test changes it)."""

    def answer(path: str) -> tuple[int, dict | None]:
        s = state
        if path == "/health":
            return 200, None
        if path == "/v1/models":
            return 200, {"object": "list", "data": [{"id": "runs/campaign/gemma4_31b/prop/graft"}]}
        if path == "/server_info" and s["dev_mode"]:
            return 200, {"vllm_config": {
                "model_config": {"max_model_len": s["max_model_len"], "logprobs_mode": s["logprobs_mode"]},
                "parallel_config": {"tensor_parallel_size": s["world_size"]},
                "weight_transfer_config": {"backend": "nccl"} if s["weight_transfer"] else None}}
        if path == "/get_world_size" and s["dev_mode"]:
            return 200, {"world_size": s["world_size"]}
        return 404, {"detail": "Not Found"}

    return answer


GOOD = {"dev_mode": True, "weight_transfer": True, "logprobs_mode": "processed_logprobs", "max_model_len": 20480,
        "world_size": 4}


@pytest.fixture
def server():
    state = dict(GOOD)
    with ChatServer(get=vllm_serve(state)) as fake:
        yield fake.httpd, state


@pytest.fixture
def vllm_031(monkeypatch):
    monkeypatch.setattr(vllm_preflight, "installed_vllm_version", lambda: "0.31.0")


def _server_config(httpd) -> grpo.GRPOStageConfig:
    return _load(f"grpo.vllm_server_base_url=http://127.0.0.1:{httpd.server_address[1]}",
                 "grpo.vllm_server_check_timeout_s=2")


def _launch_problems(config, environ) -> str:
    with pytest.raises(vllm_preflight.VllmLaunchError) as caught:
        vllm_preflight.check_vllm_launch(config.grpo, config.episode.token_budget, environ=environ)
    return str(caught.value)


def test_a_trl_vllm_serve_server_on_other_gpus_passes(server, vllm_031):
    httpd, _ = server
    config = _server_config(httpd)
    info = vllm_preflight.check_vllm_launch(config.grpo, config.episode.token_budget,
                                            environ={"CUDA_VISIBLE_DEVICES": "0"})
    assert info == {"vllm_version": "0.31.0", "served_model": "runs/campaign/gemma4_31b/prop/graft",
                    "max_model_len": 20480, "world_size": 4}


@pytest.mark.parametrize("change, expected", [
    ({"dev_mode": False}, "has no development endpoints"),
    ({"weight_transfer": False}, "has no weight-transfer engine"),
    ({"logprobs_mode": "raw_logprobs"}, "--logprobs-mode processed_logprobs"),
    ({"max_model_len": 8192}, "--max-model-len >= 13312"),
    ({"world_size": 2}, "runs 2 worker(s), but grpo.vllm_tensor_parallel_size = 4"),
])
def test_a_server_trl_cannot_sync_weights_with_is_rejected(server, vllm_031, change, expected):
    httpd, state = server
    state.update(change)
    text = _launch_problems(_server_config(httpd), {"CUDA_VISIBLE_DEVICES": "0"})
    assert expected in text
    assert "\n" not in text  # that problem alone, on one line


@pytest.mark.parametrize("visible, expected", [
    (None, "CUDA_VISIBLE_DEVICES is not set"),
    ("0,4", "shares GPU(s) [4] with the vLLM server"),
    ("GPU-1234", "expected GPU indices"),
])
def test_the_trainer_stays_off_the_servers_gpus(server, vllm_031, visible, expected):
    httpd, _ = server
    environ = {} if visible is None else {"CUDA_VISIBLE_DEVICES": visible}
    assert expected in _launch_problems(_server_config(httpd), environ)


@pytest.mark.parametrize("version, expected", [
    (None, "vLLM is not importable in this process"),
    ("0.33.0", "this environment has vLLM 0.33.0; TRL 1.16 supports vLLM 0.22.0-0.31.0 only"),
    ("0.21.1", "supports vLLM 0.22.0-0.31.0 only"),
])
def test_vllm_must_be_importable_in_the_trainer_in_trls_range(server, monkeypatch, version, expected):
    httpd, _ = server
    monkeypatch.setattr(vllm_preflight, "installed_vllm_version", lambda: version)
    assert expected in _launch_problems(_server_config(httpd), {"CUDA_VISIBLE_DEVICES": "0"})


def test_the_installed_vllm_is_read_from_this_environment():
    # this CPU environment has no vLLM (it cannot share torch/transformers pins with it)
    assert vllm_preflight.installed_vllm_version() is None


def test_no_server_is_named_with_its_address(vllm_031):
    config = _load("grpo.vllm_server_base_url=http://127.0.0.1:9", "grpo.vllm_server_check_timeout_s=0.3")
    assert "no vLLM server answers at http://127.0.0.1:9/health" in _launch_problems(
        config, {"CUDA_VISIBLE_DEVICES": "0"})


def test_run_stops_before_loading_anything(tmp_path, monkeypatch):
    from py4.train import loading

    def no_loading(*args, **kwargs):
        raise AssertionError("weights or tokenizer loaded before the vLLM check")

    monkeypatch.setattr(loading, "load_model", no_loading)
    monkeypatch.setattr(loading, "load_tokenizer", no_loading)
    monkeypatch.setattr(vllm_preflight, "installed_vllm_version", lambda: None)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    config = _load(f"run.output_dir={tmp_path / 'run'}", "grpo.vllm_server_base_url=http://127.0.0.1:9",
                   "grpo.vllm_server_check_timeout_s=0.3")
    with pytest.raises(vllm_preflight.VllmLaunchError) as caught:
        grpo.run(config)
    text = str(caught.value)
    assert "not importable" in text and "CUDA_VISIBLE_DEVICES is not set" in text and "no vLLM server" in text
    assert not (tmp_path / "run").exists()  # no run folder either
