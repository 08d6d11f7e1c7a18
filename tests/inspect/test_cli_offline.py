"""The Inspect command as a user types it: the venv's ``inspect``, no network, an empty tiktoken cache.

``inspect eval py4/python4_heldout --model mockllm/model --limit 2`` runs in a subprocess
whose Python cannot reach the network (``offline_site/sitecustomize.py``) and whose
``TIKTOKEN_CACHE_DIR`` is an empty folder, from a fresh working folder (the log lands in
its ``./logs``). The same command with the scripted models (``py4/gold``, ``py4/silent``)
must run offline and never try the network: the task, the solver, the scorer and the
``py4/<policy>`` provider count tokens themselves (4 characters a token).

With ``mockllm/model`` the command fails offline inside Inspect, whatever the task:
``MockLLM.generate`` → ``_ensure_default_usage`` fills in the usage of every output that
has none (its default output never has any) with ``ModelAPI.count_tokens`` →
``count_text_tokens`` → ``tiktoken.get_encoding("o200k_base")``, which downloads the BPE
file unless tiktoken's cache holds it. Inspect has no option, model argument or task
setting that counts otherwise (a plain ``generate()`` task fails the same way). That test
checks that the failure is exactly this one and nothing of ours, then skips with the
reason; if a later Inspect counts offline it runs and checks the scores.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, read_eval_log

from py4.inspect_tasks.scorer import SCORER_NAME

OFFLINE_SITE = Path(__file__).resolve().parent / "offline_site"
TIKTOKEN_HOST = "openaipublic.blob.core.windows.net"
MOCKLLM_BOUNDARY = (
    "inspect-ai 0.3.285 cannot run --model mockllm/model offline: MockLLM._ensure_default_usage "
    "(inspect_ai/model/_providers/mockllm.py) counts every output's input tokens with "
    "ModelAPI.count_text_tokens = tiktoken.get_encoding('o200k_base'), which downloads the BPE file "
    "unless TIKTOKEN_CACHE_DIR holds it; Inspect offers no setting to count otherwise, for any task. "
    "Offline, --model py4/silent gives the same episodes (docs/evaluation.md, 'Inspect')")


def _inspect_offline(args: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess, EvalLog, list[str]]:
    """Run ``inspect *args`` network-free with an empty tiktoken cache; its log and the addresses it tried."""
    cache, workdir, tried = tmp_path / "tiktoken-cache", tmp_path / "work", tmp_path / "network-attempts.txt"
    cache.mkdir()
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("DATA_GYM_CACHE_DIR", "INSPECT_LOG_DIR")}
    env.update(TIKTOKEN_CACHE_DIR=str(cache), PY4_TEST_NETWORK_LOG=str(tried),
               PYTHONPATH=os.pathsep.join(filter(None, [str(OFFLINE_SITE), env.get("PYTHONPATH")])))
    inspect = Path(sys.executable).with_name("inspect")
    done = subprocess.run([str(inspect), *args], cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=600)
    logs = sorted((workdir / "logs").glob("*.eval"))
    assert len(logs) == 1, f"expected one log in {workdir / 'logs'}; exit {done.returncode}: {done.stderr[-3000:]}"
    assert not any(cache.iterdir()), "tiktoken's cache was filled: the network guard let a download through"
    return done, read_eval_log(str(logs[0])), tried.read_text().splitlines() if tried.exists() else []


def _outcomes(log: EvalLog) -> list[str]:
    return [s.scores[SCORER_NAME].metadata["outcome"] for s in log.samples]


def _is_mockllm_tiktoken_download(traceback: str) -> bool:
    """The traceback runs from mockllm's usage estimate into tiktoken's download of o200k_base."""
    chain = ["inspect_ai/model/_providers/mockllm.py", "in _ensure_default_usage", "inspect_ai/model/_tokens.py",
             'tiktoken.get_encoding("o200k_base")', "tiktoken/load.py", "in read_file_cached", "requests.get"]
    positions = [traceback.find(step) for step in chain]
    return -1 not in positions and positions == sorted(positions)


@pytest.mark.parametrize("model,outcome,rate", [("py4/gold", "certified", 1.0),
                                                 ("py4/silent", "no_submission", 0.0)])
def test_issue_command_with_a_scripted_model_runs_offline(model, outcome, rate, tmp_path):
    done, log, tried = _inspect_offline(["eval", "py4/python4_heldout", "--model", model, "--limit", "2"], tmp_path)
    assert done.returncode == 0 and log.status == "success", (log.error and log.error.traceback) or done.stderr
    assert tried == []  # nothing on the py4 path reaches for the network, tiktoken's download included
    assert log.eval.task == "py4/python4_heldout" and log.eval.model == model
    assert _outcomes(log) == [outcome] * 2
    assert log.results.scores[0].metrics["mean"].value == rate


def test_issue_command_with_mockllm_runs_offline_or_fails_only_in_inspect(tmp_path):
    done, log, tried = _inspect_offline(["eval", "py4/python4_heldout", "--model", "mockllm/model", "--limit", "2"],
                                        tmp_path)
    if log.status == "error" and _is_mockllm_tiktoken_download(log.error.traceback):
        assert tried and all(TIKTOKEN_HOST in attempt for attempt in tried), tried  # tiktoken's download only
        pytest.skip(MOCKLLM_BOUNDARY)
    assert done.returncode == 0 and log.status == "success", (log.error and log.error.traceback) or done.stderr
    assert tried == []
    assert _outcomes(log) == ["no_submission"] * 2  # mockllm answers in text: no tool call ends the episode
    assert [s.scores[SCORER_NAME].value["reward"] for s in log.samples] == pytest.approx([-0.1, -0.1])
