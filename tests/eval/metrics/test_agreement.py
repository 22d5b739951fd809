import pytest

from eval.metrics.agreement import agreement


def test_kappa_discounts_the_agreement_chance_alone_would_give():
    # both say "right" on 9 of 10 and agree on 8: high raw agreement, little beyond chance
    a = [True] * 9 + [False]
    b = [True] * 8 + [False, True]
    share, kappa = agreement(a, b)
    assert share == pytest.approx(0.8) and kappa == pytest.approx((0.8 - 0.82) / (1 - 0.82))
    assert agreement([True, False], [False, True]) == (0.0, -1.0)
    assert agreement([True, True], [True, True]) == (1.0, None)  # one label only: undefined
    with pytest.raises(ValueError):
        agreement([], [])
