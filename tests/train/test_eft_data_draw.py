"""EFT doses drawn from a bigger dose: the gold problems drawn depend on the seed and ids only."""

from __future__ import annotations

import json
import random

from py4.train.eft_data import draw_rows


def _dose(path, ids, replay=2, order_seed=0):
    rows = [{"messages": [], "source": "gold", "problem_id": i} for i in ids]
    rows += [{"messages": [], "source": "replay", "n": k} for k in range(replay)]
    random.Random(order_seed).shuffle(rows)
    path.mkdir()
    (path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (path / "manifest.json").write_text(json.dumps({"sha256": "x"}))
    return path


def test_same_problems_drawn_from_doses_that_differ_in_order_and_a_few_members(tmp_path):
    ids = [f"py4/{i:05d}" for i in range(29)]
    a = _dose(tmp_path / "a", ids, order_seed=1)
    b = _dose(tmp_path / "b", ids[:-2] + ["py4/90000", "py4/90001"], order_seed=2)
    rows_a, _ = draw_rows(a, 7, 1, random.Random(424242))
    rows_b, _ = draw_rows(b, 7, 1, random.Random(424242))
    gold_a = {r["problem_id"] for r in rows_a if r["source"] == "gold"}
    gold_b = {r["problem_id"] for r in rows_b if r["source"] == "gold"}
    assert len(gold_a) == 7 and len(gold_a & gold_b) >= 5
    shuffled, _ = draw_rows(_dose(tmp_path / "c", ids, order_seed=3), 7, 1, random.Random(424242))
    assert {r["problem_id"] for r in shuffled if r["source"] == "gold"} == gold_a
    other, _ = draw_rows(a, 7, 1, random.Random(1))
    assert {r["problem_id"] for r in other if r["source"] == "gold"} != gold_a
