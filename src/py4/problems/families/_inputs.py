"""Random test-input helpers shared by the family modules (seeded by the caller's rng)."""

from __future__ import annotations

import random

WORDS = (
    "apple banana cherry delta echo falcon garden harbor island jungle kettle lemon "
    "mango nectar orange pepper quartz river salmon tiger umbrella violet walnut xenon "
    "yellow zebra amber birch cedar dune ember fjord grove heron iris jade koala lotus "
    "maple north ocean pine quill raven stone thorn union vale willow yarrow zinc"
).split()

NAMES = "ada alan grace linus guido barbara ken dennis margaret edsger donald tim".split()


def ints(rng: random.Random, n: int, lo: int = -20, hi: int = 20) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(n)]


def int_lists(rng: random.Random, count: int, lo: int = -20, hi: int = 20, min_len: int = 0,
              max_len: int = 8) -> list[list[int]]:
    return [ints(rng, rng.randint(min_len, max_len), lo, hi) for _ in range(count)]


def words(rng: random.Random, n: int) -> list[str]:
    return [rng.choice(WORDS) for _ in range(n)]


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(words(rng, n))


def choose(rng: random.Random, options):
    """One option; options may be a dict (returns a (key, value) pair) or a sequence."""
    if isinstance(options, dict):
        key = rng.choice(sorted(options))
        return key, options[key]
    return rng.choice(list(options))
