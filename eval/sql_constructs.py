"""The advanced SQL constructs a query uses, read off a sqlglot parse (DuckDB dialect).

=============  ===============================================================================
unnest         ``UNNEST`` of a list column (in FROM or in the select list)
typed_link     an unnested ``links`` array filtered on its ``type`` sub-field: a traversal of one
               kind of link (``link.type = 'is_resolved_by'``)
window         a window function (``... OVER (...)``)
cte            a ``WITH`` clause
set_op         ``UNION`` / ``INTERSECT`` / ``EXCEPT``
=============  ===============================================================================

    >>> sql_constructs("SELECT count(*) FROM tickets AS t, UNNEST(t.links) AS u(link) "
    ...                "WHERE link.type = 'is_resolved_by'")
    ('unnest', 'typed_link')
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

CONSTRUCTS = ("unnest", "typed_link", "window", "cte", "set_op")


def sql_constructs(sql: str) -> tuple[str, ...]:
    """Which of :data:`CONSTRUCTS` ``sql`` uses, in that order."""
    tree = sqlglot.parse_one(sql, read="duckdb")
    unnested = [
        column.name.lower()
        for node in tree.find_all(exp.Unnest, exp.Explode)
        for column in node.find_all(exp.Column)
    ]
    # Only list sub-fields are called ``type``: a comparison on one filters the unnested elements.
    on_type = any(
        isinstance(node.this, exp.Column) and node.this.name.lower() == "type"
        for node in tree.find_all(exp.EQ, exp.In)
    )
    found = {
        "unnest": bool(unnested),
        "typed_link": "links" in unnested and on_type,
        "window": tree.find(exp.Window) is not None,
        "cte": tree.find(exp.With) is not None,
        "set_op": tree.find(exp.Union, exp.Intersect, exp.Except) is not None,
    }
    return tuple(name for name in CONSTRUCTS if found[name])
