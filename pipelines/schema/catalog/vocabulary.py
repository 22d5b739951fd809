"""A text column's vocabulary: the values its documentation names and its data holds.

documentation ──► candidate labels: quoted words ('high', "M", `blocker`) and the items of
                  a value note ("values: one of OH, PA, WV", "values: M: male; F: female")
data ──► the column's distinct values, most frequent first (at most max_values + 1 read)
──► documented: the candidates the data holds, in documentation order, when they are at
    least half of its distinct values (a quoted example, 'billing', is not a vocabulary)
──► else observed: every distinct value, when there are at most max_values and they repeat
    (at most half as many as rows)
──► else none: free text, names, keys

>>> doc = "Impact on the customer. One of: 'blocker' = down; 'high' = degraded; 'low' = minor."
>>> vocabulary(doc, ["low", "high", "blocker"], max_values=30, rows=100)
Vocabulary(values=('blocker', 'high', 'low'), source='documented', complete=True)
>>> vocabulary("", ["France", "Netherlands"], max_values=30, rows=6).source
'observed'
>>> vocabulary("", ["Joe", "Ann", "Bo"], max_values=30, rows=3) is None   # every value once
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from core.types import Frozen

# A quote opens after no letter and closes before none: the apostrophe of "customer's" is none.
QUOTED = re.compile(r"(?<!\w)(?:'([^'\n]{1,80})'|\"([^\"\n]{1,80})\"|`([^`\n]{1,80})`)(?!\w)")
# The label of a value-note item: what comes before "=", ":", " (" or " - ".
_LABEL_END = re.compile(r"\s*(?:=|:|\s\(|\s-\s)")
_NOTE_PREFIX = re.compile(r"^(?:one of|either)\s+", re.IGNORECASE)


class Vocabulary(Frozen):
    """The values of an enum-like column. ``documented``: those its documentation names (and
    the data holds); ``observed``: its distinct values, read from the data. ``complete``: no
    other value occurs."""

    values: tuple[str, ...]
    source: Literal["documented", "observed"]
    complete: bool


def candidate_labels(text: str) -> list[str]:
    """Words the documentation may name as values: quoted words, and the items of its value
    note (the part after ``values:``, split at commas, semicolons, bars and "or")."""
    found = [next(g for g in m.groups() if g is not None) for m in QUOTED.finditer(text)]
    _, marker, note = text.partition("values:")
    if marker:
        for item in re.split(r"[,;|]|\bor\b", note):
            label = _LABEL_END.split(_NOTE_PREFIX.sub("", item.strip()), maxsplit=1)[0]
            found.append(label.strip(" '\"`."))
    return [label for label in dict.fromkeys(found) if label]


def vocabulary(
    documentation: str,
    distinct: Sequence[str],
    *,
    max_values: int,
    rows: int | None,
    observable: bool = True,
) -> Vocabulary | None:
    """The vocabulary of a column whose distinct values (most frequent first, at most
    ``max_values + 1`` of them) are ``distinct``; see the module docstring. ``observable``
    False (a key, an identifier): only a documented one."""
    if not distinct or len(distinct) > max_values:
        return None
    stored = {value.lower(): value for value in distinct}
    named = (stored.get(label.lower()) for label in candidate_labels(documentation))
    documented = tuple(dict.fromkeys(value for value in named if value is not None))
    if documented and 2 * len(documented) >= len(distinct):
        complete = len(documented) == len(distinct)
        return Vocabulary(values=documented, source="documented", complete=complete)
    if observable and rows is not None and 2 * len(distinct) <= rows:
        return Vocabulary(values=tuple(distinct), source="observed", complete=True)
    return None
