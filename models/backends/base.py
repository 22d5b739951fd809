"""The protocol every chat backend implements.

A backend does one thing: send a request, return texts with token usage, and translate its
transport's failures into :mod:`models.errors`. Retries, timeouts, budgets, cost and output
validation belong to :class:`models.client.ModelClient`, so each backend stays small.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from models.types import ChatRequest, ChatResponse


@runtime_checkable
class ChatBackend(Protocol):
    @property
    def model(self) -> str:
        """The model name responses are attributed to (and replay keys are built from)."""
        ...

    async def chat(self, request: ChatRequest) -> ChatResponse: ...

    async def aclose(self) -> None: ...
