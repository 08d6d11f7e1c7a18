"""The smoke instruction set: deterministic Dolci-format rows with true tool transcripts."""

from __future__ import annotations

import contextlib
import io

import pytest

from py4.data.smoke_instructions import (build_smoke_instructions, read_smoke_instructions,
                                         write_smoke_instructions)


def test_same_seed_same_rows_other_seed_other_order():
    assert build_smoke_instructions(20, 30, seed=3) == build_smoke_instructions(20, 30, seed=3)
    assert build_smoke_instructions(20, 30, seed=3) != build_smoke_instructions(20, 30, seed=4)


def test_counts_and_roles():
    rows = build_smoke_instructions(n_qa=12, n_episodes=18, seed=0)
    assert sum(r["source"] == "qa" for r in rows) == 12
    assert sum(r["source"] == "episode" for r in rows) == 18
    for row in rows:
        roles = [m["role"] for m in row["messages"]]
        if row["source"] == "qa":
            assert roles == ["user", "assistant"] and row["tools"] is None
        else:
            assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
            names = [m["tool_calls"][0]["function"]["name"] for m in row["messages"] if m.get("tool_calls")]
            assert names == ["run_code", "submit"]
            assert [t["function"]["name"] for t in row["tools"]] == ["run_code", "submit"]


def test_transcripts_are_true_python4():
    """Each run_code program compiles as Python-4 without warnings and prints what the tool turn says."""
    lang = pytest.importorskip("py4.lang")
    from py4.lang import runtime

    for row in build_smoke_instructions(n_qa=0, n_episodes=30, seed=1):
        messages = row["messages"]
        program = messages[2]["tool_calls"][0]["function"]["arguments"]["code"]
        result = lang.compile_py4(program)
        assert result.ok and not result.warnings, (program, [d.render("verbatim") for d in result.diagnostics])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(result.code, runtime.new_globals())
        assert out.getvalue().strip() == messages[3]["content"], program
        submitted = messages[4]["tool_calls"][0]["function"]["arguments"]["code"]
        assert program.startswith(submitted + "\n")


def test_write_read_round_trip_and_manifest(tmp_path):
    import json

    rows = build_smoke_instructions(5, 5, seed=0)
    write_smoke_instructions(rows, tmp_path, seed=0)
    assert read_smoke_instructions(tmp_path) == rows
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["rows"] == 10 and manifest["per_source"] == {"qa": 5, "episode": 5} or \
        manifest["per_source"] == {"episode": 5, "qa": 5}


def test_bad_line_is_named(tmp_path):
    (tmp_path / "data.jsonl").write_text('{"messages": []}\nnot json\n')
    with pytest.raises(ValueError, match="data.jsonl:2"):
        read_smoke_instructions(tmp_path)


def test_negative_counts_rejected():
    with pytest.raises(ValueError, match="must be >= 0"):
        build_smoke_instructions(n_qa=-1)


def test_written_rows_keep_key_order_and_the_episode_tool_schemas(tmp_path):
    """The chat template renders tools as written: the file must show them as evaluation does."""
    import json

    from py4.episodes.environment import TOOL_SCHEMAS as EPISODE_TOOLS

    rows = build_smoke_instructions(0, 3, seed=0)
    write_smoke_instructions(rows, tmp_path, seed=0)
    line = (tmp_path / "data.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert json.dumps(EPISODE_TOOLS, ensure_ascii=False) in line
    for row in read_smoke_instructions(tmp_path):
        assert json.dumps(row["tools"]) == json.dumps(EPISODE_TOOLS)
        assert list(row["messages"][0]) == ["role", "content"]
