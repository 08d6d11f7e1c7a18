"""Intervals for a rate of k successes in n trials.

Wilson's score interval stays inside [0, 1] and is not degenerate at k = 0 or k = n, where a
normal interval (and a bootstrap of identical values) collapses to a point: a smoke run's 0/6
certified episodes, or a probe rule at 0/42 pairs, would otherwise look exact. The report's
certified rates and the probes' rates at 0 or 1 both use it.
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
    # at k = 0 (k = n) the bound is exactly 0 (1); the formula leaves a rounding residue
    return (0.0 if k == 0 else max(0.0, centre - half), 1.0 if k == n else min(1.0, centre + half))
