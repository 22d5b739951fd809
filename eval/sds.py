"""SDS: the seven-dimension rubric of the analytical depth a question asks for, whatever SQL
answers it. Each dimension is rated 0–5, so a total lies in 0–35; reports group questions in
three buckets of the total (``0-12``, ``13-18``, ``19-35``).

=====  ======================  =====================================================================
D1     eligibility             conditions on the analysed entity itself that make a row count
                               (its own enums, flags, its typed links): 0 none, 1 per condition
D2     derived metric          0 a value or count read off; 1 a plain aggregate; 2 a ratio, share or
                               difference; 3 a duration or a ratio per group; 4 a metric built from
                               other aggregates (weighted averages, per-account rates); 5 chained
D3     population scoping      independent filters through other entities (account tier, region,
                               product, owner's team): 0 none, 1 per filter
D4     multi-stage logic       chained analytical steps: 0 one; 1 aggregate then filter; 2 find a
                               set, then compute over it; 3+ longer chains
D5     output precision        distinct output fields asked for or implied (1–5, 5 for five or more)
D6     temporal precision      0 none; 1 a year; 2 a month or quarter; 3 a precise range or a window
                               before the snapshot; 4 durations between timestamps or two windows
                               compared; 5 rolling or per-period series
D7     construct diversity     advanced SQL constructs needed (UNNEST, CTE, window function, set
                               operation, subquery, conditional aggregation, self-join): 1 each
=====  ======================  =====================================================================

    >>> SdsScores(D1=2, D2=2, D3=1, D4=0, D5=2, D6=3, D7=2).total
    12
    >>> sds_bucket(12), sds_bucket(13), sds_bucket(19)
    ('0-12', '13-18', '19-35')
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from core.types import Frozen

SDS_BUCKETS = ("0-12", "13-18", "19-35")

Score = Annotated[int, Field(ge=0, le=5)]


class SdsScores(Frozen):
    """One question's ratings; ``total`` is their sum."""

    D1: Score
    D2: Score
    D3: Score
    D4: Score
    D5: Score
    D6: Score
    D7: Score

    @property
    def total(self) -> int:
        return self.D1 + self.D2 + self.D3 + self.D4 + self.D5 + self.D6 + self.D7


def sds_bucket(total: int) -> str:
    """The report bucket of an SDS total."""
    if total <= 12:
        return SDS_BUCKETS[0]
    return SDS_BUCKETS[1] if total <= 18 else SDS_BUCKETS[2]
