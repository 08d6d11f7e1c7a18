"""The hyperparameter table, regenerated from a campaign config and the stage configs it names.

    table = build_table("configs/campaign/python4.yaml")   # the reference JSON's shape
    render_latex(table) / render_markdown(table)

Parts: models (midtraining, SFT, graft), eft (EFT data, LoRA, optimisation), grpo (warm
start, policy optimisation, environment, stack). A row whose values agree across columns
is one `span`. Every row's `source` names the config files (and manifest fields) it came from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from py4.campaign.spec import load_campaign
from py4.report import hp_eft_grpo, hp_models
from py4.report.hp_markdown import render_markdown
from py4.report.hp_sources import Sources, TableError

__all__ = ["build_table", "render_latex", "render_markdown", "TableError"]

BUILDERS = {
    "models": [hp_models.midtraining, hp_models.sft, hp_models.graft],
    "eft": [hp_eft_grpo.eft_data, hp_eft_grpo.lora, hp_eft_grpo.eft_optimisation],
    "grpo": [hp_eft_grpo.warm_start, hp_eft_grpo.policy, hp_eft_grpo.environment, hp_eft_grpo.stack],
}


def build_table(campaign_path: str | Path, root: str | Path = ".") -> dict[str, Any]:
    """The table as JSON-ready dict (figure, what, source, parts, notes, groups).

    Raises ConfigError for an invalid campaign file and TableError for a missing or
    inconsistent stage config (e.g. a max_steps that disagrees with its schedule).
    """
    spec = load_campaign(Path(root) / campaign_path)
    sources = Sources(spec, str(campaign_path), Path(root))
    models = [model.label for model in sources.models]
    grpo_cols = []
    if spec.grpo:
        grpo_cols = [f"{spec.models[spec.grpo.model].label} {spec.arms[spec.grpo.arm]} graft"]
    columns = {"models": models, "eft": models, "grpo": grpo_cols}
    stem = f"{spec.name}_hyperparameters"
    groups = []
    for part, builders in BUILDERS.items():
        for build in builders:
            group = build(sources)
            entry: dict[str, Any] = {"part": part, "title": group.title}
            if group.descriptor:
                entry["descriptor"] = group.descriptor
            entry["rows"] = [row.to_json(len(columns[part])) for row in group.rows]
            groups.append(entry)
    return {
        "figure": stem,
        "what": spec.report.what,
        "source": spec.report.source,
        "parts": {p: {"stem": f"{stem}_{p}", "columns": columns[p]} for p in BUILDERS},
        "notes": spec.report.notes + _override_notes(spec, str(campaign_path)),
        "groups": groups,
    }


def _override_notes(spec, campaign_path: str) -> list[dict[str, str]]:
    """A note per part whose runs the campaign overrides on the command line: the table shows the
    stage config files (the smoke campaign's EFT, for one, runs with other settings)."""
    overridden = {"models": bool(spec.stage_overrides or spec.corpus.overrides),
                  "eft": bool(spec.eft.overrides or spec.eft.warmstart_overrides or spec.stage_overrides),
                  "grpo": bool(spec.eft.warmstart_overrides or spec.stage_overrides.get("grpo"))}
    return [{"part": part, "text": f"Values are the stage config files'; {campaign_path} overrides some of them for "
                                    "its runs (eft.overrides, eft.warmstart_overrides, stage_overrides, "
                                    f"corpus.overrides): `py4 campaign plan {campaign_path} --resolve` shows each "
                                    "run's resolved config."}
            for part, on in overridden.items() if on]


def _cells(row: dict[str, Any], n: int) -> list[str]:
    if "span" in row:
        return [row["span"]] + [""] * (n - 1)
    return row["values"]


def render_latex(table: dict[str, Any]) -> str:
    """One tabular per part; spans are \\multicolumn, label rows are italic, sub rows indented."""
    out = []
    for part, meta in table["parts"].items():
        cols = meta["columns"]
        out.append(f"% {meta['stem']}")
        out.append("\\begin{tabular}{l" + "l" * len(cols) + "}")
        out.append("\\toprule")
        out.append(" & ".join(["", *cols]) + " \\\\")
        for group in (group for group in table["groups"] if group["part"] == part):
            out.append("\\midrule")
            head = (f"\\textbf{{{group['title']}}}"
                    + (f" \\quad {{\\small {group['descriptor']}}}" if group.get("descriptor") else ""))
            out.append(f"\\multicolumn{{{len(cols) + 1}}}{{l}}{{{head}}} \\\\")
            for row in group["rows"]:
                name = ("\\quad " if row.get("sub") else "") + row["name"]
                if row.get("label"):
                    out.append(f"\\textit{{{name}}} & " + " & ".join([""] * len(cols)) + " \\\\")
                elif "span" in row and len(cols) > 1:
                    out.append(f"{name} & \\multicolumn{{{len(cols)}}}{{c}}{{{row['span']}}} \\\\")
                else:
                    out.append(" & ".join([name, *_cells(row, len(cols))]) + " \\\\")
        out.append("\\bottomrule")
        out.append("\\end{tabular}")
        out.append("")
    return "\n".join(out)
