"""What every stage of the work-item generator shares: the calendar, random draws, and the
helpers that write a row's nested lists (owners, tags, mirrored links).

Rows are plain dicts keyed by column name (``eval/enterprise/schema.py``); the nested columns
hold lists of dicts. Determinism rule: every draw comes from the one ``random.Random`` passed
in, and nothing iterates over a ``set`` (string hashing is randomised per process).
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any

from eval.enterprise.vocabulary import INVERSE_LINK

Row = dict[str, Any]

HISTORY_START = datetime(2023, 7, 1)
SNAPSHOT_AT = datetime(2025, 7, 1)  # the extract's moment: nothing happens at or after it
LAST_MINUTE = SNAPSHOT_AT - timedelta(minutes=1)
HISTORY_MINUTES = int((SNAPSHOT_AT - HISTORY_START).total_seconds() // 60)
# Recent quarters hold more work than old ones: the customer base grows.
GROWTH = 1.6
# Customer activity follows office hours more than the night (hour -> weight).
HOUR_WEIGHTS = tuple(1 if h < 7 or h > 19 else 4 if 9 <= h <= 17 else 2 for h in range(24))
_HOUR_CUMULATIVE = tuple(itertools.accumulate(HOUR_WEIGHTS))


def weighted(rng: random.Random, options: Sequence[Any], weights: Sequence[float]) -> Any:
    return rng.choices(options, weights=weights, k=1)[0]


def minutes_lognormal(rng: random.Random, median: float, sigma: float) -> int:
    """A positive duration in minutes, log-normally spread around ``median``."""
    return max(1, round(median * math.exp(rng.gauss(0.0, sigma))))


def moment(
    rng: random.Random, start: datetime = HISTORY_START, end: datetime = SNAPSHOT_AT
) -> datetime:
    """A time in ``[start, end)``, later times likelier (growth), office hours likelier."""
    span_days = max(1, (end - start).days)
    day = int(span_days * rng.random() ** (1 / GROWTH))
    hour = bisect.bisect_right(_HOUR_CUMULATIVE, rng.random() * _HOUR_CUMULATIVE[-1])
    at = start + timedelta(
        days=day, hours=hour, minutes=rng.randrange(60), seconds=rng.randrange(60)
    )
    return min(at, end - timedelta(seconds=1))


def plus_minutes(at: datetime, minutes: float) -> datetime:
    return at + timedelta(minutes=minutes)


def minutes_between(start: datetime, end: datetime) -> int:
    return int((end - start).total_seconds() // 60)


def quarter_of(d: date | datetime) -> str:
    """Release name of the quarter holding ``d``: ``'2025.3'``."""
    return f"{d.year}.{(d.month - 1) // 3 + 1}"


def owner(user: Row, role: str) -> Row:
    return {"user_id": user["user_id"], "display_name": user["display_name"], "role": role}


def add_tag(row: Row, name: str, tag_type: str, source: str) -> None:
    """Add a label unless the row already has one of that name (each label once per row)."""
    if all(tag["name"] != name for tag in row["tags"]):
        row["tags"].append({"name": name, "type": tag_type, "source": source})


def link(
    source: Row, source_kind: str, target: Row, target_kind: str, link_type: str, at: datetime
) -> None:
    """Store a link on both ends: ``link_type`` on the source, its inverse on the target."""
    source["links"].append(
        {
            "type": link_type,
            "target_type": target_kind,
            "display_id": target["display_id"],
            "linked_at": at,
        }
    )
    target["links"].append(
        {
            "type": INVERSE_LINK[link_type],
            "target_type": source_kind,
            "display_id": source["display_id"],
            "linked_at": at,
        }
    )


def linked(row: Row, display_id: str) -> bool:
    return any(item["display_id"] == display_id for item in row["links"])


def sort_links(rows: Sequence[Row]) -> None:
    for row in rows:
        row["links"].sort(key=lambda item: (item["linked_at"], item["type"], item["display_id"]))


def number_by_time(rows: list[Row], prefix: str, time_column: str) -> None:
    """Sort by creation time and give display ids in that order (``TKT-1`` is the oldest)."""
    rows.sort(key=lambda row: row[time_column])
    for i, row in enumerate(rows, start=1):
        row["display_id"] = f"{prefix}-{i}"


def survey(rng: random.Random, sent: int, answer_rate: float, mean_score: float) -> Row:
    """A CSAT aggregation for ``sent`` surveys, scores 1-5 around ``mean_score``."""
    scores = [
        min(5, max(1, round(rng.gauss(mean_score, 1.0))))
        for _ in range(sent)
        if rng.random() < answer_rate
    ]
    return {
        "surveys_sent": sent,
        "responses": len(scores),
        "csat_sum": sum(scores),
        "csat_average": sum(scores) / len(scores) if scores else None,
        "satisfied": sum(s >= 4 for s in scores),
        "dissatisfied": sum(s <= 2 for s in scores),
    }


class Picker:
    """Weighted draws from a fixed list, cumulative weights computed once."""

    def __init__(self, items: Sequence[Any], weights: Sequence[float]) -> None:
        self.items = list(items)
        self.cumulative = list(itertools.accumulate(weights))

    def pick(self, rng: random.Random) -> Any:
        return self.items[bisect.bisect_right(self.cumulative, rng.random() * self.cumulative[-1])]
