"""Which environment runs each rehearsal node, and the report's per-node environment and server.

The campaign's GRPO trainer runs in the vLLM-side environment (.venv-vllm, docs/training.md "GRPO
with vLLM"), so the rehearsal starts its GRPO nodes with that environment's interpreter
(``environments`` in configs/rehearsal/python4.yaml) and every other node with its own; the report
names, per node, the environment of the interpreter that ran it and what generated its model's
outputs: the evaluation's server, or the GRPO rollouts' engine.
"""

import sys
from pathlib import Path
from types import SimpleNamespace

from py4.rehearsal.rehearse import (ChildExecutor, Layout, load_rehearsal, missing_environments,
                                    stage_interpreters)
from py4.rehearsal.report import environment_of, server_of, write_report

ROOT = Path(__file__).resolve().parents[2]


def node(node_id: str, stage: str, launch: list[str] | None = None):
    return SimpleNamespace(id=node_id, stage=stage, launch_argv=launch, argv=[stage, "--config", "c.yaml"])


def test_the_shipped_rehearsal_runs_grpo_in_the_vllm_environment():
    config = load_rehearsal(ROOT / "configs" / "rehearsal" / "python4.yaml")
    assert config.environments == {"grpo": ".venv-vllm"}
    python = stage_interpreters(config.environments)["grpo"]
    assert python == str(Path(".venv-vllm").absolute() / "bin" / "python")  # the venv's link, not resolved


def test_a_stage_with_an_environment_starts_with_its_interpreter(tmp_path):
    python = str(tmp_path / ".venv-vllm" / "bin" / "python")
    executor = ChildExecutor(Layout(tmp_path), {"configs/accelerate/fsdp2.yaml": "/cpu.yaml"}, (), {"grpo": python})
    assert executor.command(node("m/prop/grpo", "grpo"))[:3] == [python, "-m", "py4"]
    assert executor.command(node("eval:m/base", "eval"))[0] == sys.executable
    launch = ["accelerate", "launch", "--config_file", "configs/accelerate/fsdp2.yaml", "--num_processes", "2",
              "-m", "py4", "train", "grpo"]
    assert executor.command(node("m/prop/grpo", "grpo", launch))[:6] == [
        python, "-m", "accelerate.commands.launch", "--config_file", "/cpu.yaml", "--num_processes"]


def test_a_missing_environment_is_named_only_for_chosen_nodes(tmp_path):
    nodes = [node("m/prop/grpo", "grpo"), node("eval:m/base", "eval")]
    absent = {"grpo": str(tmp_path / "none" / "bin" / "python")}
    assert missing_environments(nodes, {"m/prop/grpo", "eval:m/base"}, absent) == [f"grpo: {absent['grpo']}"]
    assert missing_environments(nodes, {"eval:m/base"}, absent) == []
    assert missing_environments(nodes, {"m/prop/grpo"}, {"grpo": sys.executable}) == []


def test_environment_and_server_per_node():
    assert environment_of(["/repo/.venv/bin/python", "-m", "py4", "eval"]) == ".venv"
    assert environment_of(["/repo/.venv-vllm/bin/python", "-m", "accelerate.commands.launch"]) == ".venv-vllm"
    transformers = {"command": "/repo/.venv/bin/python -m transformers.cli.transformers serve /w --host 127.0.0.1"}
    assert server_of(transformers, None) == "transformers serve (.venv)"
    vllm = {"command": "/repo/.venv-vllm/bin/vllm serve /w --served-model-name x --enable-lora"}
    assert server_of(vllm, None) == "vllm serve (.venv-vllm)"
    colocated = {"sampling": {"engine": "vLLM colocate"}, "vllm_generation": {"mode": "colocate", "platform": "cpu"}}
    assert server_of(None, colocated) == "rollouts: vLLM colocate (cpu)"
    assert server_of(None, {"sampling": {"engine": "transformers generate"}}) == "rollouts: transformers generate"
    assert server_of(None, {"steps": 4}) == "" and server_of(None, None) == ""
    # a probe run is scored in the runner's child process, as the campaign's are: the report says no server ran it
    assert server_of(None, {"status": "done"}, "probes") == "none: scored in-process"
    assert server_of(vllm, None, "eval") == "vllm serve (.venv-vllm)" and server_of(None, None, "sft") == ""


def test_report_table_has_environment_and_server_columns(tmp_path):
    row = {"id": "gemma4_12b/eval", "stage": "eval", "status": "done", "seconds": 3, "skipped_as_done": False,
           "facts": {}, "environment": ".venv", "server": "vllm serve (.venv-vllm)"}
    report = {"campaign": "c.yaml", "out": str(tmp_path), "seconds": 3, "counts": {"done": 1}, "boundaries": {},
              "nodes": [row], "not_proven": {}}
    _, md = write_report(report, tmp_path)
    text = md.read_text()
    assert "| node | stage | status | s | environment | server | key facts / error |" in text
    assert "| gemma4_12b/eval | eval | done | 3 | .venv | vllm serve (.venv-vllm) |" in text
