"""Result types of `migrate` and the identifiers of the rules it fixes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

# Every rule with a fixer, in rule-id order. P4-02 (let) is a core rule like P4-01.
FIXABLE_RULES = tuple(f"P4-{n:02d}" for n in range(1, 31))
CORE_RULES = ("P4-01", "P4-02", "P4-03", "P4-04", "P4-05")


@dataclass(frozen=True)
class RuleHit:
    """A place where the Python 3 program breaks `rule` and a fixer rewrote it."""

    rule: str
    line: int
    col: int


@dataclass(frozen=True)
class CannotConvert:
    """A construct no fixer could rewrite without risking a change of behaviour."""

    line: int
    col: int
    reason: str


@dataclass
class MigrationResult:
    source: str
    rules_applied: list[RuleHit] = field(default_factory=list)
    cannot_convert: list[CannotConvert] = field(default_factory=list)
    # Module-level names the migrator renamed (a builtin's name such as `count` → `count_`).
    module_renames: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.cannot_convert

    @property
    def rules_violated(self) -> list[str]:
        """Sorted ids of the rules whose fixers fired."""
        return sorted({hit.rule for hit in self.rules_applied})

    def to_json(self) -> dict:
        """The `boa migrate --json` object."""
        return {
            "source": self.source,
            "rules_applied": [asdict(hit) for hit in self.rules_applied],
            "cannot_convert": [asdict(item) for item in self.cannot_convert],
        }
