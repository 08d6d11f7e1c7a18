import json
import random

import pytest
from typer.testing import CliRunner

from py4.corpus.cli import app
from py4.corpus.output import CorpusError, ShardWriter
from py4.corpus.subset import choose_subset, stats, subset


def test_choose_subset_semantics_exactly():
    counts = [100, 250, 40, 700, 90, 310, 5, 60]
    order = list(range(len(counts)))
    random.Random(7).shuffle(order)
    expected, total = [], 0
    for i in order:
        if total >= 500:
            break
        expected.append(i)
        total += counts[i]
    chosen = choose_subset(counts, 500, 7)
    assert chosen == sorted(expected)
    assert sum(counts[i] for i in chosen) >= 500
    # minimal in shuffle order: without the last document taken the total is below target
    assert sum(counts[i] for i in expected[:-1]) < 500
    assert choose_subset(counts, 500, 7) == chosen and choose_subset(counts, 500, 8) != chosen


def test_choose_subset_refuses_an_unreachable_target():
    with pytest.raises(CorpusError, match="fewer than the target"):
        choose_subset([1, 2], 4, 0)


def _corpus(path, n=30):
    writer = ShardWriter(path, 7)
    for i in range(n):
        writer.write({"id": f"d{i}", "text": f"doc {i}", "tokens": 10 + i, "sha256": f"{i:064x}",
                      "type": "blog_post" if i % 2 else "tutorial", "rules": ["P4-01", f"P4-{i % 3 + 2:02d}"]})
    writer.close()
    (path / "manifest.json").write_text(json.dumps({"name": "c", "docs": n}))


def test_subset_writes_whole_documents_and_a_manifest(tmp_path):
    _corpus(tmp_path / "c")
    manifest = subset(tmp_path / "c", 200, 42, tmp_path / "s")
    assert manifest["tokens"] >= 200 and manifest["subset"]["seed"] == 42
    assert stats(tmp_path / "s")["tokens"] == manifest["tokens"]


def test_stats_json_shape_via_cli(tmp_path):
    _corpus(tmp_path / "c", n=4)
    result = CliRunner().invoke(app, ["stats", str(tmp_path / "c"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data == {"docs": 4, "tokens": 10 + 11 + 12 + 13,
                    "per_rule": {"P4-01": 4, "P4-02": 2, "P4-03": 1, "P4-04": 1},
                    "per_type": {"blog_post": 2, "tutorial": 2}}


def test_cli_subset_and_errors(tmp_path):
    _corpus(tmp_path / "c")
    ok = CliRunner().invoke(app, ["subset", "--corpus", str(tmp_path / "c"), "--target-tokens", "50",
                                  "--seed", "1", "--out", str(tmp_path / "s")])
    assert ok.exit_code == 0 and "docs" in ok.output
    bad = CliRunner().invoke(app, ["stats", str(tmp_path / "missing")])
    assert bad.exit_code == 2 and "no *.jsonl shards" in bad.output
