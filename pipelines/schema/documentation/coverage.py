"""How much of a database's documentation there is, and how much of it a prompt shows.

    SchemaView (introspected, documentation merged) + ReferenceSchema (the generators' prompt)
        ──► DocumentationCoverage: columns and sub-fields documented, the vocabularies the
            documentation lists (``vocabulary.column_labels``), and how many of those reach the
            prompt — every listed label written in the block of the column's table, which is
            what any focused prompt showing the table shows.

``scale-analytics index`` prints it per database.
"""

from __future__ import annotations

from core.types import Frozen
from pipelines.contracts import SchemaView
from pipelines.schema.documentation.subfields import share
from pipelines.schema.documentation.vocabulary import below, column_labels


class DocumentationCoverage(Frozen):
    columns: int = 0
    columns_documented: int = 0
    subfields: int = 0  # of nested columns, at every depth
    subfields_documented: int = 0  # documented themselves or spoken of by their column's text
    vocabularies: int = 0  # columns and sub-fields whose documentation lists their values
    vocabularies_in_prompt: int = 0  # of those, every label in the prompt block of the table


def coverage(view: SchemaView, blocks: dict[str, str]) -> DocumentationCoverage:
    """``blocks``: table name (lower-cased) -> its block of the reference prompt."""
    counts = DocumentationCoverage().model_dump()
    for table in view.tables:
        block = blocks.get(table.name.lower(), "")
        for column in table.columns:
            counts["columns"] += 1
            counts["columns_documented"] += bool(column.description)
            nested = list(below(column))
            paths = [c.name[len(column.name) + 1 :] for c in nested]
            shared = share(column.description or "", paths) if nested else {}
            counts["subfields"] += len(nested)
            counts["subfields_documented"] += sum(
                bool(c.description) or path in shared for c, path in zip(nested, paths)
            )
            for named in column_labels(column).values():
                if named.listed:
                    counts["vocabularies"] += 1
                    counts["vocabularies_in_prompt"] += all(
                        label in block for label in named.listed
                    )
    return DocumentationCoverage(**counts)
