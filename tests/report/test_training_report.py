"""Midtraining in the report: first / last logged loss beside ln(vocab), so that a midtraining
that stays at ln(vocab) (8.03 -> 8.01 = ln(3,076): the arms are one model) shows as such."""

import json
import math
from pathlib import Path

import report_fixtures as rf

from py4.campaign.dag import build_dag


def _write_midtraining(spec, losses: dict[str, list[float]], vocab: int = 3076) -> None:
    for node in build_dag(spec):
        if node.stage != "midtrain":
            continue
        run = Path(node.run_dir)
        (run / "model").mkdir(parents=True)
        (run / "model/config.json").write_text(json.dumps({"vocab_size": vocab}))
        (run / "checkpoint-20").mkdir()
        log = [{"step": 5 * (i + 1), "loss": x} for i, x in enumerate(losses[node.meta.arm])]
        (run / "checkpoint-20/trainer_state.json").write_text(json.dumps({"log_history": log}))
        (run / "run_manifest.json").write_text(json.dumps({
            "status": "done", "max_steps": 20, "schedule": {"total_tokens": 81920},
            "result": {"global_step": 20, "train_loss": sum(losses[node.meta.arm]) / 4,
                       "model_dir": str(run / "model")}}))


def test_midtraining_that_did_not_learn_is_called_out(tmp_path):
    from py4.report.results import collect, render_markdown

    spec = rf.smoke_spec(tmp_path / "out")
    flat = [8.03, 8.02, 8.02, 8.01]
    _write_midtraining(spec, {"control": flat, "iso": [8.03, 6.9, 6.1, 5.6], "prop": flat})
    data = collect(spec)
    rows = {r["arm"]: r for r in data["midtraining"]}
    assert rows["iso"]["learned"] is True and rows["control"]["learned"] is False
    assert rows["iso"]["uniform_loss"] == math.log(3076) and rows["iso"]["last_loss"] == 5.6
    md = render_markdown(data)
    assert "| iso | 20 | 81,920 | 8.030 (step 5) | 5.600 (step 20) |" in md
    assert "**Midtraining did not learn** (control, prop)" in md


def test_no_note_when_every_arm_learned(tmp_path):
    from py4.report.results import collect, render_markdown

    spec = rf.smoke_spec(tmp_path / "out")
    learned = [8.0, 7.0, 6.0, 5.0]
    _write_midtraining(spec, {"control": learned, "iso": learned, "prop": learned})
    md = render_markdown(collect(spec))
    assert "## Midtraining: did it learn?" in md and "did not learn" not in md
