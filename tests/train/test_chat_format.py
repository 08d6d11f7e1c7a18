"""The smoke chat format: rendering, assistant masks, tool-call parsing, TRL's requirements."""

from __future__ import annotations

import json

import pytest

from py4.data.smoke_instructions import TOOL_SCHEMAS
from py4.chat.smoke_format import tool_call

CONVERSATION = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Add 2 and 3"},
    {"role": "assistant", "content": "", "tool_calls": [tool_call("run_code", code="print(2 + 3)")]},
    {"role": "tool", "name": "run_code", "content": "5"},
    {"role": "assistant", "content": "It is 5.", "reasoning_content": "Easy."},
]


def test_rendering_has_turns_tools_and_calls(small_tokenizer):
    text = small_tokenizer.apply_chat_template(CONVERSATION, tools=TOOL_SCHEMAS, tokenize=False)
    assert text.startswith("<bos><start_of_turn>system\nBe brief.\n\nYou can call these tools:\n")
    assert json.dumps(TOOL_SCHEMAS[0]["function"]) in text
    assert '<tool_call>{"name": "run_code", "arguments": {"code": "print(2 + 3)"}}</tool_call><end_of_turn>' in text
    assert "<start_of_turn>tool\n5<end_of_turn>\n" in text
    assert "<start_of_turn>model\n<think>\nEasy.\n</think>\nIt is 5.<end_of_turn>\n" in text


def test_assistant_mask_covers_exactly_the_assistant_turns(small_tokenizer):
    out = small_tokenizer.apply_chat_template(CONVERSATION, tools=TOOL_SCHEMAS, return_dict=True,
                                              return_assistant_tokens_mask=True)
    masked = small_tokenizer.decode([t for t, m in zip(out["input_ids"], out["assistant_masks"], strict=True) if m])
    assert masked == ('<think>\n\n</think>\n<tool_call>{"name": "run_code", "arguments": {"code": "print(2 + 3)"}}'
                      "</tool_call><end_of_turn><think>\nEasy.\n</think>\nIt is 5.<end_of_turn>")


@pytest.mark.parametrize("thinking, suffix", [(True, "<start_of_turn>model\n"),
                                              (False, "<start_of_turn>model\n<think>\n\n</think>\n")])
def test_generation_prompt_switches_thinking(small_tokenizer, thinking, suffix):
    text = small_tokenizer.apply_chat_template(CONVERSATION[:2], tokenize=False, add_generation_prompt=True,
                                               enable_thinking=thinking)
    assert text.endswith("Add 2 and 3<end_of_turn>\n" + suffix)


def test_tool_calls_parse_back_from_token_ids(small_tokenizer):
    prefix = small_tokenizer.apply_chat_template(CONVERSATION[:2], tools=TOOL_SCHEMAS, tokenize=False,
                                                 add_generation_prompt=True, enable_thinking=False)
    completion = ('<tool_call>{"name": "submit", "arguments": {"code": "fn f() -> int:\\n    return 1"}}</tool_call>'
                  '<end_of_turn>')
    ids = small_tokenizer(completion, add_special_tokens=False)["input_ids"]
    parsed = small_tokenizer.parse_response(ids, prefix=prefix)
    assert parsed["tool_calls"] == [{"type": "function", "function": {
        "name": "submit", "arguments": {"code": "fn f() -> int:\n    return 1"}}}]


def test_thinking_and_content_parse_back(small_tokenizer):
    parsed = small_tokenizer.parse_response("<think>\nhmm\n</think>\nHello<end_of_turn>",
                                            prefix="<start_of_turn>model\n")
    assert parsed == {"role": "assistant", "reasoning_content": "hmm", "content": "Hello"}


def test_tool_markers_survive_skip_special_tokens(small_tokenizer):
    ids = small_tokenizer("<tool_call>{}</tool_call><end_of_turn>", add_special_tokens=False)["input_ids"]
    assert small_tokenizer.decode(ids, skip_special_tokens=True) == "<tool_call>{}</tool_call>"


def test_trl_accepts_the_template_for_tool_training(small_tokenizer):
    from trl.chat_template_utils import (is_chat_template_prefix_preserving, is_chat_template_stop_token_trained,
                                         supports_tool_calling)

    assert supports_tool_calling(small_tokenizer)
    assert is_chat_template_prefix_preserving(small_tokenizer)
    assert is_chat_template_stop_token_trained(small_tokenizer)


def test_template_rejects_unknown_roles(small_tokenizer):
    with pytest.raises(Exception, match="unknown role"):
        small_tokenizer.apply_chat_template([{"role": "robot", "content": "x"}], tokenize=False)


def test_tokenizer_round_trips_through_save(small_tokenizer, tmp_path):
    from transformers import AutoTokenizer

    small_tokenizer.save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    assert loaded.response_template == small_tokenizer.response_template
    assert loaded.chat_template == small_tokenizer.chat_template
    assert loaded.convert_tokens_to_ids(["<pad>", "<eos>", "<bos>"]) == [0, 1, 2]
    assert loaded("x")["input_ids"][0] == loaded.bos_token_id
