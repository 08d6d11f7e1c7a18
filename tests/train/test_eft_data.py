"""EFT gold rows: the submit-call format (what evaluation certifies) and the fenced format; fast, no model."""

from __future__ import annotations

import json

import pytest

from py4.train import eft_data


@pytest.fixture(scope="module")
def bank():
    from py4.problems.bank import load_bank

    return load_bank()


def _first(bank, split):
    return next(p for p in bank if p.split == split)


def test_submit_call_row_is_the_episode_prompt_and_a_submit_call(bank):
    from py4.episodes import EpisodeConfig
    from py4.episodes.environment import TOOL_SCHEMAS, initial_messages

    problem = _first(bank, "eft_pool")
    row = eft_data.gold_row(problem, problem.gold)
    assert row["tools"] == TOOL_SCHEMAS
    assert row["messages"][:2] == initial_messages(problem, EpisodeConfig())
    answer = row["messages"][2]
    assert answer["role"] == "assistant" and answer["content"] == ""
    assert answer["tool_calls"] == [{"type": "function",
                                     "function": {"name": "submit", "arguments": {"code": problem.gold}}}]
    assert row["chat_template_kwargs"] == {"enable_thinking": False} and row["source"] == "gold"
    assert eft_data.gold_code(row) == problem.gold


def test_submit_call_row_uses_the_configured_system_prompt(bank):
    problem = _first(bank, "eft_pool")
    row = eft_data.gold_row(problem, problem.gold, "submit_call", system_prompt="Be brief.")
    assert row["messages"][0] == {"role": "system", "content": "Be brief."}


def test_fenced_row_is_a_plain_answer(bank):
    problem = _first(bank, "eft_pool")
    row = eft_data.gold_row(problem, problem.gold, "fenced")
    assert row["tools"] is None and [m["role"] for m in row["messages"]] == ["user", "assistant"]
    assert row["messages"][1]["content"].startswith("```python\n")
    assert eft_data.gold_code(row) == problem.gold.rstrip()
    with pytest.raises(ValueError, match="gold_format"):
        eft_data.gold_row(problem, problem.gold, "markdown")


def test_gold_code_reads_string_arguments_and_refuses_other_rows():
    row = {"messages": [{"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "submit", "arguments": json.dumps({"code": "x"})}}]}]}
    assert eft_data.gold_code(row) == "x"
    with pytest.raises(ValueError, match="neither a submit call nor a fenced answer"):
        eft_data.gold_code({"messages": [{"role": "assistant", "content": "hello"}], "problem_id": "p"})


@pytest.mark.parametrize("gold_format", ["submit_call", "fenced"])
def test_held_out_rules_are_counted_in_both_formats(bank, gold_format):
    from py4.lang import compile_py4
    from py4.lang.rules import DEFAULT_HELD_OUT

    held_out = next(p for p in bank if p.split == "test_heldout"
                    and set(compile_py4(p.gold).rules_exercised) & DEFAULT_HELD_OUT)
    held_in = _first(bank, "eft_pool")
    rows = [eft_data.gold_row(p, p.gold, gold_format) for p in (held_out, held_in)]
    assert eft_data.held_out_rules_in(rows, set(DEFAULT_HELD_OUT)) == 1


def test_default_format_is_submit_call():
    config = eft_data.EFTDoseConfig(out="x", gold=1, replay=0)
    assert config.gold_format == "submit_call" and config.system_prompt is None


def test_drawing_refuses_a_source_of_another_format(bank, tmp_path):
    problem = _first(bank, "eft_pool")
    source = tmp_path / "old"
    source.mkdir()
    # A dose written before gold_format existed: fenced rows, no gold_format in its config.
    (source / "data.jsonl").write_text(json.dumps(eft_data.gold_row(problem, problem.gold, "fenced")) + "\n")
    (source / "manifest.json").write_text(json.dumps({"config": {"gold": 1}, "sha256": "x"}))
    with pytest.raises(ValueError, match="'fenced'.*'submit_call'"):
        eft_data.build_dose(eft_data.EFTDoseConfig(out=str(tmp_path / "new"), gold=1, replay=0, draw_from=str(source)))
    drawn = eft_data.build_dose(eft_data.EFTDoseConfig(out=str(tmp_path / "new"), gold=1, replay=0,
                                                       draw_from=str(source), gold_format="fenced"))
    assert json.loads((drawn / "manifest.json").read_text())["rows"] == 1


def test_replay_prompts_skip_rows_with_tools_whatever_the_tools_hold(tmp_path):
    # The replay pool only needs "has tools?": a row whose tools are one schema object (not a list),
    # or text that is not JSON, is skipped as it always was, not an error that stops the dose
    # (the pack's stricter tools check reached it through the shared reader); blank text is no tools.
    import random

    from py4.train.eft_data import ReplaySettings, replay_prompts

    def row(prompt, **extra):
        return {"messages": [{"role": "user", "content": prompt}, {"role": "assistant", "content": "ok"}], **extra}

    rows = [row("plain one"), row("a dict", tools={"type": "function"}), row("not json", tools="run_code"),
            row("blank", tools=" "), row("listed", tools=[{"type": "function"}]), row("plain two")]
    folder = tmp_path / "instructions"
    folder.mkdir()
    (folder / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    settings = ReplaySettings(instructions={"path": str(folder), "filter": "none"}, parent={"path": "unused"},
                              prompt_pool=10)
    assert sorted(replay_prompts(settings, 3, random.Random(0))) == ["blank", "plain one", "plain two"]


def test_a_dose_folder_records_the_code_and_command_that_built_it(tmp_path):
    from py4.runs import code_version, read_manifest, tree_sha256

    dose = eft_data.build_dose(eft_data.EFTDoseConfig(out=str(tmp_path / "dose"), gold=2, replay=0))
    run = read_manifest(dose)
    assert run["kind"] == "eft_dose" and run["status"] == "done"
    assert run["provenance"]["code"] == code_version() and run["provenance"]["command"]
    assert {"py4", "torch", "transformers"} <= set(run["libraries"])
    assert run["outputs"]["data"]["sha256"] == tree_sha256(dose / "data.jsonl") and run["outputs"]["data"]["rows"] == 2
    assert json.loads((dose / "manifest.json").read_text())["rows"] == 2
