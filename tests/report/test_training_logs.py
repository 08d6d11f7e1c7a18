"""The report links each training run's logs: TensorBoard event folders and
the stage log, relative to the campaign folder; only what exists is listed."""

from __future__ import annotations

from py4.campaign.dag import Node
from py4.campaign.progress import stage_log_path
from py4.report.training_logs import training_logs, training_logs_md


def test_training_runs_list_their_tensorboard_events_and_stage_log(tmp_path):
    out = tmp_path / "campaign"
    mid = Node(id="tiny/iso/midtrain", stage="midtrain", run_dir=str(out / "tiny/iso/midtrain"))
    sft = Node(id="tiny/iso/sft", stage="sft", run_dir=str(out / "tiny/iso/sft"))
    graft = Node(id="tiny/iso/graft", stage="graft", run_dir=str(out / "tiny/iso/graft"))
    events = out / "tiny/iso/midtrain/runs/Dec03_14-45-38_vm"
    events.mkdir(parents=True)
    (events / "events.out.tfevents.1.vm.1.0").write_bytes(b"")
    log = stage_log_path(out, mid)
    log.parent.mkdir(parents=True)
    log.write_text("loss 8.0\n")
    stage_log_path(out, graft).parent.mkdir(parents=True)
    stage_log_path(out, graft).write_text("not a training run\n")

    rows = training_logs(out, [mid, sft, graft])
    assert rows == [{"run": "tiny/iso/midtrain", "stage": "midtrain",
                     "tensorboard": ["tiny/iso/midtrain/runs/Dec03_14-45-38_vm"],
                     "stage_log": str(log.relative_to(out))}]
    text = "\n".join(training_logs_md(rows, "campaign-out/smoke"))
    assert "tensorboard --logdir campaign-out/smoke" in text
    assert "| tiny/iso/midtrain | midtrain | `tiny/iso/midtrain/runs/Dec03_14-45-38_vm` |" in text


def test_no_training_logs_no_section(tmp_path):
    assert training_logs(tmp_path, [Node(id="a", stage="eval", run_dir=str(tmp_path / "a"))]) == []
    assert training_logs_md([], "x") == []
