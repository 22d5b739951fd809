"""Agreement of two binary raters on the same items: the share that agree and Cohen's kappa.

>>> agreement([True, True, False, False], [True, False, False, False])
(0.75, 0.5)
"""

from __future__ import annotations

from collections.abc import Sequence


def agreement(a: Sequence[bool], b: Sequence[bool]) -> tuple[float, float | None]:
    """``(share agreeing, Cohen's kappa)``; kappa is None when chance agreement is certain (both
    raters gave one label to every item), where it is undefined."""
    if len(a) != len(b) or not a:
        raise ValueError(f"agreement needs two equally long, non-empty ratings: {len(a)}, {len(b)}")
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b)) / n
    p_a, p_b = sum(a) / n, sum(b) / n
    chance = p_a * p_b + (1 - p_a) * (1 - p_b)
    if chance == 1:
        return observed, None
    return observed, (observed - chance) / (1 - chance)
