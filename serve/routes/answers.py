"""An answer after it is given: ``GET /v1/traces/{trace_id}`` returns its reasoning trace, and
``POST /v1/queries/{query_id}/feedback`` records the asker's verdict on it.

An accepted answer becomes one of the database's own solved examples
(``StateStore.accepted_examples``); a rejected one leaves the cache. Only the key that asked may
judge an answer, and another key's answer or trace reads as a missing one: an id says nothing
about who asked what.
"""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from fastapi.responses import Response

from serve.errors import ApiError
from serve.routes.bodies import openapi_body, read_json, validated
from serve.routes.context import Context
from serve.types import Feedback, FeedbackRequest

TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
QUERY_ID = re.compile(r"^[1-9][0-9]{0,17}$")

router = APIRouter()


@router.get("/v1/traces/{trace_id}", summary="The reasoning trace of an answer")
async def trace(trace_id: str, request: Request, ctx: Context) -> Response:
    key = ctx.caller(request)
    found = ctx.store.trace(trace_id) if TRACE_ID.fullmatch(trace_id) else None
    if found is None or not key.allows(found[0]):
        raise ApiError(404, "unknown_trace", "no trace with that id")
    return Response(found[1], media_type="application/json")


@router.post(
    "/v1/queries/{query_id}/feedback",
    response_model=Feedback,
    summary="Mark an answer of this key accepted or rejected",
    openapi_extra=openapi_body(FeedbackRequest),
)
async def feedback(query_id: str, request: Request, ctx: Context) -> Feedback:
    raw = await read_json(request, ctx.settings.limits.max_body_bytes)
    key = ctx.caller(request)
    body = validated(FeedbackRequest, raw)
    entry = ctx.store.logged_query(int(query_id)) if QUERY_ID.fullmatch(query_id) else None
    if entry is None or entry.key_id != key.id or not key.allows(entry.database):
        raise ApiError(404, "unknown_query", "no answer of this key with that id")
    ctx.store.set_feedback(int(query_id), body.accepted)
    if not body.accepted and entry.cache_key is not None:
        ctx.store.drop_cached(entry.cache_key)
    return Feedback(query_id=int(query_id), accepted=body.accepted)
