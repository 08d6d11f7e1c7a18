"""Wilson 95% intervals of certified rates (py4.binomial) and the report's interval helpers."""

import math

import pytest

from py4.binomial import wilson
from py4.report.intervals import certified_count, disjoint


@pytest.mark.parametrize(("k", "n", "lo", "hi"), [
    (3, 6, 0.1876, 0.8124),   # the smoke demo's granularity: steps of 1/6
    (0, 6, 0.0, 0.3903),      # 0/6 is not an exact zero
    (6, 6, 0.6097, 1.0),
    (50, 100, 0.4038, 0.5962),
])
def test_wilson_matches_known_values(k, n, lo, hi):
    got = wilson(k, n)
    assert got[0] == pytest.approx(lo, abs=1e-4) and got[1] == pytest.approx(hi, abs=1e-4)


def test_wilson_of_no_episodes_is_undefined():
    assert all(math.isnan(x) for x in wilson(0, 0))


def test_certified_count_and_disjoint():
    assert certified_count(0.5, 6) == 3 and certified_count(None, 6) is None and certified_count(0.5, 0) is None
    assert disjoint((0.6, 0.8), (0.1, 0.5)) and not disjoint((0.4, 0.8), (0.1, 0.5))
