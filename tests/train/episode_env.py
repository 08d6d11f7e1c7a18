"""A minimal run_code/submit environment for the GRPO smoke test (a test fixture).

The real environment is py4.episodes' (issue 6); this one follows the same TRL
contract — reset(**row), public tool methods with typed, documented signatures,
get_reward() — and the reward table (+1 certified, 0 uncertified, -0.10 no submission),
so that the GRPO stage is exercised end to end before that package lands. It records
every call on the class so the test can see that tools were called.
"""

from __future__ import annotations

from py4.lang import compile_py4

CALLS: list[tuple[str, str]] = []
REWARDS: list[float] = []


class SmokeEpisodeEnv:
    def __init__(self, max_tool_calls: int = 16):
        self.max_tool_calls = max_tool_calls
        self.problem_id = None
        self.outcome = "no_submission"
        self.calls = 0

    def reset(self, problem_id: str, **row) -> None:
        self.problem_id, self.outcome, self.calls = problem_id, "no_submission", 0

    def run_code(self, code: str) -> str:
        """Run Python-4 code and return what it prints.

        Args:
            code: A Python-4 program.
        """
        self.calls += 1
        CALLS.append(("run_code", self.problem_id))
        result = compile_py4(code)
        return "ok" if result.ok else f"SyntaxError at line {result.errors[0].line}"

    def submit(self, code: str) -> str:
        """Submit the final Python-4 solution; this ends the episode.

        Args:
            code: The solution.
        """
        self.calls += 1
        CALLS.append(("submit", self.problem_id))
        if self.outcome == "no_submission":
            self.outcome = "uncertified"  # no tests are run here: certification is the real env's job
        return "Submission received. The episode is over."

    def get_reward(self) -> float:
        reward = {"certified": 1.0, "uncertified": 0.0, "no_submission": -0.10}[self.outcome]
        REWARDS.append(reward)
        return reward
