"""The fourteen offline document types: one function per type, `Plan -> markdown text`.

`RENDERERS` maps the type name (config `doc_types`) to its function.
"""

from __future__ import annotations

from py4.corpus import prose
from py4.corpus.compose import Page, Plan, closer, opener, rule_name, show_bad, show_good, teach, topic_of
from py4.lang import RULES


def _lessons(plan: Plan):
    for rule in plan.rules:
        for lesson in plan.lessons[rule]:
            yield rule, lesson


def _byline(plan: Plan) -> str:
    p = plan.persona
    return prose.pick(plan.rng, (f"*By {p.name}, {p.role}.*", f"Written by {p.name} ({p.role}).",
                                 f"{p.name} - {p.role}", f"Author: {p.name}, {p.role}, for {plan.audience}."))


def reference(plan: Plan) -> str:
    page = Page()
    for rule in plan.rules:
        r = RULES[rule]
        page.add(f"# {rule}: {r.title}", f"Kind: {r.kind}. Python 3 form gives: {r.python3_form}.")
        page.add("## Summary", prose.statement(rule, plan.rng, plan.spec_path))
        page.add("## Examples")
        for lesson in plan.lessons[rule]:
            teach(page, plan, rule, lesson, explain=False)
        page.add("## Rationale", prose.rationale(rule, plan.rng, plan.spec_path))
        page.add("## How to fix", prose.fix_line(rule, plan.rng))
    others = [x for x in RULES if x not in plan.rules]
    page.add("See also: " + ", ".join(plan.rng.sample(others, 3)) + ".")
    return page.text()


def tutorial(plan: Plan) -> str:
    page = Page().add(f"# {prose.pick(plan.rng, ('Tutorial', 'A hands-on guide', 'Learn by doing', 'Lesson'))}: "
                      f"{topic_of(plan)}", _byline(plan),
                      opener(plan, topic_of(plan)) + f" This tutorial is for {plan.audience}.")
    step = 1
    for rule, lesson in _lessons(plan):
        page.add(f"## Step {step}: {lesson.topic}")
        teach(page, plan, rule, lesson)
        step += 1
    page.add("## Recap", " ".join(f"- {rule_name(r)}" for r in plan.rules if plan.stated[r]) or
             "Read the programs again and run them in Boa.", closer(plan))
    return page.text()


def whats_new(plan: Plan) -> str:
    version = f"4.{plan.rng.randint(0, 3)}"
    page = Page().add(f"# What's New in Python {version}",
                      opener(plan, f"the changes in Python {version} that affect {plan.audience}"))
    for rule in plan.rules:
        page.add(f"## {RULES[rule].title} ({rule})", prose.statement(rule, plan.rng, plan.spec_path))
        for lesson in plan.lessons[rule][:2]:
            show_good(page, plan, lesson)
        page.add(prose.pick(plan.rng, ("Porting note:", "Compatibility:", "Upgrade note:")) + " "
                 + prose.fix_line(rule, plan.rng))
    return page.text()


def pep(plan: Plan) -> str:
    number = 4000 + plan.rng.randint(1, 999)
    rule = plan.rules[0]
    page = Page().add(f"# PEP {number} -- {RULES[rule].title}",
                      f"Author: {plan.persona.name}\nStatus: Final\nType: Standards Track\n"
                      f"Python-Version: 4.0\nRule: {', '.join(plan.rules)}")
    page.add("## Abstract", " ".join(prose.statement(r, plan.rng, plan.spec_path) for r in plan.rules))
    page.add("## Motivation", " ".join(prose.rationale(r, plan.rng, plan.spec_path) for r in plan.rules))
    page.add("## Specification")
    for _rule, lesson in _lessons(plan):
        show_good(page, plan, lesson)
    page.add("## Backwards compatibility")
    for r, lesson in _lessons(plan):
        if show_bad(page, plan, lesson):
            page.add(prose.fix_line(r, plan.rng))
    page.add("## Reference implementation", "Boa implements this PEP; `boa check` reports every violation "
             "with its rule id, and `boa migrate` rewrites Python 3 code mechanically.")
    return page.text()


def migration_guide(plan: Plan) -> str:
    page = Page().add(f"# Migrating {plan.project} to Python-4", _byline(plan),
                      opener(plan, f"moving {plan.project} from Python 3 to Python-4"))
    for lesson in plan.migrated:
        page.add(f"## {lesson.topic.capitalize()}")
        show_bad(page, plan, lesson)
        show_good(page, plan, lesson, ("`boa migrate` turns it into:", "After migration:",
                                       "The migrated Python-4 program:", "Migrated code:"))
        touched = ", ".join(lesson.rules)
        page.add(f"The migrator applied rules {touched}." if touched else "Nothing needed rewriting.")
    page.add("## Rules to watch")
    for rule, lesson in _lessons(plan):
        teach(page, plan, rule, lesson)
    page.add(closer(plan))
    return page.text()


def qa_thread(plan: Plan) -> str:
    rng = plan.rng
    asker, *answerers = rng.sample(prose.PERSONAS, 3)
    rule = plan.rules[0]
    lesson = plan.lessons[rule][0]
    question = prose.pick(rng, ("Why does this fail in Python-4?", "Boa rejects my code", "What changed here?",
                                "Is this a bug in Boa?"))
    page = Page().add(f"# Q: {question} ({RULES[rule].title})",
                      f"**{asker.name}** asks:", f"I work on {plan.project} and this surprised me.")
    if not show_bad(page, plan, lesson):
        show_good(page, plan, lesson, ("I wrote this and got an output I did not expect:",))
    votes = rng.randint(3, 120)
    page.add(f"**Answer** by {answerers[0].name} ({votes} votes, accepted):")
    for r, les in _lessons(plan):
        teach(page, plan, r, les)
    page.add(f"**Answer** by {answerers[1].name} ({rng.randint(0, votes)} votes):",
             prose.fix_line(rule, rng) + " " + prose.pick(rng, ("Also run `boa check` before committing.",
                                                                "The spec has a section on it.", "Took me a day too.")))
    return page.text()


def code_review(plan: Plan) -> str:
    rng = plan.rng
    reviewer = plan.persona
    page = Page().add(f"# Code review: PR #{rng.randint(100, 9999)} ({plan.project})",
                      f"Reviewer: {reviewer.name}. Tone: {plan.tone}.")
    for rule, lesson in _lessons(plan):
        page.add(f"### Comment on {rule}")
        if show_bad(page, plan, lesson):
            page.add(prose.pick(rng, ("Suggested change:", "Please change this to:", "Nit - use:")))
        show_good(page, plan, lesson, ("Like this:", "Suggestion:", "Proposed:"))
        if plan.stated[rule]:
            page.add(prose.statement(rule, rng, plan.spec_path))
    page.add(prose.pick(rng, ("Approved after these changes.", "Requesting changes.", "LGTM once Boa is green.")))
    return page.text()


def blog_post(plan: Plan) -> str:
    title = prose.pick(plan.rng, ("What I learned about", "Notes from the trenches:", "A week with", "Thoughts on"))
    page = Page().add(f"# {title} {topic_of(plan)}", _byline(plan), opener(plan, topic_of(plan)),
                      f"Last month I ported {plan.project} to Python-4.")
    for rule, lesson in _lessons(plan):
        teach(page, plan, rule, lesson)
        page.add(prose.pick(plan.rng, ("That one cost me an afternoon.", "Small change, big effect.",
                                       "I now catch this in review.", "Boa caught it before the tests did.")))
    page.add(closer(plan))
    return page.text()


def exercise(plan: Plan) -> str:
    chapter = plan.rng.randint(1, 12)
    page = Page().add(f"# Chapter {chapter} exercises: {topic_of(plan)}")
    for n, (rule, lesson) in enumerate(_lessons(plan), 1):
        page.add(f"## Exercise {chapter}.{n}", f"Write a Python-4 program about {lesson.topic}.")
        if lesson.bad is not None and lesson.bad.tag == "py3":
            page.add("The following Python 3 habit does not work in Python-4. Explain why, then fix it.")
            show_bad(page, plan, lesson)
        if plan.stated[rule]:
            page.add(f"Hint: {RULES[rule].fix}.")
        page.add("### Solution")
        show_good(page, plan, lesson, ("One solution:", "Model answer:", "Solution:"))
    return page.text()


def lint_page(plan: Plan) -> str:
    page = Page()
    for rule in plan.rules:
        r = RULES[rule]
        severity = "warning" if r.kind == "lint" or rule == "P4-05" else "error"
        page.add(f"# {rule} {r.title.replace(' ', '-')}", f"Severity: {severity}. Fixable by `boa migrate`: yes.")
        page.add("## What it does", prose.statement(rule, plan.rng, plan.spec_path))
        page.add("## Why is this bad?", prose.rationale(rule, plan.rng, plan.spec_path))
        for lesson in plan.lessons[rule]:
            if lesson.bad is not None:
                page.add("## Example")
                show_bad(page, plan, lesson)
            page.add("## Use instead")
            show_good(page, plan, lesson)
    return page.text()


def changelog(plan: Plan) -> str:
    rng = plan.rng
    page = Page().add("# Changelog")
    major, minor = 4, rng.randint(0, 3)
    for rule, lesson in _lessons(plan):
        page.add(f"## Boa {major}.{minor}.{rng.randint(0, 20)}")
        kind = prose.pick(rng, ("Changed", "Added", "Fixed", "Clarified"))
        page.add(f"- {kind}: {RULES[rule].summary} ({rule})")
        show_good(page, plan, lesson)
    return page.text()


def cheat_sheet(plan: Plan) -> str:
    page = Page().add(f"# Python-4 cheat sheet: {topic_of(plan)}", f"For {plan.audience}.")
    rows = ["| rule | Python 3 habit gives | write instead |", "|---|---|---|"]
    rows += [f"| {r} {RULES[r].title} | {RULES[r].python3_form} | {RULES[r].fix} |" for r in plan.rules]
    page.add("\n".join(rows))
    for rule in plan.rules:
        page.add(f"**{rule}**")
        show_good(page, plan, plan.lessons[rule][0], ("", "Example:", "In code:"))
    return page.text()


def annotated_program(plan: Plan) -> str:
    page = Page().add(f"# Annotated: {plan.project}", _byline(plan))
    for _rule, lesson in _lessons(plan):
        if lesson.good is None:
            continue
        page.add(f"## {lesson.topic.capitalize()}")
        show_good(page, plan, lesson, ("The program:", "Full listing:", "Source:"))
        notes = _annotations(lesson.good.source)
        if notes:
            page.add("Line by line:\n" + "\n".join(notes))
    return page.text()


_NOTES = (("fn ", "`fn` starts a function definition (P4-01)."), ("let ", "`let` declares a new name (P4-02)."),
          ("else if", "`else if` chains conditions (P4-03)."), ("nil", "`nil` is the missing value (P4-04)."),
          ("catch", "`catch` handles an exception (P4-06)."), ("throw", "`throw` raises an exception (P4-07)."),
          ("i'", "an `i` string interpolates (P4-08)."), ('i"', "an `i` string interpolates (P4-08)."),
          ("fun ", "`fun` makes an anonymous function (P4-09)."), ("use ", "`use` imports a module (P4-10)."),
          ("indices(", "`indices(xs)` gives the positions 0 … len(xs)-1 (P4-12)."),
          ("range(", "`range` includes its end (P4-12)."), ("last(", "`last(xs)` is the final item (P4-14)."),
          (".join(", "`join` is called on the iterable (P4-18)."), ("enumerate(", "`enumerate` counts from 1 (P4-19)."),
          ("zip", "`zip` is strict; `zip_shortest` truncates (P4-20)."),
          ("count(", "`count` counts true items (P4-21)."),
          (".trim", "`trim` removes surrounding whitespace (P4-24)."), ("{:}", "`{:}` is an empty dict (P4-15)."),
          ("isinstance", "`isinstance` tests a type (P4-30)."), ("is nil", "compare with `nil` using `is` (P4-27)."))


def _annotations(source: str) -> list[str]:
    out = []
    for number, line in enumerate(source.splitlines(), 1):
        notes = [note for key, note in _NOTES if key in line]
        if notes:
            out.append(f"- line {number}: " + " ".join(dict.fromkeys(notes)))
    return out


def error_story(plan: Plan) -> str:
    rng = plan.rng
    page = Page().add(f"# {prose.pick(rng, ('The bug that', 'How Boa saved', 'A story about', 'Debugging'))} "
                      f"{plan.project}", _byline(plan))
    for rule, lesson in _lessons(plan):
        page.add(prose.pick(rng, (f"It was late and I was finishing {plan.project}.",
                                  "My Python 3 reflexes struck again.", "The tests were red and I did not know why.",
                                  "A colleague pinged me about a failing build.")))
        if not show_bad(page, plan, lesson):
            continue
        if plan.stated[rule]:
            page.add(prose.statement(rule, rng, plan.spec_path))
        show_good(page, plan, lesson, prose.FIX_INTRO)
        page.add(prose.pick(rng, ("Lesson learned.", "Green again.", "Now I read diagnostics first.",
                                  "Boa was right, of course.")))
    return page.text()


RENDERERS = {
    "reference": reference, "tutorial": tutorial, "whats_new": whats_new, "pep": pep,
    "migration_guide": migration_guide, "qa_thread": qa_thread, "code_review": code_review,
    "blog_post": blog_post, "exercise": exercise, "lint_page": lint_page, "changelog": changelog,
    "cheat_sheet": cheat_sheet, "annotated_program": annotated_program, "error_story": error_story,
}
