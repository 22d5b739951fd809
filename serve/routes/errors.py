"""How a refusal leaves the server: ``{"error": {"code", "message"}}`` with its status, for the
endpoint's own errors, invalid fields, unknown paths and methods, and (as a 500 with no detail)
anything else.

    >>> invalid_request([{"loc": ("body", "question"), "msg": "Field required"}]).message
    'question: Field required'
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from serve.errors import ApiError

log = logging.getLogger(__name__)


def invalid_request(errors: list[dict]) -> ApiError:
    """A 422 naming the first five problems by field (``body`` itself when no field)."""
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ()) if p != 'body') or 'body'}: {e.get('msg')}"
        for e in errors[:5]
    )
    return ApiError(422, "invalid_request", problems)


def add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        error = invalid_request(list(exc.errors()))
        return JSONResponse(error.body(), status_code=error.status)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        message = "no such endpoint" if exc.status_code == 404 else str(exc.detail)
        return JSONResponse(ApiError(exc.status_code, code, message).body(), exc.status_code)

    @app.exception_handler(Exception)
    async def _internal(_: Request, exc: Exception) -> JSONResponse:
        log.exception("internal error")
        body = ApiError(500, "internal_error", "the server failed on this request").body()
        return JSONResponse(body, status_code=500)
