"""What a pipeline is to its callers: ``eval``'s sweep worker, the endpoint and ``ask`` each
answer with one, whatever strategy it runs (``pipelines.factory.build_pipeline`` builds it).

    pipeline: Pipeline = build_pipeline(cfg, client=client, sandbox=sandbox)
    prediction, trace = await pipeline.answer_with_trace(task)
    await pipeline.aclose()
"""

from __future__ import annotations

from typing import Protocol

from pipelines.contracts import Prediction, Task
from pipelines.trace import ReasoningTrace


class Pipeline(Protocol):
    async def answer(self, task: Task) -> Prediction: ...

    async def answer_with_trace(self, task: Task) -> tuple[Prediction, ReasoningTrace]: ...

    async def aclose(self) -> None: ...
