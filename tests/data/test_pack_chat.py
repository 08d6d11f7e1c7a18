"""SFT packing: assistant-only labels, position ids per conversation, splits and drops counted."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from py4.data.configs import PackConfig
from py4.data.inspect import segments_of
from py4.data.instructions import Conversation
from py4.data.pack import run_pack
from py4.data.pack_chat import ChatPackStats, check_chat_template, fit_conversation, render_conversations, turn_groups
from py4.data.packed_io import IGNORE_INDEX, load_packed
from py4.data.tokens import DataError

from data_helpers import build_tokenizer, conversation, write_jsonl


def pack_config(out: Path, source: Path, tokenizer_dir: Path, **extra) -> PackConfig:
    data = {"out_dir": str(out), "tokenizer": str(tokenizer_dir), "seq_len": 256, "format": "chat",
            "instructions": {"path": str(source)}, "open_bins": 4}
    data.update(extra)
    return PackConfig.model_validate(data)


def supervised_spans(tokenizer, ids, labels) -> list[str]:
    spans, current = [], []
    for token, label in zip(ids, labels, strict=True):
        if label != IGNORE_INDEX:
            assert label == token
            current.append(token)
        elif current:
            spans.append(tokenizer.decode(current))
            current = []
    if current:
        spans.append(tokenizer.decode(current))
    return spans


def test_labels_are_exactly_the_assistant_turns(tokenizer):
    messages = conversation(3, turns=2, system=True)
    [rendered] = render_conversations(tokenizer, [Conversation(messages)])
    spans = supervised_spans(tokenizer, rendered.input_ids.tolist(), rendered.labels.tolist())
    assert spans == [m["content"] + "<|end|>" for m in messages if m["role"] == "assistant"]


def test_packed_rows_keep_masks_and_restart_positions(tmp_path, chat_dir, tokenizer_dir, tokenizer):
    manifest = run_pack(pack_config(tmp_path / "sft", chat_dir, tokenizer_dir))
    assert manifest["source"]["rows_total"] == 34 and manifest["source"]["rows_kept"] == 30
    assert sum(manifest["source"]["rejected_by_reason"].values()) == 4
    dataset = load_packed(tmp_path / "sft")
    seen_answers = []
    for row in dataset:
        ids, labels, pos = (np.asarray(row[k]) for k in ("input_ids", "labels", "position_ids"))
        assert len(ids) == 256  # padded to seq_len
        for start, end in segments_of(pos):
            assert pos[start] == 0 and (np.diff(pos[start:end]) == 1).all()
        seen_answers += supervised_spans(tokenizer, ids.tolist(), labels.tolist())
    expected = [m["content"] + "<|end|>" for i in range(30) for m in conversation(i, 1 + i % 3, i % 2 == 0)
                if m["role"] == "assistant"]
    assert sorted(seen_answers) == sorted(expected)  # every assistant turn once, nothing else
    counts = manifest["counts"]
    assert counts["rows"] == len(dataset) and counts["conversations"] == 30
    assert counts["segments"] == 30 and counts["conversations_fitting"] == 30
    assert counts["conversation_tokens"] + counts["padding_tokens"] == 256 * len(dataset)


def test_long_conversation_is_split_between_turns(tokenizer):
    long = Conversation(conversation(1, turns=8, system=True))
    [whole] = render_conversations(tokenizer, [long])
    stats = ChatPackStats()
    pieces = fit_conversation(tokenizer, long, whole, 120, "split", stats)
    assert stats.conversations_split == 1 and stats.pieces_from_splits == len(pieces) > 1
    assert all(len(p) <= 120 for p in pieces)
    answers = [s for p in pieces for s in supervised_spans(tokenizer, p.input_ids.tolist(), p.labels.tolist())]
    assert answers == [m["content"] + "<|end|>" for m in long.messages if m["role"] == "assistant"]
    for p in pieces:  # each piece starts with the system prompt and a user turn
        assert tokenizer.decode(p.input_ids.tolist()).startswith("<bos><|system|>\nsystem prompt 1<|end|>\n<|user|>")


def test_turn_too_long_alone_is_dropped_and_counted(tokenizer):
    messages = conversation(2, turns=2)
    messages[1]["content"] = "long " * 200
    conv = Conversation(messages)
    [whole] = render_conversations(tokenizer, [conv])
    stats = ChatPackStats()
    pieces = fit_conversation(tokenizer, conv, whole, 100, "split", stats)
    assert stats.turns_dropped_too_long == 1 and len(pieces) == 1
    assert supervised_spans(tokenizer, pieces[0].input_ids.tolist(), pieces[0].labels.tolist()) == [
        messages[3]["content"] + "<|end|>"]


def test_drop_policy_counts_dropped_conversations(tmp_path, tokenizer_dir):
    rows = [{"messages": conversation(i, turns=6)} for i in range(3)] + [{"messages": conversation(9)}]
    source = write_jsonl(tmp_path / "src" / "a.jsonl", rows).parent
    manifest = run_pack(pack_config(tmp_path / "out", source, tokenizer_dir, seq_len=120, long_conversations="drop"))
    assert manifest["counts"]["conversations_dropped"] == 3 and manifest["counts"]["segments"] == 1


def test_template_without_generation_markers_is_refused():
    with pytest.raises(DataError, match="generation"):
        check_chat_template(build_tokenizer(template="{% for m in messages %}{{ m['content'] }}{% endfor %}"))


def test_turn_groups():
    system, groups = turn_groups(conversation(0, turns=3, system=True))
    assert [m["role"] for m in system] == ["system"] and len(groups) == 3
    assert all(g[0]["role"] == "user" for g in groups)


def test_sft_determinism_and_schedule(tmp_path, chat_dir, tokenizer_dir):
    schedule = {"micro_batch": 1, "grad_accum": 2, "gpus": 1, "max_steps_cap": 2, "warmup": 1}
    a = run_pack(pack_config(tmp_path / "a", chat_dir, tokenizer_dir, schedule=schedule))
    b = run_pack(pack_config(tmp_path / "b", chat_dir, tokenizer_dir, schedule=schedule))
    assert a["content_sha256"] == b["content_sha256"]
    shard = "data-00000-of-00001.arrow"
    assert (tmp_path / "a" / shard).read_bytes() == (tmp_path / "b" / shard).read_bytes()
    steps = json.loads((tmp_path / "a" / "step_schedule.json").read_text())
    assert steps["total_tokens"] == a["rows"] * 256 and steps["max_steps"] == min(2, a["rows"] // 2)


def test_unpadded_rows_and_max_sequences(tmp_path, chat_dir, tokenizer_dir):
    manifest = run_pack(pack_config(tmp_path / "u", chat_dir, tokenizer_dir, pad_to_seq_len=False, max_sequences=2))
    dataset = load_packed(tmp_path / "u")
    assert len(dataset) == 2 and manifest["counts"]["stopped_at_max_sequences"]
    assert all(len(r["input_ids"]) <= 256 for r in dataset)
    assert manifest["counts"]["padding_tokens"] == 0


def test_tool_rows_pass_with_filter_none(tmp_path, tokenizer_dir, tokenizer):
    rows = [{"messages": [{"role": "user", "content": "add 1 and 2"},
                          {"role": "assistant", "content": "<tool_call>run_code</tool_call>"},
                          {"role": "tool", "content": "3"},
                          {"role": "assistant", "content": "the answer is 3"}]}]
    source = write_jsonl(tmp_path / "tools" / "a.jsonl", rows).parent
    run_pack(pack_config(tmp_path / "out", source, tokenizer_dir, instructions={"path": str(source), "filter": "none"}))
    row = load_packed(tmp_path / "out")[0]
    assert supervised_spans(tokenizer, row["input_ids"], row["labels"]) == [
        "<tool_call>run_code</tool_call><|end|>", "the answer is 3<|end|>"]


def test_expected_filter_counts_are_checked(tmp_path, chat_dir, tokenizer_dir):
    run_pack(pack_config(tmp_path / "ok", chat_dir, tokenizer_dir, expected_rows_total=34, expected_rows_kept=30))
    with pytest.raises(ValueError, match="rows_kept 30 differs from the expected 31"):
        run_pack(pack_config(tmp_path / "bad", chat_dir, tokenizer_dir, expected_rows_kept=31))


def test_chat_template_file_replaces_the_tokenizers(tmp_path, chat_dir, tokenizer_dir):
    plain = tmp_path / "plain.jinja"
    plain.write_text("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    with pytest.raises(DataError, match="generation"):
        run_pack(pack_config(tmp_path / "out", chat_dir, tokenizer_dir, chat_template=str(plain)))


def test_template_error_names_the_conversation(tokenizer):
    strict = build_tokenizer(template=(
        "{% for m in messages %}{% if m['role'] not in ['user', 'assistant'] %}"
        "{{ raise_exception('unknown role: ' + m['role']) }}{% endif %}"
        "{% if m['role'] == 'assistant' %}{% generation %}{{ m['content'] }}{% endgeneration %}"
        "{% else %}{{ m['content'] }}{% endif %}{% endfor %}"))
    good = Conversation(conversation(1))
    bad = Conversation([{"role": "user", "content": "q"}, {"role": "critic", "content": "x"},
                        {"role": "assistant", "content": "a"}])
    with pytest.raises(DataError, match=r"conversation 11: the chat template failed: unknown role: critic"):
        render_conversations(strict, [good, bad, good], first_index=10)


@pytest.mark.smoke
def test_rendering_in_processes_gives_the_same_bytes(tmp_path, chat_dir, tokenizer_dir):
    one = run_pack(pack_config(tmp_path / "one", chat_dir, tokenizer_dir, render_batch=4))
    two = run_pack(pack_config(tmp_path / "two", chat_dir, tokenizer_dir, render_batch=4, num_proc=2))
    assert one["content_sha256"] == two["content_sha256"] and one["counts"] == two["counts"]


# --- Campaign families: the tokenizer's own template has no markers -----------------------------------------

FAMILY_ROW = {
    "tools": [{"type": "function", "function": {"name": "run_code", "description": "Run code.", "parameters": {
        "type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}}}],
    "messages": [
        {"role": "user", "content": "Print one."},
        # arguments as JSON text, as OpenAI-style rows carry them: restored to a mapping before rendering
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "run_code", "arguments": '{"code": "print(1)"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "run_code", "content": "1"},
        {"role": "assistant", "content": "It prints 1."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "You are welcome."}]}
FAMILY_SPANS = {
    "gemma4": ['<|tool_call>call:run_code{code:<|"|>print(1)<|"|>}<tool_call|><|tool_response>',
               "It prints 1.<turn|>", "You are welcome.<turn|>"],
    "glm45": ["\n<think></think>\n<tool_call>run_code\n<arg_key>code</arg_key>\n<arg_value>print(1)</arg_value>\n"
              "</tool_call><|observation|>", "\n<think></think>\nIt prints 1.<|user|>",
              "\n<think></think>\nYou are welcome.<|user|>"],
}


@pytest.mark.parametrize("family", ["gemma4", "glm45"])
def test_family_tokenizer_packs_with_its_training_template(tmp_path, family):
    from py4.rehearsal.standins import build_tokenizer

    tokenizer = build_tokenizer(family)
    tokenizer.save_pretrained(tmp_path / "tokenizer")
    source = write_jsonl(tmp_path / "rows" / "a.jsonl", [FAMILY_ROW]).parent
    manifest = run_pack(pack_config(tmp_path / "out", source, tmp_path / "tokenizer", seq_len=1024,
                                    instructions={"path": str(source), "filter": "none"}))
    assert manifest["counts"]["conversations_fitting"] == 1  # whole, not split
    expected_family = {"gemma4": "gemma4", "glm45": "glm4moe"}[family]
    assert manifest["training_template"]["family"] == expected_family
    assert manifest["training_template"]["source"].startswith("py4:")
    assert manifest["training_template"]["inference_template_match"]
    row = load_packed(tmp_path / "out")[0]
    assert supervised_spans(tokenizer, row["input_ids"], row["labels"]) == FAMILY_SPANS[family]


def test_unknown_template_without_markers_names_the_families(tmp_path, chat_dir, tokenizer_dir):
    plain = tmp_path / "plain.jinja"
    plain.write_text("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    with pytest.raises(DataError, match="Families: smoke, gemma4, glm4moe"):
        run_pack(pack_config(tmp_path / "out", chat_dir, tokenizer_dir, chat_template=str(plain)))
    with pytest.raises(ValueError, match="unknown chat template family 'llama'; families: smoke, gemma4, glm4moe"):
        pack_config(tmp_path / "out", chat_dir, tokenizer_dir, chat_template_family="llama")


def test_a_bug_while_rendering_keeps_its_traceback(monkeypatch, tokenizer_dir):
    """Only the template's own failure is the data's fault (DataError naming the conversation);
    a KeyError inside the rendering code is a bug and is not turned into one line."""
    from py4.data import pack_chat
    from py4.data.instructions import Conversation
    from py4.data.tokens import load_tokenizer

    def broken(tokenizer, conversations, template_kwargs):
        raise KeyError("assistant_masks")

    monkeypatch.setattr(pack_chat, "_render", broken)
    conversation = Conversation(messages=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
    with pytest.raises(KeyError, match="assistant_masks"):
        pack_chat.render_conversations(load_tokenizer(str(tokenizer_dir)), [conversation])


# --- A row's `tools`: a list of schemas or that list as JSON text (as TRL's SFT reads it) ----------------


def test_json_text_tools_pack_the_same_tokens_as_a_list(tmp_path):
    """`py4 train sft` (TRL) accepts tools as JSON text; `py4 data pack` reads it the same way."""
    from py4.rehearsal.standins import build_tokenizer

    build_tokenizer("gemma4").save_pretrained(tmp_path / "tokenizer")
    as_text = dict(FAMILY_ROW, tools=json.dumps(FAMILY_ROW["tools"]))
    without = {k: v for k, v in FAMILY_ROW.items() if k != "tools"}
    hashes = {}
    for name, row in (("list", FAMILY_ROW), ("text", as_text), ("none", without)):
        source = write_jsonl(tmp_path / name / "a.jsonl", [row]).parent
        manifest = run_pack(pack_config(tmp_path / f"out-{name}", source, tmp_path / "tokenizer", seq_len=1024,
                                        instructions={"path": str(source), "filter": "none"}))
        hashes[name] = manifest["content_sha256"]
    assert hashes["text"] == hashes["list"] != hashes["none"]  # the tools were rendered, from either form


@pytest.mark.parametrize(("tools", "expected"), [
    (FAMILY_ROW["tools"][0], "got dict"),
    (json.dumps(FAMILY_ROW["tools"][0]), "got dict"),
    ("run_code", "'tools' is text but not JSON"),
    (["run_code"], "got a list with a non-object item"),
])
def test_a_bad_tools_value_is_one_error_naming_the_row(tmp_path, tokenizer_dir, tools, expected):
    import yaml
    from typer.testing import CliRunner

    from py4.data.cli import app

    good = {"messages": conversation(0)}
    source = write_jsonl(tmp_path / "rows" / "a.jsonl", [good, dict(good, tools=tools)]).parent
    config = tmp_path / "pack.yaml"
    config.write_text(yaml.safe_dump({"kind": "data.pack", "out_dir": str(tmp_path / "out"), "format": "chat",
                                      "instructions": {"path": str(source), "filter": "none"},
                                      "tokenizer": str(tokenizer_dir), "seq_len": 256}))
    result = CliRunner().invoke(app, ["pack", "--config", str(config)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"error: {source}: row 1: 'tools' ") and expected in line


def test_input_transformers_refuses_is_an_error_naming_the_conversation(tokenizer):
    """apply_chat_template's own ValueError on a tool that is not a schema is the data's fault."""
    good = Conversation(conversation(1))
    bad = Conversation(conversation(2), tools=["run_code"])  # type: ignore[list-item]  # not a schema
    with pytest.raises(DataError, match=r"conversation 8: the chat template failed: Tools should either be"):
        render_conversations(tokenizer, [good, bad], first_index=7)
