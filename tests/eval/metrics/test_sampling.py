"""pass@k against brute-force enumeration of every k-subset of the samples."""

from __future__ import annotations

import itertools
import math

import pytest

from eval.metrics import pass_at_k


def _enumerated(n: int, c: int, k: int) -> float:
    samples = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(samples[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", range(1, 9))
def test_matches_enumeration(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(_enumerated(n, c, k), abs=1e-12)


def test_large_n_is_stable():
    # C(1000, 500) overflows floats; the product form does not.
    exact = 1 - math.comb(1000 - 3, 500) / math.comb(1000, 500)
    assert pass_at_k(1000, 3, 500) == pytest.approx(exact, rel=1e-12)
    assert pass_at_k(10_000, 0, 100) == 0.0


@pytest.mark.parametrize(("n", "c", "k"), [(5, 6, 1), (5, -1, 1), (5, 2, 0), (5, 2, 6)])
def test_rejects_impossible_counts(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
