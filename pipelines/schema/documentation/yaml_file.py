"""Source: a documentation YAML file beside the database, in dbt's ``schema.yml`` shape or a
plain mapping.

Looked for in the database's folder, first found wins: ``<stem>.yml``, ``<stem>.yaml``,
``<stem>.schema.yml``, ``schema.yml``, ``schema.yaml`` (for ``claims.duckdb`` the stem is
``claims``). Two shapes are read:

dbt (``models:``, ``seeds:``, or ``sources: [{tables: [...]}]``)::

    models:
      - name: members
        description: One row per enrolled member.
        columns:
          - name: state
            description: State of residence
            data_tests:                      # or tests:
              - accepted_values:
                  values: [OH, PA, WV]       # becomes the column's value vocabulary
            meta: {values: Two-letter code}  # or a free-text value note

plain::

    tables:
      members:
        description: One row per enrolled member.
        columns:
          state: State of residence          # or {description: ..., values: ...}

    >>> from_yaml({"tables": {"m": {"columns": {"dob": "date of birth"}}}}).column("m", "dob")
    ColumnDoc(description='date of birth', values='', label='')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pipelines.contracts import DatabaseRef
from pipelines.schema.documentation.files import readable
from pipelines.schema.documentation.model import ColumnDoc, SchemaDocs, TableDoc, one_line

NAME = "yaml"


def candidates(db: DatabaseRef) -> list[Path]:
    database = Path(db.path)
    stem, folder = database.stem, database.parent
    names = (f"{stem}.yml", f"{stem}.yaml", f"{stem}.schema.yml", "schema.yml", "schema.yaml")
    return [folder / name for name in names]


def _clean(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(_clean(v) for v in value if _clean(v))
    return one_line(value)


def _accepted_values(column: dict[str, Any]) -> str:
    for test in list(column.get("data_tests") or []) + list(column.get("tests") or []):
        if isinstance(test, dict) and isinstance(test.get("accepted_values"), dict):
            spec = test["accepted_values"]
            values = spec.get("values") or (spec.get("arguments") or {}).get("values")
            if values:
                return "one of " + _clean(values)
    return ""


def _column(spec: Any) -> ColumnDoc:
    if not isinstance(spec, dict):
        return ColumnDoc(description=_clean(spec))
    meta = spec.get("meta") if isinstance(spec.get("meta"), dict) else {}
    values = _clean(spec.get("values") or meta.get("values")) or _accepted_values(spec)
    return ColumnDoc(
        description=_clean(spec.get("description")),
        values=values,
        label=_clean(spec.get("label") or meta.get("label")),
    )


def _table(spec: dict[str, Any]) -> TableDoc:
    raw = spec.get("columns") or {}
    if isinstance(raw, list):  # dbt: a list of {name: ..., description: ...}
        pairs = [(c.get("name"), c) for c in raw if isinstance(c, dict)]
    elif isinstance(raw, dict):
        pairs = list(raw.items())
    else:
        pairs = []
    columns = {str(name).lower(): _column(spec) for name, spec in pairs if name}
    return TableDoc(
        description=_clean(spec.get("description")),
        columns={name: doc for name, doc in columns.items() if doc},
    )


def from_yaml(data: Any) -> SchemaDocs:
    """The documentation in a parsed YAML document (either shape; anything else documents nothing)."""
    if not isinstance(data, dict):
        return SchemaDocs()
    specs: list[tuple[str, dict[str, Any]]] = []
    for key in ("models", "seeds", "snapshots"):
        specs += [(s.get("name"), s) for s in data.get(key) or [] if isinstance(s, dict)]
    for source in data.get("sources") or []:
        if isinstance(source, dict):
            specs += [(t.get("name"), t) for t in source.get("tables") or [] if isinstance(t, dict)]
    tables = data.get("tables")
    if isinstance(tables, dict):
        specs += [(name, spec if isinstance(spec, dict) else {}) for name, spec in tables.items()]
    docs = {str(name).lower(): _table(spec) for name, spec in specs if name}
    docs = {name: doc for name, doc in docs.items() if doc.description or doc.columns}
    return SchemaDocs(tables=docs, sources=(NAME,) if docs else ())


def read(db: DatabaseRef) -> SchemaDocs:
    """The first documentation file beside ``db`` (empty where there is none)."""
    files = readable(
        candidates(db),
        lambda path: from_yaml(yaml.safe_load(path.read_text(encoding="utf-8"))),
        (OSError, UnicodeDecodeError, yaml.YAMLError),
        "documentation file",
    )
    return next((docs for _, docs in files), SchemaDocs())
