"""The pool of code examples, each validated by Boa once (results cached by content hash).

Sources: the spec's checkable examples, the rule registry's examples, per-rule templates
filled with random values (`snippets`), and everyday Python 3 programs run through the
migrator (`py3_programs`). A `Lesson` pairs an idiomatic Python-4 program (`good`) with
the habit it replaces (`bad`: a `py3` counter-example, or the `python` original of a
migrated program). Only what Boa confirms enters the pool:
- a good program compiles with no diagnostic and runs without error;
- a py3 habit gets a diagnostic, raises, or prints something other than its fix;
- a migrated program needed no `py3_*` helper, converted fully, and prints what CPython
  printed for the original.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field

from py4.corpus.blocks import fence
from py4.corpus.config import PoolSpec
from py4.corpus.validate import BoaValidator

MAX_OUTPUT_CHARS = 600  # longer outputs make poor teaching material


@dataclass(frozen=True)
class Shown:
    """A program with what Boa says it does, ready to be written as tagged blocks."""

    tag: str
    source: str
    output: str | None = None
    raises: str | None = None
    diagnostics: tuple[str, ...] | None = None

    def render(self) -> str:
        return "\n".join([self.program_block()] + self.claim_blocks())

    def program_block(self) -> str:
        return fence(self.tag, self.source)

    def claim_blocks(self) -> list[str]:
        """The blocks that say what Boa does with the program (empty: it prints nothing)."""
        if self.diagnostics is not None:
            return [fence("diagnostics", "\n".join(self.diagnostics))]
        parts = [fence("output", self.output)] if self.output else []
        return parts + ([fence("raises", self.raises)] if self.raises else [])


@dataclass(frozen=True)
class Lesson:
    rules: tuple[str, ...]
    topic: str
    origin: str  # spec | registry | template | migrated
    good: Shown | None
    bad: Shown | None = None


@dataclass
class Pool:
    by_rule: dict[str, list[Lesson]] = field(default_factory=lambda: defaultdict(list))
    migrated: list[Lesson] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def lessons(self, rule: str) -> list[Lesson]:
        return self.by_rule.get(rule, [])


@dataclass
class _Candidate:
    rules: tuple[str, ...]
    topic: str
    origin: str
    good: str | None
    bad: str | None
    bad_tag: str = "py3"


def build_pool(spec: PoolSpec, rules: list[str], validator: BoaValidator) -> Pool:
    """Collect, validate (Boa) and keep the examples that teach `rules`.

    Raises ValueError when some rule ends up with no lesson at all.
    """
    candidates = (_registry_candidates(rules) + _template_candidates(spec, rules)
                  + _spec_candidates(spec.spec_path, rules))
    if spec.migrated_programs:
        candidates += _migrated_candidates(spec)
    programs = [("py4", c.good) for c in candidates if c.good]
    programs += [(c.bad_tag, c.bad) for c in candidates if c.bad]
    validator.observe(programs)
    pool = Pool()
    seen: set[tuple] = set()
    rejected = 0
    for cand in candidates:
        key = (cand.good, cand.bad)
        if key in seen:
            continue
        seen.add(key)
        lesson = _accept(cand, validator)
        if lesson is None:
            rejected += 1
            continue
        if cand.origin == "migrated":
            pool.migrated.append(lesson)
        for rule in lesson.rules:
            if rule in rules:
                pool.by_rule[rule].append(lesson)
    missing = [r for r in rules if not pool.by_rule.get(r)]
    if missing:
        raise ValueError(f"no validated example teaches {missing}: the pool cannot cover them")
    pool.counts = {"candidates": len(candidates), "distinct": len(seen), "rejected": rejected,
                   "lessons": sum(len(v) for v in pool.by_rule.values()), "migrated": len(pool.migrated),
                   "boa_runs": validator.boa_runs}
    return pool


def _accept(cand: _Candidate, validator: BoaValidator) -> Lesson | None:
    good = _good(validator.result("py4", cand.good), cand.good) if cand.good else None
    if cand.good and good is None:
        return None
    bad = None
    if cand.bad:
        result = validator.result(cand.bad_tag, cand.bad)
        if cand.bad_tag == "python":
            if good is None or result["status"] != "ok" or (result["stdout"] or None) != good.output:
                return None  # a migration must print what the original printed
            bad = Shown("python", cand.bad, output=result["stdout"] or None)
        else:
            bad = _habit(result, cand.bad, good)
    if good is None and bad is None:
        return None
    return Lesson(cand.rules, cand.topic, cand.origin, good, bad)


def _good(result: dict, source: str) -> Shown | None:
    if result["diagnostics"] or result["status"] != "ok" or result.get("truncated"):
        return None
    if len(result["stdout"]) > MAX_OUTPUT_CHARS:
        return None
    return Shown("py4", source, output=result["stdout"] or None)


def _habit(result: dict, source: str, good: Shown | None) -> Shown | None:
    """The py3 counter-example with Boa's verdict, or None when Boa shows nothing wrong."""
    if result.get("truncated") or len(result["stdout"]) > MAX_OUTPUT_CHARS:
        return None
    if result["diagnostics"]:
        return Shown("py3", source, diagnostics=tuple(result["diagnostics"]))
    if result["status"] == "runtime_error" and result["raised"]:
        return Shown("py3", source, output=result["stdout"] or None, raises=result["raised"])
    if result["status"] == "ok" and good is not None and result["stdout"] != (good.output or ""):
        return Shown("py3", source, output=result["stdout"] or None)
    return None


def _registry_candidates(rules: list[str]) -> list[_Candidate]:
    from py4.lang import RULES
    return [_Candidate((r,), RULES[r].title, "registry", RULES[r].example, RULES[r].python3_example)
            for r in rules]


def _template_candidates(spec: PoolSpec, rules: list[str]) -> list[_Candidate]:
    from py4.corpus.snippets import TEMPLATES, fill, render
    rng = random.Random(spec.seed)
    out = []
    for template in TEMPLATES:
        if template.rule not in rules:
            continue
        for _ in range(spec.variants_per_template):
            values = fill(rng)
            out.append(_Candidate((template.rule,), template.topic, "template",
                                  render(template.good, values), render(template.bad, values)))
    return out


def _spec_candidates(spec_path: str | None, rules: list[str]) -> list[_Candidate]:
    if not spec_path:
        return []
    from py4.lang.spec_examples import parse_examples
    out = []
    for example in parse_examples(spec_path):
        if example.rule not in rules or example.raises is not None:
            continue
        if example.kind == "py4":
            out.append(_Candidate((example.rule,), "from the specification", "spec", example.source, None))
        elif example.kind == "py4-diag":
            out.append(_Candidate((example.rule,), "from the specification", "spec", None, example.source))
    return out


def _migrated_candidates(spec: PoolSpec) -> list[_Candidate]:
    """Python 3 programs and their migrations that need no helper and convert fully."""
    from py4.corpus.py3_programs import PROGRAMS
    from py4.corpus.snippets import fill, render
    from py4.lang.migrate import migrate
    rng = random.Random(spec.seed + 1)
    out = []
    for topic, template in PROGRAMS:
        for _ in range(spec.variants_per_template):
            original = render(template, fill(rng))
            result = migrate(original, assume_python3=True)
            if result.cannot_convert or "py3_" in result.source or ": object" in result.source \
                    or "-> object" in result.source:
                continue
            out.append(_Candidate(tuple(result.rules_violated), topic, "migrated", result.source,
                                  original, bad_tag="python"))
    return out
