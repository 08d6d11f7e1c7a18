"""One episode's state: tool calls under limits, the outcome and the reward.

The outcome is decided here, never from a trainer's truncation flag:

- the first ``submit`` certifies the code and fixes the outcome (``certified`` or
  ``uncertified``); later calls change nothing and answer a terminal message;
- the call over ``max_tool_calls``, or tokens over ``token_budget``, end the episode as
  ``truncated`` unless it was already submitted;
- an episode that ends otherwise (the policy stops calling tools) is ``no_submission``.

Both the evaluation driver and TRL (through ``Py4Environment``) use this class.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from py4.boa.certify import Certificate, certify
from py4.boa.executor import Executor
from py4.episodes import feedback
from py4.episodes.config import EpisodeConfig
from py4.problems.schema import Problem

TOOL_NAMES = ("run_code", "submit")


class Episode:
    """The state of one episode on one problem.

    ``executor`` is the (shared) Boa executor; ``count_tokens``, when given, makes the
    episode count the tokens of each tool call and result against the budget itself (for
    TRL, where no driver reports tokens); a driver that counts tokens leaves it None and
    calls :meth:`note_tokens`.
    """

    def __init__(self, problem: Problem, config: EpisodeConfig, executor: Executor,
                 count_tokens: Callable[[str], int] | None = None):
        self.problem, self.config, self.executor = problem, config, executor
        self.count_tokens = count_tokens
        self.calls = 0
        self.malformed_calls = 0
        self.tokens_used = 0
        self.outcome: str | None = None
        self.end_reason: str | None = None  # submitted | call_limit | token_budget | no_tool_call
        self.certificate: Certificate | None = None
        self.events: list[dict[str, Any]] = []
        self.boa_seconds = 0.0

    # ------------------------------------------------------------------ state
    @property
    def ended(self) -> bool:
        return self.outcome is not None

    @property
    def reward(self) -> float:
        """The reward of the outcome so far (an episode still running counts as no submission)."""
        return self.config.rewards.of(self.outcome or "no_submission")

    def finish(self) -> str:
        """End the episode (no more tool calls will come) and return its outcome."""
        if self.outcome is None:
            self._end("no_submission", "no_tool_call")
        return self.outcome

    def truncate(self, reason: str) -> None:
        """End the episode as truncated (``reason``: call_limit or token_budget) unless it is over."""
        if self.outcome is None:
            self._end("truncated", reason)

    def note_tokens(self, n: int) -> None:
        """Count ``n`` tokens of the tool loop; going over the budget truncates the episode."""
        self.tokens_used += int(n)
        if self.tokens_used > self.config.token_budget:
            self.truncate("token_budget")

    @property
    def tokens_left(self) -> int:
        return max(0, self.config.token_budget - self.tokens_used)

    def _end(self, outcome: str, reason: str) -> None:
        self.outcome, self.end_reason = outcome, reason

    # ------------------------------------------------------------------ tools
    def call(self, name: str, arguments: dict[str, Any]) -> str:
        """Dispatch one well-formed tool call; raises ValueError for an unknown tool name."""
        if name == "run_code":
            return self.run_code(arguments["code"])
        if name == "submit":
            return self.submit(arguments["code"])
        raise ValueError(f"unknown tool {name!r}; expected one of {', '.join(TOOL_NAMES)}")

    def run_code(self, code: str) -> str:
        refusal = self._admit("run_code", code)
        if refusal is not None:
            return refusal
        started = time.perf_counter()
        result = self.executor.run(code, timeout_s=self.config.run_timeout_s,
                                   diagnostics=self.config.diagnostics, filename="main.p4")
        boa_s = time.perf_counter() - started
        answer = feedback.render_run(result, self.config.diagnostics)
        self._record("run_code", code, answer, boa_s, status=result.status)
        return answer

    def submit(self, code: str) -> str:
        refusal = self._admit("submit", code)
        if refusal is not None:
            return refusal
        started = time.perf_counter()
        cert = certify(self.problem, code, executor=self.executor,
                       per_test_timeout_s=self.config.run_timeout_s, filename="solution.p4")
        boa_s = time.perf_counter() - started
        self.certificate = cert
        self._end("certified" if cert.certified else "uncertified", "submitted")
        answer = feedback.render_submission(cert, self.config.diagnostics)
        self._record("submit", code, answer, boa_s, status="certified" if cert.certified else "uncertified")
        return answer

    def record_malformed(self, raw: str, error: str) -> str | None:
        """Count a malformed call (kept in the events); returns the reply to show, if any.

        In ``reply`` mode the call counts against the call limit like any other and the
        policy is told what was wrong; in ``ignore`` mode it only is counted and kept.
        """
        self.malformed_calls += 1
        if self.config.malformed_calls == "ignore":
            self.events.append({"tool": None, "malformed": True, "raw": raw, "error": error, "answer": None})
            return None
        refusal = self._admit(None, raw)
        answer = refusal if refusal is not None else f"error: malformed tool call ({error})"
        self.events.append({"tool": None, "malformed": True, "raw": raw, "error": error, "answer": answer})
        self._count_tokens(raw, answer)
        return answer

    def _admit(self, name: str | None, code: str) -> str | None:
        """Count a call against the limit; the terminal message when it may not run."""
        if self.ended:
            answer = feedback.EPISODE_OVER
            if name is not None:
                self.events.append({"tool": name, "code": code, "answer": answer, "after_end": True})
            return answer
        self.calls += 1
        if self.calls > self.config.max_tool_calls:
            self.truncate("call_limit")
            answer = f"Tool call limit ({self.config.max_tool_calls}) reached. The episode is over."
            if name is not None:
                self.events.append({"tool": name, "code": code, "answer": answer, "over_limit": True})
            return answer
        return None

    def _record(self, name: str, code: str, answer: str, boa_s: float, status: str) -> None:
        self.boa_seconds += boa_s
        self.events.append({"tool": name, "code": code, "answer": answer, "status": status,
                            "boa_s": round(boa_s, 6)})
        self._count_tokens(code, answer)

    def _count_tokens(self, call_text: str, answer: str) -> None:
        if self.count_tokens is not None:
            self.note_tokens(self.count_tokens(call_text) + self.count_tokens(answer))

    def summary(self) -> dict[str, Any]:
        """The episode's outcome, counters and certificate as JSON."""
        return {
            "problem_id": self.problem.id, "outcome": self.outcome, "reward": self.reward,
            "end_reason": self.end_reason, "tool_calls": self.calls, "malformed_calls": self.malformed_calls,
            "tokens_used": self.tokens_used, "boa_s": round(self.boa_seconds, 6),
            "certificate": self.certificate.to_json() if self.certificate else None,
        }
