"""The shared part of every strategy: answer() is answer_with_trace() without the trace, aclose()
closes every sink, and each pipeline of pipelines.strategies is one."""

from __future__ import annotations

import asyncio

import pytest

from pipelines.contracts import ScalingSettings
from pipelines.strategies import (
    AdaptivePipeline,
    AgenticPipeline,
    Orchestrator,
    SinglePassPipeline,
)
from pipelines.strategies.base import Strategy


class _Sink:
    def __init__(self) -> None:
        self.closed = 0

    def write(self, trace: object) -> None:
        pass

    def close(self) -> None:
        self.closed += 1


class _Sandbox:
    def execute(self, sql: str, db: object) -> None:
        raise AssertionError("nothing runs here")


class _Echo(Strategy):
    async def answer_with_trace(self, task):
        return f"prediction of {task}", f"trace of {task}"


def _echo(**kw) -> _Echo:
    return _Echo(client=object(), sandbox=_Sandbox(), scaling=ScalingSettings(), **kw)


def test_answer_drops_the_trace() -> None:
    assert asyncio.run(_echo().answer("q1")) == "prediction of q1"


def test_aclose_closes_every_sink() -> None:
    sinks = [_Sink(), _Sink()]
    asyncio.run(_echo(sinks=sinks).aclose())
    assert [s.closed for s in sinks] == [1, 1]


def test_a_strategy_without_answer_with_trace_cannot_answer() -> None:
    class Bare(Strategy):
        pass

    bare = Bare(client=object(), sandbox=_Sandbox(), scaling=ScalingSettings())
    with pytest.raises(NotImplementedError):
        asyncio.run(bare.answer("q"))


@pytest.mark.parametrize(
    "pipeline", [SinglePassPipeline, AdaptivePipeline, AgenticPipeline, Orchestrator]
)
def test_every_pipeline_is_a_strategy(pipeline: type) -> None:
    assert issubclass(pipeline, Strategy)
