"""Schema views of a live database, as the prompts see them.

introspect(db) ──► SchemaView ──► render_light / render_ddl ──► prompt text
                        ├──► join_graph(view)  declared + inferred join keys
                        └──► restrict(view, tables=..., columns=...) ──► token_size(...)

reference_schema(executor, db) ──► CREATE TABLE + value notes + example rows (the reference prompt)
SchemaCache: one read per database, shared by the tasks on it
catalog/: catalog(db), entity_schema(db, names) ──► the knowledge-graph tools an orchestrator calls
"""

from pipelines.schema.cache import SchemaCache
from pipelines.schema.documentation.bird import load_descriptions
from pipelines.schema.errors import SchemaError, UnknownSchemaObject
from pipelines.schema.introspect import introspect
from pipelines.schema.joins import JoinGraph, infer_join_keys, join_graph
from pipelines.schema.reference import SchemaReadError, reference_schema
from pipelines.schema.render import render_ddl, render_light
from pipelines.schema.view import restrict, token_size, view_token_size

__all__ = [
    "JoinGraph",
    "SchemaCache",
    "SchemaError",
    "SchemaReadError",
    "UnknownSchemaObject",
    "infer_join_keys",
    "introspect",
    "join_graph",
    "load_descriptions",
    "reference_schema",
    "render_ddl",
    "render_light",
    "restrict",
    "token_size",
    "view_token_size",
]
