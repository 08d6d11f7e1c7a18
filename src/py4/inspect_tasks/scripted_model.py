"""``py4/<policy>``: ``py4 eval``'s scripted policies as an Inspect model provider (calibration).

``inspect eval py4/python4_heldout --model py4/gold`` submits every problem's gold solution
as a ``submit`` tool call (certified 100% on a valid bank); ``py4/python3``,
``py4/migrated``, ``py4/core-only`` and ``py4/silent`` answer as ``py4 eval --policy``
does (``py4.evaluate.scripted``). The problem is the one the task's dataset named on the
user message (so two problems with the same prompt are told apart); ``-M bank_dir=…``
reads a rebuilt bank. Token usage is reported as ``py4 eval`` counts a scripted turn (4
characters a token), so budgets run out at the same point.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice, ChatMessage, ChatMessageAssistant, GenerateConfig, ModelAPI, ModelOutput, ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from py4.evaluate.scripted import SILENT_TEXT, ScriptedPolicy
from py4.inspect_tasks.dataset import bank_index, problem_id_of


@modelapi(name="py4")
class ScriptedModelAPI(ModelAPI):
    """``model_name``: a scripted policy's name (gold, python3, migrated, core-only, silent)."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, bank_version: str = "v1", bank_dir: str | None = None,
                 **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        if model_args:
            raise ValueError(f"py4/{model_name}: unknown model args {sorted(model_args)}; "
                             "expected bank_version, bank_dir")
        self.policy = ScriptedPolicy(model_name)  # ValueError naming the policies for another name
        self.bank_version, self.bank_dir = bank_version, bank_dir

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        del tools, tool_choice, config
        first_turn = not any(m.role == "assistant" for m in input)
        code = self.policy.solution(self._problem(input)) if first_turn else None
        if code is None:
            text = SILENT_TEXT if first_turn else "Done."
            message = ChatMessageAssistant(content=text, model=self.model_name, source="generate")
            tokens, stop = self.policy.count_tokens(text), "stop"
        else:
            raw = json.dumps({"name": "submit", "arguments": {"code": code}}, ensure_ascii=False)
            turn = len([m for m in input if m.role == "assistant"]) + 1
            message = ChatMessageAssistant(content="", model=self.model_name, source="generate", tool_calls=[
                ToolCall(id=f"call_{turn}_0", function="submit", arguments={"code": code})])
            tokens, stop = self.policy.count_tokens(f"<tool_call>{raw}</tool_call>"), "tool_calls"
        return ModelOutput(model=self.model_name, choices=[ChatCompletionChoice(message=message, stop_reason=stop)],
                           usage=ModelUsage(input_tokens=0, output_tokens=tokens, total_tokens=tokens))

    def _problem(self, input: list[ChatMessage]):
        index = bank_index(self.bank_version, self.bank_dir)
        problem_id = problem_id_of(input)
        if problem_id is not None and problem_id in index:
            return index[problem_id]
        prompt = next((m.text for m in input if m.role == "user"), "")
        matches = [p for p in index.values() if p.prompt == prompt]
        if len(matches) != 1:
            raise ValueError(f"py4/{self.model_name} answers the py4 tasks' problems only: the user message names "
                             f"no problem of bank {self.bank_dir or self.bank_version} and its prompt matches "
                             f"{len(matches)} problems")
        return matches[0]
