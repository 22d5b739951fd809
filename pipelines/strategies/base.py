"""What every strategy holds and does alike: a model client, the sandbox as an executor, its
scaling settings, the trace sinks; ``answer`` is ``answer_with_trace`` without the trace, and
``aclose`` closes the sinks. A strategy implements ``answer_with_trace`` only.

    class Echo(Strategy):
        async def answer_with_trace(self, task): ...   # ──► (Prediction, ReasoningTrace)

    prediction = await Echo(client=client, sandbox=sandbox, scaling=scaling).answer(task)
"""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.agents.runtime import ModelClientLike, as_executor
from pipelines.contracts import Prediction, ScalingSettings, Task
from pipelines.trace import ReasoningTrace, SafeSink, TraceSink, safe_sinks


class Strategy:
    """The shared state and public API of the pipelines in ``pipelines.strategies``."""

    def __init__(
        self,
        *,
        client: ModelClientLike,
        sandbox: object,
        scaling: ScalingSettings,
        sinks: Sequence[TraceSink] = (),
        model_name: str = "",
    ) -> None:
        self.client = client
        self.executor = as_executor(sandbox)
        self.scaling = scaling
        self.sinks: tuple[SafeSink, ...] = safe_sinks(sinks)
        self.model_name = model_name

    async def answer(self, task: Task) -> Prediction:
        prediction, _ = await self.answer_with_trace(task)
        return prediction

    async def answer_with_trace(self, task: Task) -> tuple[Prediction, ReasoningTrace]:
        raise NotImplementedError

    async def aclose(self) -> None:
        for sink in self.sinks:
            sink.close()
