"""The HTTP API: a FastAPI app over a pipeline backend, the state store and the API keys.

    POST   /v1/query              {question, database, evidence?, profile?, max_rows?} -> answer
    POST   /v1/query/stream       the same, as server-sent events: progress..., answer | error
    GET    /v1/databases          registered databases the key may use, with tables and columns
    POST   /v1/databases          register one (admin key)            DELETE /v1/databases/NAME
    GET    /v1/traces/{trace_id}  the reasoning trace of an answer
    POST   /v1/queries/{query_id}/feedback  {accepted}: the asker marks an answer right or wrong
    GET    /healthz  /readyz  /docs  /  (the web page)

Every refusal is ``{"error": {"code", "message"}}`` with a 4xx status (5xx: the server's own
failure), never a stack trace or a filesystem path. A request goes through, in order: body
size, JSON, fields, key, the key's database allow-list, the database, the key's rate and
in-flight limits, the query cache, and then the pipeline under the request deadline.

Each answer carries ``query_id``, its line in the query log. Feedback on it (only from the key
that asked) is kept there: accepted answers become the database's own solved examples, which
the pipeline shows the model (``StateStore.accepted_examples``); a rejected answer leaves the
cache, and its SQL is not cached under that key again until a newer answer with it is accepted.

``build_api(backend, settings, ring)`` takes any :class:`Backend`: ``LocalBackend`` (a
``QueryEngine`` in this process) or the Serve deployment handle (``serve/app.py``). The routes
are routers by concern in ``serve/routes/``; what they share sits on ``app.state.api``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Protocol

from fastapi import FastAPI

from pipelines.contracts import DatabaseRef
from serve.keys import KeyRing
from serve.routes import ROUTERS
from serve.routes.context import ApiContext
from serve.routes.errors import add_error_handlers
from serve.settings import ServeSettings
from serve.types import QueryJob


class Backend(Protocol):
    async def answer(self, job: QueryJob) -> dict[str, Any]: ...

    def stream(self, job: QueryJob) -> AsyncIterator[dict[str, Any]]: ...

    async def prepare(self, db: DatabaseRef, name: str) -> str: ...

    async def status(self) -> dict[str, Any]: ...


class LocalBackend:
    """A ``QueryEngine`` in this process (tests; the Serve deployment wraps the same engine)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    async def answer(self, job: QueryJob) -> dict[str, Any]:
        return (await self.engine.answer(job)).model_dump(mode="json")

    async def stream(self, job: QueryJob) -> AsyncIterator[dict[str, Any]]:
        async for event in self.engine.stream(job):
            yield event

    async def prepare(self, db: DatabaseRef, name: str) -> str:
        return await asyncio.to_thread(self.engine.prepare, db, name)

    async def status(self) -> dict[str, Any]:
        return self.engine.status()


def build_api(backend: Backend, settings: ServeSettings, ring: KeyRing) -> FastAPI:
    app = FastAPI(
        title="scale-analytics",
        summary="Ask a registered database a question; get SQL, rows and an explanation.",
        version="1",
    )
    app.state.api = ApiContext.build(backend, settings, ring)
    add_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    return app
