"""Boa certification as an Inspect scorer, with ``py4 eval``'s outcomes and reward table.

After :func:`~py4.inspect_tasks.solver.boa_episode` the score is the episode's: the
outcome its first ``submit`` fixed (``certified``, ``uncertified``) or how it ended
(``no_submission``, ``truncated``), and that outcome's reward. After another solver (a
plain ``generate()``), the last fenced code block of the completion is certified as if
it had been submitted (none: ``no_submission``).

Every score: ``value`` {``certified``: 1.0 or 0.0, ``reward``}, ``answer`` (the submitted
code), ``explanation`` (what ``submit`` answered) and ``metadata``: the outcome, reward,
end reason, counters, the certificate, the problem's ``rules`` and ``per_rule`` {rule:
certified}. :func:`py4_summary` turns a log back into ``py4 eval``'s metrics (pass@k,
outcomes, per-rule tables) with the same code.
"""

from __future__ import annotations

import re
from typing import Any

import anyio
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from py4.boa.certify import certify
from py4.episodes import feedback
from py4.episodes.config import EpisodeConfig, RewardTable
from py4.episodes.pool import shared_executor
from py4.evaluate.inspect_log import SCORER_NAME, episode_score
from py4.inspect_tasks.solver import STORE_KEY, problem_for

_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)


@scorer(name=SCORER_NAME, metrics={"certified": [mean(), stderr()], "reward": [mean()]})
def boa_certification(rewards: dict[str, float] | None = None, bank_version: str = "v1",
                      bank_dir: str | None = None, diagnostics: str = "generic") -> Scorer:
    """Score a sample by Boa certification (``rewards``: a ``RewardTable``'s fields)."""
    table = RewardTable.model_validate(rewards or {})

    async def score(state: TaskState, target: Target) -> Score:
        del target  # the tests are the target; they stay on Boa's trusted side
        problem = problem_for(state, bank_version, bank_dir)
        record = state.store.get(STORE_KEY) or await _certify_completion(state, problem, diagnostics)
        record = {**record, "rules": list(problem.rules), "split": problem.split}
        return episode_score(record, table.of(record["outcome"]))

    return score


async def _certify_completion(state: TaskState, problem: Any, diagnostics: str) -> dict[str, Any]:
    """The record of an episode that another solver ran: its last code block, certified."""
    blocks = _FENCE.findall(state.output.completion if state.output else "")
    if not blocks:
        return {"problem_id": problem.id, "outcome": "no_submission", "end_reason": "no_tool_call",
                "tool_calls": 0, "malformed_calls": 0, "certificate": None, "events": []}
    code = blocks[-1]
    config = EpisodeConfig()
    executor = shared_executor(config.output_cap)
    cert = await anyio.to_thread.run_sync(lambda: certify(problem, code, executor=executor,
                                                          per_test_timeout_s=config.run_timeout_s,
                                                          filename="solution.p4"))
    answer = feedback.render_submission(cert, diagnostics)
    return {"problem_id": problem.id, "outcome": "certified" if cert.certified else "uncertified",
            "end_reason": "submitted", "tool_calls": 1, "malformed_calls": 0, "certificate": cert.to_json(),
            "events": [{"tool": "submit", "code": code, "answer": answer, "status": "completion"}]}


def py4_summary(log: Any) -> dict[str, Any]:
    """``py4 eval``'s metrics of an Inspect log of these tasks: {split: summary} and ``overall``.

    Each summary is what ``results.json`` holds for a split (``certified_rate``,
    ``pass_at_k``, ``outcomes``, ``mean_reward``, ``per_rule``, …), computed by
    ``py4.evaluate.metrics.summarize`` from every epoch of every sample.
    """
    from py4.evaluate.metrics import summarize

    records = []
    for sample in log.samples or []:
        score = (sample.scores or {}).get(SCORER_NAME)
        if score is None or not score.metadata:
            continue
        meta = score.metadata
        records.append({"problem_id": meta["problem_id"], "split": meta["split"], "rules": meta["rules"],
                        "outcome": meta["outcome"], "reward": meta["reward"],
                        "malformed_calls": meta.get("malformed_calls", 0), "tool_calls": meta.get("tool_calls", 0)})
    epochs = int(log.eval.config.epochs or 1)
    splits: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        splits.setdefault(record["split"], []).append(record)
    return {"splits": {name: summarize(rs, epochs) for name, rs in splits.items()},
            "overall": summarize(records, epochs)}
