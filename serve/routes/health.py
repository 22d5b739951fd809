"""Health: ``GET /healthz`` says the server is up; ``GET /readyz`` whether the models are loaded
(200, else 503) and, to a caller with a key, the index status of each database it may use.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from serve.routes.context import Context

router = APIRouter()


@router.get("/healthz", summary="The server is up")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", summary="Models loaded and indexes built")
async def readyz(request: Request, ctx: Context) -> JSONResponse:
    try:
        status = await asyncio.wait_for(ctx.backend.status(), 10)
    except Exception:
        return JSONResponse({"ready": False, "models": False}, status_code=503)
    key = ctx.key_of(request)
    body: dict[str, Any] = {"ready": bool(status.get("models")), "models": status["models"]}
    if key is not None:  # names only for a caller with a key
        body["indexes"] = {
            name: line for name, line in status["indexes"].items() if key.allows(name)
        }
    return JSONResponse(body, status_code=200 if body["ready"] else 503)
