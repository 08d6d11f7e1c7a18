"""`py4 probes`: build the probe set and score models on it (docs/probes.md).

    py4 probes build [--out DIR]
    py4 probes eval --model DIR [--adapter DIR] [--base DIR] [--compare RESULTS.json] --out DIR [--limit N]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(help="Rule probes: minimal Python-4 / Python 3 pairs and model scores on them.",
                  no_args_is_help=True)


@app.command("build")
def build(out: Optional[Path] = typer.Option(None, "--out", help="data folder (default: the shipped one)")) -> None:
    """Build the probe set (deterministic) and write it with its manifest and content hash."""
    from py4.probes.build import build_probes, write_probes

    path, manifest = write_probes(build_probes(), out)
    typer.echo(f"wrote {path} and {manifest.name}")


def load_model(model_dir: str, adapter: str | None = None):
    """(model, tokenizer) from a local folder, with a PEFT adapter applied when given."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    if adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter)
    return model, tokenizer


def _score_with_progress(model_dir, adapter, probes, label, progress: bool) -> list[dict]:
    from rich.progress import Progress

    from py4.probes.score import score_pairs

    model, tokenizer = load_model(model_dir, adapter)
    scores: list[dict] = []
    with Progress(disable=not progress) as bar:
        task = bar.add_task(f"probes: {label}", total=len(probes))
        for start in range(0, len(probes), 16):
            scores += score_pairs(model, tokenizer, probes[start:start + 16])
            bar.advance(task, len(probes[start:start + 16]))
    return scores


def _md(results: dict) -> str:
    lines = [f"# Probe results: {results['model']}", "",
             "| group | model acc [95% CI] | per-token acc | mean margin | base acc | pairs |",
             "|---|---|---|---|---|---|"]
    s, base = results["summary"], (results.get("base") or {}).get("summary")
    groups = [("all", s["all"]), ("held-in", s["heldin"]), ("held-out", s["heldout"]),
              *[(k, v) for k, v in s["by_kind"].items()], *s["per_rule"].items()]
    keys = ["all", "heldin", "heldout", "syntax", "semantic", *s["per_rule"]]
    for (name, g), key in zip(groups, keys):
        b = "" if not base else f"{(base['by_kind'].get(key) or base['per_rule'].get(key) or base.get(key))['accuracy']:.3f}"
        lines.append(f"| {name} | {g['accuracy']:.3f} [{g['ci_low']:.3f}, {g['ci_high']:.3f}] | "
                     f"{g['accuracy_per_token']:.3f} | {g['mean_margin']:+.3f} | {b} | {g['pairs']} |")
    for label in ("minus_base", "minus_compare"):
        d = results.get(label)
        if d:
            lines += ["", f"{label.replace('_', ' ')}: accuracy difference {d['all']['difference']:+.3f} "
                      f"[{d['all']['ci_low']:+.3f}, {d['all']['ci_high']:+.3f}] over {d['all']['pairs']} pairs"]
    return "\n".join(lines) + "\n"


@app.command("eval")
def evaluate(model: str = typer.Option(..., "--model", help="local model folder"),
             adapter: Optional[str] = typer.Option(None, "--adapter", help="PEFT adapter folder"),
             base: Optional[str] = typer.Option(None, "--base", help="untrained base folder: scored beside as the floor"),
             compare: Optional[Path] = typer.Option(None, "--compare", help="another run's results.json: paired difference"),
             out: Path = typer.Option(..., "--out", help="run folder (results.json, results.md)"),
             limit: Optional[int] = typer.Option(None, "--limit", help="every k-th pair so that about N are scored"),
             no_progress: bool = typer.Option(False, "--no-progress")) -> None:
    """Score a model (and its base) on the probe set; write results.json and results.md."""
    from py4.probes.build import load_probes
    from py4.probes.stats import paired_difference, summarize

    probes = load_probes()
    if limit:
        probes = probes[::max(1, len(probes) // limit)]
    scores = _score_with_progress(model, adapter, probes, model, not no_progress)
    results = {"model": model, "adapter": adapter, "pairs": len(probes), "scores": scores,
               "summary": summarize(scores, probes)}
    if base:
        base_scores = _score_with_progress(base, None, probes, base, not no_progress)
        results["base"] = {"model": base, "scores": base_scores, "summary": summarize(base_scores, probes)}
        results["minus_base"] = paired_difference(scores, base_scores, probes)
    if compare:
        try:
            other = json.loads(compare.read_text())["scores"]
        except (OSError, KeyError, json.JSONDecodeError) as exc:
            typer.echo(f"error: {compare}: expected a probes results.json with a `scores` list ({exc})", err=True)
            raise typer.Exit(2)
        results["compare"] = str(compare)
        results["minus_compare"] = paired_difference(scores, other, probes)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (out / "results.md").write_text(_md(results))
    a = results["summary"]["all"]
    typer.echo(f"accuracy {a['accuracy']:.3f} [{a['ci_low']:.3f}, {a['ci_high']:.3f}] on {a['pairs']} pairs -> {out}")
