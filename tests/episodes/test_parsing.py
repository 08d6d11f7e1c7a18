"""Tool-call parsing: the response schema, the block fallback, malformed calls."""

from __future__ import annotations

import json

import pytest

from py4.episodes.parsing import call_from_json_text, parse_tool_blocks, parse_with_tokenizer
from py4.chat.smoke_format import RESPONSE_TEMPLATE

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
    text = (block("run_code", {"code": "print(1)"})
            + '<tool_call>{"name": "submit", "arguments": {</tool_call><end_of_turn>')
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


# --- Each family's format, read from text the real templates render ---------------------------------------

FAMILY_CODE = [
    'fn main() -> None:\n    d = {"a": 1, \'b\': [1, 2]}\n    print(f"{d}, {{}}")\n',
    "x = [1, 2]\nprint(x[1..2])  # closed slices, P4-02\n\n\n",
    "42",  # a string that is also JSON: stays a string
    '  "quoted" , } ] \\n  ',
]


@pytest.fixture(scope="module")
def family_tokenizers():
    from py4.rehearsal.standins import build_tokenizer

    return {"gemma4": build_tokenizer("gemma4"), "glm4moe": build_tokenizer("glm45")}


def rendered_turn(tokenizer, message, **kwargs) -> tuple[str, str]:
    """(prompt, completion): the model's turn as its own chat template writes it."""
    from py4.episodes.environment import TOOL_SCHEMAS

    prompt_messages = [{"role": "user", "content": "Solve the task."}]
    prompt = tokenizer.apply_chat_template(prompt_messages, tools=TOOL_SCHEMAS, add_generation_prompt=True,
                                           tokenize=False, **kwargs)
    full = tokenizer.apply_chat_template(prompt_messages + [message], tools=TOOL_SCHEMAS, tokenize=False, **kwargs)
    assert full.startswith(prompt)
    return prompt, full[len(prompt):]


def gold_call(name, code):
    return {"type": "function", "function": {"name": name, "arguments": {"code": code}}}


@pytest.mark.parametrize("family", ["gemma4", "glm4moe"])
@pytest.mark.parametrize("code", FAMILY_CODE)
def test_family_calls_round_trip_through_the_real_template(family_tokenizers, family, code):
    from py4.episodes.parsing import parse_assistant_text

    tokenizer = family_tokenizers[family]
    message = {"role": "assistant", "content": "", "reasoning_content": "Test, then submit.",
               "tool_calls": [gold_call("run_code", code), gold_call("submit", code + "\n# final")]}
    prompt, completion = rendered_turn(tokenizer, message)
    for turn in (parse_assistant_text(completion, family), parse_with_tokenizer(tokenizer, completion, prompt)):
        assert [(c.name, c.arguments, c.error) for c in turn.calls] == [
            ("run_code", {"code": code}, None), ("submit", {"code": code + "\n# final"}, None)]
        assert turn.reasoning == "Test, then submit." and turn.content == ""


@pytest.mark.parametrize("family", ["gemma4", "glm4moe"])
def test_family_text_turn_has_content_and_no_calls(family_tokenizers, family):
    from py4.episodes.parsing import parse_assistant_text

    prompt, completion = rendered_turn(family_tokenizers[family], {"role": "assistant", "content": "All done."},
                                       enable_thinking=False)
    turn = parse_assistant_text(completion, family)
    assert turn.calls == [] and turn.content == "All done." and turn.reasoning is None


def test_gemma4_nested_values_read_back(family_tokenizers):
    """Numbers, booleans, null, nested mappings and lists as Gemma-4's format_argument writes them."""
    from py4.episodes.parsing import read_gemma4_arguments

    arguments = {"n": 3, "x": -1.5, "ok": True, "no": False, "none": None, "s": 'a,b}:"]',
                 "nested": {"k": [1, {"deep": "v"}, []], "e": {}}}
    _, completion = rendered_turn(family_tokenizers["gemma4"], {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "lookup", "arguments": arguments}}]})
    body = completion[len("<|tool_call>call:lookup"):completion.index("<tool_call|>")]
    assert read_gemma4_arguments(body) == arguments


def test_glm_values_are_json_unless_the_parameter_is_a_string(family_tokenizers):
    from py4.episodes.parsing import read_glm4moe_call

    arguments = {"n": 3, "items": [1.5, None, True], "cfg": {"k": "v"}, "label": "plain text"}
    _, completion = rendered_turn(family_tokenizers["glm4moe"], {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "lookup", "arguments": arguments}}]})
    body = completion[completion.index("<tool_call>") + len("<tool_call>"):completion.index("</tool_call>")]
    assert read_glm4moe_call(body, {}) == ("lookup", arguments)
    assert read_glm4moe_call(body, {"lookup": frozenset({"n"})})[1]["n"] == "3"


@pytest.mark.parametrize("family, text, error", [
    ("gemma4", '<|tool_call>call:run_code{code:<|"|>print(1)}<tool_call|>', "is not closed"),
    ("gemma4", "<|tool_call>call:run_code{code:1}<tool_call|>", 'exactly one string argument "code"'),
    ("gemma4", '<|tool_call>call:rm{code:<|"|>x<|"|>}<tool_call|>', "unknown tool"),
    ("glm4moe", "<tool_call>run_code\n<arg_key>code</arg_key>\nprint(1)</tool_call>", "outside <arg_key>"),
    ("glm4moe", "<tool_call>submit\n<arg_key>src</arg_key>\n<arg_value>x</arg_value>\n</tool_call>",
     'exactly one string argument "code"'),
])
def test_family_malformed_calls_say_why(family, text, error):
    from py4.episodes.parsing import parse_assistant_text

    good = {"gemma4": '<|tool_call>call:run_code{code:<|"|>ok<|"|>}<tool_call|>',
            "glm4moe": "<tool_call>run_code\n<arg_key>code</arg_key>\n<arg_value>ok</arg_value>\n</tool_call>"}[family]
    turn = parse_assistant_text(good + text, family)
    assert [c.malformed for c in turn.calls] == [False, True]
    assert error in turn.calls[1].error and turn.valid_calls[0].arguments == {"code": "ok"}


def test_unknown_family_name_lists_the_families():
    from py4.episodes.parsing import parse_assistant_text

    with pytest.raises(ValueError, match="smoke, gemma4, glm4moe"):
        parse_assistant_text("x", "llama")


def test_gemma4_reasoning_after_a_prefilled_channel_opener(family_tokenizers):
    """With thinking on, the prompt after a tool response ends in '<|channel>thought\\n': the
    completion starts inside the channel."""
    from py4.episodes.parsing import parse_assistant_text

    tokenizer = family_tokenizers["gemma4"]
    messages = [{"role": "user", "content": "Task"},
                {"role": "assistant", "content": "", "tool_calls": [gold_call("run_code", "print(1)")]},
                {"role": "tool", "name": "run_code", "content": "1"}]
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False, enable_thinking=True)
    assert prompt.endswith("<|channel>thought\n")
    turn = parse_assistant_text("It printed 1.\n<channel|>"
                                + '<|tool_call>call:submit{code:<|"|>print(1)<|"|>}<tool_call|>',
                                "gemma4")
    assert turn.reasoning == "It printed 1." and turn.valid_calls[0].arguments == {"code": "print(1)"}
