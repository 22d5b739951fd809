"""Rewriter: a field read off a list of structs as if the list were one struct, read off its items.

Small models write ``a.owned_by.user_id`` where ``owned_by`` is a list of structs; DuckDB
refuses it ("Cannot extract field 'user_id' … because it is not a struct"). What the reader
meant depends on where the read stands:

- in a condition that compares it with constants only (a WHERE or CASE test, not a join), "some
  item has": the test becomes a filter over the items, which keeps the row count

      WHERE t.tags.name = 'regression'
      ──► WHERE LENGTH(LIST_FILTER(t.tags, LAMBDA item : item.name = 'regression')) > 0

- anywhere else (a join key, a projection, a grouping), "each item": the list is unnested
  beside its owner, as ``list_column_tables`` unnests a list read as a table, and the read names
  the item's field

      FROM accounts AS a JOIN users AS u ON a.owned_by.user_id = u.user_id
      ──► FROM accounts AS a CROSS JOIN (SELECT UNNEST(a.owned_by, max_depth := 2)) AS owned_by_item
          JOIN users AS u ON owned_by_item.user_id = u.user_id

A read is rewritten only where the list belongs to one table of the same SELECT's FROM (through
its alias, or unqualified when one table there owns a list of that name), the items have the
field, and the owner is not on the inner side of an outer join; everything else is left alone
(a dialect without lists, SQLite, included). The rewritten SQL reads only the fields the items
have, so a query it touches could not have run as written.

    >>> from pipelines.agentic_mode.taxonomy import load_taxonomy
    >>> from pipelines.repair.base import RepairContext
    >>> from pipelines.agentic_mode.schema_index import SchemaIndex
    >>> from pipelines.contracts import ColumnInfo, SchemaView, TableInfo
    >>> tags = ColumnInfo(name="tags", type="STRUCT(name VARCHAR)[]",
    ...                   children=(ColumnInfo(name="tags.name", type="VARCHAR"),))
    >>> index = SchemaIndex.from_view(SchemaView(db_id="w", dialect="duckdb",
    ...     tables=(TableInfo(name="issues", columns=(tags,)),)))
    >>> context = RepairContext(index=index, taxonomy=load_taxonomy())
    >>> ListFieldReads().rewrite("SELECT count(*) FROM issues AS i WHERE i.tags.name = 'x'",
    ...                          context).after
    "SELECT COUNT(*) FROM issues AS i WHERE LENGTH(LIST_FILTER(i.tags, LAMBDA item : item.name = 'x')) > 0"
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import sqlglot
from sqlglot import exp

from pipelines.agentic_mode.checks.nesting import SelectRewriter, dotted, path_of, schema_tables
from pipelines.agentic_mode.references import table_name
from pipelines.agentic_mode.schema_index import SchemaIndex


class ListFieldReads(SelectRewriter):
    """Reads a field off a list of structs' items, not off the list (module docstring)."""

    name: ClassVar[str] = "list_field_reads"

    def rewrite_select(self, select: exp.Select, schema: SchemaIndex, ctes: set[str]) -> list[str]:
        return _rewrite_reads(select, schema)


@dataclass(frozen=True)
class _Read:
    """``node`` (a column, or the outermost of the dots after it) reads ``fields`` off the items
    of ``owner``'s list column ``list_name`` (spelled as the schema spells it)."""

    node: exp.Expression
    owner: exp.Table
    list_name: str
    fields: tuple[str, ...]


def _rewrite_reads(select: exp.Select, schema: SchemaIndex) -> list[str]:
    # the schema tables of its FROM and inner joins, by alias
    owners = {t.alias_or_name.lower(): t for t in schema_tables(select, schema, inner_only=True)}
    if not owners:
        return []
    reads = [
        read
        for column in select.find_all(exp.Column)
        if column.find_ancestor(exp.Select) is select
        and (read := _read_of(column, owners, schema)) is not None
    ]
    changed: list[str] = []
    unnested: dict[tuple[int, str], str] = {}  # (owner, list) ──► its items' alias
    taken = {t.alias_or_name.lower() for t in select.find_all(exp.Table)}
    taken |= {a.name.lower() for a in select.find_all(exp.TableAlias)}
    for read in reads:
        if read.node.find_ancestor(exp.Select) is not select:
            continue  # inside a test already rewritten into a filter
        owner_ref = read.owner.alias_or_name
        path = f"{table_name(read.owner)}.{read.list_name}.{'.'.join(read.fields)}"
        test = _constant_test(read)
        if test is not None:
            item = _fresh("item", taken)
            inner = test.copy()
            for column in list(inner.find_all(exp.Column)):
                top, fields = path_of(column)
                top.replace(dotted(item, _item_fields(fields, read)))
            items = exp.func(
                "LIST_FILTER",
                exp.column(read.list_name, table=owner_ref),
                exp.Lambda(this=inner, expressions=[exp.to_identifier(item)]),
            )
            test.replace(exp.GT(this=exp.func("LENGTH", items), expression=exp.Literal.number(0)))
            changed.append(f"{path} tested on any item")
            continue
        key = (id(read.owner), read.list_name.lower())
        if key not in unnested:
            alias = _fresh(f"{read.list_name}_item", taken)
            _join_items(select, read.owner, read.list_name, alias, schema)
            unnested[key] = alias
            changed.append(f"{table_name(read.owner)}.{read.list_name} unnested as {alias}")
        read.node.replace(dotted(unnested[key], read.fields))
    return changed


def _read_of(column: exp.Column, owners: dict[str, exp.Table], schema: SchemaIndex) -> _Read | None:
    node, parts = path_of(column)
    if len(parts) >= 3 and parts[0].lower() in owners:
        candidates = [(owners[parts[0].lower()], parts[1], tuple(parts[2:]))]
    elif len(parts) >= 2 and parts[0].lower() not in owners and not schema.table(parts[0]):
        candidates = [(owner, parts[0], tuple(parts[1:])) for owner in owners.values()]
    else:
        return None
    found = []
    for owner, list_name, fields in candidates:
        listed = schema.column(table_name(owner), list_name)
        if listed is None or not listed.children or not schema.is_list(listed):
            continue
        if schema.column(table_name(owner), f"{list_name}.{fields[0]}") is None:
            continue
        found.append(_Read(node, owner, listed.name.rsplit(".", 1)[-1], fields))
    return found[0] if len(found) == 1 else None


def _item_fields(parts: list[str], read: _Read) -> tuple[str, ...] | None:
    """The fields after ``read``'s list in the path ``parts``, or None when the path does not
    go through that list."""
    lowered = [part.lower() for part in parts]
    if len(parts) >= 3 and lowered[:2] == [
        read.owner.alias_or_name.lower(),
        read.list_name.lower(),
    ]:
        return tuple(parts[2:])
    if len(parts) >= 2 and lowered[0] == read.list_name.lower():
        return tuple(parts[1:])
    return None


def _constant_test(read: _Read) -> exp.Predicate | None:
    """The comparison ``read`` stands in when it compares reads of the same list's items with
    constants only, outside any join condition; else None."""
    test = read.node.find_ancestor(exp.Predicate, exp.Select)
    if not isinstance(test, exp.Predicate):
        return None
    if isinstance(test.find_ancestor(exp.Join, exp.Select), exp.Join) or test.find(exp.Select):
        return None
    if any(_item_fields(path_of(c)[1], read) is None for c in test.find_all(exp.Column)):
        return None
    return test


def _join_items(
    select: exp.Select, owner: exp.Table, list_name: str, alias: str, schema: SchemaIndex
) -> None:
    """A lateral unnest of ``owner``'s list, joined right after ``owner``."""
    lateral = sqlglot.parse_one(
        f"(SELECT UNNEST({owner.alias_or_name}.{list_name}, max_depth := 2)) AS {alias}",
        read=schema.dialect,
    )
    joins: list[exp.Join] = list(select.args.get("joins") or [])
    at = next((i + 1 for i, join in enumerate(joins) if join.this is owner), 0)
    joins.insert(at, exp.Join(this=lateral, kind="CROSS"))
    select.set("joins", joins)


def _fresh(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{name}_{n}"
    taken.add(candidate.lower())
    return candidate
