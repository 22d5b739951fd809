"""Key-column scoring: which of an entity's columns the catalog shows first.

A top-level column earns a weight for each reason it is informative, and loses some for being
free text or an identifier that joins nothing:

    reason       what                                                          weight
    ----------   -----------------------------------------------------------   ------
    key          the entity's primary key                                        3
    join         a join key (either end of a join edge)                          2
    values       a documented vocabulary (an observed one: 2)                    3
    nested       a struct or list column                                         2
    time         a date or timestamp                                             2.5
    measure      a number that is no key                                         1
    documented   a description                                                   1
    free text    text with no vocabulary, no key, no join                       -1
    id           named like an identifier (``*_id``) but no key and no join      -2

A nested column also earns each of ``join`` and ``values`` once (weight ``nested_child``) when
any of its sub-fields does: ``links`` with a typed ``display_id`` and a ``type`` vocabulary.
Ties keep the table's column order.

    >>> from pipelines.schema.catalog.model import ColumnNode
    >>> score(ColumnNode(path="stage", name="stage", type="text", description="Stage."), set())
    (0.0, ('documented', 'free text'))
"""

from __future__ import annotations

from core.types import Frozen
from pipelines.indexing.cell_values.cells import ID_LIKE, ID_LIKE_CAMEL
from pipelines.schema.catalog.model import ColumnNode


class ColumnWeights(Frozen):
    """What a column earns per reason (module docstring)."""

    key: float = 3.0
    join: float = 2.0  # less than a key: the catalog lists each entity's joins anyway
    documented_values: float = 3.0
    observed_values: float = 2.0
    nested: float = 2.0
    nested_child: float = 1.0
    time: float = 2.5  # questions are often bounded in time
    measure: float = 1.0
    documented: float = 1.0
    free_text: float = -1.0
    id: float = -2.0


DEFAULT_WEIGHTS = ColumnWeights()
NUMBERS = ("integer", "decimal")
TIMES = ("date", "timestamp")


def id_like(name: str) -> bool:
    """Named like an identifier: ``id``, ``*_id``, ``customerId`` (cells.py's rule)."""
    return bool(ID_LIKE.search(name) or ID_LIKE_CAMEL.search(name))


def score(
    column: ColumnNode, join_columns: set[str], weights: ColumnWeights = DEFAULT_WEIGHTS
) -> tuple[float, tuple[str, ...]]:
    """``(score, reasons)`` of a top-level column; ``join_columns`` holds the paths of this
    entity that are join keys."""
    earned: list[tuple[str, float]] = []
    joins = column.path in join_columns
    if column.primary_key:
        earned.append(("key", weights.key))
    if joins:
        earned.append(("join", weights.join))
    if column.vocabulary is not None:
        documented = column.vocabulary.source == "documented"
        earned.append(
            ("values", weights.documented_values if documented else weights.observed_values)
        )
    if column.children:
        earned.append(("nested", weights.nested))
        below = list(column.walk())[1:]
        if any(c.path in join_columns for c in below):
            earned.append(("join", weights.nested_child))
        if any(c.vocabulary is not None for c in below):
            earned.append(("values", weights.nested_child))
    elif column.type in TIMES:
        earned.append(("time", weights.time))
    elif column.type in NUMBERS and not (column.primary_key or joins):
        earned.append(("measure", weights.measure))
    if column.description:
        earned.append(("documented", weights.documented))
    plain = not (column.primary_key or joins or column.vocabulary or column.children)
    if plain and id_like(column.name):
        earned.append(("id", weights.id))
    elif plain and column.type == "text":
        earned.append(("free text", weights.free_text))
    return sum(w for _, w in earned), tuple(dict.fromkeys(reason for reason, _ in earned))
