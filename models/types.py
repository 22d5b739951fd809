"""Request and response of one chat completion, the only values the model layer exchanges.

ChatRequest(messages, n, temperature, ...) ──► ModelClient.chat(role=...) ──► ChatResponse(texts, usage)
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import Field, model_validator

from core.types import Frozen, Usage

Role = Literal["system", "user", "assistant"]


class ChatMessage(Frozen):
    role: Role
    content: str


class ChatRequest(Frozen):
    """One chat completion with ``n`` samples.

    >>> ChatRequest(messages=(ChatMessage(role="user", content="SELECT 1?"),), n=4, temperature=0.8).n
    4
    """

    messages: tuple[ChatMessage, ...] = Field(min_length=1)
    n: int = Field(default=1, ge=1, le=128)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=512, ge=1)
    stop: tuple[str, ...] = ()
    seed: int | None = None
    json_schema: dict[str, Any] | None = None
    grammar: str | None = None
    # True: a server that takes no grammar (OpenAI's API) gets the request without it, and the
    # stop sequences alone end the output. For grammars that only save tokens, not shape JSON.
    grammar_optional: bool = False
    # Per-token log-probabilities of each text, as the model gave them before sampling. With a
    # grammar that admits a single text this scores that text teacher-forced (models/scoring.py).
    logprobs: bool = False

    @model_validator(mode="after")
    def _one_constraint(self) -> ChatRequest:
        if self.json_schema is not None and self.grammar is not None:
            raise ValueError("ChatRequest takes json_schema or grammar, not both")
        return self

    def fingerprint(self, model: str) -> str:
        """Stable hash of this request as sent to ``model`` (the replay cassette key)."""
        # A field added after recordings were made stays out of the key at its default, so
        # those recordings still answer the requests that do not use it.
        fields = type(self).model_fields
        unset = {name for name in _ADDED_FIELDS if getattr(self, name) == fields[name].default}
        payload = json.dumps(
            {"model": model, "request": self.model_dump(mode="json", exclude=unset)},
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:32]

    def excerpt(self, limit: int = 80) -> str:
        """The first message, shortened, to name a request in an error message."""
        text = " ".join(self.messages[0].content.split())
        return text if len(text) <= limit else text[: limit - 1] + "…"


_ADDED_FIELDS = ("logprobs",)

FinishReason = Literal["stop", "length", "error", "unknown"]


class TokenLogprob(Frozen):
    token: str
    logprob: float


class ChatResponse(Frozen):
    """``texts[i]`` is sample ``i``; ``usage`` sums every sample (cost filled by the client);
    ``logprobs[i]`` are sample ``i``'s tokens when the request asked for them."""

    texts: tuple[str, ...]
    usage: Usage
    latency_s: float = Field(ge=0.0)
    model: str
    finish_reasons: tuple[FinishReason, ...] = ()
    logprobs: tuple[tuple[TokenLogprob, ...], ...] = ()
