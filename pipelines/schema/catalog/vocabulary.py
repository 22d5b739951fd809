"""A text column's vocabulary: the values its documentation names that its data holds.

documentation ──► candidate labels (``documentation/vocabulary.py``): quoted words ('high',
                  "M", `blocker`) and the items of a value note ("values: one of OH, PA, WV",
                  "values: M: male; F: female")
data ──► the column's distinct values, most frequent first (at most max_values + 1 read)
──► documented: the candidates the data holds, in documentation order, when they are at
    least half of its distinct values (a quoted example, 'billing', is not a vocabulary)
──► else observed: every distinct value, when there are at most max_values and they repeat
    (at most half as many as rows)
──► else none: free text, names, keys

>>> from pipelines.schema.documentation.vocabulary import labels
>>> doc = labels("Impact on the customer. One of: 'blocker' = down; 'high' = degraded; 'low' = minor.")
>>> vocabulary(doc.candidates, ["low", "high", "blocker"], max_values=30, rows=100)
Vocabulary(values=('blocker', 'high', 'low'), source='documented', complete=True)
>>> vocabulary((), ["France", "Netherlands"], max_values=30, rows=6).source
'observed'
>>> vocabulary((), ["Joe", "Ann", "Bo"], max_values=30, rows=3) is None   # every value once
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from core.types import Frozen


class Vocabulary(Frozen):
    """The values of an enum-like column. ``documented``: those its documentation names (and
    the data holds); ``observed``: its distinct values, read from the data. ``complete``: no
    other value occurs."""

    values: tuple[str, ...]
    source: Literal["documented", "observed"]
    complete: bool


def vocabulary(
    candidates: Sequence[str],
    distinct: Sequence[str],
    *,
    max_values: int,
    rows: int | None,
    observable: bool = True,
) -> Vocabulary | None:
    """The vocabulary of a column whose documentation names ``candidates`` and whose distinct
    values (most frequent first, at most ``max_values + 1`` of them) are ``distinct``; see the
    module docstring. ``observable`` False (a key, an identifier): only a documented one."""
    if not distinct or len(distinct) > max_values:
        return None
    stored = {value.lower(): value for value in distinct}
    named = (stored.get(label.lower()) for label in candidates)
    documented = tuple(dict.fromkeys(value for value in named if value is not None))
    if documented and 2 * len(documented) >= len(distinct):
        complete = len(documented) == len(distinct)
        return Vocabulary(values=documented, source="documented", complete=complete)
    if observable and rows is not None and 2 * len(distinct) <= rows:
        return Vocabulary(values=tuple(distinct), source="observed", complete=True)
    return None
