"""The one door every LLM call in the project goes through.

await client.chat(request, role="generator", budget=task_budget)
  role ──(config roles)──► slot ──► backend.chat(request)
  with: budget reservation ─► per-call timeout ─► retries with exponential backoff on
  transient errors ─► JSON-schema check ─► cost from the slot's price ─► budget charge

A call's busy seconds are its reply's latency, ending when the reply arrives (a cached or
replayed reply keeps its recorded latency, so it is priced like its recorded tokens: as the
configuration costs). Within a task (one budget) overlapping calls on a slot count once
(``models.budget.BusyTime``); a call without a budget counts its own latency.

client = build_client(load_config(["model=qwen2.5-coder-1.5b"]).model)
resp = await client.chat(ChatRequest(messages=(ChatMessage(role="user", content="hi"),)),
                         role="generator")
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Self

import jsonschema
from pydantic import Field

from core.types import Frozen
from models.backends.base import ChatBackend
from models.budget import Price, TokenBudget
from models.errors import BudgetExceeded, InvalidModelOutput, ModelError, ModelTimeout
from models.types import ChatRequest, ChatResponse

log = logging.getLogger(__name__)

ROLES = ("generator", "selector", "critic", "fixer", "extractor", "verifier", "validator")
# Rough characters per token for prompts, used only to reserve budget before a call.
_CHARS_PER_TOKEN = 4


class RetryPolicy(Frozen):
    max_attempts: int = Field(default=3, ge=1)
    backoff_s: float = Field(default=0.5, ge=0)
    max_backoff_s: float = Field(default=8.0, ge=0)

    def delay(self, attempt: int) -> float:
        """Exponential backoff with full jitter; ``attempt`` counts from 1."""
        return random.uniform(0, min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1)))


DEFAULT_RETRY = RetryPolicy()


@dataclass
class Slot:
    """One configured model: its backend, price and per-call timeout."""

    name: str
    backend: ChatBackend
    price: Price = field(default_factory=Price)
    timeout_s: float = 300.0


def estimate_prompt_tokens(request: ChatRequest) -> int:
    return sum(len(m.content) for m in request.messages) // _CHARS_PER_TOKEN + 4 * len(
        request.messages
    )


class ModelClient:
    """Maps roles to slots and makes calls robust. Share one per process; it is async-safe."""

    def __init__(
        self,
        slots: Mapping[str, Slot],
        roles: Mapping[str, str],
        retry: RetryPolicy = DEFAULT_RETRY,
        *,
        on_close: Iterable[Callable[[], None]] = (),
    ) -> None:
        unknown = {r: s for r, s in roles.items() if s not in slots}
        if unknown:
            raise ValueError(f"roles point at undefined slots {unknown}; slots are {sorted(slots)}")
        self.slots = dict(slots)
        self.roles = dict(roles)
        self.retry = retry
        self._on_close = list(on_close)

    def slot_for(self, role: str) -> Slot:
        try:
            return self.slots[self.roles[role]]
        except KeyError:
            raise ValueError(
                f"no model slot for role {role!r}; configured roles: {sorted(self.roles)}"
            ) from None

    async def chat(
        self, request: ChatRequest, *, role: str, budget: TokenBudget | None = None
    ) -> ChatResponse:
        slot = self.slot_for(role)
        what = f"{role} call to {slot.backend.model} ({request.excerpt(48)!r})"
        reservation = None
        if budget is not None:
            prompt_tokens = estimate_prompt_tokens(request)
            reservation = budget.reserve(
                prompt_tokens, slot.price.cost(prompt_tokens, 0), what=what
            )
        try:
            response = await self._call_with_retries(slot, request, what)
        finally:
            if reservation is not None:
                budget.release(reservation)
        arrived = time.monotonic()
        busy_s = (
            budget.busy.add(slot.name, arrived - response.latency_s, arrived)
            if budget is not None
            else response.latency_s
        )
        usage = response.usage.model_copy(
            update={
                "busy_s": busy_s,
                "cost_usd": slot.price.cost(
                    response.usage.prompt_tokens, response.usage.completion_tokens, busy_s
                ),
            }
        )
        response = response.model_copy(update={"usage": usage})
        # Charge first: a reply that fails validation was still paid for.
        if budget is not None and not budget.charge(usage):
            raise BudgetExceeded(
                f"budget overdrawn by {what}: {budget.describe()}", response=response
            )
        _check_json(request, response)
        return response

    async def _call_with_retries(self, slot: Slot, request: ChatRequest, what: str) -> ChatResponse:
        for attempt in range(1, self.retry.max_attempts + 1):
            try:
                async with asyncio.timeout(slot.timeout_s):
                    return await slot.backend.chat(request)
            except TimeoutError:
                error: ModelError = ModelTimeout(f"{what} took longer than {slot.timeout_s:g} s")
            except ModelError as exc:
                error = exc
            if not error.retryable or attempt == self.retry.max_attempts:
                if attempt > 1:
                    error.add_note(f"gave up after {attempt} attempts")
                raise error
            delay = self.retry.delay(attempt)
            log.warning("%s failed (%s); retry %d in %.2f s", what, error, attempt, delay)
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        """Close connections, then stop the servers this client started (if any)."""
        for slot in self.slots.values():
            await slot.backend.aclose()
        self.close()

    def close(self) -> None:
        """Stop owned servers; safe to call more than once and outside an event loop."""
        while self._on_close:
            self._on_close.pop()()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _check_json(request: ChatRequest, response: ChatResponse) -> None:
    if request.json_schema is None:
        return
    for i, text in enumerate(response.texts):
        try:
            jsonschema.validate(json.loads(text), request.json_schema)
        except json.JSONDecodeError as exc:
            raise InvalidModelOutput(
                f"sample {i} is not JSON ({exc.msg}): {text[:120]!r}", text=text
            ) from exc
        except jsonschema.ValidationError as exc:
            raise InvalidModelOutput(
                f"sample {i} does not match the JSON schema ({exc.message}): {text[:120]!r}",
                text=text,
            ) from exc


async def chat_many(
    client: ModelClient,
    requests: Iterable[ChatRequest],
    *,
    role: str,
    budget: TokenBudget | None = None,
) -> list[ChatResponse | ModelError]:
    """Issue ``requests`` concurrently; a failed one yields its error in place, never sinks the rest."""
    calls: list[Awaitable[ChatResponse]] = [
        client.chat(r, role=role, budget=budget) for r in requests
    ]
    results = await asyncio.gather(*calls, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, ModelError):
            raise result  # a bug, not a model failure: surface it
    return results  # type: ignore[return-value]
