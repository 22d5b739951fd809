"""Source: a Spider-style ``tables.json`` entry of the database, with its documentation fields.

Spider's entry lists ``table_names_original`` and ``column_names_original`` (``[table index,
name]``), and readable ``table_names`` / ``column_names``. Documented collections add
``column_descriptions`` and ``table_descriptions``, in one of these shapes:

- a list parallel to the names (``column_descriptions[i]`` describes ``column_names_original[i]``),
  each item a string or a ``[table index, text]`` pair;
- a mapping ``{"table.column": text}`` or ``{table: {column: text}}`` (tables: ``{table: text}``).

``value_enums``, in the same shapes, gives a column's values: a list of labels (``["M", "F"]``,
written ``one of M, F``) or a text (``M: male; F: female``).

A readable name differing from the stored one (``c14`` -> ``title i funding``) becomes the
column's label. The file is found at ``DatabaseRef.tables_json``, else beside the database or
up to two folders above it (Spider's ``<root>/tables.json`` with ``<root>/database/<id>/<id>.sqlite``,
BIRD's ``dev_tables.json``); an entry for another ``db_id`` documents nothing.

    >>> entry = {"db_id": "s", "table_names_original": ["schools"],
    ...          "column_names_original": [[-1, "*"], [0, "c14"]],
    ...          "column_names": [[-1, "*"], [0, "title i"]],
    ...          "column_descriptions": ["", "Students eligible for Title I funding"]}
    >>> from_entry(entry).column("schools", "c14")
    ColumnDoc(description='Students eligible for Title I funding', values='', label='title i')
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from pipelines.contracts import DatabaseRef
from pipelines.schema.documentation.files import readable
from pipelines.schema.documentation.model import ColumnDoc, SchemaDocs, TableDoc, one_line, words

NAME = "tables_json"
FILE_NAMES = ("tables.json", "dev_tables.json", "train_tables.json", "test_tables.json")


def candidates(db: DatabaseRef) -> list[Path]:
    """Where ``db``'s tables.json may be: the named file, else beside the database and up to two
    folders above."""
    if db.tables_json:
        return [Path(db.tables_json)]
    folder = Path(db.path).resolve().parent
    return [d / name for d in (folder, folder.parent, folder.parent.parent) for name in FILE_NAMES]


@functools.lru_cache(maxsize=16)
def _entries(path: str, mtime: float) -> dict[str, dict[str, Any]]:
    """db_id -> entry of one file (read once per file version)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError("expected a list of database entries")
    return {str(e["db_id"]): e for e in data if isinstance(e, dict) and "db_id" in e}


def _text(item: Any) -> str:
    pair = isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], int)
    if pair and isinstance(item[1], (str, list, tuple)):  # [table index, text]
        item = item[1]
    if isinstance(item, (list, tuple)):  # value_enums: the labels themselves
        labels = [one_line(v) for v in item if v is not None and one_line(v)]
        return "one of " + ", ".join(labels) if labels else ""
    return one_line(item) if isinstance(item, (str, int, float)) else ""


def _name(item: Any) -> tuple[int, str]:
    return (int(item[0]), str(item[1])) if isinstance(item, (list, tuple)) else (-1, str(item))


def _described(raw: Any, keys: list[str]) -> dict[str, str]:
    """Descriptions keyed ``table.column`` (or ``table``), lower-cased, from either shape."""
    out: dict[str, str] = {}
    if isinstance(raw, list):
        for key, item in zip(keys, raw):
            if key and _text(item):
                out[key] = _text(item)
    elif isinstance(raw, dict):
        for key, value in raw.items():
            if isinstance(value, dict):
                for column, text in value.items():
                    if _text(text):
                        out[f"{key}.{column}".lower()] = _text(text)
            elif _text(value):
                out[str(key).lower()] = _text(value)
    return out


def from_entry(entry: dict[str, Any]) -> SchemaDocs:
    """The documentation in one tables.json entry (empty where it has none)."""
    tables = [str(t) for t in entry.get("table_names_original") or entry.get("table_names") or []]
    originals = [_name(c) for c in entry.get("column_names_original") or []]
    readable = [_name(c)[1] for c in entry.get("column_names") or []]
    keys = [f"{tables[t]}.{name}".lower() if 0 <= t < len(tables) else "" for t, name in originals]
    columns = _described(entry.get("column_descriptions"), keys)
    values = _described(entry.get("value_enums"), keys)
    table_text = _described(entry.get("table_descriptions"), [t.lower() for t in tables])
    docs: dict[str, TableDoc] = {}
    for i, (t, name) in enumerate(originals):
        if not 0 <= t < len(tables):
            continue
        key = keys[i]
        label = readable[i] if i < len(readable) else ""
        if "".join(words(label)) == "".join(words(name)):
            label = ""
        doc = ColumnDoc(description=columns.get(key, ""), values=values.get(key, ""), label=label)
        if doc:
            table = docs.setdefault(tables[t].lower(), TableDoc())
            docs[tables[t].lower()] = table.model_copy(
                update={"columns": {**table.columns, name.lower(): doc}}
            )
    for table in tables:
        if description := table_text.get(table.lower(), ""):
            found = docs.get(table.lower(), TableDoc())
            docs[table.lower()] = found.model_copy(update={"description": description})
    return SchemaDocs(tables=docs, sources=(NAME,) if docs else ())


def read(db: DatabaseRef) -> SchemaDocs:
    """The documentation of ``db``'s entry in the first tables.json that has one."""
    files = readable(
        candidates(db),
        lambda path: _entries(str(path), path.stat().st_mtime),
        (OSError, ValueError, KeyError, TypeError),
        "tables file",
    )
    for _, entries in files:
        if (entry := entries.get(db.db_id)) is not None:
            return from_entry(entry)
    return SchemaDocs()
