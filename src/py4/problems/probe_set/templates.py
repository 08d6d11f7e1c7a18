"""Per-rule minimal-pair templates: each returns (Python-4 code, Python 3 code) for one variant.

A variant's form (which literal, builtin or expression shape) is fixed by its index; its names,
words and numbers come from a parameter set, its own unless the build's length matching picks
another (``candidates``). Syntax templates differ in code (Boa's diagnostics confirm: the Python-4 member compiles
clean, the Python 3 member draws exactly this rule). Semantic templates are one expression,
the same in both languages; the pair differs in its stated output, which Boa and Python 3
each compute (build.py), so a pair tests the rule and nothing else.
"""

from __future__ import annotations

# Names unlike the corpus's and the bank's so that probe code never occurs there verbatim.
# The first 14 of each list are the variants' own; the rest are what the length matching may
# draw on (``candidates``) when a variant's own names or numbers tokenize to unequal spans.
NAMES = ["quoll", "tarsier", "wombat", "okapi", "dugong", "pangolin", "caracal", "numbat", "axolotl", "saola",
         "gerenuk", "kinkajou", "fossa", "jerboa", "tapir", "serval", "margay", "potoo", "hoopoe", "ibex",
         "gecko", "coati", "dingo", "lemur", "oryx", "quokka", "takin", "zorilla",
         # short names a small vocabulary holds as one token, for spans that are a name (P4-29)
         "chunk", "frame", "queue", "buffer", "cache", "offset", "flag", "point", "tag", "mode", "kind", "part",
         "block", "stack"]
ARGS = ["pip", "nib", "tug", "rim", "fob", "jot", "kit", "dab", "gib", "hob", "lug", "mop", "nog", "pom"]
WORDS = ["amber", "cobalt", "ochre", "sienna", "umber", "teal", "mauve", "taupe", "cerise", "vermil", "indigo",
         "saffron", "celadon", "russet", "olive", "coral", "slate", "lilac", "ivory", "jade", "khaki", "beige",
         "azure", "plum", "rust", "sepia", "ecru", "cyan"]
CANDIDATES = 12
"""Parameter sets tried per variant (its own first) when matching the members in token length."""


def variant(j: int) -> dict:
    """Names and numbers of parameter set ``j`` (``j`` < 14: variant ``j``'s own)."""
    return dict(name=NAMES[j % len(NAMES)], a=ARGS[j % len(ARGS)], n=j + 2, m=(j * 3) % 7 + 1, k=j + 11,
                word=WORDS[j % len(WORDS)])


VARIANTS = [variant(i) for i in range(14)]
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


def candidates(i: int) -> list[int]:
    """The parameter sets variant ``i`` may take, in order of preference: its own first."""
    return [i + len(VARIANTS) * s for s in range(CANDIDATES)]


def _expressions(i: int, j: int | None = None) -> dict[str, str]:
    """One expression per semantic rule for variant ``i`` (valid Python 3 and Python-4): ``i``
    picks each rule's form, parameter set ``j`` (default ``i``) its numbers and words."""
    j = i if j is None else j
    p, q = j % 5 + 1, j % 5 + 3 + (j // 5) % 3 + (j // 15)
    xs = [((j + 1) * (t + 3)) % 17 for t in range(4 + j % 3)]
    ws = [WORDS[(j + t) % (14 if j < 14 else len(WORDS))] for t in range(2 + i % 2)]
    d = {w: t + j for t, w in enumerate(ws)}
    half = [0.5, 2.5, 4.5, 6.5, 8.5, 10.5, 12.5][j % 7] * (-1 if (j // 7) % 2 else 1) + 14 * (j // 14)
    return {
        "P4-12": [f"list(range({p}, {q}))", f"sum(range({p}, {q}))", f"len(range({p}, {q}))"][i % 3],
        "P4-13": f"{xs}[{j % 2}:{j % 2 + 2}]" if i % 2 == 0 else f"'{ws[0]}'[{j % 3}:{j % 3 + 1}]",
        "P4-15": [f"type({{}}).__name__ * {j % 3 + 1}", f"[isinstance({{}}, set)] * {j % 3 + 1}",
                  f"({{}} == set(), {j})"][i % 3],
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
