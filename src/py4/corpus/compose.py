"""Document plans and the building blocks every document type shares.

A `Plan` fixes one document's type, rules, persona, audience, tone, length, which rules
are stated in prose and which are only shown, and the lessons (validated examples) it
uses. `Page` accumulates markdown; `teach` writes one lesson in one of several orders.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from py4.corpus import prose
from py4.corpus.pool import Lesson, Pool
from py4.lang import RULES

LENGTHS = {"short": 1, "medium": 2, "long": 3}


@dataclass
class Plan:
    doc_type: str
    rules: list[str]
    stated: dict[str, bool]
    persona: prose.Persona
    audience: str
    tone: str
    length: str
    lessons: dict[str, list[Lesson]]
    migrated: list[Lesson]
    project: str
    rng: random.Random
    spec_path: str | None

    @property
    def per_rule(self) -> int:
        return LENGTHS[self.length]


def make_plan(doc_type: str, rules_pool: list[str], max_rules: int, stated_fraction: float,
              pool: Pool, rng: random.Random, spec_path: str | None) -> Plan:
    """A random plan for one document of `doc_type`."""
    n_rules = min(len(rules_pool), 1 + min(int(rng.expovariate(0.8)), max_rules - 1))
    if doc_type in ("reference", "lint_page", "pep", "error_story") and rng.random() < 0.7:
        n_rules = 1
    rules = sorted(rng.sample(rules_pool, n_rules))
    length = rng.choices(list(LENGTHS), weights=(1, 2, 3 if n_rules <= 2 else 1))[0]
    lessons = {}
    for rule in rules:
        options = pool.lessons(rule)
        lessons[rule] = rng.sample(options, min(len(options), LENGTHS[length]))
    migrated = rng.sample(pool.migrated, min(len(pool.migrated), 2)) if pool.migrated else []
    return Plan(doc_type, rules, {r: rng.random() < stated_fraction for r in rules},
                rng.choice(prose.PERSONAS), rng.choice(prose.AUDIENCES), rng.choice(prose.TONES), length,
                lessons, migrated, rng.choice(prose.PROJECTS), rng, spec_path)


@dataclass
class Page:
    parts: list[str] = field(default_factory=list)

    def add(self, *texts: str) -> "Page":
        self.parts.extend(t.strip("\n") for t in texts if t)
        return self

    def text(self) -> str:
        return "\n\n".join(self.parts) + "\n"


def rule_name(rule_id: str) -> str:
    return f"{rule_id} ({RULES[rule_id].title})"


def opener(plan: Plan, topic: str) -> str:
    return prose.pick(plan.rng, prose.OPENERS[plan.tone]).format(topic=topic)


def closer(plan: Plan) -> str:
    return prose.pick(plan.rng, prose.CLOSERS[plan.tone])


def topic_of(plan: Plan) -> str:
    titles = [RULES[r].title for r in plan.rules]
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def show_good(page: Page, plan: Plan, lesson: Lesson, intro_bank=prose.SHOW_INTRO) -> None:
    if lesson.good is None:
        return
    page.add(prose.pick(plan.rng, intro_bank), lesson.good.program_block())
    claims = lesson.good.claim_blocks()
    if claims:
        page.add(prose.pick(plan.rng, prose.OUTPUT_INTRO), *claims)
    else:
        page.add(prose.pick(plan.rng, ("It prints nothing; it only builds values.",
                                       "Nothing is printed.", "(No output.)")))


def show_bad(page: Page, plan: Plan, lesson: Lesson) -> bool:
    """Write the lesson's habit and Boa's verdict; False when the lesson has none."""
    bad = lesson.bad
    if bad is None:
        return False
    if bad.tag == "python":
        page.add(prose.pick(plan.rng, ("The original Python 3:", "Before, in Python 3:",
                                       "Python 3 version (CPython):")), bad.program_block())
        if bad.claim_blocks():
            page.add(prose.pick(plan.rng, ("CPython prints:", "Under Python 3 it prints:")), *bad.claim_blocks())
        return True
    page.add(prose.pick(plan.rng, prose.HABIT_INTRO), bad.program_block())
    page.add(prose.pick(plan.rng, prose.CONSEQUENCE[prose.consequence_kind(bad)]), *bad.claim_blocks())
    return True


def teach(page: Page, plan: Plan, rule: str, lesson: Lesson, explain: bool = True) -> None:
    """One lesson: statement (when stated), then habit/fix in a random order."""
    rng = plan.rng
    stated = plan.stated.get(rule, False)
    if stated and explain:
        page.add(prose.statement(rule, rng, plan.spec_path))
    order = rng.random()
    if order < 0.5 and lesson.bad is not None:
        show_bad(page, plan, lesson)
        if stated:
            page.add(prose.fix_line(rule, rng))
        show_good(page, plan, lesson, prose.FIX_INTRO)
    else:
        show_good(page, plan, lesson)
        if lesson.bad is not None and order < 0.85:
            show_bad(page, plan, lesson)
    if stated and explain and rng.random() < 0.6:
        page.add(prose.rationale(rule, rng, plan.spec_path))
