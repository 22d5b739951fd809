"""R-VES: BIRD's reward steps, outlier filtering and the sqrt-mean score."""

from __future__ import annotations

import math

import pytest

from eval.metrics import r_ves, time_ratio, ves_reward


@pytest.mark.parametrize(
    ("ratio", "reward"),
    [
        (None, 0.0),
        (0.0, 0.0),  # wrong prediction
        (5.0, 1.25),
        (2.0, 1.25),
        (1.999, 1.0),
        (1.0, 1.0),
        (0.999, 0.75),
        (0.5, 0.75),
        (0.4999, 0.5),
        (0.25, 0.5),
        (0.2499, 0.25),
        (0.01, 0.25),
    ],
)
def test_reward_steps(ratio, reward):
    assert ves_reward(ratio) == reward


def test_score_is_mean_sqrt_times_100():
    rewards = [1.25, 1.0, 0.25, 0.0]
    expected = (math.sqrt(1.25) + 1 + 0.5 + 0) * 100 / 4
    assert r_ves(rewards) == pytest.approx(expected)
    assert r_ves([1.0] * 7) == pytest.approx(100.0)
    assert r_ves([]) == 0.0


def test_time_ratio_drops_3_sigma_outliers():
    gold = [1.0] * 20
    pred = [1.0] * 19 + [0.001]  # one glitch: ratio 1000 in that iteration
    assert time_ratio(gold, pred) == pytest.approx(1.0)


def test_time_ratio_keeps_identical_ratios():
    # BIRD's filter empties this list (sigma = 0) and divides by zero; ours keeps it.
    assert time_ratio([2.0, 2.0, 2.0], [1.0, 1.0, 1.0]) == pytest.approx(2.0)


def test_time_ratio_rejects_mismatched_samples():
    with pytest.raises(ValueError):
        time_ratio([1.0, 1.0], [1.0])
    with pytest.raises(ValueError):
        time_ratio([1.0], [0.0])
