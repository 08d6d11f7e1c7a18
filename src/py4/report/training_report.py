"""Did midtraining learn? Each arm's training loss, first and last logged, beside ln(vocabulary):
the loss of a model that guesses every token uniformly. A loss that stays there means the arm's
model is the base again (a smoke arm that went 8.03 -> 8.01 against ln(3,076) = 8.03 learned nothing).

    midtraining_rows(nodes) -> [{arm, steps, tokens, first_loss, first_step, last_loss, last_step,
                                 train_loss, uniform_loss, learned}]

Read from the run folder: its manifest (``result.train_loss``, steps, tokens), the newest
checkpoint's ``trainer_state.json`` (the logged losses) and the saved model's ``config.json``
(vocabulary size). Whatever is missing is left out of the row, not guessed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from py4.runs import read_manifest

MIDTRAIN_STAGE = "midtrain"
# A last logged loss within this share of ln(vocab) counts as not learned: the model still
# spreads its probability almost uniformly.
UNIFORM_SHARE = 0.95


def _logged_losses(run_dir: Path) -> list[tuple[int, float]]:
    """(step, loss) of the newest checkpoint's trainer_state.json, in step order."""
    states = sorted(run_dir.glob("checkpoint-*/trainer_state.json"),
                    key=lambda p: int(p.parent.name.rsplit("-", 1)[-1]) if p.parent.name.rsplit("-", 1)[-1].isdigit()
                    else -1)
    if not states:
        return []
    try:
        history = json.loads(states[-1].read_text(encoding="utf-8")).get("log_history") or []
    except (OSError, ValueError):
        return []
    return [(int(h["step"]), float(h["loss"])) for h in history if "loss" in h and "step" in h]


def _vocab_size(model_dir: Path) -> int | None:
    try:
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    return config.get("vocab_size") or text.get("vocab_size")


def midtraining_rows(nodes: Iterable) -> list[dict[str, Any]]:
    rows = []
    for node in nodes:
        if node.stage != MIDTRAIN_STAGE:
            continue
        manifest = read_manifest(node.run_dir)
        if not manifest or manifest.get("status") != "done":
            continue
        run = Path(node.run_dir)
        result = manifest.get("result") or {}
        schedule = manifest.get("schedule") or {}
        logged = _logged_losses(run)
        vocab = _vocab_size(Path(result.get("model_dir") or run / "model"))
        uniform = math.log(vocab) if vocab else None
        row: dict[str, Any] = {"model": node.meta.model, "arm": node.meta.arm, "run": node.run_dir,
                               "steps": result.get("global_step") or manifest.get("max_steps"),
                               "tokens": schedule.get("total_tokens"), "train_loss": result.get("train_loss"),
                               "vocab_size": vocab, "uniform_loss": uniform,
                               "first_step": None, "first_loss": None, "last_step": None, "last_loss": None}
        if logged:
            (row["first_step"], row["first_loss"]), (row["last_step"], row["last_loss"]) = logged[0], logged[-1]
        end = row["last_loss"] if row["last_loss"] is not None else row["train_loss"]
        row["learned"] = None if end is None or uniform is None else end < UNIFORM_SHARE * uniform
        rows.append(row)
    return rows
