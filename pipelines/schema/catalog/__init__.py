"""Knowledge-graph schema tools: an orchestrator browses the schema it needs instead of being
shown all of it.

    catalog(db)                 every entity: one line of description, its row count, its most
                                informative columns (scored), the entities it joins
    entity_schema(db, names)    the entities asked for in full: every column and sub-field
                                (``links[].type``) with its normalised type, description,
                                vocabulary, samples, and the join keys to other entities;
                                an unknown name raises ``UnknownEntity`` with close matches

Both read one ``SchemaGraph`` per database (``schema_graph``), built from the schema view, the
database's documentation and a few read-only queries (build.py) the first time it is asked
for, and kept in memory per database, settings and the versions of the files it was read
from (database, documentation files): the next call costs nothing, a changed file is read
again. It is not stored with the L0 indexes: the tools serve every database a pipeline
touches, indexed or not, and the index fingerprint does not cover the documentation files
the graph depends on. Build off the event loop (``asyncio.to_thread``); ``SchemaCache``
shares one build among concurrent tasks.

    >>> print(catalog(db).text())   # concert_singer, with BIRD-style column descriptions
    Entities of concert_singer: name (rows): description; best columns ({values}, ...
    stadium (3 rows)
      columns: Stadium_ID integer key; Capacity integer; Location text; Name text
      joins: concert
    singer (6 rows)
      columns: Singer_ID integer key; Country {France, Netherlands, United States}; Age integer; Name text
      joins: singer_in_concert
    concert (3 rows)
      columns: concert_ID integer key; Stadium_ID integer -> stadium; concert_Name text; Year text
      joins: stadium, singer_in_concert
    singer_in_concert (6 rows): links singer and concert
      columns: concert_ID integer -> concert; Singer_ID integer -> singer
      joins: singer, concert
    >>> print(entity_schema(db, ["singer"]).text())
    ## singer (6 rows)
    - Singer_ID integer: key; e.g. 1, 2, 3
    - Name text: full name; e.g. Joe Sharp, Timbaland, Justin Brown
    - Country text: country of citizenship (nationality)
      values seen: France, Netherlands, United States
    - Age integer: age in years; e.g. 52, 32, 29
    joins:
    - Singer_ID = singer_in_concert.Singer_ID (inferred)
    >>> try:
    ...     entity_schema(db, ["singers"])
    ... except UnknownEntity as error:
    ...     print(error.suggestions)
    {'singers': ('singer', 'singer_in_concert')}
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from pipelines.contracts import DatabaseRef
from pipelines.schema.catalog.build import build_graph
from pipelines.schema.catalog.model import ColumnNode, Entity, JoinEdge, SchemaGraph, UnknownEntity
from pipelines.schema.catalog.views import (
    Catalog,
    CatalogEntry,
    EntitySchemas,
    catalog_of,
    schemas_of,
)
from pipelines.schema.catalog.vocabulary import Vocabulary
from pipelines.schema.documentation import versions
from pipelines.settings import CatalogSettings

DEFAULT_SETTINGS = CatalogSettings()


@functools.lru_cache(maxsize=16)
def _graph(db: DatabaseRef, settings: CatalogSettings, versions: tuple[float, ...]) -> SchemaGraph:
    return build_graph(db, settings)


def schema_graph(db: DatabaseRef, settings: CatalogSettings = DEFAULT_SETTINGS) -> SchemaGraph:
    """The knowledge graph of ``db``, built once per database, settings and file versions.
    Raises ``DatabaseUnavailable`` when the file is missing or not a database."""
    return _graph(db, settings, versions(db))


def catalog(db: DatabaseRef, settings: CatalogSettings = DEFAULT_SETTINGS) -> Catalog:
    """Every entity of ``db``: description, rows, its ``top_columns`` most informative columns,
    the entities it joins; ``.text()`` for a prompt."""
    return catalog_of(schema_graph(db, settings), settings)


def entity_schema(
    db: DatabaseRef, names: Sequence[str], settings: CatalogSettings = DEFAULT_SETTINGS
) -> EntitySchemas:
    """The entities ``names`` asks for (a partition's table name finds its entity; a single
    string is one name, as a tool call may pass it), in full; ``.text()`` for a prompt. Raises
    ``UnknownEntity`` listing each unknown name with the closest entity names."""
    return schemas_of(schema_graph(db, settings), [names] if isinstance(names, str) else names)


__all__ = [
    "Catalog",
    "CatalogEntry",
    "CatalogSettings",
    "ColumnNode",
    "Entity",
    "EntitySchemas",
    "JoinEdge",
    "SchemaGraph",
    "UnknownEntity",
    "Vocabulary",
    "catalog",
    "entity_schema",
    "schema_graph",
]
