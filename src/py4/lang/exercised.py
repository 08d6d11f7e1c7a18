"""Rules exercised: which construct in a program exercises which rule.

Static and **over-approximate**: a rule counts as exercised when a construct it governs
appears anywhere in the program, reachable or not, in its Python-4 or its Python 3
spelling (a ``def`` exercises P4-01 as ``fn`` does; an ``elif`` P4-03 as ``else if``).
This is how problem targets are kept free of held-out rules, so erring towards "yes"
is the safe side. ``EXERCISED_BY`` below is the whole definition, one row per construct
tag; tags marked ``(tokens)`` come from the token pass (tokens.py), the others from the
analysis walk (analyze.py).
"""

from __future__ import annotations

# (rule, construct tag, what makes the tag appear). The one table of rules exercised.
EXERCISED_BY: tuple[tuple[str, str, str], ...] = (
    ("P4-01", "fn", "an `fn` (or `def`) definition (tokens, AST)"),
    ("P4-02", "let", "a `let` statement (tokens)"),
    ("P4-03", "else_if", "an `else if` (or `elif`) (tokens)"),
    ("P4-04", "nil", "`nil`, `true`, `false` (or None/True/False) (tokens)"),
    ("P4-05", "fn", "an `fn` definition"),
    ("P4-06", "catch", "a `catch` (or `except`) clause (tokens, AST)"),
    ("P4-07", "throw", "a `throw` (or `raise`) statement (tokens, AST)"),
    ("P4-08", "i_string", "an i-string (or f-string) (tokens)"),
    ("P4-09", "fun", "a `fun` (or `lambda`) expression (tokens, AST)"),
    ("P4-10", "use", "a `use` (or `import`) statement (tokens, AST)"),
    ("P4-11", "comparison_pair", "`a < b and b < c`: an `and` of comparisons sharing an operand"),
    ("P4-11", "chained_comparison", "a chained comparison `a < b < c`"),
    ("P4-12", "range_call", "a call of `range` or `indices`"),
    ("P4-13", "slice_upper", "a slice with an explicit upper bound"),
    ("P4-14", "first_last_call", "a call of `first` or `last`"),
    ("P4-14", "len_minus_index", "an index or slice bound of the form `len(x) - k`"),
    ("P4-14", "negative_index", "a negative literal index or slice bound"),
    ("P4-15", "empty_braces", "`{}` or `{:}` (tokens)"),
    ("P4-15", "set_call", "a call of `set`"),
    ("P4-16", "dict_iteration", "iterating an expression inferred to be a dict"),
    ("P4-16", "keys_call", "a `.keys()` call"),
    ("P4-17", "pop_no_args", "a `.pop()` call without arguments"),
    ("P4-17", "pop_from_end", "a `.pop(len(x) - k)` call (the rule's own fix)"),
    ("P4-18", "join_call", "a `.join(…)` call"),
    ("P4-19", "enumerate_call", "a call of `enumerate`"),
    ("P4-20", "zip_call", "a call of `zip` or `zip_shortest`"),
    ("P4-21", "sum_count_call", "a call of `sum` or `count`"),
    ("P4-22", "round_call", "a call of `round`"),
    ("P4-23", "int_division", "`//` or `%` not formatting a string literal (also `//=`, `%=`, divmod)"),
    ("P4-24", "trim_strip_attr", "an attribute `.trim*` or `.strip/.lstrip/.rstrip`"),
    ("P4-25", "percent_format", "`%` with a string literal on the left"),
    ("P4-26", "param_default", "a parameter with a default value"),
    ("P4-27", "nil_comparison", "a comparison with `nil`"),
    ("P4-28", "catch", "any `catch` clause (tokens, AST)"),
    ("P4-29", "builtin_binding", "a binding of a builtin's name"),
    ("P4-30", "type_check", "a call of `isinstance`, or a comparison with `type(x)`"),
)


_RULES_BY_TAG: dict[str, tuple[str, ...]] = {}
for _rule, _tag, _ in EXERCISED_BY:
    _RULES_BY_TAG[_tag] = (*_RULES_BY_TAG.get(_tag, ()), _rule)


def rules_for_tags(tags: set[str]) -> list[str]:
    """Sorted rule ids exercised by the given construct tags (see EXERCISED_BY)."""
    return sorted({rule for tag in tags for rule in _RULES_BY_TAG.get(tag, ())})
