"""Asking: ``POST /v1/query`` answers a question against a registered database, and
``POST /v1/query/stream`` sends the same as server-sent events (``progress`` per stage, then
``answer`` or ``error``).

    >>> sse("answer", {"sql": "SELECT 1"})
    'event: answer\\ndata: {"sql": "SELECT 1"}\\n\\n'

After the body's checks and the key come the key's database allow-list, the database, the
profile, the key's rate and in-flight limits, the cache, and then the pipeline under the request
deadline.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from serve.databases import NAME, database_ref, fingerprint, present
from serve.errors import ApiError
from serve.keys import ApiKey
from serve.routes.answer_cache import Asked, cache_key, from_cache, record
from serve.routes.bodies import openapi_body, read_json, validated
from serve.routes.context import ApiContext, Context
from serve.store import RegisteredDatabase
from serve.types import QueryAnswer, QueryJob, QueryRequest

log = logging.getLogger(__name__)

DEADLINE_GRACE_S = 5.0  # the pipeline deployment stops itself at the deadline; this is a backstop

router = APIRouter()


@router.post(
    "/v1/query",
    response_model=QueryAnswer,
    openapi_extra=openapi_body(QueryRequest),
    summary="Answer a question against a registered database",
)
async def query(request: Request, ctx: Context) -> QueryAnswer:
    asked = await _asked(request, ctx)
    limits = ctx.settings.limits
    async with ctx.limiter.slot(asked.key):
        hit = from_cache(ctx, asked)
        if hit is not None:
            return hit
        try:
            outcome = await asyncio.wait_for(
                ctx.backend.answer(asked.job), limits.deadline_s + DEADLINE_GRACE_S
            )
        except TimeoutError:
            raise ApiError(
                504, "deadline_exceeded", f"no answer within {limits.deadline_s:g} s"
            ) from None
        if outcome.get("error"):
            error = outcome["error"]
            raise ApiError(error["status"], error["code"], error["message"])
        answer = QueryAnswer.model_validate(outcome["answer"]["answer"])
        query_id = record(ctx, asked, answer, outcome["answer"]["result_hash"])
        return answer.model_copy(update={"query_id": query_id})


@router.post(
    "/v1/query/stream",
    openapi_extra=openapi_body(QueryRequest),
    summary="The same, as server-sent events: progress per stage, then the answer",
    response_class=StreamingResponse,
)
async def query_stream(request: Request, ctx: Context) -> StreamingResponse:
    asked = await _asked(request, ctx)
    ctx.limiter.admit(asked.key)  # released when the stream ends
    return StreamingResponse(
        _events(ctx, asked), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
    )


def sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


async def _events(ctx: ApiContext, asked: Asked) -> AsyncIterator[str]:
    try:
        hit = from_cache(ctx, asked)
        if hit is not None:
            yield sse("answer", hit.model_dump(mode="json"))
            return
        try:
            async with asyncio.timeout(ctx.settings.limits.deadline_s + DEADLINE_GRACE_S):
                async for event in ctx.backend.stream(asked.job):
                    kind = event.pop("event")
                    result_hash = event.pop("result_hash", None)
                    if kind == "answer":
                        answer = QueryAnswer.model_validate(event)
                        event["query_id"] = record(ctx, asked, answer, result_hash)
                    yield sse(kind, event)
        except TimeoutError:
            yield sse(
                "error", ApiError(504, "deadline_exceeded", "no answer in time").body()["error"]
            )
    except Exception:
        log.exception("stream failed")
        yield sse("error", {"code": "internal_error", "message": "the server failed"})
    finally:
        ctx.limiter.release(asked.key)


async def _asked(request: Request, ctx: ApiContext) -> Asked:
    """The request checked in the promised order and turned into a job."""
    started = time.monotonic()
    body = validated(QueryRequest, await read_json(request, ctx.settings.limits.max_body_bytes))
    key = ctx.caller(request)
    _check_sizes(ctx, body)
    return _plan(ctx, key, body, started)


def _check_sizes(ctx: ApiContext, query: QueryRequest) -> None:
    limits = ctx.settings.limits
    if len(query.question) > limits.max_question_chars:
        raise ApiError(
            413,
            "question_too_long",
            f"the question exceeds {limits.max_question_chars} characters",
        )
    if len(query.evidence) > limits.max_evidence_chars:
        raise ApiError(
            413,
            "evidence_too_long",
            f"the evidence exceeds {limits.max_evidence_chars} characters",
        )
    if query.max_rows is not None and query.max_rows > limits.max_rows:
        raise ApiError(422, "too_many_rows", f"max_rows is at most {limits.max_rows}")


def _plan(ctx: ApiContext, key: ApiKey, query: QueryRequest, started: float) -> Asked:
    settings = ctx.settings
    registered = _allowed_database(ctx, key, query.database)
    profile = query.profile or settings.default_profile
    if profile not in settings.profiles:
        raise ApiError(422, "unknown_profile", f"profile {profile!r} is not configured")
    max_rows = query.max_rows or settings.limits.default_rows
    job = QueryJob(
        question=query.question,
        evidence=query.evidence,
        db=database_ref(query.database, registered),
        database=query.database,
        profile=profile,
        max_rows=max_rows,
        trace_id=uuid.uuid4().hex,
        deadline_s=settings.limits.deadline_s,
    )
    key_of_cache = (
        cache_key(query, profile, max_rows, fingerprint(registered.path))
        if settings.cache.enabled
        else None
    )
    return Asked(key=key, job=job, cache_key=key_of_cache, started=started)


def _allowed_database(ctx: ApiContext, key: ApiKey, name: str) -> RegisteredDatabase:
    if not NAME.fullmatch(name):
        raise ApiError(404, "unknown_database", "no database of that name is registered")
    if not key.allows(name):
        raise ApiError(403, "forbidden_database", f"this key may not query {name!r}")
    registered = ctx.store.database(name)
    if registered is None:
        raise ApiError(404, "unknown_database", f"no database named {name!r} is registered")
    if not present(registered.path):
        raise ApiError(503, "database_unavailable", f"the file of {name!r} is missing")
    return registered
