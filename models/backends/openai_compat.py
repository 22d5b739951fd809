"""Backend for any server that speaks OpenAI's ``POST /v1/chat/completions``.

Used for llama.cpp's server (the local CPU runtime), vLLM / Ray Serve LLM (GPU slots) and
hosted providers. ``flavor`` selects the few request fields that differ between them:

    ChatRequest ──► {"model", "messages", "n", "temperature", "top_p", "max_tokens", "stop", "seed",
                     "response_format": json_schema | grammar field of the flavor, "logprobs"}
               ──► httpx POST ──► choices[i].message.content, finish_reason, logprobs, usage
               ──► ChatResponse

A request for more than ``max_n`` samples (llama.cpp's limit is its slot count) is split into
several. When a server returns fewer choices than asked (it ignores ``n``), the missing samples
are requested one by one, concurrently, with distinct seeds.

llama.cpp specifics: its server honours ``n`` (child slots copy the prompt's KV cache) but
reports the completion tokens of the first choice only, so the other choices are counted with
its ``/tokenize`` endpoint. The server picks each request's slot itself: concurrent requests
pinned to slots (``id_slot``) beside unpinned ones came back mixed between prompts or stalled
the server (docs/models.md).

>>> backend = OpenAICompatBackend(OpenAICompatSettings(base_url="http://127.0.0.1:8080/v1", model="qwen"))
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from typing import Any, Literal

import httpx
from pydantic import Field, SecretStr

from core.types import Frozen, Usage
from models.errors import (
    ContextTooLong,
    ModelRequestRejected,
    ModelServerError,
    ModelUnavailable,
)
from models.types import ChatRequest, ChatResponse, FinishReason, TokenLogprob

log = logging.getLogger(__name__)

Flavor = Literal["openai", "llama.cpp", "vllm"]

# How each server family takes a GBNF grammar (OpenAI's API has none).
_GRAMMAR_FIELDS: dict[Flavor, str | None] = {
    "llama.cpp": "grammar",
    "vllm": "structured_outputs",
    "openai": None,
}
# What servers say when a prompt does not fit: llama.cpp, vLLM, OpenAI.
_CONTEXT_ERROR = re.compile(
    r"exceed_context_size|exceeds the available context|maximum context length|context_length_exceeded"
    r"|context window|too many tokens",
    re.IGNORECASE,
)
# The counts in a refusal: llama.cpp's error carries them as fields (n_prompt_tokens, n_ctx) and
# in its message; vLLM and OpenAI in their message only.
_CONTEXT_COUNTS = (
    re.compile(
        r"request \((?P<prompt>\d+) tokens\) exceeds the available context size \((?P<context>\d+)"
    ),
    re.compile(
        r"maximum context length is (?P<context>\d+) tokens.*?"
        r"(?:(?P<prompt>\d+) in the messages|messages resulted in (?P<resulted>\d+) tokens)",
        re.DOTALL,
    ),
)
_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "eos": "stop",
    "tool_calls": "stop",
}


class OpenAICompatSettings(Frozen):
    base_url: str  # up to and including /v1, e.g. http://127.0.0.1:8080/v1
    model: str  # the model id sent in the request body
    name: str | None = None  # the name responses are attributed to; defaults to ``model``
    api_key_env: str | None = None  # name of the environment variable holding the API key
    api_key: SecretStr | None = None  # the key itself (a local server's, generated at its start)
    flavor: Flavor = "openai"
    max_connections: int = Field(default=64, ge=1)
    max_n: int | None = Field(default=None, ge=1)  # most samples one request may ask for
    connect_timeout_s: float = Field(default=5.0, gt=0)


class OpenAICompatBackend:
    def __init__(self, config: OpenAICompatSettings) -> None:
        self.config = config
        self._url = config.base_url.rstrip("/") + "/chat/completions"
        self._tokenize_url = config.base_url.rstrip("/").removesuffix("/v1") + "/tokenize"
        self._headers = {"Content-Type": "application/json"}
        if config.api_key is not None:
            self._headers["Authorization"] = f"Bearer {config.api_key.get_secret_value()}"
        elif config.api_key_env:
            key = os.environ.get(config.api_key_env)
            if not key:
                raise ModelUnavailable(
                    f"the API key variable {config.api_key_env} is not set for {config.base_url}"
                )
            self._headers["Authorization"] = f"Bearer {key}"
        # An httpx client is bound to the event loop that opened its connections.
        self._http: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def model(self) -> str:
        return self.config.name or self.config.model

    def _client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._http is None or self._loop is not loop:
            # The per-call timeout is the ModelClient's; httpx only bounds connecting.
            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(None, connect=self.config.connect_timeout_s),
                limits=httpx.Limits(
                    max_connections=self.config.max_connections, max_keepalive_connections=16
                ),
            )
            self._loop = loop
        return self._http

    def payload(self, request: ChatRequest, *, n: int, seed: int | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": [m.model_dump() for m in request.messages],
            "n": n,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_tokens": request.max_tokens,
        }
        if request.stop:
            body["stop"] = list(request.stop)
        if seed is not None:
            body["seed"] = seed
        if request.logprobs:
            # The model's own log-probabilities, before sampling and the grammar's mask: llama.cpp
            # with post_sampling_probs false, vLLM with its default logprobs_mode (raw_logprobs).
            body.update(logprobs=True, top_logprobs=1)
            if self.config.flavor == "llama.cpp":
                body["post_sampling_probs"] = False
        if request.json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": request.json_schema, "strict": True},
            }
        field = _GRAMMAR_FIELDS[self.config.flavor]
        if request.grammar is not None and (field is not None or not request.grammar_optional):
            if field is None:
                raise ValueError(
                    f"{self.config.flavor} servers take no grammar; use json_schema instead"
                )
            body[field] = request.grammar if field == "grammar" else {"grammar": request.grammar}
        return body

    async def _post(self, body: dict[str, Any], request: ChatRequest) -> dict[str, Any]:
        try:
            resp = await self._client().post(self._url, json=body, headers=self._headers)
        except (
            httpx.ConnectError,
            httpx.ConnectTimeout,
            httpx.RemoteProtocolError,
            httpx.ReadError,
        ) as exc:
            raise ModelUnavailable(
                f"cannot reach {self._url}: {type(exc).__name__}: {exc}"
            ) from exc
        if resp.status_code >= 400:
            _raise_for_status(resp, request, self._url)
        try:
            return resp.json()
        except ValueError as exc:
            raise ModelServerError(
                f"{self._url} answered with non-JSON: {resp.text[:200]!r}"
            ) from exc

    async def chat(self, request: ChatRequest) -> ChatResponse:
        start = time.perf_counter()
        step = self.config.max_n or request.n
        sizes = [min(step, request.n - i) for i in range(0, request.n, step)]
        seeds = [
            None if request.seed is None else request.seed + i * step for i in range(len(sizes))
        ]
        # The first request alone, so the others find its prompt in the server's cache.
        bodies = [await self._post(self.payload(request, n=sizes[0], seed=seeds[0]), request)]
        bodies += await asyncio.gather(
            *(
                self._post(self.payload(request, n=n, seed=seed), request)
                for n, seed in zip(sizes[1:], seeds[1:])
            )
        )
        missing = request.n - sum(len(b.get("choices") or ()) for b in bodies)
        if missing > 0:
            log.debug(
                "%s returned %d of %d choices; fanning out",
                self._url,
                request.n - missing,
                request.n,
            )
            extra = [
                None if request.seed is None else request.seed + request.n + i
                for i in range(missing)
            ]
            bodies += await asyncio.gather(
                *(self._post(self.payload(request, n=1, seed=s), request) for s in extra)
            )
        if self.config.flavor == "llama.cpp":
            await asyncio.gather(
                *(
                    self._recount_completion_tokens(b)
                    for b in bodies
                    if len(b.get("choices") or ()) > 1
                )
            )
        return _to_response(bodies, model=self.model, latency_s=time.perf_counter() - start)

    async def _recount_completion_tokens(self, body: dict[str, Any]) -> None:
        texts = [(c.get("message") or {}).get("content") or "" for c in body["choices"]]
        counts = await asyncio.gather(*(self._count_tokens(t) for t in texts))
        body.setdefault("usage", {})["completion_tokens"] = sum(counts)

    async def _count_tokens(self, text: str) -> int:
        try:
            resp = await self._client().post(
                self._tokenize_url,
                json={"content": text, "add_special": False},
                headers=self._headers,
            )
            resp.raise_for_status()
            return len(resp.json()["tokens"])
        except (httpx.HTTPError, ValueError, KeyError) as exc:
            raise ModelServerError(
                f"could not count tokens at {self._tokenize_url}: {exc}"
            ) from exc

    async def aclose(self) -> None:
        if self._http is not None and self._loop is asyncio.get_running_loop():
            await self._http.aclose()
        self._http = None


def _error_message(resp: httpx.Response) -> str:
    try:
        err = resp.json().get("error", resp.json())
        return str(err.get("message", err)) if isinstance(err, dict) else str(err)
    except (ValueError, AttributeError):
        return resp.text[:300]


def _raise_for_status(resp: httpx.Response, request: ChatRequest, url: str) -> None:
    message = _error_message(resp)
    what = f"{url} answered HTTP {resp.status_code} to {request.excerpt()!r}: {message}"
    if _CONTEXT_ERROR.search(resp.text):
        raise ContextTooLong(what, **_context_counts(resp), max_tokens=request.max_tokens)
    if resp.status_code == 429 or resp.status_code >= 500:
        raise ModelServerError(what)
    if resp.status_code in (401, 403):
        raise ModelRequestRejected(f"{what} (check the API key variable)")
    raise ModelRequestRejected(what)


def _context_counts(resp: httpx.Response) -> dict[str, int]:
    """The prompt's tokens and the context window a refusal names (empty where it names none)."""
    try:
        err = resp.json().get("error")
    except (ValueError, AttributeError):
        err = None
    if isinstance(err, dict) and isinstance(err.get("n_prompt_tokens"), int):
        if isinstance(err.get("n_ctx"), int):
            return {"prompt_tokens": err["n_prompt_tokens"], "context": err["n_ctx"]}
    for pattern in _CONTEXT_COUNTS:
        if found := pattern.search(resp.text):
            prompt = found.groupdict().get("prompt") or found.groupdict().get("resulted")
            if prompt:
                return {"prompt_tokens": int(prompt), "context": int(found["context"])}
    return {}


def _cached_prompt_tokens(body: dict[str, Any]) -> int:
    """Prompt tokens served from the prefix cache: OpenAI/vLLM report
    ``usage.prompt_tokens_details.cached_tokens``, llama.cpp's server ``timings.cache_n``."""
    details = (body.get("usage") or {}).get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens")
    if cached is None:
        cached = (body.get("timings") or {}).get("cache_n")
    try:
        return max(0, int(cached or 0))
    except (TypeError, ValueError):
        return 0


def _to_response(bodies: list[dict[str, Any]], *, model: str, latency_s: float) -> ChatResponse:
    texts: list[str] = []
    finish: list[FinishReason] = []
    logprobs: list[tuple[TokenLogprob, ...]] = []
    prompt_tokens = completion_tokens = cached = 0
    for body in bodies:
        for choice in sorted(body.get("choices") or (), key=lambda c: c.get("index", 0)):
            texts.append((choice.get("message") or {}).get("content") or "")
            finish.append(_FINISH.get(choice.get("finish_reason") or "", "unknown"))
            logprobs.append(_token_logprobs(choice))
        usage = body.get("usage") or {}
        prompt_tokens += int(usage.get("prompt_tokens") or 0)
        completion_tokens += int(usage.get("completion_tokens") or 0)
        cached += _cached_prompt_tokens(body)
    usage = Usage(
        calls=len(bodies),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cached_prompt_tokens=cached,
    )
    return ChatResponse(
        texts=tuple(texts),
        usage=usage,
        latency_s=latency_s,
        model=model,
        finish_reasons=tuple(finish),
        logprobs=tuple(logprobs) if any(logprobs) else (),
    )


def _token_logprobs(choice: dict[str, Any]) -> tuple[TokenLogprob, ...]:
    """OpenAI's ``choices[i].logprobs.content[j] = {"token", "logprob", ...}``."""
    content = (choice.get("logprobs") or {}).get("content") or ()
    try:
        return tuple(TokenLogprob(token=t["token"], logprob=float(t["logprob"])) for t in content)
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelServerError(f"unreadable logprobs in a reply: {str(content)[:200]!r}") from exc
