"""The rehearsal's runs as the rehearsal plans them (nothing trains): each training run starts as
many processes as its stage config says once every override is in (the campaign's config, the
node's own, the spec's and the rehearsal's stage_overrides, the rehearsal's per-model ones)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from py4.rehearsal.rehearse import ChildExecutor, Layout, load_rehearsal, rehearsal_nodes, rehearsal_spec
from py4.stages import load

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = "configs/campaign/python4.yaml"


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """(nodes, executor) of the python4 rehearsal, with its CPU copy of the FSDP2 launch config."""
    from py4.rehearsal.assets import write_accelerate_configs

    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        config = load_rehearsal("configs/rehearsal/python4.yaml")
        layout = Layout(tmp_path_factory.mktemp("rehearsal"))
        nodes = rehearsal_nodes(rehearsal_spec(config, CAMPAIGN, layout), config, layout)
        copies = write_accelerate_configs(Path("configs/accelerate"), layout.accelerate, use_cpu=True)
        return nodes, ChildExecutor(layout, copies)


def _option(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_each_training_run_launches_its_resolved_gpus(planned):
    nodes, executor = planned
    trained = [n for n in nodes if n.stage in ("midtrain", "sft", "eft", "grpo")]
    assert len(trained) == 9 + 9 + 28 + 2  # doses 4, 8 and the matrix 10 on 9 parents; the warm start
    for n in trained:
        gpus = load(n.call).optimisation.gpus
        assert n.gpus == gpus, n.id  # the plan, the Slurm request
        if gpus == 1:
            assert n.launch_argv is None, n.id
            continue
        command = executor.command(n)
        assert int(_option(command, "--num_processes")) == gpus, (n.id, command)
    by_id = {n.id: n for n in nodes}
    # 2 processes: the rehearsal's stage_overrides (midtrain, SFT) and, for GLM's EFT (4 in its
    # config), the per-model overrides the rehearsal adds after the campaign's DAG is built.
    assert {by_id[f"{m}/iso/{s}"].gpus for m in ("gemma4_12b", "gemma4_31b", "glm45_air")
            for s in ("midtrain", "sft")} == {2}
    glm_eft = [n for n in trained if n.id.startswith("glm45_air/") and n.stage == "eft"]
    assert len(glm_eft) == 9 and {n.gpus for n in glm_eft} == {2}
    assert all(int(_option(executor.command(n), "--num_processes")) == 2 for n in glm_eft)
    assert {by_id["gemma4_12b/iso/eft_4"].gpus, by_id["gemma4_31b/prop/grpo"].gpus} == {1}


def test_the_launch_config_is_the_campaigns_on_the_cpu(planned):
    # The rehearsal changes only use_cpu in the campaign's FSDP2 config: the process count is the run's.
    nodes, executor = planned
    midtrain = next(n for n in nodes if n.id == "gemma4_12b/iso/midtrain")
    command = executor.command(midtrain)
    copy = Path(_option(command, "--config_file"))
    campaign = Path(_option(midtrain.launch_argv, "--config_file"))
    assert copy.is_file() and copy.parent == executor.layout.accelerate and campaign.name == copy.name
    ours, theirs = yaml.safe_load(copy.read_text()), yaml.safe_load((ROOT / campaign).read_text())
    assert (ours.pop("use_cpu"), theirs.pop("use_cpu")) == (True, False) and ours == theirs
    assert command[command.index("-m") + 1] == "accelerate.commands.launch"
