"""The SDS rubric: seven ratings of 0-5, their total, and the report buckets."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from eval.sds import SDS_BUCKETS, SdsScores, sds_bucket


def test_total_is_the_sum_of_the_seven_ratings():
    assert SdsScores(D1=5, D2=5, D3=5, D4=5, D5=5, D6=5, D7=5).total == 35
    assert SdsScores(D1=1, D2=0, D3=2, D4=0, D5=3, D6=0, D7=1).total == 7


@pytest.mark.parametrize("bad", [{"D1": 6}, {"D7": -1}, {"D8": 1}])
def test_ratings_outside_the_rubric_are_refused(bad):
    scores = {f"D{i}": 0 for i in range(1, 8)} | bad
    with pytest.raises(ValidationError):
        SdsScores(**scores)


def test_bucket_boundaries():
    assert [sds_bucket(t) for t in (0, 12, 13, 18, 19, 35)] == [
        SDS_BUCKETS[0],
        SDS_BUCKETS[0],
        SDS_BUCKETS[1],
        SDS_BUCKETS[1],
        SDS_BUCKETS[2],
        SDS_BUCKETS[2],
    ]
