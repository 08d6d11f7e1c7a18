"""95% intervals for the rates the report shows.

A certified rate is k certified episodes of n: its interval is Wilson's score interval, which
stays inside [0, 1] and is not degenerate at k = 0 or k = n (where a normal interval collapses to
a point and a smoke run's 0/6 would look exact).
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of k successes in n trials; (nan, nan) when n is 0."""
    if n <= 0:
        return (float("nan"), float("nan"))
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def certified_count(rate: float | None, episodes: int | None) -> int | None:
    """Certified episodes behind a rate (the eval's certified_rate is certified episodes / episodes)."""
    if rate is None or not episodes:
        return None
    return round(rate * episodes)


def disjoint(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether two intervals do not overlap (a wholly above or wholly below b)."""
    return a[0] > b[1] or b[0] > a[1]
