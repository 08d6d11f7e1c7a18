"""The hyperparameter table as Markdown.

The table's values are written once, as the paper prints them (LaTeX-flavoured:
``\\texttt{…}``, ``$\\times$``, ``3\\%``, ``77--82``; py4.report.formats); the JSON and LaTeX
renderings keep them verbatim. Markdown readers get them translated to plain text and
Unicode (``1 × 8 × 4``, ``1×10⁻⁵``, `` `name` ``, ``77–82``).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["latex_to_markdown", "render_markdown"]

_SYMBOLS = {"times": "×", "le": "≤", "ge": "≥", "approx": "≈", "alpha": "α", "beta": "β", "gamma": "γ",
            "lambda": "λ", "epsilon": "ε", "eta": "η", "mu": "μ", "sigma": "σ", "tau": "τ", "cdot": "·",
            "pm": "±", "infty": "∞"}
_SUPERSCRIPT = str.maketrans("0123456789-+", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺")
_MATH = re.compile(r"\$([^$]*)\$")


def _math(body: str) -> str:
    """One ``$…$`` span as text: symbols, ``10^{-5}`` as superscripts, ``W_{\\text{it}}`` as W_it."""
    if re.fullmatch(r"[A-Za-z]", body):
        return f"*{body}*"  # a variable, italic as in the paper
    if body.strip() == "-":
        return "−"
    text = re.sub(r"\\text\{([^}]*)\}", r"\1", body)
    text = re.sub(r"\^\{([^}]*)\}", lambda m: m.group(1).translate(_SUPERSCRIPT), text)
    text = re.sub(r"\^(\w)", lambda m: m.group(1).translate(_SUPERSCRIPT), text)
    text = re.sub(r"_\{([^}]*)\}", r"_\1", text)
    text = text.replace("\\,", " ")
    text = re.sub(r"\\([A-Za-z]+)", lambda m: _SYMBOLS.get(m.group(1), m.group(1)), text)
    return text.replace(" - ", " − ")


def latex_to_markdown(text: str) -> str:
    """A table string (LaTeX-flavoured, as formats.py writes it) as Markdown text."""
    text = re.sub(r"\\texttt\{([^}]*)\}", lambda m: "`" + m.group(1).replace("\\_", "_") + "`", text)
    text = _MATH.sub(lambda m: _math(m.group(1)), text)
    text = re.sub(r"(\d)--(\d)", "\\1–\\2", text)
    text = text.replace("\\ ", " ").replace("---", "—").replace("\\%", "%").replace("\\&", "&")
    text = text.replace("\\_", "_").replace("~", " ")
    return text


def _cell(text: str) -> str:
    return latex_to_markdown(text).replace("|", "\\|")


def render_markdown(table: dict[str, Any]) -> str:
    """One Markdown table per part; spans repeat their value in every column."""
    out = [f"# {table['figure']}", "", latex_to_markdown(table.get("what", "")), ""]
    for part, meta in table["parts"].items():
        cols = meta["columns"]
        out += [f"## {part}", "", "| | " + " | ".join(_cell(c) for c in cols) + " |", "|---" * (len(cols) + 1) + "|"]
        for group in (group for group in table["groups"] if group["part"] == part):
            desc = f" — {_cell(group['descriptor'])}" if group.get("descriptor") else ""
            out.append(f"| **{_cell(group['title'])}**{desc} |" + " |" * len(cols))
            for row in group["rows"]:
                name = ("&nbsp;&nbsp;" if row.get("sub") else "") + _cell(row["name"])
                if row.get("label"):
                    out.append(f"| *{name}* |" + " |" * len(cols))
                    continue
                cells = [row["span"]] * len(cols) if "span" in row else row["values"]
                out.append("| " + " | ".join([name, *(_cell(c) for c in cells)]) + " |")
        out.append("")
        notes = [note["text"] for note in table.get("notes") or [] if note.get("part") == part and note.get("text")]
        for note in notes:
            out += [latex_to_markdown(note), ""]
    return "\n".join(out)
