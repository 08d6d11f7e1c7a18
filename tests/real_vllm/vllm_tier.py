"""Constants and helpers of the `vllm` tier (tests/real_vllm), imported by its conftest and its tests.

A module of its own (not conftest.py): several test folders have a conftest.py, and ``from
conftest import`` would find whichever was imported first in a run that collects them together.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VLLM_VENV = ROOT / ".venv-vllm"
VLLM = VLLM_VENV / "bin" / "vllm"
VLLM_PYTHON = VLLM_VENV / "bin" / "python"
PY4 = Path(sys.executable).parent / "py4"

MODEL_KEY = "gemma4_12b"  # the campaign's model key: its family (gemma4) picks the parsers
NODE = "gemma4_12b/eft"
SPLIT = "test_heldin"
# The eval's seeded one-problem sample (--limit 1) whose gold solution is shortest among seeds 0-199:
# the caller's reply holds it twice. The test checks that the sample is the problem trained for.
LIMIT_SEED = 78


def py4(*args: str, timeout: float = 1800) -> subprocess.CompletedProcess:
    """``py4 ARGS`` of this interpreter's environment (.venv), as a user runs it."""
    return subprocess.run([str(PY4), *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def caller_prompts(tokenizer, problem, parts: bool = True) -> list[list[int]]:
    """The first prompt's token ids as a server may render it: with string contents (transformers,
    TRL) and, with ``parts``, with OpenAI content parts (vLLM's ``--chat-template-content-format``
    auto picks these for Gemma-4's template; its system turn then gains a space)."""
    from py4.episodes import TOOL_SCHEMAS, EpisodeConfig
    from py4.episodes.environment import initial_messages

    messages = initial_messages(problem, EpisodeConfig(enable_thinking=False))
    content_parts = [{**m, "content": [{"type": "text", "text": m["content"]}]} for m in messages]
    kwargs = dict(tools=TOOL_SCHEMAS, enable_thinking=False, add_generation_prompt=True, tokenize=False)
    texts = {tokenizer.apply_chat_template(m, **kwargs) for m in ((messages, content_parts) if parts else (messages,))}
    return [tokenizer(t, add_special_tokens=False)["input_ids"] for t in sorted(texts)]


def caller_reply(problem) -> str:
    """One assistant turn: ``run_code(gold)`` then ``submit(gold)`` in Gemma-4's call format, then its end of turn."""
    calls = "".join(f'<|tool_call>call:{name}{{code:<|"|>{problem.gold}<|"|>}}<tool_call|>'
                    for name in ("run_code", "submit"))
    return calls + "<turn|>"
