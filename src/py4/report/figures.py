"""The campaign report's figures (matplotlib, Agg). Each builder returns its Figure; ``save`` writes it.

Honesty rules every figure follows:
- every rate carries its 95% interval (certified rates: Wilson, from k of n episodes; probe
  accuracies: the probes' bootstrap) and the n it stands on is written on the figure;
- rate axes span [0, 1]; the GRPO reward axis spans the reward's whole range (the episode reward
  table's lowest to highest outcome), so that a band of noise is not stretched into a trend;
- step and dose axes have whole-number ticks; points of different arms at one dose are set side
  by side (dodged), so that three arms at one rate are seen as three.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ARM_STYLE = {"control": ("s", "tab:gray"), "iso": ("o", "tab:blue"), "prop": ("^", "tab:orange")}
DODGE = 0.12  # x offset between arms at one dose (in dose positions)
RATE_LIMITS = (-0.03, 1.03)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: Path) -> Path:
    fig.savefig(path, dpi=120)
    _plt().close(fig)
    return path


def _yerr(points: list[dict]) -> list[list[float]]:
    """Asymmetric error bars (below, above) from each point's rate and interval."""
    return [[max(p["rate"] - p["ci_low"], 0.0) for p in points], [max(p["ci_high"] - p["rate"], 0.0) for p in points]]


def _n_note(points: list[dict]) -> str:
    ns = sorted({p["n"] for p in points if p.get("n")})
    if not ns:
        return "n unknown"
    return f"n = {ns[0]} episodes per point" if len(ns) == 1 else f"n = {ns[0]}–{ns[-1]} episodes per point"


def reward_range() -> tuple[float, float]:
    """Lowest and highest reward an episode can get (py4.episodes.config.RewardTable defaults)."""
    from py4.episodes.config import RewardTable

    values = list(RewardTable().model_dump().values())
    return min(values), max(values)


def _rate_point(e: dict) -> dict:
    return {"rate": e["certified_rate"], "ci_low": e["ci_low"], "ci_high": e["ci_high"], "n": e["episodes"]}


def dose_response(data: dict[str, Any]):
    """Certified rate vs EFT dose, one panel per split, one interval series per (model, arm), arms dodged."""
    from py4.report.layout import split_key

    plt = _plt()
    es = [e for e in data["entries"] if e["kind"] == "eft" and not e["matrix"] and e["certified_rate"] is not None]
    splits = sorted({e["split"] for e in es}, key=split_key)
    doses = sorted({e["dose"] for e in es})
    pos = {d: i for i, d in enumerate(doses)}
    # each panel leaves room on its right for the calibration labels (outside the data)
    fig, axes = plt.subplots(1, max(len(splits), 1), figsize=(5.6 * max(len(splits), 1), 4.0), squeeze=False)
    models = sorted({e["model"] for e in es})
    arms = [a for a in ARM_STYLE if any(e["arm"] == a for e in es)]
    calibration = data.get("calibration") or []
    for ax, split in zip(axes[0], splits, strict=False):  # no splits still make one (empty) axis
        panel = [e for e in es if e["split"] == split]
        series = [(m, a) for m in models for a in arms]
        for si, (model, arm) in enumerate(series):
            pts = sorted((e for e in panel if e["arm"] == arm and e["model"] == model), key=lambda e: e["dose"])
            if not pts:
                continue
            offset = (si - (len(series) - 1) / 2) * DODGE
            marker, color = ARM_STYLE[arm]
            label = pts[0]["arm_label"] if len(models) == 1 else f"{pts[0]['model_label']} {pts[0]['arm_label']}"
            rp = [_rate_point(e) for e in pts]
            ax.errorbar([pos[e["dose"]] + offset for e in pts], [p["rate"] for p in rp], yerr=_yerr(rp),
                        marker=marker, color=color, capsize=3, lw=1, alpha=0.9, label=label)
        _calibration_lines(ax, [c for c in calibration if c["split"] == split])
        ax.set_xticks(range(len(doses)), [f"{d:,}" for d in doses])
        ax.set_title(f"{split}\n{_n_note([_rate_point(e) for e in panel])}, 95% Wilson", fontsize=9)
        ax.set_xlabel("EFT dose (rows)")
        ax.set_ylabel("certified rate")
        ax.set_ylim(*RATE_LIMITS)
        ax.grid(alpha=0.3)
    if not splits:
        _not_evaluated(axes[0][0], "no EFT model evaluated yet", "EFT dose (rows)", "certified rate")
    _legend(axes[0][0], fontsize=8, loc="upper left")
    fig.suptitle(f"{data['campaign']}: dose-response")
    fig.tight_layout()
    return fig


def _not_evaluated(ax, what: str, xlabel: str, ylabel: str) -> None:
    """An empty panel that says so, with its axes named, instead of a blank plot."""
    ax.set_xticks([])
    ax.set_ylim(*RATE_LIMITS)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.text(0.5, 0.5, f"not evaluated yet\n({what})", ha="center", va="center", fontsize=11, color="dimgray",
            transform=ax.transAxes)


def _legend(ax, **kwargs) -> None:
    """A legend when the axes has labelled artists (an empty campaign draws none)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


LABEL_GAP = 0.075  # least vertical distance between two calibration labels (rate units)


def _spread(values: list[float], gap: float = LABEL_GAP) -> list[float]:
    """Label heights for lines at ``values`` (sorted): as close to them as a ``gap`` apart allows,
    kept inside the rate axis."""
    out: list[float] = []
    for v in values:
        out.append(max(v, out[-1] + gap) if out else v)
    overflow = out[-1] - RATE_LIMITS[1] if out else 0
    if overflow > 0:  # pushed past the top: slide the stack down, keeping the gaps
        out = [y - overflow for y in out]
    return out


def _calibration_lines(ax, rows: list[dict]) -> None:
    """The scripted policies' rates on this split as reference lines, labelled to the right of the
    axes (outside the data; one label per rate, labels spread so they do not overlap)."""
    at: dict[float, list[str]] = {}
    for row in rows:
        if row["certified_rate"] is not None:
            at.setdefault(row["certified_rate"], []).append(f"{row['policy']} {row['certified']}/{row['episodes']}")
    rates = sorted(at)
    for rate, y in zip(rates, _spread(rates), strict=True):
        ax.axhline(rate, color="black", lw=0.6, ls=":", alpha=0.6)
        ax.annotate(", ".join(at[rate]), xy=(1.0, rate), xycoords=("axes fraction", "data"), xytext=(1.02, y),
                    textcoords=("axes fraction", "data"), fontsize=7.5, ha="left", va="center",
                    arrowprops={"arrowstyle": "-", "lw": 0.5, "color": "gray"} if abs(y - rate) > 1e-9 else None,
                    annotation_clip=False)


def grpo_ladder(data: dict[str, Any]):
    """Certified rate per GRPO step (intervals, n) and the mean training reward on the reward's full range."""
    from matplotlib.ticker import MaxNLocator

    from py4.report.layout import split_key

    plt = _plt()
    es = [e for e in data["entries"] if e["kind"] == "grpo" and e["certified_rate"] is not None]
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    splits = sorted({e["split"] for e in es}, key=split_key)
    for i, split in enumerate(splits):
        pts = sorted((e for e in es if e["split"] == split), key=lambda e: e["step"])
        rp = [_rate_point(e) for e in pts]
        offset = (i - (len(splits) - 1) / 2) * 0.06
        ax.errorbar([e["step"] + offset for e in pts], [p["rate"] for p in rp], yerr=_yerr(rp), marker="o",
                    capsize=3, label=f"certified, {split} ({_n_note(rp)})")
    ax.set_xlabel("GRPO step (0 = warm start)")
    ax.set_ylabel("certified rate (95% Wilson)")
    ax.set_ylim(*RATE_LIMITS)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    rewards = [r for r in data["grpo_reward_per_step"] if r["reward"] is not None]
    if rewards:
        ax2 = ax.twinx()
        ax2.plot([r["step"] for r in rewards], [r["reward"] for r in rewards], color="gray", ls="--",
                 marker=".", label="mean training reward")
        lo, hi = reward_range()
        lo, hi = min(lo, *(r["reward"] for r in rewards)), max(hi, *(r["reward"] for r in rewards))
        pad = 0.03 * (hi - lo)
        ax2.set_ylim(lo - pad, hi + pad)
        ax2.set_ylabel(f"mean reward (full range {lo:g}…{hi:g})")
        ax2.legend(loc="upper right", fontsize=8)
    _legend(ax, loc="upper left", fontsize=7)
    if not es:
        ax.text(0.5, 0.5, "not evaluated yet\n(no GRPO step evaluated)", ha="center", va="center", fontsize=11,
                color="dimgray", transform=ax.transAxes)
    if not es and not rewards:
        ax.set_xticks([])  # no step has run: no step numbers to show
    ax.set_title(f"{data['campaign']}: GRPO ladder")
    fig.tight_layout()
    return fig


# Per-cell numbers only where they can be read at the saved size: cells at least this big (inches).
CELL_TEXT_MIN = (0.34, 0.2)
CELL_FONT = 7
HEATMAP_METRIC = ("accuracy_per_token", "per-token accuracy")


def _pairs_per_rule(entry: dict) -> int:
    """A model's pairs per rule: the most any of its rules had (the probe selection is even)."""
    return max((g.get("pairs", 0) for g in entry["per_rule"].values()), default=0)


def _pairs_range(models: list[dict]) -> str:
    """The pairs per rule of a group of models: one number, or the range when rules differ."""
    ns = sorted({g.get("pairs", 0) for e in models for g in e["per_rule"].values()})
    return str(ns[0]) if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"


def _rule_value(g: dict | None) -> float:
    if not g:
        return float("nan")
    value = g.get(HEATMAP_METRIC[0])
    return g["accuracy"] if value is None else value


def _cell_inches(width: float, height: float, columns: int, rows: int, panels: int) -> tuple[float, float]:
    """A heatmap cell's size in inches: the axes take ~78% of the width; each panel's title and the
    figure's margins take ~1.1 and ~1.6 inches of the height."""
    return (width * 0.78 / max(columns, 1), (height - 1.1 * panels - 1.6) / max(rows, 1))


def probe_heatmap(probes: list[dict]):
    """Per-token probe accuracy, one row per evaluated model and one column per rule, on a fixed
    0..1 scale; models are grouped by how many pairs per rule they were scored on (a panel each,
    titled with it), so that a row of 42 pairs and one of 4 are not read alike. Rules that cannot
    discriminate are marked †; numbers are written in the cells only where they can be read."""
    plt = _plt()
    rules = sorted({r for e in probes for r in e["per_rule"]})
    info = {r: g for e in probes for r, g in e["per_rule"].items()}
    groups: dict[int, list[dict]] = {}
    for e in probes:
        groups.setdefault(_pairs_per_rule(e), []).append(e)
    order = sorted(groups, reverse=True)
    rows = sum(len(groups[n]) for n in order)
    width = max(8.0, 0.36 * len(rules) + 3.5)
    height = max(3.0, 0.3 * rows + 1.1 * len(order) + 1.6)
    fig, axes = plt.subplots(len(order) or 1, 1, figsize=(width, height), squeeze=False, sharex=True,
                             gridspec_kw={"height_ratios": [max(len(groups[n]), 1) for n in order] or [1]})
    image = None
    for ax, n in zip(axes[:, 0], order, strict=False):
        models = groups[n]
        grid = [[_rule_value(e["per_rule"].get(r)) for r in rules] for e in models]
        image = ax.imshow(grid, vmin=0.0, vmax=1.0, cmap="RdBu", aspect="auto", interpolation="nearest")
        ax.set_yticks(range(len(models)), [e["model"] for e in models], fontsize=8)
        ax.set_title(f"{len(models)} models scored on {_pairs_range(models)} pairs per rule", fontsize=9, loc="left")
        if _cell_inches(width, height, len(rules), rows, len(order)) >= CELL_TEXT_MIN:
            for i, row in enumerate(grid):
                for j, v in enumerate(row):
                    if v == v:  # not nan
                        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=CELL_FONT,
                                color="white" if abs(v - 0.5) > 0.35 else "black")
    bottom = axes[-1, 0]
    bottom.set_xticks(range(len(rules)), [
        f"{r}{'*' if info[r].get('held_out') else ''}{' †' if info[r].get('discriminates') is False else ''}"
        for r in rules], rotation=90, fontsize=8)
    if image is not None:
        fig.colorbar(image, ax=axes[:, 0].tolist(), label=HEATMAP_METRIC[1], fraction=0.03, pad=0.01)
    fig.suptitle(f"Probe {HEATMAP_METRIC[1]} per rule: the share of pairs where the Python-4 member is more likely\n"
                 "(0.5 = no preference; * held-out rule; † cannot discriminate: left out of the summary)", fontsize=9)
    return fig


HALF_LINE = "0.5 = no preference"
ACCURACY_PANELS = (("accuracy_per_token", "per_token_ci_low", "per_token_ci_high", "per-token accuracy (primary)"),
                   ("accuracy", "ci_low", "ci_high", "summed accuracy (length-biased)"))


def arm_comparison(arms: dict[str, dict], base: dict | None, losses: list[dict], arm_label: dict[str, str]):
    """Probe accuracy per arm (held-in, held-out, syntax, semantic) with intervals, the untrained
    base beside them as the floor, on the per-token score (primary) and the summed one, each in
    its panel; next to them the held-out Python-4 loss per arm (and base)."""
    plt = _plt()
    groups = [("held-in", lambda e: e["heldin"]), ("held-out", lambda e: e["heldout"]),
              ("syntax", lambda e: e["by_kind"]["syntax"]), ("semantic", lambda e: e["by_kind"]["semantic"])]
    fig, (ax, sax, lax) = plt.subplots(1, 3, figsize=(13.5, 5.0), gridspec_kw={"width_ratios": [3, 3, 1.4]})
    series = [("base", base)] if base else []
    series += list(arms.items())
    ref = next(iter(arms.values()), base)
    kind = ref["kind"] if ref else "?"
    for panel, (value, low, high, title) in zip((ax, sax), ACCURACY_PANELS, strict=True):
        for si, (arm, e) in enumerate(series):
            pts = [g(e) for _, g in groups]
            if any(p.get(value) is None for p in pts):
                continue  # a results file without this score
            offset = (si - (len(series) - 1) / 2) * 0.18
            marker, color = ARM_STYLE.get(arm, ("D", "black"))
            rp = [{"rate": p[value], "ci_low": p[low], "ci_high": p[high]} for p in pts]
            label = "untrained base (floor)" if arm == "base" else f"{arm_label.get(arm, arm)} ({e['model']})"
            panel.errorbar([i + offset for i in range(len(groups))], [p["rate"] for p in rp], yerr=_yerr(rp),
                           ls="none", marker=marker, color=color, capsize=3, label=label)
        panel.set_xticks(range(len(groups)),
                         [f"{name}\nn={g(ref)['pairs']} pairs" if ref else name for name, g in groups])
        half = panel.axhline(0.5, color="black", lw=0.8, ls=":", label=HALF_LINE)
        panel.set_ylim(*RATE_LIMITS)
        panel.set_ylabel(f"{title}\n95% cluster bootstrap")
        panel.set_title(f"Probe {title} by arm ({kind} models)", fontsize=9)
        panel.grid(alpha=0.3)
        if panel is sax:  # the series are named in the first panel's legend; here the line alone
            panel.legend(handles=[half], fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    # below the panel: inside it would cover some group's intervals
    _legend(ax, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    loss = {x["arm"] or "base": x for x in losses}
    shown = [a for a in ("base", *ARM_STYLE) if a in loss]
    for i, arm in enumerate(shown):
        x = loss[arm]
        err = None
        if x.get("ci_low") is not None and x.get("ci_high") is not None:
            err = [[x["loss"] - x["ci_low"]], [x["ci_high"] - x["loss"]]]
        lax.bar(i, x["loss"], color=ARM_STYLE.get(arm, ("D", "black"))[1], yerr=err, capsize=3)
        lax.text(i, x["loss"], f"{x['loss']:.3f}", ha="center", va="bottom", fontsize=7)
    lax.set_xticks(range(len(shown)), [arm_label.get(a, a) for a in shown], fontsize=8, rotation=20)
    lax.set_ylabel("loss on held-out Python-4 docs (nats/token)")
    tokens = sorted({loss[a]["tokens"] for a in shown if loss[a].get("tokens")})
    lax.set_title("Held-out Python-4 loss" + (f"\nn = {tokens[0]:,} tokens" if len(tokens) == 1 else ""), fontsize=9)
    if not shown:
        lax.text(0.5, 0.5, "no held-out loss runs", ha="center", va="center", transform=lax.transAxes)
    fig.tight_layout()
    return fig
