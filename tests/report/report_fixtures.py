"""A synthetic smoke campaign on disk for the report tests: the result files of every evaluation,
GRPO's reward log, probe results (`py4 probes eval`'s results.json) and held-out Python-4 losses, written
where the campaign's runs write them, with numbers chosen by the test (no model is run).

The evaluation and GRPO runs are the smoke DAG's own nodes (configs/campaign/smoke.yaml).
Probe and held-out-loss runs are taken from the DAG too when it has them (stages
``py4.report.layout.PROBE_STAGE`` / ``LOSS_STAGE``).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from py4.campaign.dag import build_dag
from py4.campaign.spec import load_campaign

ROOT = Path(__file__).resolve().parents[2]

# GRPO's mean reward per step as the smoke demo logged it: a 0.012-wide band that an
# auto-scaled axis stretches over the whole panel.
NARROW_REWARDS = [-0.100, -0.094, -0.097, -0.088]
# Bootstrap resamples of the synthetic probe summaries: enough for intervals of the right size,
# few enough that a campaign's 19 probe runs are written in seconds.
BOOTSTRAP = 40


def smoke_spec(out: Path):
    return load_campaign(ROOT / "configs/campaign/smoke.yaml", [f"out_dir={out}"])


def split_metrics(certified: int, problems: int = 3, samples: int = 2) -> dict:
    episodes = problems * samples
    return {"problems": problems, "episodes": episodes, "certified_rate": certified / episodes,
            "pass_at_k": {"1": certified / episodes}, "mean_reward": 0.0,
            "outcomes": {"certified": certified, "uncertified": episodes - certified, "no_submission": 0,
                         "truncated": 0},
            "per_rule": {"P4-06": {"problems": 1, "episodes": samples, "certified_rate": 0.0}}}


def write_evaluations(spec, certified: dict[str, int] | None = None) -> None:
    """results.json of every evaluation node; ``certified``: model node -> certified episodes (of 6)."""
    certified = certified or {}
    for node in build_dag(spec):
        if node.stage != "eval":
            continue
        k = certified.get(node.meta.model_node, 0)
        splits = {s: split_metrics(k) for s in node.meta.splits}
        Path(node.run_dir).mkdir(parents=True, exist_ok=True)
        Path(node.run_dir, "results.json").write_text(json.dumps({"splits": splits}))


def write_grpo_rewards(spec, rewards: list[float] = NARROW_REWARDS) -> None:
    for node in build_dag(spec):
        if node.stage == "grpo":
            Path(node.run_dir).mkdir(parents=True, exist_ok=True)
            log = [{"step": i + 1, "reward": r, "reward_std": 0.0, "frac_reward_zero_std": 1.0}
                   for i, r in enumerate(rewards)]
            Path(node.run_dir, "run_manifest.json").write_text(json.dumps({"status": "done", "reward_log": log}))


def probe_results(win_rate: dict[str, float], seed: int = 0, pairs_per_rule: int = 14) -> dict:
    """`py4 probes eval`'s results.json for a model that prefers the Python-4 member with probability
    ``win_rate[rule]``, else ``win_rate[kind]`` (kind: syntax / semantic); summarised by
    py4.probes.stats itself."""
    from py4.problems.probe_set.build import load_probes
    from py4.probes.stats import summarize

    rng = random.Random(seed)
    by_rule: dict[str, list[dict]] = {}
    for p in load_probes():
        by_rule.setdefault(p["rule"], []).append(p)
    probes = [p for rule in sorted(by_rule) for p in by_rule[rule][:pairs_per_rule]]
    scores = []
    for p in probes:
        win = rng.random() < win_rate.get(p["rule"], win_rate[p["kind"]])
        scores.append({"id": p["id"], "p4_logprob": -1.0 if win else -2.0, "py3_logprob": -2.0 if win else -1.0,
                       "p4_tokens": 1, "py3_tokens": 1})
    return {"model": "synthetic", "pairs": len(probes), "scores": scores,
            "summary": summarize(scores, probes, b=BOOTSTRAP),
            "_probes": probes}


def campaign_nodes(spec) -> list:
    """The DAG's nodes, plus probe and held-out-loss nodes in the DAG's layout where the DAG has
    none (a campaign spec without them), so the report's reader is always exercised."""
    from py4.campaign.dag import Node
    from py4.campaign.node_meta import HeldoutLossMeta, ProbeMeta
    from py4.report import layout

    nodes = build_dag(spec)
    out = spec.out_dir.rstrip("/")
    extra = []
    if not any(n.stage == layout.PROBE_STAGE for n in nodes):
        models = [("tiny/base", {"model": "tiny", "arm": None, "kind": "base"})]
        for arm in spec.arms:
            for kind in ("midtrain", "sft"):
                meta = {"model": "tiny", "arm": arm, "kind": kind, **({"dose": 0} if kind == "sft" else {}),
                        **({} if arm == "control" else {"compare": f"tiny/control/{kind}"})}
                models.append((f"tiny/{arm}/{kind}", meta))
        for model_node, meta in models:
            run_dir = f"{out}/probes/{model_node.replace('/', '__')}"
            extra.append(Node(id=f"probes:{model_node}", stage=layout.PROBE_STAGE, run_dir=run_dir,
                              meta=ProbeMeta(**meta, model_node=model_node, weights=f"{out}/{model_node}")))
    if not any(n.stage == layout.LOSS_STAGE for n in nodes):
        for name in ("base", *spec.arms):
            extra.append(Node(id=f"heldout_loss:tiny/{name}", stage=layout.LOSS_STAGE,
                              run_dir=f"{out}/heldout_loss/tiny__{name}",
                              meta=HeldoutLossMeta(model="tiny", arm=None if name == "base" else name,
                                                   kind="base" if name == "base" else "midtrain",
                                                   weights=f"{out}/tiny/{name}")))
    return nodes + extra


def write_probes(nodes: list, win_rates: dict[str, dict[str, float]], only: set[str] | None = None) -> list[str]:
    """Probe results of every probe node (``only``: of these model nodes); ``win_rates``: model
    node -> {syntax: p, semantic: p} (default 0.2 / 0.5). Returns the model nodes written."""
    from py4.probes.stats import paired_difference
    from py4.report import layout

    scores: dict[str, list] = {}
    for i, node in enumerate(n for n in nodes if n.stage == layout.PROBE_STAGE):
        model_node = node.meta.model_node
        if only is not None and model_node not in only:
            continue
        res = probe_results(win_rates.get(model_node, {"syntax": 0.2, "semantic": 0.5}), seed=i)
        probes = res.pop("_probes")
        if node.meta.compare in scores:  # `py4 probes eval --compare` the control arm's model
            res["minus_compare"] = paired_difference(res["scores"], scores[node.meta.compare], probes, b=BOOTSTRAP)
        scores[model_node] = res["scores"]
        Path(node.run_dir).mkdir(parents=True, exist_ok=True)
        Path(node.run_dir, layout.RESULTS_FILE).write_text(json.dumps(res))
    return list(scores)


def write_losses(nodes: list, loss: dict[str, float]) -> None:
    """Held-out Python-4 loss runs as py4.train.heldout_loss writes them; ``loss``: arm (or
    "base") -> mean loss per token."""
    from py4.report import layout

    for node in nodes:
        if node.stage == layout.LOSS_STAGE:
            value = loss[node.meta.arm or "base"]
            Path(node.run_dir).mkdir(parents=True, exist_ok=True)
            Path(node.run_dir, layout.RESULTS_FILE).write_text(json.dumps(
                {"documents": 12, "tokens": 4096,
                 "all": {"loss": value, "perplexity": 2.718 ** value, "scored_tokens": 4090},
                 "heldin": {"loss": value - 0.1, "perplexity": 1.0, "scored_tokens": 3000},
                 "heldout": {"loss": value + 0.2, "perplexity": 1.0, "scored_tokens": 1090}}))


CALIBRATION_CERTIFIED = {"gold": 6, "python3": 0, "migrated": 5, "core-only": 0}


def write_calibration(spec, certified: dict[str, int] = CALIBRATION_CERTIFIED) -> None:
    """The scripted policies' evaluation runs, as the report's calibration step leaves them."""
    from py4.report.calibration import calibration_runs, record_calibration

    for policy, run_dir in calibration_runs(spec).items():
        splits = {s: split_metrics(certified[policy]) for s in spec.evaluation.splits}
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        Path(run_dir, "results.json").write_text(json.dumps({"splits": splits}))
        record_calibration(spec, policy)


def write_results_capturing_figures(spec, report_dir: Path, **kwargs):
    """``write_results`` with every saved matplotlib Figure kept: (paths, {file name: Figure}),
    so tests inspect axes, ticks and error bars instead of pixels."""
    import pytest
    from matplotlib.figure import Figure

    from py4.report.results import write_results

    saved: dict = {}
    real = Figure.savefig

    def capture(self, fname, *args, **kw):
        saved[Path(fname).name] = self
        return real(self, fname, *args, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Figure, "savefig", capture)
        paths = write_results(spec, report_dir, **kwargs)
    return paths, saved
