"""The report's helpers for rates and intervals.

A certified rate is k certified episodes of n: its interval is Wilson's score interval
(py4.binomial.wilson), which is not degenerate at k = 0 or k = n.
"""

from __future__ import annotations


def certified_count(rate: float | None, episodes: int | None) -> int | None:
    """Certified episodes behind a rate (the eval's certified_rate is certified episodes / episodes)."""
    if rate is None or not episodes:
        return None
    return round(rate * episodes)


def disjoint(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether two intervals do not overlap (a wholly above or wholly below b)."""
    return a[0] > b[1] or b[0] > a[1]
