"""JSON request bodies: read within the size limit, validated into their model, and described in
the OpenAPI spec (the routes read the body themselves, so that its checks come before the key's).

    >>> from serve.types import FeedbackRequest
    >>> validated(FeedbackRequest, {"accepted": True})
    FeedbackRequest(accepted=True)
    >>> list(openapi_body(FeedbackRequest)["requestBody"]["content"])
    ['application/json']
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError

from serve.errors import ApiError
from serve.routes.errors import invalid_request

Model = TypeVar("Model", bound=BaseModel)


async def read_json(request: Request, max_bytes: int) -> Any:
    """The parsed body; a 413 past ``max_bytes`` (declared or streamed), a 400 when not JSON."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise _too_large(max_bytes)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise _too_large(max_bytes)
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks))
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "malformed_json", "the request body is not valid JSON") from None


def validated(model: type[Model], raw: Any) -> Model:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise invalid_request(exc.errors()) from None


def openapi_body(model: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` for a route that reads ``model`` from its body itself."""
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": model.model_json_schema()}},
        }
    }


def _too_large(max_bytes: int) -> ApiError:
    return ApiError(413, "body_too_large", f"the request body exceeds {max_bytes} bytes")
