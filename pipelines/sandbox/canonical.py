"""Canonical result rows and their hashes: equal answers hash equal, whatever the row order.

    raw rows ──canonical_value per cell──► canonical rows ──sort (total order)──► JSON ──BLAKE2b──► hash

Cell rules (one table, ``_CELL_RULES``; first matching type wins):

=================================  ==================================================================
``None``                           stays ``None`` — the null sentinel (JSON ``null``, sorts first)
``bool``                           ``int`` (SQLite has no booleans; BIRD compares ``True == 1``)
``int``                            unchanged
``float`` / ``Decimal``            rounded to 6 dp, ``-0.0`` → ``0.0``; an integral value becomes
                                   ``int`` (BIRD compares Python values, where ``1 == 1.0``);
                                   NaN and ±inf stay floats
``str``                            trailing whitespace stripped
``bytes`` / ``memoryview``         ``"x'<hex>'"`` (the SQL blob literal)
``datetime`` / ``date`` / ``time`` ISO-8601 via ``isoformat()``
``list`` / ``tuple`` / ``dict``    canonicalised element-wise (DuckDB LIST / STRUCT / MAP)
anything else                      ``str(value)`` (UUID, INTERVAL as ``timedelta``, ...)
=================================  ==================================================================

Example::

    >>> result_hash([(1, "a "), (0.30000000000000004, None)]) == result_hash([(0.3, None), (1.0, "a")])
    True
    >>> error_hash("no such column: x").startswith("ERR:")
    True
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any

FLOAT_DECIMALS = 6
_MAX_EXACT_INT = 2**53  # beyond this a float no longer holds every integer exactly
_DIGEST_SIZE = 16
ERROR_PREFIX = "ERR:"


def _canonical_float(value: float) -> int | float:
    if not math.isfinite(value):
        return value
    rounded = round(value, FLOAT_DECIMALS) + 0.0  # + 0.0 turns -0.0 into 0.0
    if rounded.is_integer() and abs(rounded) < _MAX_EXACT_INT:
        return int(rounded)
    return rounded


def _canonical_container(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(key): canonical_value(item) for key, item in value.items()}
    return [canonical_value(item) for item in value]


_CELL_RULES: tuple[tuple[type | tuple[type, ...], Callable[[Any], Any]], ...] = (
    (bool, int),
    (int, lambda value: value),
    (float, _canonical_float),
    (Decimal, lambda value: _canonical_float(float(value))),
    (str, str.rstrip),
    ((bytes, bytearray, memoryview), lambda value: f"x'{bytes(value).hex()}'"),
    ((dt.datetime, dt.date, dt.time), lambda value: value.isoformat()),
    ((list, tuple, dict), _canonical_container),
)


def canonical_value(value: Any) -> Any:
    """One cell in canonical form (see the module table)."""
    if value is None:
        return None
    for types, rule in _CELL_RULES:
        if isinstance(value, types):
            return rule(value)
    return str(value)


def _cell_order(cell: Any) -> tuple:
    """A sort key giving every canonical cell a place: None < numbers < NaN < text < nested."""
    if cell is None:
        return (0,)
    if isinstance(cell, (int, float)):
        return (2,) if isinstance(cell, float) and math.isnan(cell) else (1, cell)
    if isinstance(cell, str):
        return (3, cell)
    return (4, _dumps(cell))


def _row_order(row: Sequence[Any]) -> tuple:
    return tuple(_cell_order(cell) for cell in row)


def canonical_rows(
    rows: Iterable[Sequence[Any]], *, keep_order: bool = False
) -> list[tuple[Any, ...]]:
    """Rows with every cell canonical, sorted by a total order unless ``keep_order``.

    ``keep_order=True`` keeps the engine's row order (what ``ExecutionResult.rows`` holds, so
    order-sensitive scoring can still see ORDER BY); hashing always sorts.
    """
    canonical = [tuple(canonical_value(cell) for cell in row) for row in rows]
    return canonical if keep_order else sorted(canonical, key=_row_order)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=_DIGEST_SIZE).hexdigest()


def result_hash(rows: Iterable[Sequence[Any]], n_columns: int | None = None) -> str:
    """BLAKE2b-128 (hex) of the sorted canonical rows and the column count (not the names).

    ``n_columns`` defaults to the width of the first row (0 for an empty result); pass it so
    that empty results of different shapes hash apart.
    """
    canonical = canonical_rows(rows)
    width = n_columns if n_columns is not None else (len(canonical[0]) if canonical else 0)
    return _digest(_dumps({"columns": width, "rows": canonical}))


_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_ABSOLUTE_PATH = re.compile(r"(?<![\w/])/(?:[\w.+-]+/)*[\w.+-]+")
_WHITESPACE = re.compile(r"\s+")


def normalise_error(message: str, db_path: str | None = None) -> str:
    """Lower-cased, paths and standalone numbers masked, whitespace collapsed.

    Two runs of the same mistake ("no such column: x" against two copies of one database,
    or carets at different offsets) normalise equal; different identifiers stay apart.
    """
    text = message.replace(db_path, "<db>") if db_path else message
    text = _ABSOLUTE_PATH.sub("<path>", text)
    text = _NUMBER.sub("#", text.lower())
    return _WHITESPACE.sub(" ", text).strip()


def error_hash(message: str, db_path: str | None = None) -> str:
    """``"ERR:"`` + BLAKE2b-128 of the normalised message; never equal to a ``result_hash``."""
    return ERROR_PREFIX + _digest(normalise_error(message, db_path))
