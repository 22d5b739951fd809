"""What every route shares: the backend, the settings, the keys, the state store, the limiter
and the schema summaries, kept on ``app.state`` and handed to a route as a dependency.

    >>> from serve.settings import ServeSettings
    >>> import tempfile
    >>> ctx = ApiContext.build(backend=None, settings=ServeSettings(state_dir=tempfile.mkdtemp()),
    ...                        ring=KeyRing())
    >>> ctx.limiter.rate == ctx.settings.limits.rate_per_minute
    True

A route takes ``ctx: Context`` and calls ``ctx.caller(request)`` / ``ctx.admin(request)`` where
its check belongs in the order the API promises (body size, JSON, fields, key, ...): a key
checked by a dependency would run before the body is read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, Request

from serve.errors import ApiError
from serve.keys import ApiKey, KeyLimiter, KeyRing, presented_key
from serve.routes.summaries import SchemaSummaries
from serve.settings import ServeSettings
from serve.store import StateStore

if TYPE_CHECKING:
    from serve.api import Backend


@dataclass(frozen=True)
class ApiContext:
    backend: Backend
    settings: ServeSettings
    ring: KeyRing
    store: StateStore
    limiter: KeyLimiter
    summaries: SchemaSummaries
    background: set[asyncio.Task] = field(default_factory=set)  # kept until done

    @classmethod
    def build(cls, backend: Backend, settings: ServeSettings, ring: KeyRing) -> ApiContext:
        limits = settings.limits
        return cls(
            backend=backend,
            settings=settings,
            ring=ring,
            store=StateStore(settings.state_dir),
            limiter=KeyLimiter(limits.rate_per_minute, limits.concurrency),
            summaries=SchemaSummaries(),
        )

    def key_of(self, request: Request) -> ApiKey | None:
        """The key the request presents, if the ring knows it."""
        return self.ring.lookup(
            presented_key(request.headers.get("authorization"), request.headers.get("x-api-key"))
        )

    def caller(self, request: Request) -> ApiKey:
        key = self.key_of(request)
        if key is None:
            raise ApiError(401, "unauthorized", "a valid API key is required")
        return key

    def admin(self, request: Request) -> ApiKey:
        key = self.caller(request)
        if not key.admin:
            raise ApiError(403, "forbidden", "this endpoint needs the admin key")
        return key

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run ``coroutine`` in the background, holding on to it until it is done."""
        task = asyncio.ensure_future(coroutine)
        self.background.add(task)
        task.add_done_callback(self.background.discard)


def api_context(request: Request) -> ApiContext:
    return request.app.state.api


Context = Annotated[ApiContext, Depends(api_context)]
