"""Typed errors of the model layer. Each names what failed and what to do about it.

``retryable`` tells :class:`models.client.ModelClient` which failures are transient
(worth a retry with backoff) and which are final.
"""

from __future__ import annotations

from typing import ClassVar

from core.errors import ProjectError


class ModelError(ProjectError, RuntimeError):
    """Base of every model-layer error."""

    retryable: ClassVar[bool] = False


class ModelUnavailable(ModelError):
    """The model cannot be reached: server down/unreachable, or its weights are missing."""

    retryable = True


class ModelServerError(ModelError):
    """The server answered with a transient failure (HTTP 429 or 5xx)."""

    retryable = True


class ModelTimeout(ModelError):
    """A call took longer than its per-call timeout."""

    retryable = True


class ModelRequestRejected(ModelError):
    """The server refused the request as malformed (HTTP 4xx other than 429)."""


class ContextTooLong(ModelError):
    """The prompt (plus the requested completion) does not fit the model's context window.

    Where the server said so, ``prompt_tokens`` is the prompt's length in its own tokenizer and
    ``context`` the window it had to fit; ``max_tokens`` is the completion the request asked for.
    """

    def __init__(
        self,
        message: str,
        *,
        prompt_tokens: int | None = None,
        context: int | None = None,
        max_tokens: int = 0,
    ) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.context = context
        self.max_tokens = max_tokens

    @property
    def overshoot(self) -> int | None:
        """Tokens the prompt must lose to leave its completion room, where the server counted."""
        if self.prompt_tokens is None or self.context is None:
            return None
        return self.prompt_tokens + self.max_tokens - self.context


class InvalidModelOutput(ModelError):
    """The reply is unusable: not JSON under a JSON schema, or no SQL where SQL was asked."""

    def __init__(self, message: str, *, text: str = "") -> None:
        super().__init__(message)
        self.text = text


class BudgetExceeded(ModelError):
    """A per-task token/cost budget is spent.

    Raised before a call that cannot fit (``response`` is None) or after one that overflowed
    (``response`` holds the reply, so the work already paid for is not lost).
    """

    def __init__(self, message: str, *, response: object | None = None) -> None:
        super().__init__(message)
        self.response = response


class ModelFileCorrupt(ModelError):
    """A model file exists but is not a usable GGUF (truncated, wrong magic, bad checksum)."""


class ChecksumMismatch(ModelFileCorrupt):
    """An assembled or cached model file does not match its pinned sha256."""


class CassetteMiss(ModelError):
    """Replay mode met a request that the cassette has not recorded."""


class LLMAppError(ModelError):
    """The Ray Serve LLM application of the GPU slots cannot be used (models.backends.vllm_deploy)."""


class LLMAppMismatch(LLMAppError):
    """An application of that name is running with other models or settings than this config's."""


class LLMAppFailed(LLMAppError):
    """The application failed to deploy, or went away while this run waited for it."""


class LLMAppTimeout(LLMAppFailed):
    """The application was not ready within ``model.deploy_timeout_s``."""
