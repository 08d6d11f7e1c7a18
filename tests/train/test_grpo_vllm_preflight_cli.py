"""How a user meets the vLLM pre-flight: ``py4 train grpo`` with a server that is not there, or
that is not ``trl vllm-serve``, stops before anything loads with one ``error:`` line naming the
address, what answered (or how long it waited) and the setting to change; exit 2.

The trainer's side is the vLLM environment's: vLLM 0.31 importable and CUDA_VISIBLE_DEVICES set
apart from the server's GPUs, so that the server is the only problem left. And the wait: each
of the server's answers may take the whole ``grpo.vllm_server_check_timeout_s``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from py4.cli import app
from py4.config import load_config
from py4.train import grpo, vllm_preflight
from tests.chat_server import ChatServer, free_port

CONFIG = "configs/train/gemma4_31b/grpo.yaml"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def trainer_env(monkeypatch):
    monkeypatch.setattr(vllm_preflight, "installed_vllm_version", lambda: "0.31.0")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")


def _train_grpo(tmp_path, url: str, *overrides: str):
    result = CliRunner().invoke(app, ["train", "grpo", "--config", CONFIG, f"run.output_dir={tmp_path / 'run'}",
                                      f"grpo.vllm_server_base_url={url}", *overrides])
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "run").exists()  # nothing started
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


def test_no_server_at_the_address_is_one_line_with_the_address_and_the_wait(tmp_path, trainer_env):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    line = _train_grpo(tmp_path, url, "grpo.vllm_server_check_timeout_s=0.5")
    assert line.startswith(f"error: vLLM GRPO launch check failed: no vLLM server answers at {url}/health")
    assert "waited 0.5 s (grpo.vllm_server_check_timeout_s)" in line
    assert "start `trl vllm-serve` first" in line


def test_a_server_that_is_not_vllm_is_named_with_what_it_answered(tmp_path, trainer_env):
    with ChatServer(lambda body, n: (200, {}), models=["some-model"]) as server:  # an OpenAI server, not vLLM
        url = server.url.removesuffix("/v1")
        line = _train_grpo(tmp_path, url, "grpo.vllm_server_check_timeout_s=30")
    assert line.startswith(f"error: vLLM GRPO launch check failed: {url}/health answered HTTP 404")
    assert "start `trl vllm-serve` there" in line


def test_the_default_wait_tolerates_a_loaded_machine():
    # a `trl vllm-serve` on a machine at load ~9 took more than 10 s to answer the pre-flight's GETs
    assert grpo.GRPOSettings().vllm_server_check_timeout_s >= 60


def test_each_of_the_servers_answers_gets_the_whole_wait(monkeypatch):
    # A loaded machine slows every answer (here 30 s each, on a clock of the test's own): with
    # 45 s allowed, each GET must get its 45 s, not what the GETs before it left.
    import io
    import types
    import urllib.request

    answers = {"/health": None, "/v1/models": {"data": [{"id": "m"}]},
               "/server_info": {"vllm_config": {"weight_transfer_config": {"backend": "nccl"},
                                                "model_config": {"max_model_len": 20480}}},
               "/get_world_size": {"world_size": 4}}
    clock, timeouts = [0.0], {}

    class Answer(io.BytesIO):
        status = 200

    def urlopen(url, timeout):
        path = url.split("127.0.0.1:8000", 1)[1].split("?", 1)[0]
        timeouts[path] = timeout
        if timeout < 30:
            clock[0] += timeout
            raise TimeoutError("timed out")
        clock[0] += 30
        return Answer(b"" if answers[path] is None else json.dumps(answers[path]).encode())

    def sleep(seconds):
        clock[0] += seconds

    monkeypatch.setattr(vllm_preflight, "time", types.SimpleNamespace(monotonic=lambda: clock[0], sleep=sleep))
    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    config = load_config(grpo.GRPOStageConfig, ROOT / CONFIG, ["grpo.vllm_server_base_url=http://127.0.0.1:8000",
                                                               "grpo.vllm_server_check_timeout_s=45"])
    info, problems = vllm_preflight.probe_vllm_server(config.grpo, config.episode.token_budget)
    assert timeouts == dict.fromkeys(answers, 45)
    assert problems == [] and info == {"served_model": "m", "max_model_len": 20480, "world_size": 4}
