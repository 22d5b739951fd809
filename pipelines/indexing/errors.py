"""Typed errors of the L0 indexes.

IndexingError
├── EmbeddingModelUnavailable   the packaged all-MiniLM-L6-v2 cannot be loaded offline
├── IndexNotBuilt               a retriever asked for an index that was never published
├── DatabaseChangedDuringBuild  the database's fingerprint moved while it was being indexed
└── ExampleSourceError          the training-set file for the example index is missing/bad
"""

from __future__ import annotations

from core.errors import ProjectError


class IndexingError(ProjectError):
    """Base of every indexing error."""


class EmbeddingModelUnavailable(IndexingError):
    """The embedding model package is not installed or its files cannot be loaded."""


class IndexNotBuilt(IndexingError):
    """No published index for this name: run ``scale-analytics index benchmark=...`` first."""

    def __init__(self, what: str, root: str) -> None:
        self.what = what
        super().__init__(f"no index built for {what} under {root}; run `scale-analytics index`")


class DatabaseChangedDuringBuild(IndexingError):
    """The database was modified while its index was built; the new index was discarded."""

    def __init__(self, db_id: str) -> None:
        super().__init__(
            f"database {db_id!r} changed during the build; index discarded, rebuild to retry"
        )


class ExampleSourceError(IndexingError):
    """The training questions (or their tables file) cannot be read."""
