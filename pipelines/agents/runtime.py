"""The per-task handle through which agents reach the model and the sandbox.

Agents are stateless; what they need for one question comes in an :class:`AgentRuntime`:

    agent ──► runtime.chat(request, role=..., agent=...) ──► ModelClient.chat(budget=task budget)
                      │ AgentEvent (gen_ai.* attributes), usage, call cap
    agent ──► runtime.execute(sql, db) ──► sandbox ──► ExecutionResult
                      │ AgentEvent (operational surface)

The call cap is a safety net, the strategy's call allowance: a bug that loops cannot spend more
LLM calls than the configuration allows.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.types import Frozen, Usage
from models.budget import TokenBudget
from models.errors import ContextTooLong
from models.types import ChatRequest, ChatResponse
from pipelines.agents.errors import CallCapExceeded
from pipelines.contracts import DatabaseRef, ExecutionResult
from pipelines.trace import AgentEvent, Surface, TraceRecorder


class ModelClientLike(Protocol):
    async def chat(
        self, request: ChatRequest, *, role: str = ..., budget: TokenBudget | None = ...
    ) -> ChatResponse: ...


class SQLExecutor(Protocol):
    async def execute(self, sql: str, db: DatabaseRef) -> ExecutionResult: ...


class Began(Frozen):
    """When a call began: the wall clock its trace event shows, the monotonic clock its duration
    is measured on."""

    unix_s: float
    monotonic_s: float

    @classmethod
    def now(cls) -> Began:
        return cls(unix_s=time.time(), monotonic_s=time.monotonic())


class _SyncSandboxAdapter:
    """Lets a sandbox with only a blocking ``execute`` (or an ``aexecute``) be awaited."""

    def __init__(self, sandbox: Any) -> None:
        self.sandbox = sandbox

    async def execute(self, sql: str, db: DatabaseRef) -> ExecutionResult:
        if hasattr(self.sandbox, "aexecute"):
            return await self.sandbox.aexecute(sql, db)
        return await asyncio.to_thread(self.sandbox.execute, sql, db)


def as_executor(sandbox: Any) -> SQLExecutor:
    """``Sandbox`` (sync ``execute`` / async ``aexecute``) or a pool (async ``execute``)."""
    if inspect.iscoroutinefunction(getattr(sandbox, "execute", None)):
        return sandbox
    if hasattr(sandbox, "aexecute") or hasattr(sandbox, "execute"):
        return _SyncSandboxAdapter(sandbox)
    raise TypeError(f"{type(sandbox).__name__} has neither execute() nor aexecute()")


@dataclass(kw_only=True, eq=False)
class AgentRuntime:
    """Model + sandbox access for one task, recorded in its trace; ``calls`` and ``usage`` add
    up its chats."""

    client: ModelClientLike
    executor: SQLExecutor
    recorder: TraceRecorder
    budget: TokenBudget | None = None
    call_cap: int | None = None
    model_name: str = ""
    calls: int = field(default=0, init=False)
    usage: Usage = field(default_factory=Usage, init=False)

    async def chat(
        self, request: ChatRequest, *, role: str, agent: str, surface: Surface = "cognitive"
    ) -> ChatResponse:
        if self.call_cap is not None and self.calls >= self.call_cap:
            raise CallCapExceeded(
                f"{agent}: call {self.calls + 1} exceeds the cap of {self.call_cap}"
            )
        self.calls += 1
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.agent.name": agent,
            "gen_ai.request.model": self.model_name,
            "gen_ai.request.temperature": request.temperature,
            "gen_ai.request.top_p": request.top_p,
            "gen_ai.request.max_tokens": request.max_tokens,
            "gen_ai.request.choice.count": request.n,
            "gen_ai.request.seed": request.seed,
            "gen_ai.output.type": "json" if request.json_schema else "text",
            "scale_analytics.role": role,
        }
        began = Began.now()
        try:
            response = await self.client.chat(request, role=role, budget=self.budget)
        except BaseException as exc:
            if isinstance(exc, ContextTooLong):
                # refused before any token was evaluated: no call spent, and the prompt-fit
                # ladder (pipelines/prompt_fit.py) sends it again smaller, within the cap
                self.calls -= 1
            paid = getattr(exc, "response", None)  # BudgetExceeded after the fact carries the reply
            if isinstance(paid, ChatResponse):
                self.usage = self.usage + paid.usage
            attrs["error.type"] = type(exc).__name__
            self._record(agent, surface, began, ok=False, attrs=attrs)
            raise
        self.usage = self.usage + response.usage
        attrs.update(
            {
                "gen_ai.response.model": response.model,
                "gen_ai.response.finish_reasons": list(response.finish_reasons),
                "gen_ai.usage.input_tokens": response.usage.prompt_tokens,
                "gen_ai.usage.output_tokens": response.usage.completion_tokens,
                "gen_ai.usage.cache_read.input_tokens": response.usage.cached_prompt_tokens,
            }
        )
        self._record(agent, surface, began, ok=True, attrs=attrs)
        return response

    async def execute(
        self, sql: str, db: DatabaseRef, *, agent: str = "sandbox"
    ) -> ExecutionResult:
        began = Began.now()
        result = await self.executor.execute(sql, db)
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "sql_sandbox",
            "gen_ai.tool.type": "function",
            "db.system": db.dialect,
            "scale_analytics.caller": agent,
            "scale_analytics.row_count": result.row_count,
        }
        if result.error_kind:
            attrs["error.type"] = result.error_kind
        self._record("sandbox.execute", "operational", began, ok=result.ok, attrs=attrs)
        return result

    def record_tool(
        self, name: str, surface: Surface, began: Began, *, ok: bool, **attrs: Any
    ) -> None:
        """Record a non-LLM agent call (retrievers) that the caller timed itself."""
        attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, **attrs}
        self._record(name, surface, began, ok=ok, attrs=attrs)

    def _record(
        self, name: str, surface: Surface, began: Began, *, ok: bool, attrs: dict[str, Any]
    ) -> None:
        self.recorder.event(
            AgentEvent(
                name=name,
                surface=surface,
                task_id=self.recorder.task_id,
                start_unix_s=began.unix_s,
                duration_s=max(0.0, time.monotonic() - began.monotonic_s),
                ok=ok,
                attributes=attrs,
            )
        )
