"""`py4 report hyperparameters … --format md`: real Markdown (no LaTeX left),
and it runs on the shipped smoke campaign. The LaTeX/JSON table is unchanged (test_hyperparameters.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from py4.cli import app
from py4.report.hp_markdown import latex_to_markdown

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("latex,markdown", [
    ("1 $\\times$ 8 $\\times$ 4", "1 × 8 × 4"),
    ("$1\\times10^{-5}$", "1×10⁻⁵"),
    ("cosine to $0.1\\times$, linear warmup over 3\\% of steps", "cosine to 0.1×, linear warmup over 3% of steps"),
    ("Dolmino, \\texttt{dolma3\\_dolmino\\_mix-100B-1125}", "Dolmino, `dolma3_dolmino_mix-100B-1125`"),
    ("about 77--82 min per step", "about 77–82 min per step"),
    ("$-$0.10", "−0.10"),
    ("$W_{\\text{graft}} = W_{\\text{mid}} + \\lambda\\,(W_{\\text{it}} - W_{\\text{base}})$",
     "W_graft = W_mid + λ (W_it − W_base)"),
    ("$\\epsilon_{\\text{high}}$ 0.28, $\\beta$ 0, $k$ = 4, $\\le$ 8, $\\approx$ 5",
     "ε_high 0.28, β 0, *k* = 4, ≤ 8, ≈ 5"),
    ("LoRA $r$ / $\\alpha$", "LoRA *r* / α"),
    ("5~GPUs", "5 GPUs"),
    ("Dr.\\ GRPO, incl.\\ norms", "Dr. GRPO, incl. norms"),
])
def test_latex_to_markdown(latex, markdown):
    assert latex_to_markdown(latex) == markdown


def _md(campaign: str, monkeypatch) -> str:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, ["report", "hyperparameters", campaign, "--format", "md"])
    assert result.exit_code == 0, result.output
    return result.output


def test_python4_markdown_has_no_latex(monkeypatch):
    md = _md("configs/campaign/python4.yaml", monkeypatch)
    assert "\\" not in md.replace("\\|", ""), [ln for ln in md.splitlines() if "\\" in ln.replace("\\|", "")][:3]
    assert "$" not in md and not re.search(r"\d--\d", md)
    assert "| Micro × accum. × GPUs | 1 × 8 × 4 | 1 × 4 × 8 | 2 × 2 × 8 |" in md
    assert "`dolma3_dolmino_mix-100B-1125`" in md and "1×10⁻⁵" in md


def test_smoke_campaign_table_renders(monkeypatch):
    md = _md("configs/campaign/smoke.yaml", monkeypatch)
    assert "Tiny Gemma-3 (smoke)" in md and "$" not in md and "\\texttt" not in md
    assert "| Replay corpus | built-in `stdlib` text |" in md
    assert "n/a (computed at run time)" in md  # step counts the smoke mixes compute when they run
    assert "--resolve` shows each run's resolved config" in md  # its EFT runs with overridden settings
