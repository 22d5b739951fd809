"""What a pipeline reads of a database once and shares across the tasks on it (schema text, views).

The first task on a database starts the read; concurrent tasks await the same read, shielded, so
one task's timeout does not cancel it for the others. A failed read is forgotten: the next task on
that database reads again.

    views: SchemaCache[SchemaView] = SchemaCache()
    view = await views.get(task.db, lambda: asyncio.to_thread(introspect, task.db, 3))
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from pipelines.contracts import DatabaseRef

T = TypeVar("T")


class SchemaCache(Generic[T]):
    """One read per database (keyed by dialect and path), kept while it succeeds."""

    def __init__(self) -> None:
        self._reads: dict[tuple[str, str], asyncio.Future[T]] = {}

    async def get(self, db: DatabaseRef, read: Callable[[], Awaitable[T]]) -> T:
        """The value ``read()`` gives for ``db``; ``read`` is called only when no read of ``db``
        is cached. The read's own error is raised as is."""
        key = (db.dialect, db.path)
        if key not in self._reads:
            self._reads[key] = asyncio.ensure_future(read())
        try:
            return await asyncio.shield(self._reads[key])
        except Exception:
            self._reads.pop(key, None)  # do not cache a failure
            raise
