"""The campaign report's figures and tables do not exaggerate.

Figures are checked through their matplotlib objects (axis limits, tick values, error bars, text),
captured when the report saves them, never through pixels.
"""

from __future__ import annotations

import json
import re

import matplotlib
import pytest
import report_fixtures as rf
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """The report of one synthetic smoke campaign, rendered once: (results.md, results.json, {file: Figure}).

    Figures are captured when the report saves them (the objects stay inspectable after close).
    """

    tmp = tmp_path_factory.mktemp("report")
    spec = rf.smoke_spec(tmp / "out")
    # iso's parent certifies 3 of 6, control 1 of 6, prop 2 of 6: overlapping intervals at n = 6.
    rf.write_evaluations(spec, {"tiny/iso/sft": 3, "tiny/control/sft": 1, "tiny/prop/sft": 2,
                                "tiny/iso/eft_8": 4, "tiny/control/eft_8": 4, "tiny/prop/eft_8": 4})
    rf.write_grpo_rewards(spec)
    try:
        rf.write_calibration(spec)
    except ImportError:  # a report without a calibration step (an older checkout compared with this one)
        pass
    _, saved = rf.write_results_capturing_figures(spec, tmp / "report")
    return ((tmp / "report/results.md").read_text(), json.loads((tmp / "report/results.json").read_text()), saved)


@pytest.fixture
def saved_figures(rendered):
    return rendered[2]


def _reward_axis(fig: Figure):
    axes = [ax for ax in fig.axes if "reward" in ax.get_ylabel()]
    assert axes, "the GRPO figure shows no reward axis"
    return axes[0]


def test_grpo_reward_axis_is_not_stretched_over_noise(saved_figures):
    lo, hi = _reward_axis(saved_figures["grpo_ladder.png"]).get_ylim()
    # The logged rewards span 0.012; the axis must show the reward's whole range
    # (no submission -0.10 ... certified 1.0; truncated -0.25), not zoom onto the band.
    assert lo <= -0.25 and hi >= 1.0, (lo, hi)


def test_grpo_step_ticks_are_whole_steps(saved_figures):
    fig = saved_figures["grpo_ladder.png"]
    for ax in fig.axes:
        lo, hi = ax.get_xlim()
        ticks = [t for t in ax.get_xticks() if lo - 1e-9 <= t <= hi + 1e-9]
        assert ticks and all(float(t).is_integer() for t in ticks), ticks


def test_grpo_certified_rates_carry_intervals_and_n(saved_figures):
    ax = next(ax for ax in saved_figures["grpo_ladder.png"].axes if ax.get_ylabel().startswith("certified"))
    assert any(isinstance(c, ErrorbarContainer) for c in ax.containers)
    assert "n = 6" in _all_text(saved_figures["grpo_ladder.png"])


def _all_text(fig: Figure) -> str:
    texts = [t.get_text() for t in fig.findobj(matplotlib.text.Text)]
    return "\n".join(texts)


def test_dose_response_shows_intervals_and_n(saved_figures):
    fig = saved_figures["dose_response.png"]
    panels = [ax for ax in fig.axes if ax.get_ylabel() == "certified rate"]
    assert panels
    for ax in panels:
        bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
        assert len(bars) == 3, "one interval series per arm"  # control, iso, prop
    assert "n = 6" in _all_text(fig)


def test_dose_response_arms_do_not_hide_each_other(saved_figures):
    """Three arms at the same rate must stay visible as three: dodged along x, not drawn on top."""
    ax = next(ax for ax in saved_figures["dose_response.png"].axes if ax.get_ylabel() == "certified rate")
    lines = [c.lines[0] for c in ax.containers if isinstance(c, ErrorbarContainer)]
    xs = [tuple(line.get_xdata()) for line in lines]
    assert len(xs) == 3 and len(set(xs)) == 3, xs


def test_certified_rates_in_markdown_carry_interval_and_n(rendered):
    md, data, _ = rendered
    # iso's parent: 3 of 6 certified -> Wilson 95% [0.188, 0.812]
    row = next(line for line in md.splitlines()
               if line.startswith("| Tiny Gemma-3 (smoke) | iso-token | 0 | test_heldin"))
    assert "0.500" in row and "[0.188, 0.812]" in row and "3/6" in row, row
    entry = next(e for e in data["entries"] if e["run"] == "tiny/iso/sft" and e["split"] == "test_heldin")
    assert entry["certified"] == 3 and entry["episodes"] == 6
    assert entry["ci_low"] == pytest.approx(0.1876, abs=1e-3) and entry["ci_high"] == pytest.approx(0.8124, abs=1e-3)


def test_every_certified_rate_in_markdown_has_an_interval(rendered):
    md, _, _ = rendered
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        for i, cell in enumerate(cells):
            if re.fullmatch(r"\d\.\d{3}", cell) and "certified" in _header_of(md, line, i):
                nxt = cells[i + 1] if i + 1 < len(cells) else ""
                assert re.match(r"\[\d\.\d{3}, \d\.\d{3}\]", nxt), line


def _header_of(md: str, line: str, col: int) -> str:
    lines = md.splitlines()
    i = lines.index(line)
    while i > 0 and not lines[i - 1].startswith("|---"):
        i -= 1
    header = [c.strip() for c in lines[i - 2].strip("|").split("|")] if i >= 2 else []
    return header[col] if col < len(header) else ""


def test_calibration_rows_are_in_the_report(rendered):
    md, data, _ = rendered
    assert "## Calibration" in md
    for policy, rate in (("gold", "1.000"), ("python3", "0.000")):
        row = next(line for line in md.splitlines() if line.startswith(f"| {policy} | test_heldin"))
        assert rate in row and "/6" in row, row
    assert {c["policy"] for c in data["calibration"]} == {"gold", "python3", "migrated", "core-only"}


def test_zero_gradient_grpo_is_called_out(rendered):
    md, data, _ = rendered
    # The fixture's reward log has frac_reward_zero_std 1.0 on every step (as the demo logged it).
    assert all(r["frac_reward_zero_std"] == 1.0 for r in data["grpo_reward_per_step"])
    assert "**No learning signal:** frac_reward_zero_std is 1.0 on all 4 steps" in md
