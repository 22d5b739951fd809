"""The endpoint's errors: each has an HTTP status, a stable code and a message for the caller.

Every error leaves the server as ``{"error": {"code": ..., "message": ...}}`` (``serve/routes/errors.py``),
never with a stack trace or a filesystem path.

    >>> err = ApiError(404, "unknown_database", "no database named 'sales'")
    >>> err.body()
    {'error': {'code': 'unknown_database', 'message': "no database named 'sales'"}}
"""

from __future__ import annotations

from typing import Any

from core.errors import ProjectError


class ApiError(ProjectError):
    """A request the server refuses or cannot answer."""

    def __init__(self, status: int, code: str, message: str, *, headers: dict | None = None):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


class ServeConfigError(ProjectError, ValueError):
    """The ``serve`` configuration cannot start a safe server (e.g. a public address, no key)."""
