"""Diagnostics: what Boa says about a Python-4 program, and the exact words it uses.

Every message Boa's compiler emits comes from ``MESSAGES`` below (a table keyed by a
short *kind*), so the spec (docs/python4.md) and docs/dev/diagnostics.md can quote
them exactly. Positions are always in the Python-4 source: lines 1-based, columns
0-based (in characters).

Two renderings (``Diagnostic.render``):
- ``verbatim``: ``line 3, col 0: error P4-01: <message>. Fix: <fix>``
- ``generic``: ``SyntaxError at line 3`` / ``warning at line 3`` (no rule id, no words),
  so that reinforcement learning cannot learn a rule from the interpreter's messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]
Rendering = Literal["verbatim", "generic"]

# The kinds of message Boa says (MESSAGES's keys; tests/lang checks that they agree).
MessageKind = Literal["def", "elif", "None", "True", "False", "except", "raise", "fstring", "lambda",
    "import", "undeclared", "let_target", "let_statement", "chained", "negative_index", "annotations",
    "percent_format", "mutable_default", "nil_compare", "bare_catch", "shadow_builtin", "type_compare",
    "syntax", "reserved", "reserved_name", "encoding", "null_byte", "too_large", "too_deep",
    "literal_too_large", "too_many_istring_fields", "too_many_arguments", "too_many_functions",
    "too_many_captures", "dynamic_code", "internal_name", "internal_attribute", "module_unavailable",
    "internal", "too_many", "too_many_warnings"]

# kind -> (rule id, severity, message template, fix). Templates use str.format fields.
MESSAGES: dict[MessageKind, tuple[str, Severity, str, str]] = {
    # Python 3 spellings (token level)
    "def": ("P4-01", "error", "`def` is not Python-4: functions are defined with `fn`",
            "replace `def` with `fn`"),
    "elif": ("P4-03", "error", "`elif` is not Python-4: write `else if`",
             "replace `elif` with `else if`"),
    "None": ("P4-04", "error", "`None` is not Python-4: the null value is spelled `nil`",
             "replace `None` with `nil`"),
    "True": ("P4-04", "error", "`True` is not Python-4: the true value is spelled `true`",
             "replace `True` with `true`"),
    "False": ("P4-04", "error", "`False` is not Python-4: the false value is spelled `false`",
              "replace `False` with `false`"),
    "except": ("P4-06", "error", "`except` is not Python-4: exception handlers are written `catch`",
               "replace `except` with `catch`"),
    "raise": ("P4-07", "error", "`raise` is not Python-4: exceptions are thrown with `throw`",
              "replace `raise` with `throw`"),
    "fstring": ("P4-08", "error",
                "f-strings are not Python-4: interpolated strings take the `i` prefix",
                "write `i\"…\"` instead of `f\"…\"`"),
    "lambda": ("P4-09", "error", "`lambda` is not Python-4: anonymous functions are written `fun`",
               "replace `lambda` with `fun`"),
    "import": ("P4-10", "error", "`import` is not Python-4: modules are imported with `use`",
               "write `use m` or `from m use a, b`"),
    # Static analysis: errors
    "undeclared": ("P4-02", "error",
                   "assignment to undeclared name `{name}`: declare it with `let` first",
                   "write `let {name} = …` for its first binding"),
    "let_target": ("P4-02", "error", "`let` declares names only, not `{target}`",
                   "drop `let`: attribute and subscript targets need no declaration"),
    "let_statement": ("P4-02", "error", "`let` must be followed by an assignment",
                      "write `let name = value`"),
    "chained": ("P4-11", "error",
                "chained comparison is not Python-4: each comparison has one operator",
                "write `a < b and b < c` instead of `a < b < c`"),
    "negative_index": ("P4-14", "error",
                       "negative index literal `{literal}` is not Python-4: "
                       "indices never count from the end",
                       "use `last(xs)`, or `xs[len(xs) - k]` to count from the end"),
    # Static analysis: warnings (lints)
    "annotations": ("P4-05", "warning", "fn `{name}` lacks annotations: {missing}",
                    "annotate every parameter and the return type: `fn f(x: int) -> int:`"),
    "percent_format": ("P4-25", "warning", "%-formatting of strings is deprecated",
                       "use an i-string: `i\"{{x}}\"`"),
    "mutable_default": ("P4-26", "warning", "mutable default value for parameter `{name}`",
                        "default to `nil` and build the value inside the fn"),
    "nil_compare": ("P4-27", "warning", "comparison with `nil` by `{op}`",
                    "write `x is nil` or `x is not nil`"),
    "bare_catch": ("P4-28", "warning", "bare `catch:` catches every exception",
                   "name the exception: `catch ValueError:`"),
    "shadow_builtin": ("P4-29", "warning", "`{name}` shadows a builtin name",
                       "choose another name"),
    "type_compare": ("P4-30", "warning", "`type(x) {op} T` compares types exactly",
                     "write `isinstance(x, T)`"),
    # No rule's (P4-00)
    "syntax": ("P4-00", "error", "syntax error: {detail}", "check the syntax at this position"),
    "reserved": ("P4-00", "error", "`{word}` is a reserved word in Python-4",
                 "choose another name"),
    "reserved_name": ("P4-00", "error", "`{name}` is reserved for the Python-4 runtime",
                      "choose another name"),
    "encoding": ("P4-00", "error", "source is not valid UTF-8: {detail}",
                 "save the file as UTF-8"),
    "null_byte": ("P4-00", "error", "source contains a NUL byte", "remove the NUL byte"),
    "too_large": ("P4-00", "error", "source is too large ({size} characters; the limit is {limit})",
                  "split the program"),
    "too_deep": ("P4-00", "error", "program is nested too deeply or too complex for Boa",
                 "reduce the nesting of brackets and expressions"),
    "literal_too_large": ("P4-00", "error", "literal too large: {detail}",
                          "compute the value instead of writing it out"),
    # Compile-cost limits (limits.py): what one program may ask of the front end
    "too_many_istring_fields": ("P4-00", "error",
                                "too many i-string fields: the program has {count}; the limit "
                                "is {limit} per program", "build the text with fewer fields"),
    "too_many_arguments": ("P4-00", "error",
                           "too many arguments in one {what}: {count}; the limit is {limit}",
                           "pass a list or a dict instead"),
    "too_many_functions": ("P4-00", "error",
                           "too many functions, lambdas, classes and comprehensions: the "
                           "program has {count}; the limit is {limit} per program",
                           "reuse functions instead of repeating them"),
    "too_many_captures": ("P4-00", "error",
                          "too many names bound by one case pattern: {count}; the limit is {limit}",
                          "match a list or a dict and index it"),
    # What would run code the compiler never saw, or reach the interpreter (internals.py)
    "dynamic_code": ("P4-00", "error",
                     "`{name}` runs code that Boa has not compiled: Python-4 has no dynamic code",
                     "write the code in the program itself"),
    "internal_name": ("P4-00", "error",
                      "`{name}` reaches the interpreter's internals: it is not available to "
                      "Python-4 programs", "use the program's own names"),
    "internal_attribute": ("P4-00", "error",
                           "attribute `{name}` reaches the interpreter's internals: it is not "
                           "available to Python-4 programs",
                           "use the object's public interface (`type(x)`, `isinstance`, `vars(self)`)"),
    "module_unavailable": ("P4-00", "error",
                           "module `{name}` is not available to Python-4 programs: {why}",
                           "use another module of the standard library"),
    "internal": ("P4-00", "error", "internal error in the Python-4 compiler: {detail}",
                 "report this program to the Boa maintainers"),
    # The last of MAX_DIAGNOSTICS (compile.py) findings; its severity is the worst left out.
    "too_many": ("P4-00", "error", "too many diagnostics: {count} more not shown",
                 "fix the diagnostics shown first"),
    "too_many_warnings": ("P4-00", "warning", "too many diagnostics: {count} more not shown",
                          "fix the diagnostics shown first"),
}


@dataclass(frozen=True)
class Diagnostic:
    """One finding about a program: rule id, severity, Python-4 position, words."""

    rule: str
    severity: Severity
    line: int
    col: int
    message: str
    fix: str = ""

    def render(self, mode: Rendering = "verbatim") -> str:
        """Render for humans (``verbatim``) or for RL feedback (``generic``).

        Raises ValueError for an unknown mode.
        """
        if mode == "verbatim":
            fix = f". Fix: {self.fix}" if self.fix else ""
            return f"line {self.line}, col {self.col}: {self.severity} {self.rule}: {self.message}{fix}"
        if mode == "generic":
            kind = "SyntaxError" if self.severity == "error" else "warning"
            return f"{kind} at line {self.line}"
        raise ValueError(f"unknown diagnostics mode {mode!r}; expected 'verbatim' or 'generic'")

    def to_json(self) -> dict:
        """The JSON shape of `boa check --json`: rule, severity, line, col, message."""
        return {
            "rule": self.rule,
            "severity": self.severity,
            "line": self.line,
            "col": self.col,
            "message": self.message,
        }


def make_diagnostic(kind: MessageKind, line: int, col: int, **fields: object) -> Diagnostic:
    """Build the diagnostic of message ``kind`` (a key of MESSAGES) at a Python-4 position."""
    rule, severity, template, fix = MESSAGES[kind]
    return Diagnostic(
        rule=rule,
        severity=severity,
        line=line,
        col=col,
        message=template.format(**fields),
        fix=fix.format(**fields),
    )


def sort_key(diag: Diagnostic) -> tuple:
    return (diag.line, diag.col, diag.rule, diag.message)
