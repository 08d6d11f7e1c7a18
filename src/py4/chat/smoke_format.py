"""The smoke tokenizer's chat format: special tokens, chat template, response template.

A Gemma-style turn format (``<start_of_turn>ROLE\\n … <end_of_turn>\\n``) extended with
what the pipeline needs and stock Gemma 3 lacks:

- a ``system`` turn that also carries the tool descriptions (``tools=``);
- ``tool`` turns for tool results;
- assistant tool calls as ``<tool_call>{"name": …, "arguments": {…}}</tool_call>``;
- a ``<think>…</think>`` block opening every assistant turn (empty when the message has
  no ``reasoning_content``); ``enable_thinking=False`` (default True) pre-fills the empty
  block in the generation prompt, so the model answers without thinking;
- ``{% generation %}`` markers around each assistant turn, so that
  ``return_assistant_tokens_mask`` (TRL's ``assistant_only_loss``) masks exactly the
  assistant's tokens, its ``<end_of_turn>`` included;
- a response template (transformers >= 5.13 ``tokenizer.response_template``) so that
  ``tokenizer.parse_response`` and TRL's tool loop can read tool calls back.

The template is prefix-preserving (earlier turns render the same whatever follows),
which TRL's multi-turn tool loop requires. ``<tool_call>``/``</tool_call>`` and
``<think>``/``</think>`` are added as NON-special tokens: decoding with
``skip_special_tokens=True`` must keep them or no tool call is ever parsed.
"""

from __future__ import annotations

BOS, EOS, PAD, UNK = "<bos>", "<eos>", "<pad>", "<unk>"
START_OF_TURN, END_OF_TURN = "<start_of_turn>", "<end_of_turn>"
# Order fixes the ids: pad 0, eos 1, bos 2, unk 3 as in Gemma; turn markers next.
SPECIAL_TOKENS = [PAD, EOS, BOS, UNK, START_OF_TURN, END_OF_TURN]
TOOL_CALL_OPEN, TOOL_CALL_CLOSE = "<tool_call>", "</tool_call>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
# Added as plain (non-special) tokens: they must survive skip_special_tokens decoding.
FORMAT_TOKENS = [TOOL_CALL_OPEN, TOOL_CALL_CLOSE, THINK_OPEN, THINK_CLOSE]

ASSISTANT_HEADER = f"{START_OF_TURN}model\n"

# Jinja notes: transformers renders with trim_blocks and lstrip_blocks, so literal
# newlines are written as {{ '\n' }}; every block tag strips its own whitespace.
CHAT_TEMPLATE = (
    "{{- bos_token -}}"
    "{%- set thinking = enable_thinking if enable_thinking is defined else true -%}"
    "{%- set ns = namespace(start=0) -%}"
    "{%- if messages and messages[0]['role'] == 'system' -%}"
    "{%- set ns.start = 1 -%}"
    "{%- endif -%}"
    "{%- if ns.start == 1 or tools -%}"
    "{{- '<start_of_turn>system' + '\n' -}}"
    "{%- if ns.start == 1 -%}"
    "{{- messages[0]['content'] -}}"
    "{%- endif -%}"
    "{%- if tools -%}"
    "{%- if ns.start == 1 -%}{{- '\n\n' -}}{%- endif -%}"
    "{{- 'You can call these tools:' + '\n' -}}"
    "{%- for tool in tools -%}"
    "{%- set fn = tool['function'] if tool['function'] is defined else tool -%}"
    "{{- fn | tojson -}}{{- '\n' -}}"
    "{%- endfor -%}"
    "{{- 'To call a tool, write <tool_call>{\"name\": NAME, \"arguments\": {...}}</tool_call>.' -}}"
    "{%- endif -%}"
    "{{- '<end_of_turn>' + '\n' -}}"
    "{%- endif -%}"
    "{%- for message in messages[ns.start:] -%}"
    "{%- if message['role'] == 'user' -%}"
    "{{- '<start_of_turn>user' + '\n' + message['content'] + '<end_of_turn>' + '\n' -}}"
    "{%- elif message['role'] == 'assistant' -%}"
    "{{- '<start_of_turn>model' + '\n' -}}"
    "{%- generation -%}"
    "{%- if message['reasoning_content'] is defined and message['reasoning_content'] -%}"
    "{{- '<think>' + '\n' + message['reasoning_content'] + '\n' + '</think>' + '\n' -}}"
    "{%- else -%}"
    "{{- '<think>' + '\n\n' + '</think>' + '\n' -}}"
    "{%- endif -%}"
    "{%- if message['content'] -%}{{- message['content'] -}}{%- endif -%}"
    "{%- if message['tool_calls'] is defined and message['tool_calls'] -%}"
    "{%- for call in message['tool_calls'] -%}"
    "{%- set fn = call['function'] if call['function'] is defined else call -%}"
    "{%- if message['content'] or not loop.first -%}{{- '\n' -}}{%- endif -%}"
    "{{- '<tool_call>{\"name\": ' + (fn['name'] | tojson) + ', \"arguments\": ' -}}"
    "{%- if fn['arguments'] is string -%}{{- fn['arguments'] -}}"
    "{%- else -%}{{- fn['arguments'] | tojson -}}{%- endif -%}"
    "{{- '}</tool_call>' -}}"
    "{%- endfor -%}"
    "{%- endif -%}"
    "{{- '<end_of_turn>' -}}"
    "{%- endgeneration -%}"
    "{{- '\n' -}}"
    "{%- elif message['role'] == 'tool' -%}"
    "{{- '<start_of_turn>tool' + '\n' + message['content'] + '<end_of_turn>' + '\n' -}}"
    "{%- elif message['role'] == 'system' -%}"
    "{{- raise_exception('a system message is only allowed first') -}}"
    "{%- else -%}"
    "{{- raise_exception('unknown role: ' + message['role']) -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}"
    "{{- '<start_of_turn>model' + '\n' -}}"
    "{%- if not thinking -%}{{- '<think>' + '\n\n' + '</think>' + '\n' -}}{%- endif -%}"
    "{%- endif -%}"
)

# transformers >= 5.13 response template (the format TRL's own templates use): the
# prompt prefix is cut after the last assistant header; an optional think block, free
# text, then any number of JSON tool calls; the turn ends at <end_of_turn> or <eos>.
RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": ASSISTANT_HEADER,
    "fields": {
        "reasoning_content": {
            "open": THINK_OPEN,
            "close_pattern": r"</think>\s*",
            "content": "text",
        },
        "tool_calls": {
            "open": TOOL_CALL_OPEN,
            "close_pattern": r"</tool_call>\s*",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {
            "close_pattern": r"(?:<end_of_turn>|<eos>)\s*",
            "content": "text",
        },
    },
}


def tool_call(name: str, **arguments: object) -> dict:
    """One assistant tool call in the OpenAI/transformers message format."""
    return {"type": "function", "function": {"name": name, "arguments": dict(arguments)}}
