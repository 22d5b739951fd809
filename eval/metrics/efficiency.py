"""R-VES, BIRD's reward-based valid efficiency score (mini-dev ``evaluation_ves.py``).

For each question whose prediction is correct (BIRD set semantics), both queries are timed
``iterations`` times, alternating; the per-iteration ratios ``gold_time / pred_time`` lose
their 3-sigma outliers and are averaged. The mean ratio maps to a reward:

==================  ======
time ratio          reward
==================  ======
>= 2                1.25
[1, 2)              1
[0.5, 1)            0.75
[0.25, 0.5)         0.5
(0, 0.25)           0.25
wrong prediction    0
==================  ======

and R-VES = mean over questions of ``sqrt(reward) * 100``. BIRD times 100 iterations per
question; :data:`DEFAULT_ITERATIONS` is smaller because R-VES here is a secondary figure.

    >>> r_ves([ves_reward(3.0), ves_reward(0.6), ves_reward(None)])  # doctest: +ELLIPSIS
    66.1...
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

DEFAULT_ITERATIONS = 10

# (lower bound on gold_time / pred_time, reward), checked top-down.
REWARD_STEPS: tuple[tuple[float, float], ...] = ((2.0, 1.25), (1.0, 1.0), (0.5, 0.75), (0.25, 0.5))
FLOOR_REWARD = 0.25


def ves_reward(time_ratio: float | None) -> float:
    """Reward of one question; ``None`` (or 0) means the prediction was wrong."""
    if not time_ratio:
        return 0.0
    if time_ratio < 0:
        raise ValueError(f"time ratio must be positive, got {time_ratio}")
    for bound, reward in REWARD_STEPS:
        if time_ratio >= bound:
            return reward
    return FLOOR_REWARD


def time_ratio(gold_seconds: Sequence[float], pred_seconds: Sequence[float]) -> float:
    """Mean of per-iteration ``gold / pred`` ratios after dropping 3-sigma outliers.

    BIRD's filter keeps ``mean - 3σ < x < mean + 3σ``, which drops *everything* when all
    ratios are equal (σ = 0) and then divides by zero; here the ratios are kept in that case.
    """
    if len(gold_seconds) != len(pred_seconds) or not gold_seconds:
        raise ValueError("need the same, non-zero number of gold and predicted timings")
    if min(pred_seconds) <= 0:
        raise ValueError("predicted query timings must be positive")
    ratios = [gold / pred for gold, pred in zip(gold_seconds, pred_seconds)]
    mean, sigma = statistics.fmean(ratios), statistics.pstdev(ratios)
    kept = [r for r in ratios if mean - 3 * sigma < r < mean + 3 * sigma] or ratios
    return statistics.fmean(kept)


def r_ves(rewards: Sequence[float]) -> float:
    """R-VES over questions: mean of ``sqrt(reward) * 100`` (0.0 for no questions)."""
    if not rewards:
        return 0.0
    return sum(math.sqrt(reward) * 100 for reward in rewards) / len(rewards)
