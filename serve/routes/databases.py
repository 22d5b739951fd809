"""The databases: ``GET /v1/databases`` lists those the key may use, with their tables and
columns; ``POST /v1/databases`` registers one and ``DELETE /v1/databases/NAME`` unregisters it
(both with the admin key).

A database registered here has its indexes built in the background when
``serve.index_on_register`` is set; the answer does not wait for them.
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from fastapi.responses import Response

from serve.databases import NAME, database_ref, register
from serve.errors import ApiError
from serve.routes.bodies import openapi_body, read_json, validated
from serve.routes.context import Context
from serve.types import DatabaseInfo, RegisterRequest

router = APIRouter()


@router.get(
    "/v1/databases", response_model=list[DatabaseInfo], summary="Databases this key may use"
)
async def databases(request: Request, ctx: Context) -> list[DatabaseInfo]:
    key = ctx.caller(request)
    return [
        await asyncio.to_thread(ctx.summaries.describe, db)
        for db in ctx.store.databases()
        if key.allows(db.name)
    ]


@router.post(
    "/v1/databases",
    status_code=201,
    response_model=DatabaseInfo,
    summary="Register a database (admin key)",
    openapi_extra=openapi_body(RegisterRequest),
)
async def add_database(request: Request, ctx: Context) -> DatabaseInfo:
    raw = await read_json(request, ctx.settings.limits.max_body_bytes)
    ctx.admin(request)
    body = validated(RegisterRequest, raw)
    registered = await asyncio.to_thread(register, ctx.store, body, "admin")
    if ctx.settings.index_on_register:
        ctx.spawn(ctx.backend.prepare(database_ref(registered.name, registered), registered.name))
    return await asyncio.to_thread(ctx.summaries.describe, registered)


@router.delete("/v1/databases/{name}", status_code=204, summary="Unregister a database (admin key)")
async def delete_database(name: str, request: Request, ctx: Context) -> Response:
    ctx.admin(request)
    if not NAME.fullmatch(name) or not ctx.store.delete_database(name):
        raise ApiError(404, "unknown_database", "no database of that name is registered")
    return Response(status_code=204)
