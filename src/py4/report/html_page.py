"""``report/index.html``: the campaign's results on one static page a person opens in a browser.

The page holds the finding, what the scale can and cannot show, every figure, per evaluation a
link to its transcripts, and every table of results.md (rendered with markdown-it, which rich
already brings). It links files beside it and in the run folders by relative paths, so the
campaign folder can be copied or served as it is.

Transcripts: each evaluation's episodes as an Inspect log (``.eval``; ``inspect view`` browses
them). The campaign's evaluation stage writes one in its run folder (``<run>/inspect``, as
``py4 eval --inspect-log``); for a run made without one, the report writes it from the run's
transcripts.jsonl into ``report/transcripts/<run>/`` with the same writer
(py4.evaluate.inspect_log), where inspect-ai is installed. Without inspect-ai the page links the
JSONL transcripts alone.
"""

from __future__ import annotations

import html
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from py4.campaign.node_meta import EvalMeta
from py4.evaluate.harness import INSPECT_LOG, RESULTS, TRANSCRIPTS
from py4.report.layout import EVAL_STAGE

INDEX = "index.html"
TRANSCRIPT_DIR = "transcripts"
FIGURE_CAPTIONS = {
    "dose_response.png": "Certified rate against EFT dose, per split (95% Wilson intervals); dotted lines: the "
                         "scripted calibration policies.",
    "grpo_ladder.png": "Certified rate per GRPO step (95% Wilson) and the mean training reward on its full range.",
    "probe_heatmap.png": "Per-token probe accuracy per rule and model, models grouped by the pairs per rule they "
                         "were scored on; † rules that cannot discriminate.",
    "arm_comparison.png": "Probe accuracy by arm, per-token (primary) and summed, with the untrained base; the "
                          "held-out Python-4 loss per arm.",
}
STYLE = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;line-height:1.45}
table{border-collapse:collapse;margin:1em 0;font-size:0.85em}td,th{border:1px solid #ccc;padding:3px 6px}
th{background:#f3f3f3}figure{margin:1.5em 0}img{max-width:100%;border:1px solid #ddd}
.finding{background:#f6f8fa;border-left:4px solid #0366d6;padding:0.6em 1em}code{font-size:0.9em}"""


def _rel(path: Path, out: Path) -> str:
    return Path(os.path.relpath(path, out)).as_posix()


def eval_transcripts(nodes: list, out: Path) -> list[dict[str, Any]]:
    """Per evaluation run that has results: its id, splits, certified counts, and its transcripts
    (the Inspect log, written here when the run has none, and the JSONL)."""
    rows = []
    for node in nodes:
        if node.stage != EVAL_STAGE:
            continue
        run = Path(node.run_dir)
        if not (run / RESULTS).is_file():
            continue
        logs = sorted((run / INSPECT_LOG).glob("*.eval")) if (run / INSPECT_LOG).is_dir() else []
        if not logs and (run / TRANSCRIPTS).is_file() and importlib.util.find_spec("inspect_ai") is not None:
            logs = [_write_log(run, out / TRANSCRIPT_DIR / node.id.replace(":", "__").replace("/", "__"))]
        results = json.loads((run / RESULTS).read_text(encoding="utf-8"))
        model = node.meta.model_node if isinstance(node.meta, EvalMeta) else None
        rows.append({"id": node.id, "model": model, "run": str(run),
                     "splits": {s: (v.get("certified_rate"), v.get("episodes"))
                                for s, v in (results.get("splits") or {}).items()},
                     "inspect_log": str(logs[-1]) if logs else None,
                     "transcripts": str(run / TRANSCRIPTS) if (run / TRANSCRIPTS).is_file() else None})
    return rows


def _write_log(run: Path, folder: Path) -> Path:
    """The run's episodes as an Inspect log in ``folder`` (once: an existing one is reused)."""
    existing = sorted(folder.glob("*.eval")) if folder.is_dir() else []
    if existing:
        return existing[-1]
    from py4.evaluate.inspect_log import write_inspect_log

    results = json.loads((run / RESULTS).read_text(encoding="utf-8"))
    records = [json.loads(line) for line in (run / TRANSCRIPTS).read_text(encoding="utf-8").splitlines()
               if line.strip()]
    return write_inspect_log(results, records, folder)


def _transcripts_html(rows: list[dict], out: Path) -> str:
    if not rows:
        return "<p>No evaluation has results yet.</p>"
    lines = ["<table><tr><th>evaluation</th><th>certified per split</th><th>transcripts</th></tr>"]
    for r in rows:
        rates = ", ".join(f"{html.escape(split)} {round((rate or 0) * (n or 0))}/{n}"
                          for split, (rate, n) in r["splits"].items())
        links = []
        if r["inspect_log"]:
            links.append(f'<a href="{html.escape(_rel(Path(r["inspect_log"]), out))}">Inspect log</a>')
        if r["transcripts"]:
            links.append(f'<a href="{html.escape(_rel(Path(r["transcripts"]), out))}">JSONL</a>')
        lines.append(f"<tr><td><code>{html.escape(r['id'])}</code></td><td>{rates}</td>"
                     f"<td>{' · '.join(links) or '—'}</td></tr>")
    lines.append("</table>")
    return "\n".join(lines)


def _markdown_html(text: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def write_index(data: dict[str, Any], markdown: str, figures: list[Path], nodes: list, out_dir: Path) -> Path:
    """Write ``out_dir``/index.html (and the Inspect logs runs lack); returns its path."""
    out = Path(out_dir)
    rows = eval_transcripts(nodes, out)
    statement = (data.get("scale_statement") or {}).get("text")
    # each figure opens at full size when clicked (the page scales it to its width)
    figs = "\n".join(f'<figure><a href="{html.escape(p.name)}"><img src="{html.escape(p.name)}" '
                     f'alt="{html.escape(p.stem)}"></a>'
                     f"<figcaption>{html.escape(FIGURE_CAPTIONS.get(p.name, p.stem))}</figcaption></figure>"
                     for p in figures)
    tables = markdown[markdown.find("\n## "):] if "\n## " in markdown else ""
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(data['campaign'])}: results</title>
<style>{STYLE}</style></head><body>
<h1>Results: {html.escape(data['campaign'])} ({html.escape(str(data['scale']))} scale)</h1>
<p class="finding"><strong>Finding.</strong> {html.escape(data['finding'])}</p>
{f'<p class="finding"><strong>What this scale can and cannot show.</strong> {html.escape(statement)}</p>'
 if statement else ''}
<p>Tables: <a href="results.md">results.md</a>, <a href="results.json">results.json</a>,
<a href="probes.json">probes.json</a>.</p>
<h2>Figures</h2>
{figs or '<p>No figures drawn (<code>--no-figures</code>).</p>'}
<h2>Transcripts</h2>
<p>Each evaluation's episodes as an Inspect log; browse them all with
<code>inspect view --recursive --log-dir {html.escape(str(data.get('out_dir') or '.'))}</code>.</p>
{_transcripts_html(rows, out)}
{_markdown_html(tables)}
</body></html>
"""
    path = out / INDEX
    path.write_text(page, encoding="utf-8")
    return path
