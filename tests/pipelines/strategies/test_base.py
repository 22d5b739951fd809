"""The lifecycle every strategy shares (pipelines/strategies/base.py): the search under the
question's limits, one failure style for an unreadable schema and a model that cannot answer,
step accounting, the strategy's own answer when the search chose nothing, the prediction; and
answer() is answer_with_trace() without the trace, aclose() closes every sink."""

from __future__ import annotations

import asyncio
from typing import Literal

import pytest

from models.errors import BudgetExceeded, ModelUnavailable
from pipelines.contracts import CandidateSQL, DatabaseRef, Task
from pipelines.schema.reference import SchemaReadError
from pipelines.strategies.base import Strategy
from pipelines.strategies.registry import STRATEGIES, strategy_class
from pipelines.strategies.scaling import StrategyScaling

TASK = Task(task_id="q1", question="How many?", db=DatabaseRef(db_id="d", path="/nowhere"))
ANSWER = CandidateSQL(sql="SELECT 1", producer="echo")


class _Sink:
    def __init__(self) -> None:
        self.closed = 0
        self.written: list[object] = []

    def write(self, trace: object) -> None:
        self.written.append(trace)

    def close(self) -> None:
        self.closed += 1


class _Sandbox:
    async def execute(self, sql: str, db: object) -> None:
        raise AssertionError("nothing runs here")


class EchoScaling(StrategyScaling):
    strategy: Literal["echo"] = "echo"


class _Echo(Strategy[EchoScaling]):
    """Searches by running ``outcome``: a candidate, or an exception to raise, in a step."""

    Settings = EchoScaling

    def __init__(self, outcome: object = ANSWER, **kw) -> None:
        super().__init__(client=object(), sandbox=_Sandbox(), scaling=EchoScaling(**kw), sinks=())
        self.outcome = outcome

    def call_allowance(self) -> int:
        return 3

    async def search(self, run, memo):
        run.steps.open("echo")
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        if self.outcome == "slow":
            await asyncio.sleep(5)
        run.steps.answered_by = "echo"
        return self.outcome


class _Fallback(_Echo):
    async def conclude_search(self, run, memo, chosen):
        return chosen or CandidateSQL(sql="SELECT 0", producer="fallback")


def _answer(strategy: Strategy):
    return asyncio.run(strategy.answer_with_trace(TASK))


def test_the_search_answers_with_its_steps_and_its_call_cap():
    prediction, trace = _answer(_Echo())
    assert (prediction.sql, prediction.answered_by, prediction.error) == ("SELECT 1", "echo", None)
    assert [s.step for s in prediction.steps] == ["echo"]  # the open step is closed for it
    assert trace.task_id == "q1"


@pytest.mark.parametrize(
    ("outcome", "error"),
    [
        (SchemaReadError("no such file"), "cannot read the schema of d: no such file"),
        (ModelUnavailable("server gone"), "ModelUnavailable: server gone"),
    ],
)
def test_an_unreadable_schema_and_an_unanswering_model_fail_the_question_alike(outcome, error):
    prediction, _ = _answer(_Echo(outcome))
    assert (prediction.sql, prediction.error, prediction.degraded) == ("", error, False)
    assert prediction.answered_by == ""


@pytest.mark.parametrize(
    ("outcome", "kw", "label"),
    [
        ("slow", {"global_timeout_s": 0.05}, "global_timeout"),
        (BudgetExceeded("spent"), {}, "budget_exceeded"),
    ],
)
def test_the_limits_degrade_the_question_and_the_strategy_answers_from_what_exists(
    outcome, kw, label
):
    cut, _ = _answer(_Echo(outcome, **kw))
    assert cut.degradation_reasons == (label,) and cut.sql == "" and cut.error
    salvaged, _ = _answer(_Fallback(outcome, **kw))
    assert salvaged.degradation_reasons == (label,) and salvaged.sql == "SELECT 0"


def test_a_strategy_is_built_with_its_own_settings_only():
    with pytest.raises(ValueError, match="takes EchoScaling"):
        Strategy.__init__(
            _Echo.__new__(_Echo),
            client=object(),
            sandbox=_Sandbox(),
            scaling=strategy_class("single_pass").Settings(),
        )


def test_answer_drops_the_trace() -> None:
    assert asyncio.run(_Echo().answer(TASK)).sql == "SELECT 1"


def test_aclose_closes_every_sink() -> None:
    sinks = [_Sink(), _Sink()]
    echo = _Echo()
    echo.sinks = tuple(sinks)
    asyncio.run(echo.aclose())
    assert [s.closed for s in sinks] == [1, 1]


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_every_registered_strategy_is_keyed_by_its_settings_name(name: str) -> None:
    strategy = strategy_class(name)
    assert issubclass(strategy, Strategy)
    assert strategy.Settings().strategy == name
