"""Assign bank problems to splits, as a pure function of (problems, held-out set, seed).

Rules kept here (see docs/problems.md):
- a problem *touches* the held-out set when it targets a held-out rule or its gold
  exercises one (``rules_exercised`` from ``compile_py4``);
- ``test_heldout``: families chosen to cover every held-out rule, problems that target a
  held-out rule, at most ``test_cap_per_family`` per family;
- ``test_heldin``: whole families whose problems never touch the held-out set, chosen to
  cover many held-in rules, capped the same way;
- every other family is a training family: its clean problems fill ``grpo`` then
  ``eft_pool``, and everything else (held-out-touching problems included) is ``eft_large``.
Problems of a test family that do not fit its split are dropped, so that no family of a
test split appears in any training split.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

__all__ = ["SplitItem", "SplitSizes", "assign_splits", "select_train_sanity", "TRAINING_SPLITS", "TEST_SPLITS"]

TRAINING_SPLITS = ("eft_pool", "grpo", "eft_large", "train_sanity")
TEST_SPLITS = ("test_heldin", "test_heldout")


@dataclass(frozen=True)
class SplitItem:
    """What the split logic needs to know of a problem."""

    id: str
    family: str
    rules: tuple[str, ...]  # targeted
    exercised: tuple[str, ...]  # by the gold
    difficulty: int = 1


@dataclass(frozen=True)
class SplitSizes:
    grpo: int = 512
    eft_pool: int = 1120
    test_min: int = 250
    test_cap_per_family: int = 40


def _touches(item: SplitItem, held_out: frozenset[str]) -> bool:
    return bool(held_out & (set(item.rules) | set(item.exercised)))


def _choose_heldout_families(by_family, held_out, rng, sizes) -> list[str]:
    """One family per held-out rule (a random one among those targeting it), then more until test_min."""
    targeting = defaultdict(list)
    for fam, items in by_family.items():
        for rule in sorted(held_out & {r for it in items for r in it.rules}):
            targeting[rule].append(fam)
    chosen: list[str] = []
    for rule in sorted(held_out):
        fams = sorted(targeting.get(rule, []))
        if not fams or any(f in chosen for f in fams):
            continue
        # keep at least one family per rule for training when there is a choice
        chosen.append(rng.choice(fams))

    def size(fam):
        return min(sizes.test_cap_per_family, sum(1 for it in by_family[fam] if held_out & set(it.rules)))

    spare = sorted(f for rule in sorted(targeting) for f in targeting[rule] if f not in chosen)
    spare = sorted(set(spare))
    rng.shuffle(spare)
    while sum(size(f) for f in chosen) < sizes.test_min and spare:
        chosen.append(spare.pop())
    return chosen


def _choose_heldin_families(by_family, held_out, taken, rng, sizes) -> list[str]:
    """Clean families that cover many held-in rules, never the last training family of a rule."""
    clean = sorted(f for f, items in by_family.items()
                   if f not in taken and not any(_touches(it, held_out) for it in items))
    rng.shuffle(clean)
    family_rules = {f: {r for it in by_family[f] for r in it.rules} for f in clean}
    remaining = defaultdict(int)  # rule -> number of clean, not-chosen families targeting it
    for f in clean:
        for r in family_rules[f]:
            remaining[r] += 1
    chosen: list[str] = []
    covered: set[str] = set()
    while sum(min(sizes.test_cap_per_family, len(by_family[f])) for f in chosen) < sizes.test_min:
        options = [f for f in clean if f not in chosen and all(remaining[r] > 1 for r in family_rules[f])]
        if not options:
            break
        best = max(options, key=lambda f: len(family_rules[f] - covered))  # stable: first max in shuffled order
        chosen.append(best)
        covered |= family_rules[best]
        for r in family_rules[best]:
            remaining[r] -= 1
    return chosen


def assign_splits(items: Iterable[SplitItem], held_out: Iterable[str], seed: int,
                  sizes: SplitSizes = SplitSizes()) -> dict[str, str]:
    """Map problem id -> split for every problem kept in the bank (dropped ids are absent).

    Deterministic in (items, held_out, seed, sizes). Items must have unique ids.
    """
    held_out = frozenset(held_out)
    items = sorted(items, key=lambda it: it.id)
    by_family: dict[str, list[SplitItem]] = defaultdict(list)
    for it in items:
        by_family[it.family].append(it)
    rng = random.Random(f"py4-splits:{seed}:{','.join(sorted(held_out))}")
    split: dict[str, str] = {}

    heldout_fams = _choose_heldout_families(by_family, held_out, rng, sizes)
    for fam in heldout_fams:
        eligible = [it for it in by_family[fam] if held_out & set(it.rules)]
        rng.shuffle(eligible)
        for it in eligible[: sizes.test_cap_per_family]:
            split[it.id] = "test_heldout"

    heldin_fams = _choose_heldin_families(by_family, held_out, set(heldout_fams), rng, sizes)
    for fam in heldin_fams:
        eligible = list(by_family[fam])
        rng.shuffle(eligible)
        for it in eligible[: sizes.test_cap_per_family]:
            split[it.id] = "test_heldin"

    test_fams = set(heldout_fams) | set(heldin_fams)
    training = [it for it in items if it.family not in test_fams]
    clean = [it for it in training if not _touches(it, held_out)]
    rng.shuffle(clean)
    for it in clean[: sizes.grpo]:
        split[it.id] = "grpo"
    for it in clean[sizes.grpo: sizes.grpo + sizes.eft_pool]:
        split[it.id] = "eft_pool"
    for it in training:
        split.setdefault(it.id, "eft_large")
    return split


def select_train_sanity(problems, n: int = 16, seed: int = 0, split: str = "eft_pool") -> list:
    """A tiny, deterministic selection of easy held-in problems for smoke-scale EFT.

    Takes problems of ``split`` (default ``eft_pool``), lowest difficulty first, one per
    family in turn, so the smoke model sees varied rules. Returns at most ``n`` problems.
    """
    pool = sorted((p for p in problems if p.split == split), key=lambda p: (p.difficulty, p.id))
    rng = random.Random(f"py4-train-sanity:{seed}")
    by_family: dict[str, list] = defaultdict(list)
    for p in pool:
        by_family[p.family].append(p)
    families = sorted(by_family)
    rng.shuffle(families)
    chosen = []
    while len(chosen) < n and any(by_family[f] for f in families):
        for fam in families:
            if by_family[fam] and len(chosen) < n:
                chosen.append(by_family[fam].pop(0))
    return chosen
