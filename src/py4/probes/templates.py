"""Per-rule minimal-pair templates: each returns (Python-4 code, Python 3 code) for one variant.

Syntax templates differ in code (Boa's diagnostics confirm: the Python-4 member compiles
clean, the Python 3 member draws exactly this rule). Semantic templates are one expression,
the same in both languages; the pair differs in its stated output, which Boa and Python 3
each compute (build.py), so a pair tests the rule and nothing else.
"""

from __future__ import annotations

# Names unlike the corpus's and the bank's so that probe code never occurs there verbatim.
VARIANTS = [dict(name=n, a=a, n=i + 2, m=(i * 3) % 7 + 1, k=i + 11, word=w)
            for i, (n, a, w) in enumerate([
                ("quoll", "pip", "amber"), ("tarsier", "nib", "cobalt"), ("wombat", "tug", "ochre"),
                ("okapi", "rim", "sienna"), ("dugong", "fob", "umber"), ("pangolin", "jot", "teal"),
                ("caracal", "kit", "mauve"), ("numbat", "dab", "taupe"), ("axolotl", "gib", "cerise"),
                ("saola", "hob", "vermil"), ("gerenuk", "lug", "indigo"), ("kinkajou", "mop", "saffron"),
                ("fossa", "nog", "celadon"), ("jerboa", "pom", "russet")])]
LITS = [("true", "True"), ("false", "False"), ("nil", "None")]
BUILTINS = ["list", "sum", "max", "min", "sorted", "id", "map"]


def _syntax(v: dict, i: int) -> dict[str, tuple[str, str]]:
    n, a, m, k, w, x = v["name"], v["a"], v["m"], v["n"], v["word"], v["k"]
    lit4, lit3 = LITS[i % 3]
    b = BUILTINS[i % len(BUILTINS)]
    def two(t: str, p4: str, p3: str) -> tuple[str, str]:
        return t.replace("@", p4), t.replace("@", p3)
    return {
        "P4-01": two(f"@ {n}({a}: int) -> int:\n    return {a} + {k}\nprint({n}({m}))\n", "fn", "def"),
        "P4-02": two(f"@{n} = {k}\nprint({n} * {m})\n", "let ", ""),
        "P4-03": two(f"let {n} = {k}\nif {n} < {m}:\n    print('{w}')\n@ {n} == {m}:\n    print({x})\n",
                     "else if", "elif"),
        "P4-04": two(f"let {n} = @\nprint({n})\n", lit4, lit3),
        "P4-05": two(f"fn {n}({a}@:\n    return {a} * {k}\nprint({n}({m}))\n", ": int) -> int", ")"),
        "P4-06": two(f"try:\n    print(int('{w}'))\n@ ValueError:\n    print({k})\n", "catch", "except"),
        "P4-07": two(f"fn {n}({a}: int) -> int:\n    if {a} < {m}:\n        @ ValueError('{w}')\n"
                     f"    return {a}\nprint({n}({x}))\n", "throw", "raise"),
        "P4-08": two(f"let {n} = {k}\nprint(@\"{w} {{{n}}}\")\n", "i", "f"),
        "P4-09": two(f"let {n} = @ {a}: {a} * {k}\nprint({n}({m}))\n", "fun", "lambda"),
        "P4-10": two(f"@ math as {n}\nprint({n}.floor({k}.5))\n", "use", "import"),
        "P4-11": two(f"let {n} = {k}\nprint(@ < {x})\n", f"{n} > {m} and {n}", f"{m} < {n}"),
        "P4-14": two(f"let {n} = [{k}, {m}, {x}]\nprint(@)\n", f"last({n})", f"{n}[-1]"),
        "P4-25": two(f"let {n} = {k}\nprint(@)\n", f"i'{w} {{{n}}}'", f"'{w} %d' % {n}"),
        "P4-26": two(f"fn {n}({a}: int, acc: @) -> list:\n    return [{a}]\nprint({n}({m}))\n",
                     "list | nil = nil", "list = []"),
        "P4-27": two(f"let {n} = nil\nprint({n} @ nil)\n", "is", "=="),
        "P4-28": two(f"try:\n    print(int('{w}'))\ncatch@:\n    print({k})\n", " ValueError", ""),
        "P4-29": two(f"let @ = [{k}, {m}]\nprint({x})\n", n, b),
        "P4-30": two(f"let {n} = {k}\nprint(@)\n", f"isinstance({n}, int)", f"type({n}) == int"),
    }


def _expressions(i: int) -> dict[str, str]:
    """One expression per semantic rule for variant ``i`` (valid Python 3 and Python-4)."""
    p, q = i % 5 + 1, i % 5 + 3 + i // 5
    xs = [((i + 1) * (j + 3)) % 17 for j in range(4 + i % 3)]
    ws = [VARIANTS[(i + j) % 14]["word"] for j in range(2 + i % 2)]
    d = {w: j + i for j, w in enumerate(ws)}
    half = [0.5, 2.5, 4.5, 6.5, 8.5, 10.5, 12.5][i % 7] * (-1 if i >= 7 else 1)
    return {
        "P4-12": [f"list(range({p}, {q}))", f"sum(range({p}, {q}))", f"len(range({p}, {q}))"][i % 3],
        "P4-13": f"{xs}[{i % 2}:{i % 2 + 2}]" if i % 2 == 0 else f"'{ws[0]}'[{i % 3}:{i % 3 + 1}]",
        "P4-15": [f"type({{}}).__name__ * {i % 3 + 1}", f"[isinstance({{}}, set)] * {i % 3 + 1}",
                  f"({{}} == set(), {i})"][i % 3],
        "P4-16": [f"list({d})", f"[e for e in {d}]", f"next(iter({d}))"][i % 3],
        "P4-17": f"{xs}.pop()",
        "P4-18": f"'{['-', '+', '/', ':'][i % 4]}'.join({ws})",
        "P4-19": f"list(enumerate({ws}))",
        "P4-20": f"list(zip({xs}, {xs[:-1]}))",
        "P4-21": f"sum([e > {xs[0]} for e in {xs}])",
        "P4-22": f"round({half})",
        "P4-23": [f"-{(p + 1) * q + 1} // {p + 1}", f"-{(p + 1) * q + 1} % {p + 1}",
                  f"({(p + 1) * q + 1} * -1) // {p + 1}"][i % 3],
        "P4-24": f"'  {ws[0]}  '.{['strip', 'lstrip', 'rstrip'][i % 3]}()",
    }
