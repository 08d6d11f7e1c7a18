"""The report a person opens: index.html with the finding, every figure and each evaluation's
transcripts; dose-response labels that do not overlap, and empty figures that say so."""

from __future__ import annotations

import json
import re
from pathlib import Path

import matplotlib
import pytest
import report_fixtures as rf

matplotlib.use("Agg")


def _calibration_rows(rates: dict[str, float], split: str = "test_heldin") -> list[dict]:
    return [{"policy": p, "split": split, "certified_rate": r, "certified": round(6 * r), "episodes": 6}
            for p, r in rates.items()]


def _eft_entry(dose: int, rate: float, arm: str = "iso") -> dict:
    return {"kind": "eft", "matrix": False, "certified_rate": rate, "ci_low": 0.0, "ci_high": 1.0, "episodes": 6,
            "split": "test_heldin", "dose": dose, "arm": arm, "model": "tiny", "model_label": "Tiny",
            "arm_label": arm}


def test_dose_response_calibration_labels_sit_outside_the_data_and_apart():
    from py4.report import figures

    # gold at 1, migrated at 5/6 and core-only at 4/6 lie within a label's height of each other
    data = {"campaign": "smoke", "entries": [_eft_entry(0, 0.0), _eft_entry(8, 0.0)],
            "calibration": _calibration_rows({"gold": 1.0, "migrated": 5 / 6, "core-only": 4 / 6,
                                              "python3": 0.0})}
    fig = figures.dose_response(data)
    ax = fig.axes[0]
    labels = [t for t in ax.texts if re.match(r"(gold|migrated|core-only|python3) ", t.get_text())]
    assert len(labels) == 4
    xs = [t.get_position()[0] for t in labels]
    assert all(x > 1.0 for x in xs)  # right of the axes, in axes fraction: never over a data point
    ys = sorted(t.get_position()[1] for t in labels)
    assert all(b - a >= figures.LABEL_GAP - 1e-9 for a, b in zip(ys, ys[1:], strict=False))
    assert all(t.get_fontsize() >= 7 for t in labels)


def test_dose_response_before_any_evaluation_says_not_evaluated_yet():
    from py4.report import figures

    fig = figures.dose_response({"campaign": "smoke", "entries": [], "calibration": []})
    ax = fig.axes[0]
    assert any("not evaluated yet" in t.get_text() for t in ax.texts)
    assert ax.get_xlabel() == "EFT dose (rows)" and ax.get_ylabel() == "certified rate"


def test_grpo_ladder_before_any_evaluation_says_not_evaluated_yet():
    from py4.report import figures

    fig = figures.grpo_ladder({"campaign": "smoke", "entries": [], "grpo_reward_per_step": []})
    assert any("not evaluated yet" in t.get_text() for t in fig.axes[0].texts)
    fig.canvas.draw()
    assert list(fig.axes[0].get_xticks()) == []  # no step ran: no step numbers made up


def _full_eval_run(run: Path) -> None:
    """An evaluation run as py4 eval writes it (results.json, transcripts.jsonl), without an Inspect log."""
    record = {"problem_id": "py4/00001", "sample": 0, "reward": 1.0, "split": "test_heldin", "rules": ["P4-06"],
              "outcome": "certified", "end_reason": "submitted", "events": [],
              "messages": [{"role": "system", "content": "tools"}, {"role": "user", "content": "write f"},
                           {"role": "assistant", "content": "fn f(): pass"}]}
    metrics = rf.split_metrics(1, problems=1, samples=1)
    results = {"policy": {"name": "local:tiny"}, "bank": {"version": "v1", "sha256": "x", "problems": 1},
               "boa": {"version": "0"}, "sampling": {"samples": 1}, "episode": {},
               "splits": {"test_heldin": metrics}, "overall": {**metrics, "mean_reward": 1.0}}
    run.mkdir(parents=True, exist_ok=True)
    (run / "results.json").write_text(json.dumps(results))
    (run / "transcripts.jsonl").write_text(json.dumps(record) + "\n")


def test_index_html_has_the_finding_every_figure_and_each_evaluations_transcripts(tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import read_eval_log

    from py4.campaign.dag import build_dag

    spec = rf.smoke_spec(tmp_path / "out")
    rf.write_evaluations(spec, {"tiny/iso/sft": 2})
    nodes = build_dag(spec)
    evals = [n for n in nodes if n.stage == "eval"]
    # one run has its own Inspect log (the eval stage writes it), one has only its JSONL transcripts
    own = Path(evals[0].run_dir, "inspect")
    own.mkdir(parents=True)
    (own / "2026-01-01_py4_eval.eval").write_bytes(b"log")
    _full_eval_run(Path(evals[1].run_dir))
    paths = rf.write_results_capturing_figures(spec, tmp_path / "report", nodes=nodes, calibration=False)[0]
    index = tmp_path / "report/index.html"
    assert index in paths
    page = index.read_text()
    data = json.loads((tmp_path / "report/results.json").read_text())
    assert data["finding"].replace("'", "&#x27;") in page
    for png in ("dose_response.png", "grpo_ladder.png"):
        assert f'<img src="{png}"' in page and (tmp_path / "report" / png).is_file()
    links = dict(re.findall(r'<code>([^<]+)</code></td><td>[^<]*</td><td><a href="([^"]+)">Inspect log', page))
    assert set(links) == {evals[0].id, evals[1].id}
    assert (index.parent / links[evals[0].id]).resolve() == (own / "2026-01-01_py4_eval.eval").resolve()
    written = (index.parent / links[evals[1].id]).resolve()
    assert written.parent.parent == (tmp_path / "report/transcripts").resolve()
    log = read_eval_log(str(written))  # a real Inspect log of the run's episodes: inspect view reads it
    assert [s.id for s in log.samples] == ["py4/00001"]
    assert "<table>" in page and "Certified rate by model x arm x EFT dose x split" in page
