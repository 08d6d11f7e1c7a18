"""Tool-call parsing: the response schema, the block fallback, malformed calls."""

from __future__ import annotations

import json

import pytest

from py4.episodes.parsing import call_from_json_text, parse_tool_blocks, parse_with_tokenizer
from py4.train.chat_format import RESPONSE_TEMPLATE

PREFIX = "<bos><start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n"


class SchemaTokenizer:
    """Just enough of a tokenizer: the smoke chat format's response schema, transformers' parser."""

    response_template = RESPONSE_TEMPLATE

    def parse_response(self, text, prefix):
        from transformers.utils.chat_parsing import parse_response

        return parse_response(text, self.response_template, prefix=prefix)

    def decode(self, ids):
        raise AssertionError("text is passed")


def block(name, arguments) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def test_schema_parses_reasoning_text_and_calls():
    text = ("<think>\nlet me test\n</think>\nTesting." + block("run_code", {"code": "print(1)"}) + "\n"
            + block("submit", {"code": "fn f() -> int:\n    return 1"}) + "<end_of_turn>")
    turn = parse_with_tokenizer(SchemaTokenizer(), text, PREFIX)
    assert turn.reasoning == "let me test" and turn.content == "Testing."
    assert [(c.name, c.arguments, c.malformed) for c in turn.calls] == [
        ("run_code", {"code": "print(1)"}, False), ("submit", {"code": "fn f() -> int:\n    return 1"}, False)]


def test_one_bad_block_does_not_drop_the_good_ones():
    text = block("run_code", {"code": "print(1)"}) + '<tool_call>{"name": "submit", "arguments": {</tool_call><end_of_turn>'
    turn = parse_with_tokenizer(SchemaTokenizer(), text, PREFIX)
    assert [c.malformed for c in turn.calls] == [False, True]
    assert "not JSON" in turn.calls[1].error and turn.calls[1].raw.startswith('{"name": "submit"')


@pytest.mark.parametrize("raw, error", [
    ('{"name": "delete_all", "arguments": {"code": "x"}}', "unknown tool"),
    ('{"name": "run_code", "arguments": {}}', 'exactly one string argument "code"'),
    ('{"name": "run_code", "arguments": {"code": 3}}', 'exactly one string argument "code"'),
    ('{"name": "run_code", "arguments": {"code": "x", "stdin": ""}}', 'exactly one string argument "code"'),
    ('{"name": "run_code"}', 'exactly one string argument "code"'),
    ('["run_code"]', "JSON object"),
    ("run_code(print(1))", "not JSON"),
])
def test_malformed_calls_say_why(raw, error):
    call = call_from_json_text(raw)
    assert call.malformed and error in call.error


def test_arguments_as_a_json_string_are_accepted():
    call = call_from_json_text(json.dumps({"name": "submit", "arguments": json.dumps({"code": "x"})}))
    assert not call.malformed and call.arguments == {"code": "x"}


def test_schema_reported_calls_are_checked_too():
    turn = parse_with_tokenizer(SchemaTokenizer(), '<tool_call>{"name": "run_code"}</tool_call><end_of_turn>', PREFIX)
    assert len(turn.calls) == 1 and turn.calls[0].malformed


def test_blocks_without_tokenizer_schema_and_unclosed_last_block():
    class Plain:
        response_template = None

    turn = parse_with_tokenizer(Plain(), "ok " + '<tool_call>{"name": "run_code", "arguments": {"code": "p"}}', "")
    assert turn.content == "ok" and turn.calls[0].arguments == {"code": "p"}


def test_text_without_calls():
    turn = parse_tool_blocks("<think>\n\n</think>\nI am done.<end_of_turn>")
    assert turn.calls == [] and turn.content == "I am done." and turn.reasoning is None
