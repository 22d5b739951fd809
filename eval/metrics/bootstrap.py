"""Paired bootstrap confidence interval of the difference in accuracy between two configurations.

Both answered the same questions, so the questions are resampled (with replacement) as pairs:
each resample keeps a question's two verdicts together, and the interval says how much the
difference depends on which questions happened to be asked. Percentile interval, fixed seed.

    >>> ci = paired_bootstrap([True] * 30 + [False] * 10, [True] * 10 + [False] * 30)
    >>> str(ci), ci.excludes_zero
    ('+0.500 [+0.350, +0.650]', True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import Field

from core.types import Frozen

RESAMPLES = 2000
CONFIDENCE = 0.95
_CHUNK = 250  # resamples drawn at once: a few thousand questions stay a few MB


class DiffCI(Frozen):
    """``diff`` = mean(a) − mean(b) over ``n`` paired questions, with its bootstrap interval."""

    diff: float
    low: float
    high: float
    n: int = Field(ge=1)
    confidence: float = CONFIDENCE

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def __str__(self) -> str:
        return f"{_signed(self.diff)} [{_signed(self.low)}, {_signed(self.high)}]"


def _signed(value: float) -> str:
    return f"{value:+.3f}".replace("-", "\N{MINUS SIGN}")


def paired_bootstrap(
    a: Sequence[float | bool],
    b: Sequence[float | bool],
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> DiffCI:
    """mean(a) − mean(b) and its percentile interval; ``a[i]`` and ``b[i]`` are one question's
    scores (1/0 verdicts) under the two configurations."""
    if len(a) != len(b):
        raise ValueError(f"paired scores differ in length: {len(a)} and {len(b)}")
    if not a:
        raise ValueError("no paired questions to compare")
    diffs = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    means = np.concatenate(
        [
            diffs[
                rng.integers(0, len(diffs), size=(min(_CHUNK, resamples - done), len(diffs)))
            ].mean(axis=1)
            for done in range(0, resamples, _CHUNK)
        ]
    )
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return DiffCI(
        diff=float(diffs.mean()),
        low=float(low),
        high=float(high),
        n=len(diffs),
        confidence=confidence,
    )


def paired_difference(mine: Mapping[str, bool], theirs: Mapping[str, bool]) -> DiffCI | None:
    """``mine`` − ``theirs`` over the questions both scored (task id -> verdict); None without
    any such question."""
    common = sorted(mine.keys() & theirs.keys())
    if not common:
        return None
    return paired_bootstrap([mine[q] for q in common], [theirs[q] for q in common])
