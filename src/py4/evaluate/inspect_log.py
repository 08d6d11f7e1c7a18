"""``py4 eval --inspect-log DIR``: an evaluation's transcripts as an Inspect log (``inspect view``).

One sample per episode (id: the problem id, epoch: the sample number + 1) with the
conversation as Inspect chat messages, the score :func:`episode_score` gives it (the same
function scores an episode of the Inspect tasks, ``py4.inspect_tasks.scorer``: value
``certified``/``reward``, the submitted code, ``submit``'s answer, per-rule metadata) and
the sample's problem metadata. The results carry the headline rates and, under
``metadata.py4``, every split's metrics as ``results.json`` has them. Written with
inspect_ai's ``write_eval_log`` (``.eval`` format). Needs the ``inspect`` extra.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from inspect_ai.log import (
    EvalConfig, EvalDataset, EvalLog, EvalMetric, EvalResults, EvalSample, EvalScore, EvalSpec, EvalStats,
    write_eval_log,
)
from inspect_ai.model import (
    ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser, ContentReasoning,
    ContentText, ModelOutput,
)
from inspect_ai.scorer import Score
from inspect_ai.tool import ToolCall

TASK_NAME = "py4_eval"
SCORER_NAME = "boa_certification"
"""The scorer's name in the logs (``py4.inspect_tasks.scorer.boa_certification`` registers under it)."""


def episode_score(record: dict[str, Any], reward: float) -> Score:
    """The score of one episode record (``py4 eval``'s transcript line or the Inspect solver's record)."""
    outcome = record["outcome"]
    certified = outcome == "certified"
    submitted = next((e for e in record.get("events") or [] if e.get("tool") == "submit" and "status" in e), None)
    metadata = {k: v for k, v in record.items() if k not in ("events", "turns", "messages")}
    metadata.update(reward=reward, per_rule={rule: certified for rule in record["rules"]})
    return Score(value={"certified": 1.0 if certified else 0.0, "reward": reward},
                 answer=submitted["code"] if submitted else None,
                 explanation=submitted["answer"] if submitted else f"{outcome} ({record.get('end_reason')})",
                 metadata=metadata)


def write_inspect_log(results: dict[str, Any], records: list[dict[str, Any]], log_dir: str | Path,
                      started: datetime | None = None) -> Path:
    """Write ``py4 eval``'s ``results`` and transcript ``records`` as one ``.eval`` log in ``log_dir``."""
    now = datetime.now(timezone.utc)
    created = (started or now).isoformat()
    splits = list(results["splits"])
    model = _model_name(results["policy"])
    samples = [_sample(r) for r in records]
    overall = results["overall"]
    log = EvalLog(
        status="success",
        eval=EvalSpec(
            created=created, task=TASK_NAME, task_args={"splits": splits},
            # the viewer tells logs apart by these ids; Inspect makes them random too
            eval_id=uuid.uuid4().hex, run_id=uuid.uuid4().hex, task_id=uuid.uuid4().hex,
            dataset=EvalDataset(name=f"py4-{results['bank']['version']}-{'+'.join(splits)}", samples=len(samples),
                                sample_ids=sorted({s.id for s in samples})),
            model=model, config=EvalConfig(epochs=results["sampling"]["samples"]),
            metadata={"bank": results["bank"], "boa": results["boa"], "episode": results["episode"],
                      "sampling": results["sampling"], "policy": results["policy"]},
        ),
        results=EvalResults(
            total_samples=len(samples), completed_samples=len(samples),
            scores=[EvalScore(name="certified", scorer=SCORER_NAME, scored_samples=len(samples),
                              metrics={"mean": EvalMetric(name="mean", value=overall["certified_rate"])}),
                    EvalScore(name="reward", scorer=SCORER_NAME, scored_samples=len(samples),
                              metrics={"mean": EvalMetric(name="mean", value=overall["mean_reward"])})],
            metadata={"py4": {"splits": results["splits"], "overall": overall}},
        ),
        stats=EvalStats(started_at=created, completed_at=now.isoformat()),
        samples=samples,
    )
    out = Path(log_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{now.strftime('%Y-%m-%dT%H-%M-%S')}_{TASK_NAME}_{model.replace('/', '-').replace(':', '-')}.eval"
    write_eval_log(log, str(path))
    return path


def _model_name(policy: dict[str, Any]) -> str:
    """``py4/gold`` for a scripted policy (the Inspect provider of the same name), else ``local/…``, ``endpoint/…``."""
    if policy.get("name", "").startswith(("local:", "endpoint:")):
        kind, _, what = policy["name"].partition(":")
        return f"{kind}/{what}"
    return f"py4/{policy.get('name')}"


def _sample(record: dict[str, Any]) -> EvalSample:
    messages = [to_inspect_message(m) for m in record["messages"]]
    last = next((m for m in reversed(messages) if isinstance(m, ChatMessageAssistant)), None)
    return EvalSample(
        id=record["problem_id"], epoch=int(record["sample"]) + 1, input=messages[:2], target="",
        messages=messages, output=ModelOutput.from_message(last) if last else ModelOutput(),
        scores={SCORER_NAME: episode_score(record, record["reward"])},
        metadata={"problem_id": record["problem_id"], "split": record["split"], "rules": record["rules"]},
        total_time=record.get("wall_s"),
    )


def to_inspect_message(message: dict[str, Any]) -> ChatMessage:
    """One of the driver's chat messages (transformers/OpenAI style) as an Inspect message."""
    role, content = message["role"], message.get("content") or ""
    if role == "system":
        return ChatMessageSystem(content=content)
    if role == "user":
        return ChatMessageUser(content=content)
    if role == "tool":
        return ChatMessageTool(content=content, tool_call_id=message.get("tool_call_id"),
                               function=message.get("name"))
    parts: list[Any] = []
    if message.get("reasoning_content"):
        parts.append(ContentReasoning(reasoning=message["reasoning_content"]))
    if content:
        parts.append(ContentText(text=content))
    calls = [ToolCall(id=c["id"], function=c["function"]["name"], arguments=c["function"]["arguments"])
             for c in message.get("tool_calls") or []]
    return ChatMessageAssistant(content=parts or "", tool_calls=calls or None)
