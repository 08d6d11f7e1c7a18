"""`boa migrate`: Python 3 → Python-4, preserving behaviour (docs/migrate.md).

    from py4.lang.migrate import migrate
    result = migrate(py3_source, skip_rules={"P4-12"})
    result.source, result.rules_applied, result.cannot_convert
"""

from py4.lang.migrate.driver import MigrationError, migrate, resolve_rules
from py4.lang.migrate.model import (
    CORE_RULES, FIXABLE_RULES, CannotConvert, MigrationResult, RuleHit,
)

__all__ = [
    "CORE_RULES", "FIXABLE_RULES", "CannotConvert", "MigrationError", "MigrationResult",
    "RuleHit", "migrate", "resolve_rules",
]
