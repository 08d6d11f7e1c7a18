"""The evaluation run: episodes of a policy on bank splits, metrics, transcripts (``py4 eval``).

    cfg = load_config(EvalConfig, None, ["policy.name=gold", "splits=[test_heldin]"])
    results = run(cfg, "runs/eval-gold")

Writes into the run folder: ``results.json`` (per split: ``certified_rate``,
``pass_at_k`` {k: value}, ``outcomes`` counts, ``mean_reward``, ``per_rule``, …; plus
the bank hash, Boa version, sampling and episode settings), ``results.md`` (tables),
``transcripts.jsonl`` (every episode), ``resolved_config.yaml`` and ``run_manifest.json``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pydantic

from py4.config import StrictModel
from py4.episodes.config import EpisodeConfig
from py4.episodes.driver import run_episodes
from py4.evaluate.metrics import markdown_table, summarize
from py4.evaluate.policies import PolicyConfig, SamplingConfig, ScriptedPolicyConfig, build_policy, check_policy
from py4.problems.schema import SPLITS, Problem

RESULTS, TABLE, TRANSCRIPTS = "results.json", "results.md", "transcripts.jsonl"
INSPECT_LOG = "inspect"
"""The folder of a campaign evaluation's Inspect log, in its run folder (``inspect view`` browses it)."""


class EvalConfig(StrictModel):
    splits: list[str] = ["test_heldin", "test_heldout"]
    limit: int | None = pydantic.Field(None, ge=1)
    """Problems per split: a seeded sample of this many (None: the whole split)."""
    limit_seed: int = 0
    bank_version: str = "v1"
    bank_dir: str | None = None
    """A rebuilt bank's folder (default: the shipped bank)."""
    workers: int | None = None
    """Boa workers (default: one per core)."""
    policy: PolicyConfig = ScriptedPolicyConfig()
    """One registered policy's config, chosen by ``name`` (``py4.evaluate.policies``)."""
    sampling: SamplingConfig = SamplingConfig()
    episode: EpisodeConfig = EpisodeConfig()


def check_config(config: EvalConfig) -> list[str]:
    """Every problem with the config at once (empty when fine)."""
    problems = [f"splits: unknown split {s!r}; expected one of {', '.join(SPLITS)}"
                for s in config.splits if s not in SPLITS]
    if not config.splits:
        problems.append("splits: name at least one split")
    if config.sampling.samples < 1:
        problems.append("sampling.samples must be >= 1")
    return problems + check_policy(config.policy)


def select_problems(bank: list[Problem], split: str, limit: int | None, seed: int) -> list[Problem]:
    """The split's problems sorted by id; a seeded sample of ``limit`` of them when given."""
    problems = sorted((p for p in bank if p.split == split), key=lambda p: p.id)
    if limit is not None and limit < len(problems):
        problems = sorted(random.Random(f"{seed}/{split}").sample(problems, limit), key=lambda p: p.id)
    return problems


def boa_version() -> dict[str, str]:
    """The toolkit version and a fingerprint of Boa's and the language's sources."""
    from py4.corpus.validate import implementation_fingerprint
    from py4.version import __version__

    return {"version": __version__, "implementation": implementation_fingerprint()}


def run(config: EvalConfig, out_dir: str | Path, *, progress: bool = True, policy: Any = None,
        problems: dict[str, list[Problem]] | None = None, inspect_log: str | Path | None = None) -> dict[str, Any]:
    """Evaluate and write the run folder; returns the results.json object.

    ``policy`` overrides the one the config names (tests, custom policies); ``problems``
    ({split: problems}) replaces the bank selection (the bank is still recorded);
    ``inspect_log``: a folder to also write the transcripts to as an Inspect log
    (``py4.evaluate.inspect_log``; needs the ``inspect`` extra). Raises ValueError for a
    bad config or a missing inspect-ai, BankError for a missing or corrupt bank, and
    whatever the policy raises (EndpointError, OSError for a missing model).
    """
    from py4.episodes.pool import shared_executor
    from py4.problems.bank import bank_paths, load_bank, load_manifest
    from py4.runs import RunRecorder, atomic_write_json, atomic_write_text

    errors = check_config(config)
    if errors:
        raise ValueError("invalid eval config: " + "; ".join(errors))
    write_inspect_log = _inspect_log_writer() if inspect_log is not None else None  # fail before the episodes
    out = Path(out_dir)
    with RunRecorder(out, config, kind="eval") as recorder:
        bank = load_bank(config.bank_version, config.bank_dir)
        manifest = load_manifest(config.bank_version, config.bank_dir)
        bank_file, _ = bank_paths(config.bank_version, config.bank_dir)
        # a bank taken from the Hub: its id, pin, commit and content hash (`install_bank`)
        dataset = {"dataset": manifest["dataset"]} if manifest.get("dataset") else {}
        recorder.add_input("bank", path=bank_file, jsonl_sha256=manifest.get("jsonl_sha256"), **dataset)
        weights = config.policy.model if config.policy.name == "local" else getattr(config.policy, "weights", None)
        if config.policy.name in ("local", "endpoint"):  # the model measured (the scripted policies have none)
            recorder.add_model_input("model", config.policy.model, endpoint=getattr(config.policy, "endpoint", None),
                                     weights=weights)
        policy = policy or build_policy(config.policy, config.sampling)
        executor = shared_executor(config.episode.output_cap, config.workers)
        split_problems = problems or {s: select_problems(bank, s, config.limit, config.limit_seed)
                                      for s in config.splits}
        transcripts = out / TRANSCRIPTS
        transcripts.unlink(missing_ok=True)
        summaries, all_records = {}, []
        try:
            for split, chosen in split_problems.items():
                records = _run_split(split, chosen, policy, config, executor, progress)
                with transcripts.open("a", encoding="utf-8") as fh:
                    fh.writelines(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in records)
                summaries[split] = summarize(records, config.sampling.samples)
                all_records += records
        finally:
            policy.close()
        results = {
            "policy": {"name": getattr(policy, "name", config.policy.name), **config.policy.model_dump(mode="json")},
            "bank": {"version": config.bank_version, "sha256": manifest.get("jsonl_sha256"),
                     "problems": len(bank)},
            "boa": boa_version(),
            "sampling": config.sampling.model_dump(mode="json"),
            # what every request carried (None: a scripted policy, which does not sample)
            "sampling_effective": getattr(policy, "sampling_effective", None),
            "episode": config.episode.model_dump(mode="json"),
            "splits": summaries,
            "overall": summarize(all_records, config.sampling.samples),
        }
        atomic_write_json(out / RESULTS, results)
        atomic_write_text(out / TABLE, markdown_table(results))
        for name in (RESULTS, TABLE, TRANSCRIPTS):
            recorder.add_output(name, out / name)
        if write_inspect_log is not None:
            recorder.add_output("inspect_log", write_inspect_log(results, all_records, inspect_log))
        recorder.set(bank_sha256=results["bank"]["sha256"], boa=results["boa"],
                     certified_rate={s: v["certified_rate"] for s, v in summaries.items()},
                     sampling=results["sampling_effective"])
        if weights is not None:  # a model's results are logged to the run that trained it
            from py4.tracking import log_to_training_run

            recorder.set(tracking=log_to_training_run(weights, {
                f"{s}/certified_rate": v["certified_rate"] for s, v in summaries.items()}, "eval"))
        elif config.policy.name == "endpoint":
            recorder.set(tracking="eval: the served weights are not named (policy.weights): no training run "
                                  "to log to")
    return results


def _inspect_log_writer():
    import importlib.util

    if importlib.util.find_spec("inspect_ai") is None:
        raise ValueError("--inspect-log needs inspect-ai, which is not installed: pip install -e '.[inspect]'")
    from py4.evaluate.inspect_log import write_inspect_log

    return write_inspect_log


def _run_split(split: str, problems: list[Problem], policy: Any, config: EvalConfig, executor: Any,
               progress: bool) -> list[dict[str, Any]]:
    from rich.progress import Progress

    from py4.run_progress import report

    total = len(problems) * config.sampling.samples
    finished = 0
    with Progress(transient=True, disable=not progress) as bar:
        task = bar.add_task(f"{split} ({getattr(policy, 'name', '?')})", total=total)

        def episode_end(_run: Any) -> None:
            nonlocal finished
            finished += 1
            bar.advance(task)
            report(f"{split} episodes", finished, total)

        runs = run_episodes(problems, policy, config.episode, samples=config.sampling.samples, executor=executor,
                            on_episode_end=episode_end)
    return [r.record() for r in runs]
