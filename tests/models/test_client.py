import asyncio
import json

import pytest

from core.config import load_config
from core.types import Usage
from models.budget import Price, TokenBudget
from models.client import ModelClient, RetryPolicy, Slot, chat_many
from models.errors import (
    BudgetExceeded,
    ContextTooLong,
    InvalidModelOutput,
    ModelServerError,
    ModelTimeout,
    ModelUnavailable,
)
from models.types import ChatMessage, ChatRequest, ChatResponse

NO_WAIT = RetryPolicy(max_attempts=3, backoff_s=0.0, max_backoff_s=0.0)


class ScriptedBackend:
    """Plays a script of outcomes: an exception to raise, a float to sleep, or reply texts."""

    def __init__(self, script: list, model: str = "fake") -> None:
        self.script = list(script)
        self.calls = 0
        self._model = model

    @property
    def model(self) -> str:
        return self._model

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        step = self.script.pop(0) if self.script else ("SELECT 1",)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, float):
            await asyncio.sleep(step)
            step = ("SELECT 1",)
        texts = tuple(step)
        return ChatResponse(
            texts=texts,
            usage=Usage(calls=1, prompt_tokens=100, completion_tokens=10 * len(texts)),
            latency_s=0.01,
            model=self._model,
            finish_reasons=("stop",) * len(texts),
        )

    async def aclose(self) -> None:
        pass


FREE = Price()


def _client(
    backend, *, timeout_s: float = 5.0, price: Price = FREE, retry: RetryPolicy = NO_WAIT
) -> ModelClient:
    return ModelClient(
        {"default": Slot("default", backend, price=price, timeout_s=timeout_s)},
        {"generator": "default", "critic": "default"},
        retry,
    )


def _req(content: str = "How many singers?", **kw) -> ChatRequest:
    return ChatRequest(messages=(ChatMessage(role="user", content=content),), **kw)


async def test_transient_errors_are_retried_then_succeed() -> None:
    backend = ScriptedBackend([ModelUnavailable("down"), ModelServerError("503"), ("SELECT 2",)])
    resp = await _client(backend).chat(_req(), role="generator")
    assert resp.texts == ("SELECT 2",) and backend.calls == 3


async def test_gives_up_after_max_attempts_with_a_note() -> None:
    backend = ScriptedBackend([ModelUnavailable("down")] * 5)
    with pytest.raises(ModelUnavailable) as info:
        await _client(backend).chat(_req(), role="generator")
    assert backend.calls == 3
    assert any("after 3 attempts" in note for note in info.value.__notes__)


async def test_final_errors_are_not_retried() -> None:
    backend = ScriptedBackend([ContextTooLong("too long"), ("SELECT 1",)])
    with pytest.raises(ContextTooLong):
        await _client(backend).chat(_req(), role="generator")
    assert backend.calls == 1


async def test_slow_call_times_out_as_typed_error() -> None:
    backend = ScriptedBackend([5.0, 5.0])
    client = _client(backend, timeout_s=0.05, retry=RetryPolicy(max_attempts=2, backoff_s=0.0))
    with pytest.raises(ModelTimeout, match="longer than 0.05 s"):
        await client.chat(_req(), role="generator")
    assert backend.calls == 2


async def test_backoff_grows_exponentially_and_is_capped() -> None:
    policy = RetryPolicy(max_attempts=5, backoff_s=1.0, max_backoff_s=3.0)
    samples = [[policy.delay(attempt) for _ in range(200)] for attempt in (1, 2, 3, 4)]
    assert max(samples[0]) <= 1.0 and max(samples[1]) <= 2.0 and max(samples[3]) <= 3.0
    assert max(samples[1]) > 1.0  # the second wait may exceed the first's ceiling


async def test_unknown_role_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no model slot for role 'selector'"):
        await _client(ScriptedBackend([])).chat(_req(), role="selector")
    with pytest.raises(ValueError, match="undefined slots"):
        ModelClient({"a": Slot("a", ScriptedBackend([]))}, {"generator": "b"})


async def test_cost_comes_from_the_slot_price() -> None:
    client = _client(
        ScriptedBackend([("a", "b")]), price=Price(prompt_per_mtok=1e6, completion_per_mtok=2e6)
    )
    resp = await client.chat(_req(n=2), role="generator")
    assert resp.usage.cost_usd == pytest.approx(100 * 1.0 + 20 * 2.0)


class SleepingBackend:
    """Replies after ``delay_s``, with that as the reply's latency (as a server's would be)."""

    model = "fake"

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    async def chat(self, request: ChatRequest) -> ChatResponse:
        await asyncio.sleep(self.delay_s)
        return ChatResponse(
            texts=("SELECT 1",), usage=Usage(calls=1), latency_s=self.delay_s, model=self.model
        )

    async def aclose(self) -> None:
        pass


async def test_an_hourly_price_charges_the_tasks_busy_seconds_once() -> None:
    client = _client(SleepingBackend(0.3), price=Price(per_hour=3600.0))  # $1 per busy second
    budget = TokenBudget()
    together = await asyncio.gather(
        *(client.chat(_req(), role="generator", budget=budget) for _ in range(3))
    )
    # three calls of one task decoded together: the slot was busy ~0.3 s, not 0.9 s
    assert sum(r.usage.busy_s for r in together) == pytest.approx(0.3, abs=0.1)
    assert budget.spent.cost_usd == pytest.approx(budget.spent.busy_s) and budget.spent.busy_s > 0
    alone = await client.chat(_req(), role="generator")  # no task: the call's own latency
    assert alone.usage.busy_s == pytest.approx(0.3) and alone.usage.cost_usd == pytest.approx(0.3)


async def test_budget_refuses_a_call_that_cannot_fit() -> None:
    backend = ScriptedBackend([])
    budget = TokenBudget(max_tokens=50)
    with pytest.raises(BudgetExceeded, match="before generator call") as info:
        await _client(backend).chat(_req("x" * 400), role="generator", budget=budget)
    assert backend.calls == 0 and info.value.response is None


async def test_budget_overflow_raises_after_the_call_with_the_response() -> None:
    budget = TokenBudget(max_tokens=150)
    client = _client(ScriptedBackend([("SELECT 1",), ("SELECT 2",)]))
    await client.chat(_req(), role="generator", budget=budget)  # spends 110
    with pytest.raises(BudgetExceeded, match="overdrawn") as info:
        await client.chat(_req(), role="generator", budget=budget)
    assert info.value.response.texts == ("SELECT 2",)
    assert budget.spent.total_tokens == 220 and budget.spent.calls == 2


async def test_failed_call_releases_its_reservation() -> None:
    budget = TokenBudget(max_tokens=1000)
    client = _client(ScriptedBackend([ContextTooLong("x")]))
    with pytest.raises(ContextTooLong):
        await client.chat(_req("y" * 2000), role="generator", budget=budget)
    assert budget.remaining_tokens == 1000


SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"enum": ["A", "B"]}},
    "required": ["verdict"],
}


async def test_json_schema_replies_are_validated() -> None:
    ok = await _client(ScriptedBackend([(json.dumps({"verdict": "A"}),)])).chat(
        _req(json_schema=SCHEMA), role="critic"
    )
    assert json.loads(ok.texts[0]) == {"verdict": "A"}
    with pytest.raises(InvalidModelOutput, match="not JSON"):
        await _client(ScriptedBackend([("verdict: A",)])).chat(
            _req(json_schema=SCHEMA), role="critic"
        )
    with pytest.raises(InvalidModelOutput, match="does not match the JSON schema"):
        await _client(ScriptedBackend([('{"verdict": "C"}',)])).chat(
            _req(json_schema=SCHEMA), role="critic"
        )


async def test_an_invalid_reply_is_still_charged() -> None:
    budget = TokenBudget(max_tokens=10_000)
    with pytest.raises(InvalidModelOutput):
        await _client(ScriptedBackend([("not json",)])).chat(
            _req(json_schema=SCHEMA), role="critic", budget=budget
        )
    assert budget.spent.total_tokens == 110


async def test_chat_many_keeps_going_when_one_request_fails() -> None:
    backend = ScriptedBackend([("SELECT 1",), ContextTooLong("too long"), ("SELECT 3",)])
    results = await chat_many(_client(backend), [_req("a"), _req("b"), _req("c")], role="generator")
    assert [type(r).__name__ for r in results] == ["ChatResponse", "ContextTooLong", "ChatResponse"]


async def test_chat_many_surfaces_programming_errors() -> None:
    backend = ScriptedBackend([KeyError("bug")])
    with pytest.raises(KeyError):
        await chat_many(_client(backend), [_req()], role="generator")


async def test_close_runs_owned_shutdowns_once() -> None:
    stopped: list[str] = []
    client = ModelClient(
        {"default": Slot("default", ScriptedBackend([]))},
        {"generator": "default"},
        on_close=[lambda: stopped.append("server")],
    )
    async with client:
        pass
    client.close()
    assert stopped == ["server"]


async def test_the_checking_roles_run_on_mixed_cpus_cheap_slot_at_its_price() -> None:
    """The agentic verifier's and validator's calls go to the 0.5B slot and are priced there;
    the task's cost (what cost per correct answer sums) holds both slots' calls."""
    roles = load_config(["model=mixed-cpu"]).model.roles
    assert roles["verifier"] == roles["validator"] == "cheap" and roles["generator"] == "strong"
    strong, cheap = ScriptedBackend([], model="1.5b"), ScriptedBackend([], model="0.5b")
    client = ModelClient(
        {
            "strong": Slot("strong", strong, price=Price(prompt_per_mtok=2e6)),  # $2 a token
            "cheap": Slot("cheap", cheap, price=Price(prompt_per_mtok=1e6)),  # $1 a token
        },
        roles,
        NO_WAIT,
    )
    budget = TokenBudget()
    generated = await client.chat(_req(), role="generator", budget=budget)
    verified = await client.chat(_req(), role="verifier", budget=budget)
    validated = await client.chat(_req(), role="validator", budget=budget)
    assert (strong.calls, cheap.calls) == (1, 2)
    assert verified.model == validated.model == "0.5b"
    # 100 prompt tokens each: the cheap slot's calls cost half the strong one's
    assert generated.usage.cost_usd == pytest.approx(200.0)
    assert verified.usage.cost_usd == validated.usage.cost_usd == pytest.approx(100.0)
    assert budget.spent.cost_usd == pytest.approx(400.0) and budget.spent.calls == 3
