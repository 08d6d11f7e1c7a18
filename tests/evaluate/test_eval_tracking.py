"""An evaluation through a served endpoint records which weights it measured and logs its results
to the run that trained them.

The campaign serves every evaluation (``evaluation.serve``): the request names the served model
(``gemma4_12b-iso-sft``), which is no folder, so only ``policy.weights`` — the folder the runner
started the server for — ties the results to the SFT or EFT run and its trackers. A local HTTP
server (tests/chat_server.py) stands in for vLLM; the training run is a run folder whose manifest
reports to TensorBoard, as a py4 training writes it.
"""

from __future__ import annotations

import json

import pytest

from chat_server import ChatServer
from py4.errors import ConfigError
from py4.evaluate.config import load_eval_config
from py4.evaluate.harness import EvalConfig, run


def _server() -> ChatServer:
    reply = {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "no"}}],
             "usage": {"completion_tokens": 1}}
    return ChatServer(lambda body, n: (200, reply))


def _trained_run(tmp_path):
    run_dir = tmp_path / "sft"
    (run_dir / "model").mkdir(parents=True)
    (run_dir / "run_manifest.json").write_text(json.dumps({
        "kind": "sft", "status": "done", "result": {"global_step": 4},
        "config": {"run": {"output_dir": str(run_dir), "report_to": ["tensorboard"]}}}))
    return run_dir


def _evaluate(tmp_path, server, **policy):
    config = EvalConfig.model_validate({"splits": ["test_heldin"], "limit": 1, "sampling": {"samples": 1},
                                        "policy": {"name": "endpoint", "endpoint": server.url,
                                                   "model": "tiny-iso-sft", **policy}})
    run(config, tmp_path / "eval", progress=False)
    return json.loads((tmp_path / "eval" / "run_manifest.json").read_text())


def test_served_weights_are_the_runs_model_input_and_its_results_reach_the_training_runs_tracker(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from py4.tracking import EVAL_LOG_DIR

    trained = _trained_run(tmp_path)
    with _server() as server:
        manifest = _evaluate(tmp_path, server, weights=str(trained / "model"))
    assert manifest["inputs"]["model"] == {"path": str(trained / "model"), "served_model": "tiny-iso-sft",
                                           "endpoint": server.url}
    assert manifest["tracking"].startswith(f"eval: tensorboard {trained / 'runs' / EVAL_LOG_DIR} (step 4)")
    events = EventAccumulator(str(trained / "runs" / EVAL_LOG_DIR))
    events.Reload()
    [scalar] = events.Scalars("eval/test_heldin/certified_rate")
    assert scalar.step == 4


def test_an_endpoint_known_only_by_name_is_recorded_as_such_and_logged_nowhere(tmp_path):
    with _server() as server:
        manifest = _evaluate(tmp_path, server)
    assert manifest["inputs"]["model"] == {"served_model": "tiny-iso-sft", "endpoint": server.url}
    assert manifest["tracking"] == "eval: the served weights are not named (policy.weights): no training run to log to"


def test_served_weights_that_are_no_folder_are_refused_naming_the_field(tmp_path):
    with pytest.raises(ConfigError, match=r"policy.weights '.*gone': no such folder"):
        load_eval_config(None, ["policy.name=endpoint", "policy.endpoint=http://127.0.0.1:9/v1",
                                "policy.model=m", f"policy.weights={tmp_path / 'gone'}"])
