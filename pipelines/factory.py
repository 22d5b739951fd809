"""Build the configured pipeline: single-pass greedy, the adaptive pipeline, the agentic mode, or
the full-width orchestrator.

    pipeline = build_pipeline(cfg, client=models.build_client(cfg.model), sandbox=sandbox)
    prediction = await pipeline.answer(task)   # the model answers
    await pipeline.aclose()

All four follow :class:`Pipeline`: ``async answer(task) -> Prediction`` and ``async aclose()``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from omegaconf import DictConfig, OmegaConf

from core.config import section
from pipelines.contracts import Prediction, ScalingSettings, Task
from pipelines.settings import PipelineSettings
from pipelines.trace import JsonlTraceSink, ReasoningTrace, TraceSink


class Pipeline(Protocol):
    async def answer(self, task: Task) -> Prediction: ...

    async def answer_with_trace(self, task: Task) -> tuple[Prediction, ReasoningTrace]: ...

    async def aclose(self) -> None: ...


def build_retrievers(cfg: DictConfig) -> tuple[Any | None, Any | None]:
    """``(CellRetriever, ExampleRetriever)`` over ``cfg.pipeline.index.root``, or ``(None, None)``
    when no index was ever built there. A database without its own index degrades nothing: the
    orchestrator records ``cell_retriever_unavailable`` and goes on without cell values."""
    root = OmegaConf.select(cfg, "pipeline.index.root")
    if not root or not Path(root).is_dir():
        return None, None
    from pipelines.indexing import CellRetriever, ExampleRetriever

    return CellRetriever(root), ExampleRetriever(root)


def default_sinks(settings: PipelineSettings) -> tuple[TraceSink, ...]:
    sinks: list[TraceSink] = []
    if settings.trace.directory:
        sinks.append(JsonlTraceSink(settings.trace.directory))
    return tuple(sinks)


def build_pipeline(
    cfg: DictConfig,
    *,
    client: Any,
    sandbox: Any,
    cell_retriever: Any | None = None,
    example_retriever: Any | None = None,
    sinks: tuple[TraceSink, ...] | None = None,
    own_examples: Any | None = None,
) -> Pipeline:
    """``cfg.scaling.single_pass`` → :class:`SinglePassPipeline`; ``cfg.scaling.agentic`` set →
    :class:`AgenticPipeline`; ``cfg.scaling.adaptive`` set → :class:`AdaptivePipeline`; else the
    full-width :class:`Orchestrator`.

    ``client``: a ``models`` ModelClient; ``sandbox``: a Sandbox or sandbox pool; the retrievers
    (``CellRetriever`` / ``ExampleRetriever``) are optional — without them L1 retrieval is
    skipped (not a degradation). ``sinks`` default to the ``pipeline.trace`` config.
    ``own_examples`` (an ``OwnExampleRetriever``) defaults to the example files beside each
    database; the endpoint passes one that adds its accepted answers.
    """
    scaling = section(cfg, "scaling", ScalingSettings)
    settings = section(cfg, "pipeline", PipelineSettings)
    sinks = default_sinks(settings) if sinks is None else sinks
    model_name = str(cfg.model.get("name", "")) if cfg.get("model") is not None else ""
    from pipelines.schema.focus import SchemaFocuser

    focuser = SchemaFocuser(settings.focus)
    if scaling.single_pass:
        from pipelines.strategies.single_pass import SinglePassPipeline

        return SinglePassPipeline(
            client=client,
            sandbox=sandbox,
            settings=settings.single_pass,
            scaling=scaling,
            sinks=sinks,
            model_name=model_name,
            focuser=focuser,
        )
    if scaling.agentic is not None:
        from pipelines.indexing.examples.own_examples import OwnExampleRetriever
        from pipelines.strategies.agentic import AgenticPipeline

        return AgenticPipeline(
            client=client,
            sandbox=sandbox,
            scaling=scaling,
            settings=settings,
            sinks=sinks,
            model_name=model_name,
            own_examples=own_examples or OwnExampleRetriever(),
            cell_retriever=cell_retriever,
        )
    extra: dict[str, Any] = {}
    if scaling.adaptive is not None:
        from pipelines.indexing.examples.own_examples import OwnExampleRetriever
        from pipelines.strategies.adaptive import AdaptivePipeline as pipeline_class

        extra = {"focuser": focuser, "own_examples": own_examples or OwnExampleRetriever()}
    else:
        from pipelines.strategies.orchestrator import Orchestrator as pipeline_class

    return pipeline_class(
        client=client,
        sandbox=sandbox,
        scaling=scaling,
        settings=settings,
        cell_retriever=cell_retriever,
        example_retriever=example_retriever,
        sinks=sinks,
        model_name=model_name,
        **extra,
    )
