"""Training templates per chat family: same text as the model's own template, masks on the model's words.

The tokenizers are the rehearsal stand-ins' (py4.rehearsal.standins): each family's special
tokens and its real inference template as TRL ships it (Gemma-4: gemma4_v5.jinja, GLM-4.5:
glm4moe.jinja). Rendering goes through ``tokenizer.apply_chat_template`` as in training.
"""

from __future__ import annotations

import pytest

from py4.chat.smoke_format import CHAT_TEMPLATE, tool_call
from py4.chat.templates import (ChatTemplateError, _trl_template, family_names, get_family, identify_family,
                                resolve_training_template, restore_tool_arguments, template_text)

TOOLS = [
    {"type": "function", "function": {"name": "run_code", "description": "Run Python-4 code.", "parameters": {
        "type": "object", "properties": {"code": {"type": "string", "description": "A program."}},
        "required": ["code"]}}},
    {"type": "function", "function": {"name": "submit", "description": "Submit the solution.", "parameters": {
        "type": "object", "properties": {"code": {"type": "string", "description": "The solution."}},
        "required": ["code"]}}},
]
CODE = 'fn main() -> None:\n    d = {"a": 1, \'b\': [1, 2]}\n    print(f"{d}")\n'


def call(name: str, call_id: str | None = None, **arguments) -> dict:
    out = tool_call(name, **arguments)
    if call_id:
        out["id"] = call_id
    return out


CONVERSATIONS = {
    "plain": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}],
    "system_multi_turn": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "A?"},
        {"role": "assistant", "content": "B."}, {"role": "user", "content": "C?"},
        {"role": "assistant", "content": "D."}],
    "tool_episode": [
        {"role": "system", "content": "Solve it."}, {"role": "user", "content": "Task"},
        {"role": "assistant", "content": "", "reasoning_content": "Try it first.",
         "tool_calls": [call("run_code", "c1", code=CODE)]},
        {"role": "tool", "tool_call_id": "c1", "name": "run_code", "content": "{'a': 1}\n"},
        {"role": "assistant", "content": "", "tool_calls": [call("submit", "c2", code=CODE)]},
        {"role": "tool", "tool_call_id": "c2", "name": "submit", "content": "certified"},
        {"role": "assistant", "content": "Done."}],
    "thinking_last": [{"role": "user", "content": "Q"},
                      {"role": "assistant", "content": "A", "reasoning_content": "think hard"}],
    "calls_last": [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "", "tool_calls": [
        call("run_code", code="print(1)"), call("lookup", x=1, y=[1.5, None, True], z={"k": "v"})]}],
    "parallel_calls_then_user": [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": "",
         "tool_calls": [call("run_code", "a", code="1"), call("run_code", "b", code="2")]},
        {"role": "tool", "tool_call_id": "a", "name": "run_code", "content": "1"},
        {"role": "tool", "tool_call_id": "b", "name": "run_code", "content": "2"},
        {"role": "user", "content": "more"}],
    "user_last": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"},
                  {"role": "user", "content": "Again"}],
}
RENDER_OPTIONS = [(tools, prompt, kwargs) for tools in (None, TOOLS) for prompt in (False, True)
                  for kwargs in ({}, {"enable_thinking": True}, {"enable_thinking": False})]


@pytest.fixture(scope="module")
def standin_tokenizers():
    from py4.rehearsal.standins import build_tokenizer

    return {"gemma4": build_tokenizer("gemma4"), "glm4moe": build_tokenizer("glm45")}


def render(tokenizer, messages, template, tools=None, prompt=False, **kwargs) -> str:
    return tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=prompt, tokenize=False,
                                         chat_template=template, **kwargs)


def glm_stop_tag(messages) -> str:
    """The tag GLM's model writes to end its final turn (the training template renders it)."""
    return "<|observation|>" if messages[-1].get("tool_calls") else "<|user|>"


@pytest.mark.parametrize("name", list(CONVERSATIONS))
def test_gemma4_training_template_renders_the_inference_text(standin_tokenizers, name):
    tokenizer = standin_tokenizers["gemma4"]
    own, training = tokenizer.chat_template, template_text("gemma4")
    for tools, prompt, kwargs in RENDER_OPTIONS:
        expected = render(tokenizer, CONVERSATIONS[name], own, tools, prompt, **kwargs)
        rendered = render(tokenizer, CONVERSATIONS[name], training, tools, prompt, **kwargs)
        assert rendered == expected, (tools, prompt, kwargs)


@pytest.mark.parametrize("name", list(CONVERSATIONS))
def test_glm_training_template_renders_the_inference_text(standin_tokenizers, name):
    """Identical, except that a final assistant turn also gets the stop tag the model writes
    (the inference template leaves it to the next message)."""
    tokenizer = standin_tokenizers["glm4moe"]
    messages = CONVERSATIONS[name]
    own, training = tokenizer.chat_template, template_text("glm4moe")
    for tools, prompt, kwargs in RENDER_OPTIONS:
        expected = render(tokenizer, messages, own, tools, False, **kwargs)
        if messages[-1]["role"] == "assistant":
            expected += glm_stop_tag(messages)
        if prompt:
            expected += (render(tokenizer, messages, own, tools, True, **kwargs)
                         [len(render(tokenizer, messages, own, tools, False, **kwargs)):])
        assert render(tokenizer, messages, training, tools, prompt, **kwargs) == expected, (tools, prompt, kwargs)


def masked_runs(tokenizer, messages, template, **kwargs) -> list[str]:
    out = tokenizer.apply_chat_template(messages, tools=TOOLS, tokenize=True, return_dict=True,
                                        return_assistant_tokens_mask=True, chat_template=template, **kwargs)
    runs, current = [], []
    for token, masked in zip(out["input_ids"], out["assistant_masks"], strict=True):
        if masked:
            current.append(token)
        elif current:
            runs.append(tokenizer.decode(current))
            current = []
    if current:
        runs.append(tokenizer.decode(current))
    return runs


def test_gemma4_mask_is_what_the_model_writes(standin_tokenizers):
    """Thinking, calls and the <|tool_response> the model stops on; its content and <turn|>.
    Not the <|turn>model header, not the tool responses, not the newline after <turn|>."""
    tokenizer = standin_tokenizers["gemma4"]
    runs = masked_runs(tokenizer, CONVERSATIONS["tool_episode"], template_text("gemma4"))
    quoted = '<|"|>' + CODE + '<|"|>'
    assert runs == [
        "<|channel>thought\nTry it first.\n<channel|><|tool_call>call:run_code{code:" + quoted
        + "}<tool_call|><|tool_response>",
        "<|tool_call>call:submit{code:" + quoted + "}<tool_call|><|tool_response>",
        "Done.<turn|>",
    ]
    runs = masked_runs(tokenizer, CONVERSATIONS["system_multi_turn"], template_text("gemma4"))
    assert runs == ["B.<turn|>", "D.<turn|>"]


def test_gemma4_mask_marks_only_the_first_response_opener_of_parallel_calls(standin_tokenizers):
    tokenizer = standin_tokenizers["gemma4"]
    runs = masked_runs(tokenizer, CONVERSATIONS["parallel_calls_then_user"], template_text("gemma4"))
    assert runs == ['<|tool_call>call:run_code{code:<|"|>1<|"|>}<tool_call|><|tool_call>call:run_code{code:<|"|>2<|"|>}'
                    '<tool_call|><|tool_response>', "<turn|>"]  # after the answers, the model closes its turn


def test_glm_mask_is_what_the_model_writes(standin_tokenizers):
    tokenizer = standin_tokenizers["glm4moe"]
    runs = masked_runs(tokenizer, CONVERSATIONS["tool_episode"], template_text("glm4moe"))
    def block(name):
        return (f"\n<tool_call>{name}\n<arg_key>code</arg_key>\n<arg_value>{CODE}</arg_value>\n</tool_call>"
                "<|observation|>")

    assert runs == ["\n<think>Try it first.</think>" + block("run_code"),
                    "\n<think></think>" + block("submit"),
                    "\n<think></think>\nDone.<|user|>"]


def test_families_are_recognised_by_their_templates(standin_tokenizers):
    assert identify_family(standin_tokenizers["gemma4"])[0].name == "gemma4"
    assert identify_family(standin_tokenizers["glm4moe"])[0].name == "glm4moe"
    assert identify_family(CHAT_TEMPLATE) == (get_family("smoke"), True)
    assert get_family("glm45") is get_family("glm4moe")
    for name in ("gemma4.jinja", "gemma4_v2.jinja", "gemma4_v3.jinja", "gemma4_v4.jinja"):  # parser family only
        assert identify_family(_trl_template(name)) == (get_family("gemma4"), True)

        assert identify_family(_trl_template(name)) == (get_family("gemma4"), True)


def test_resolution_says_which_template_and_refuses_unknown_ones(standin_tokenizers):
    chosen = resolve_training_template(standin_tokenizers["gemma4"])
    assert chosen.family == "gemma4" and chosen.source == "py4:gemma4_v5_training.jinja"
    assert chosen.inference_template_match and chosen.text == template_text("gemma4")

    class Unknown:
        chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"

    with pytest.raises(ChatTemplateError) as error:
        resolve_training_template(Unknown())
    assert all(name in str(error.value) for name in family_names())
    vouched = resolve_training_template(Unknown(), family="glm45")
    assert vouched.family == "glm4moe" and not vouched.inference_template_match

    class OtherGemmaRevision:  # signature matches, text is no known revision
        chat_template = _trl_template("gemma4_v5.jinja").replace("Fixed tool-calling loops", "edited")

    with pytest.raises(ChatTemplateError, match="chat_template_family: gemma4"):
        resolve_training_template(OtherGemmaRevision())

    class FirstGemmaRevision:  # a known revision, but not the one the training template renders like
        chat_template = _trl_template("gemma4.jinja")

    with pytest.raises(ChatTemplateError, match="chat_template_family: gemma4"):
        resolve_training_template(FirstGemmaRevision())
    assert not resolve_training_template(FirstGemmaRevision(), family="gemma4").inference_template_match
    with pytest.raises(ChatTemplateError, match="families: smoke, gemma4, glm4moe"):
        get_family("llama")


def test_string_arguments_are_restored_before_rendering(standin_tokenizers):
    """Defect 4's rows (arguments as JSON text) fail both families' templates; restored they render."""
    messages = [{"role": "user", "content": "Task"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"type": "function", "function": {"name": "submit", "arguments": '{"code": "print(1)"}'}}]}]
    with pytest.raises(Exception, match="arguments must be a"):
        render(standin_tokenizers["gemma4"], messages, template_text("gemma4"))
    with pytest.raises(Exception, match="has no attribute 'items'"):
        render(standin_tokenizers["glm4moe"], messages, template_text("glm4moe"))
    restored = restore_tool_arguments(messages)
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"code": "print(1)"}'  # input untouched
    rendered = render(standin_tokenizers["gemma4"], restored, template_text("gemma4"))
    assert 'call:submit{code:<|"|>print(1)<|"|>}' in rendered
    assert ("<tool_call>submit\n<arg_key>code</arg_key>\n<arg_value>print(1)</arg_value>"
            in render(standin_tokenizers["glm4moe"], restored, template_text("glm4moe")))
    with pytest.raises(ChatTemplateError, match="must be a JSON object"):
        restore_tool_arguments([{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "[1]"}}]}])


# --- SFT / EFT through TRL with a family tokenizer ----------------------------------------------------------

def tiny_text_model(tokenizer):
    """A tiny causal LM over the stand-in's vocabulary (the template, not the architecture, is under test)."""
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(0)
    config = Gemma3TextConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                              num_key_value_heads=1, head_dim=16, intermediate_size=64, max_position_embeddings=4096,
                              pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                              bos_token_id=tokenizer.bos_token_id, attn_implementation="sdpa")
    return Gemma3ForCausalLM(config)


def gold_rows():
    from py4.problems.schema import Problem, TestCase
    from py4.train.eft_data import gold_row

    problems = [Problem(id=f"t/{i}", family="f", title="t", prompt=f"Write fn f{i}(x: int) -> int returning x + {i}.",
                        entry_point=f"f{i}", tests=[TestCase(args=[1], expected=1 + i)], rules=["P4-12"],
                        split="eft_pool", gold=f'fn f{i}(x: int) -> int:\n    s = {{"k": "{i}"}}\n    return x + {i}')
                for i in range(2)]
    return [gold_row(p, p.gold) for p in problems], [p.gold for p in problems]


GOLD_CALLS = {
    "gemma4": lambda gold: '<|tool_call>call:submit{code:<|"|>' + gold + '<|"|>}<tool_call|><|tool_response>',
    "glm4moe": lambda gold: ("\n<think></think>\n<tool_call>submit\n<arg_key>code</arg_key>\n<arg_value>" + gold
                             + "</arg_value>\n</tool_call><|observation|>"),
}


@pytest.mark.smoke
@pytest.mark.parametrize("family", ["gemma4", "glm4moe"])
def test_sft_trains_family_tokenizer_on_gold_calls(standin_tokenizers, tmp_path, family):
    """TRL refused Gemma-4 ("not training-compatible") and the stored string arguments broke both
    templates; now the labels are the gold call as the family writes it, and training moves every weight."""
    import torch

    from py4.train import common, loading, sft

    tokenizer = standin_tokenizers[family]
    own_template = tokenizer.chat_template
    rows, golds = gold_rows()
    model = tiny_text_model(tokenizer)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    opt = common.Optimisation(learning_rate=1e-3, lr_scheduler="constant", min_lr_rate=None, warmup=0,
                              optim="adamw_torch", micro_batch=2, gradient_checkpointing=False)
    run = common.RunSettings(output_dir=str(tmp_path / "run"), report_to=[], progress_bar=False, resume="never")
    trainer = sft.build_chat_trainer(model, tokenizer, sft.chat_dataset(rows), opt, run,
                                     loading.device_settings(False), 2, 2048, False)
    assert tokenizer.chat_template == own_template  # the saved tokenizer keeps the model's template
    assert trainer.training_template["family"] == family and trainer.training_template["inference_template_match"]
    for example, gold in zip(trainer.train_dataset, golds, strict=True):
        labelled = [label for label in example["labels"] if label != -100]
        assert tokenizer.decode(labelled) == GOLD_CALLS[family](gold)
    trainer.train()
    unchanged = [n for n, p in model.named_parameters() if torch.equal(p.detach(), before[n])]
    assert unchanged == []
