import pytest

from eval.metrics.bootstrap import paired_bootstrap, paired_difference


def test_a_consistent_gain_on_few_questions_excludes_zero():
    # 100 questions, both right on the same 50, and the first also on 5 more: pairing sees that
    # every difference points one way, though 0.55 against 0.50 alone would say little
    first = [True] * 55 + [False] * 45
    second = [True] * 50 + [False] * 50
    ci = paired_bootstrap(first, second)
    assert ci.diff == pytest.approx(0.05) and ci.n == 100
    assert 0 < ci.low <= ci.diff <= ci.high and ci.excludes_zero


def test_differences_that_cancel_out_contain_zero():
    # 10 questions only the first gets right, 10 only the second: no difference, wide interval
    first = [True] * 10 + [False] * 10 + [True] * 20
    second = [False] * 10 + [True] * 10 + [True] * 20
    ci = paired_bootstrap(first, second)
    assert ci.diff == 0 and ci.low < 0 < ci.high and not ci.excludes_zero
    assert ci.high - ci.low > 0.2


def test_the_interval_is_reproducible_and_printed_with_signs():
    first, second = [1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 1, 1]
    assert paired_bootstrap(first, second) == paired_bootstrap(first, second)
    assert (
        paired_bootstrap(first, second, confidence=0.5).high <= paired_bootstrap(first, second).high
    )
    text = str(paired_bootstrap([0, 0, 1], [1, 1, 1]))
    assert text.startswith("\N{MINUS SIGN}0.667 [") and text.endswith("]")


def test_pairs_are_the_questions_both_configurations_scored():
    mine = {"q1": True, "q2": True, "q3": False, "only_mine": True}
    theirs = {"q1": False, "q2": True, "q3": False, "only_theirs": False}
    ci = paired_difference(mine, theirs)
    assert ci is not None and ci.n == 3 and ci.diff == pytest.approx(1 / 3)
    assert paired_difference(mine, {"elsewhere": True}) is None
    with pytest.raises(ValueError, match="length"):
        paired_bootstrap([1, 0], [1])
    with pytest.raises(ValueError, match="no paired questions"):
        paired_bootstrap([], [])
