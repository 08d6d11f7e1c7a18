"""Static analysis: P4-02 scopes, P4-11, P4-14, the lints, and rules exercised."""

import pytest

from py4.lang import compile_py4
from py4.lang.analyze import EXERCISED_BY, rules_for_tags
from py4.lang.rules import RULES


def diags(source):
    return [(d.rule, d.severity, d.line, d.col) for d in compile_py4(source).diagnostics]


def rules_of(source):
    return {d.rule for d in compile_py4(source).diagnostics}


# -- P4-02: declarations and scopes --------------------------------------------------
@pytest.mark.parametrize("source", [
    "let x = 1\nx = 2\n",
    "let x: int = 1\nx += 1\n",
    "let a, b = 1, 2\na, b = b, a\n",
    "let [a, *rest] = [1, 2, 3]\nrest = []\n",
    "for i in [1]:\n    i = 2\n",
    "fn f(a: int, *args: int, k: int = 1, **kw: int) -> nil:\n    a = args\n    k = kw\n",
    "with open('/dev/null') as fh:\n    fh = 1\n",
    "try:\n    pass\ncatch ValueError as e:\n    e = 1\n",
    "use math\nmath = 1\n",
    "use os.path\nos = 1\n",
    "from math use pi as p\np = 1\n",
    "fn f() -> nil:\n    pass\nf = 1\n",
    "class C:\n    let x = 1\n    x = 2\nC = 3\n",
    "if (n := 3) > 1:\n    n = 4\n",
    "let g = 0\nfn f() -> nil:\n    global g\n    g = 1\n",
    "fn outer() -> nil:\n    let v = 0\n    fn inner() -> nil:\n        nonlocal v\n        v = 1\n",
    "let x = 1\nlet x = 2\n",
    "let xs = [1]\nxs[0] = 2\n",
    "let x = 1\ndel x\n",
    "let ys = [x for x in [1, 2]]\n",
    "let v = 1\nmatch v:\n    case [a, *b]:\n        a = 1\n    case {'k': c, **rest}:\n        rest = 1\n"
    "    case other:\n        other = 2\n",
    "let total = 0\nif true:\n    let total = 1\nelse:\n    total = 2\n",
])
def test_declared_names_may_be_assigned(source):
    assert not rules_of(source) & {"P4-02", "P4-00"}, compile_py4(source).diagnostics


@pytest.mark.parametrize("source, line, col", [
    ("x = 1\n", 1, 0),
    ("let y = 1\nx += 1\n", 2, 0),
    ("del x\n", 1, 4),
    ("let hits = 0\nfn f() -> nil:\n    hits = hits + 1\n", 3, 4),
    ("fn f(x: int) -> nil:\n    let y = x\nfn g() -> nil:\n    y = 2\n", 4, 4),
    ("class C:\n    x = 1\n", 2, 4),
    ("x = 1\nlet x = 2\n", 1, 0),
    ("  \nif true:\n    let a = 1\n    b = a\n", 4, 4),
])
def test_undeclared_assignment_is_p4_02(source, line, col):
    found = [(d.line, d.col) for d in compile_py4(source).diagnostics if d.rule == "P4-02"]
    assert found == [(line, col)]


def test_each_name_of_an_unpacking_is_reported():
    found = [(d.line, d.col) for d in compile_py4("a, b = 1, 2\n").diagnostics]
    assert found == [(1, 0), (1, 3)]


def test_each_undeclared_name_is_reported_once_per_scope():
    res = compile_py4("x = 1\nx = 2\ny = 3\n")
    assert [(d.line, d.message) for d in res.errors] == [
        (1, "assignment to undeclared name `x`: declare it with `let` first"),
        (3, "assignment to undeclared name `y`: declare it with `let` first"),
    ]


def test_let_misuse():
    assert diags("let xs = [1]\nlet xs[0] = 2\n") == [("P4-02", "error", 2, 4)]
    assert diags("let ready\n") == [("P4-02", "error", 1, 4)]
    assert diags("let fun = 3\n") == [("P4-00", "error", 1, 4)]


def test_runtime_names_are_reserved():
    assert diags("let __p4__ = 1\n") == [("P4-00", "error", 1, 4)]
    assert diags("fn f(__p4_t1: int) -> nil:\n    pass\n") == [("P4-00", "error", 1, 5)]


# -- P4-11 and P4-14 -------------------------------------------------------------------
def test_chained_comparison_is_an_error_and_pairs_are_fine():
    assert diags("let a = 1\nprint(0 < a < 2)\n") == [("P4-11", "error", 2, 6)]
    assert diags("let a = 1\nprint(a == a == a)\n") == [("P4-11", "error", 2, 6)]
    assert diags("let a = 1\nprint(0 < a and a < 2)\n") == []


@pytest.mark.parametrize("expr, col", [
    ("xs[-1]", 9), ("xs[:-2]", 10), ("xs[-2:]", 9), ("xs[-1.5]", 9), ("xs[1, -1]", 12),
    ("xs[-3:-1]", 9),
])
def test_negative_literal_index_is_p4_14(expr, col):
    found = [(d.rule, d.col) for d in compile_py4(f"let xs = [1, 2, 3]\nprint({expr})\n").diagnostics]
    assert found[0] == ("P4-14", col)


def test_negative_literals_in_annotations_are_types_not_indices():
    src = ("use typing\nfn f(x: typing.Literal[-1]) -> typing.Literal[-2]:\n    let y: typing.Literal[-3] = -3\n"
           "    return -2\n")
    assert diags(src) == []


@pytest.mark.parametrize("expr", ["xs[::-1]", "xs[3:1:-1]", "xs[0 - 1]", "xs[len(xs) - 1]",
                                  "xs[-k]", "xs[~0]"])
def test_negative_steps_and_computed_indices_compile(expr):
    assert not rules_of(f"let xs = [1, 2, 3]\nlet k = 1\nprint({expr})\n")


# -- lints ------------------------------------------------------------------------------
@pytest.mark.parametrize("source, expected", [
    ("fn f(x) -> int:\n    return 1\n", "fn `f` lacks annotations: parameter `x`"),
    ("fn f(x: int):\n    return 1\n", "fn `f` lacks annotations: return type"),
    ("fn f(*a, **k) -> int:\n    return 1\n",
     "fn `f` lacks annotations: parameter `a`, parameter `k`"),
])
def test_p4_05_missing_annotations(source, expected):
    (warning,) = compile_py4(source).warnings
    assert (warning.rule, warning.message) == ("P4-05", expected)


def test_p4_05_exempts_self_and_cls_of_methods_only():
    ok = "class C:\n    fn m(self, x: int) -> int:\n        return x\n    fn n(cls) -> nil:\n        pass\n"
    assert diags(ok) == []
    assert rules_of("fn f(self) -> nil:\n    pass\n") == {"P4-05"}
    assert rules_of("class C:\n    fn m(this, self) -> nil:\n        pass\n") == {"P4-05"}


@pytest.mark.parametrize("source, rule, line, col", [
    ("print('%d' % 3)\n", "P4-25", 1, 6),
    ("print(i'{1}' % 3)\n", "P4-25", 1, 6),
    ("fn f(xs: list = []) -> nil:\n    pass\n", "P4-26", 1, 16),
    ("fn f(d: dict = {:}) -> nil:\n    pass\n", "P4-26", 1, 15),
    ("fn f(s: set = {}) -> nil:\n    pass\n", "P4-26", 1, 14),
    ("fn f(*, xs: list = list()) -> nil:\n    pass\n", "P4-26", 1, 19),
    ("let x = 1\nprint(x == nil)\n", "P4-27", 2, 6),
    ("let x = 1\nprint(nil != x)\n", "P4-27", 2, 6),
    ("try:\n    pass\ncatch:\n    pass\n", "P4-28", 3, 0),
    ("let list = [1]\n", "P4-29", 1, 4),
    ("fn sum(x: int) -> int:\n    return x\n", "P4-29", 1, 0),
    ("fn f(id: int) -> int:\n    return id\n", "P4-29", 1, 5),
    ("for max in [1]:\n    pass\n", "P4-29", 1, 4),
    ("let f = fun input: input\n", "P4-29", 1, 12),
    ("print(type(1) == int)\n", "P4-30", 1, 6),
    ("print(int != type(1))\n", "P4-30", 1, 6),
])
def test_lint_warnings(source, rule, line, col):
    assert diags(source) == [(rule, "warning", line, col)]


@pytest.mark.parametrize("source", [
    "let x = 1\nprint(x is nil, x is not nil)\n",
    "print(type(1) is int, isinstance(1, int))\n",
    "fn f(xs: tuple = (), n: int = 0, s: str = '') -> nil:\n    pass\n",
    "class C:\n    fn sum(self) -> int:\n        return 0\n    let id = 3\n",
    "print(7 % 3, b'%d' % 3)\n",
    "try:\n    pass\ncatch Exception:\n    pass\n",
])
def test_lint_free_forms(source):
    assert diags(source) == []


# -- rules exercised ----------------------------------------------------------------------
def test_exercised_table_covers_every_rule_and_names_known_rules():
    assert {rule for rule, _, _ in EXERCISED_BY} == set(RULES)
    assert rules_for_tags({"fn"}) == ["P4-01", "P4-05"]


EXERCISING = {
    "P4-01": "fn f() -> nil:\n    pass\n",
    "P4-02": "let x = 1\n",
    "P4-03": "let x = 1\nif x:\n    pass\nelse if x:\n    pass\n",
    "P4-04": "print(nil)\n",
    "P4-05": "fn f() -> nil:\n    pass\n",
    "P4-06": "try:\n    pass\ncatch ValueError:\n    pass\n",
    "P4-07": "throw ValueError()\n",
    "P4-08": "print(i'{1}')\n",
    "P4-09": "print(fun: 1)\n",
    "P4-10": "use math\n",
    "P4-11": "let a = 1\nprint(0 < a and a < 2)\n",
    "P4-12": "print(indices([1]))\n",
    "P4-13": "let xs = [1]\nprint(xs[0:1])\n",
    "P4-14": "let xs = [1]\nprint(xs[len(xs) - 1])\n",
    "P4-15": "print({:})\n",
    "P4-16": "let d = {'a': 1}\nfor k, v in d:\n    pass\n",
    "P4-17": "let xs = [1]\nxs.pop()\n",
    "P4-18": "print(['a'].join(''))\n",
    "P4-19": "print(enumerate([]))\n",
    "P4-20": "print(zip_shortest([], []))\n",
    "P4-21": "print(count([]))\n",
    "P4-22": "print(round(1.5))\n",
    "P4-23": "print(7 // 2)\n",
    "P4-24": "print(' a'.trim())\n",
    "P4-25": "print('%s' % 1)\n",
    "P4-26": "fn f(x: int = 1) -> nil:\n    pass\n",
    "P4-27": "print(1 is nil)\n",
    "P4-28": "try:\n    pass\ncatch ValueError:\n    pass\n",
    "P4-29": "let len = 1\n",
    "P4-30": "print(isinstance(1, int))\n",
}


@pytest.mark.parametrize("rule", sorted(EXERCISING))
def test_each_rule_is_exercised_by_its_construct(rule):
    assert rule in compile_py4(EXERCISING[rule]).rules_exercised


def test_plain_program_exercises_nothing_extra():
    assert compile_py4("print(1 + 2)\n").rules_exercised == []
    assert compile_py4("let xs = [1]\nprint(xs[0], xs[0:], 7 / 2)\n").rules_exercised == ["P4-02"]


@pytest.mark.parametrize("source", [
    "let d = {'a': 1}\nprint(list(d))\n",
    "let d = dict(a=1)\nprint(sorted(d))\n",
    "let d = {:}\nprint([k for k in d])\n",
    "print(*{'a': 1})\n",
    "fn f(d: dict[str, int]) -> nil:\n    for p in d:\n        pass\n",
    "let d = {k: 1 for k in 'ab'}\nlet a, b = d\n",
    "let d = {'a': 1}\nprint(d.keys())\n",
])
def test_dict_iteration_exercises_p4_16(source):
    assert "P4-16" in compile_py4(source).rules_exercised


@pytest.mark.parametrize("source", [
    "let s = {}\nfor x in s:\n    pass\n",
    "let d = {'a': 1}\nlet d = [1]\nfor x in d:\n    pass\n",
    "let xs = [1]\nprint(list(xs))\n",
])
def test_non_dict_iteration_does_not_exercise_p4_16(source):
    assert "P4-16" not in compile_py4(source).rules_exercised


def test_percent_formatting_is_not_integer_division():
    assert compile_py4("print('%d' % 1)\n").rules_exercised == ["P4-25"]
    assert "P4-23" in compile_py4("let x = 7\nx %= 2\n").rules_exercised
    assert "P4-23" in compile_py4("print(divmod(7, 2))\n").rules_exercised


TAG_SAMPLES = {
    "fn": "fn f() -> nil:\n    pass\n", "let": "let x = 1\n",
    "else_if": "if 1:\n    pass\nelse if 2:\n    pass\n", "nil": "print(nil)\n",
    "catch": "try:\n    pass\ncatch E:\n    pass\n", "throw": "throw E\n", "i_string": "print(i'')\n",
    "fun": "print(fun: 1)\n", "use": "use m\n", "comparison_pair": "print(a < b and b < c)\n",
    "chained_comparison": "print(a < b < c)\n", "range_call": "print(range(1))\n",
    "slice_upper": "print(a[:1])\n", "first_last_call": "print(last(a))\n",
    "len_minus_index": "print(a[len(a) - 3:])\n", "negative_index": "print(a[-1])\n",
    "empty_braces": "print({})\n", "set_call": "print(set())\n",
    "dict_iteration": "for p in {:}:\n    pass\n", "keys_call": "print(d.keys())\n",
    "pop_no_args": "a.pop()\n", "pop_from_end": "a.pop(len(a) - 1)\n", "join_call": "a.join(',')\n",
    "enumerate_call": "enumerate(a)\n",
    "zip_call": "zip(a, b)\n", "sum_count_call": "sum(a)\n", "round_call": "round(a)\n",
    "int_division": "print(a // 2)\n", "trim_strip_attr": "a.trim()\n",
    "percent_format": "print('%s' % a)\n", "param_default": "fn f(a: int = 1) -> nil:\n    pass\n",
    "nil_comparison": "print(a is nil)\n", "builtin_binding": "let id = 1\n",
    "type_check": "print(isinstance(a, int))\n",
}


def test_every_tag_of_the_exercised_table_is_produced():
    import ast

    from py4.lang.analyze import analyze
    from py4.lang.tokens import rewrite_tokens

    assert set(TAG_SAMPLES) == {tag for _, tag, _ in EXERCISED_BY}
    for tag, source in TAG_SAMPLES.items():
        tokens = rewrite_tokens(source)
        tags = tokens.tags | analyze(ast.parse(tokens.text), tokens.let_positions,
                                     tokens.empty_dicts).tags
        assert tag in tags, (tag, source)
