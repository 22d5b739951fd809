"""Build the configured pipeline: the strategy ``scaling.strategy`` names
(``pipelines/strategies/registry.py``), with its ``auto`` settings chosen per database.

    pipeline = build_pipeline(cfg, client=models.build_client(cfg.model), sandbox=sandbox)
    prediction = await pipeline.answer(task)   # the model answers
    prediction.chosen                          # what the database's measurements chose
    await pipeline.aclose()

``ask``, the endpoint and ``eval`` all build their pipeline here, so one question on one database
gets the same settings, and the same SQL, on every surface. Every pipeline follows
``pipelines.pipeline.Pipeline``: ``answer``, ``answer_with_trace`` and ``aclose``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from core.config import section
from pipelines.agents.runtime import as_executor
from pipelines.contracts import ChosenSetting, DatabaseRef, Prediction, Task
from pipelines.database_rules import DatabaseProfile, schema_tokens, settle
from pipelines.pipeline import Pipeline
from pipelines.schema.cache import SchemaCache
from pipelines.settings import PipelineSettings
from pipelines.strategies.registry import scaling_settings, strategy_class
from pipelines.strategies.scaling import StrategyScaling
from pipelines.trace import JsonlTraceSink, ReasoningTrace, TraceSink


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


class DatabasePipeline:
    """The configured strategy, built once for each set of settings the rules choose: each
    question's database is measured (once per database), its ``auto`` settings are chosen
    (``pipelines.database_rules``), and the strategy built with them answers; the prediction
    says what was chosen (``Prediction.chosen``). A database that cannot be measured gets the
    rules' choice for a small one, and the strategy reports why its schema cannot be read."""

    def __init__(
        self,
        build: Any,
        *,
        settings: PipelineSettings,
        scaling: StrategyScaling,
        sandbox: Any,
        own_examples: Any | None,
    ) -> None:
        self._build = build  # (PipelineSettings, StrategyScaling) -> a strategy
        self.settings, self.scaling = settings, scaling
        self._executor = as_executor(sandbox)
        self.own_examples = own_examples
        self._sizes: SchemaCache[int] = SchemaCache()
        self._strategies: dict[tuple[ChosenSetting, ...], Pipeline] = {}

    async def profile(self, db: DatabaseRef) -> DatabaseProfile | None:
        """``db`` measured (its own examples counted at each call: the endpoint adds accepted
        answers); None when its schema cannot be read."""
        try:
            tokens = await self._sizes.get(db, lambda: schema_tokens(self._executor, db))
        except Exception:  # noqa: BLE001 - the strategy reports the unreadable schema
            return None
        own = len(self.own_examples.examples(db)) if self.own_examples is not None else 0
        return DatabaseProfile(db_id=db.db_id, schema_tokens=tokens, own_examples=own)

    async def strategy_for(self, db: DatabaseRef) -> tuple[Pipeline, tuple[ChosenSetting, ...]]:
        settings, scaling, chosen = settle(self.settings, self.scaling, await self.profile(db))
        if chosen not in self._strategies:
            self._strategies[chosen] = self._build(settings, scaling)
        return self._strategies[chosen], chosen

    async def answer_with_trace(self, task: Task) -> tuple[Prediction, ReasoningTrace]:
        strategy, chosen = await self.strategy_for(task.db)
        prediction, trace = await strategy.answer_with_trace(task)
        return prediction.model_copy(update={"chosen": chosen}), trace

    async def answer(self, task: Task) -> Prediction:
        prediction, _ = await self.answer_with_trace(task)
        return prediction

    async def aclose(self) -> None:
        for strategy in self._strategies.values():
            await strategy.aclose()


def build_pipeline(
    cfg: DictConfig,
    *,
    client: Any,
    sandbox: Any,
    cell_retriever: Any | None = None,
    example_retriever: Any | None = None,
    sinks: tuple[TraceSink, ...] | None = None,
    own_examples: Any | None = None,
    cheatsheets: Any | None = None,
) -> DatabasePipeline:
    """The configured strategy (``scaling.strategy`` in the registry) behind the per-database
    rules.

    ``client``: a ``models`` ModelClient; ``sandbox``: a Sandbox or sandbox pool; the retrievers
    (``CellRetriever`` / ``ExampleRetriever``) are optional — without them L1 retrieval is
    skipped (not a degradation). ``sinks`` default to the ``pipeline.trace`` config.
    ``own_examples`` (an ``OwnExampleRetriever``) defaults to the example files beside each
    database; the endpoint passes one that adds its accepted answers. ``cheatsheets`` (the
    agentic strategy's only): each database's sheet, where it is not the files under
    ``pipeline.cheatsheet.root`` (a sweep on object storage: ``eval/sweep/cheatsheets.py``).
    """
    from pipelines.indexing.examples.own_examples import OwnExampleRetriever

    scaling = scaling_settings(cfg)
    settings = section(cfg, "pipeline", PipelineSettings)
    sinks = default_sinks(settings) if sinks is None else sinks
    model_name = str(cfg.model.get("name", "")) if cfg.get("model") is not None else ""
    own_examples = own_examples or OwnExampleRetriever()

    served = {"client": client, "sandbox": sandbox, "sinks": sinks, "model_name": model_name}
    if cheatsheets is not None:
        served["cheatsheets"] = cheatsheets
    retrieval = {"cell_retriever": cell_retriever, "example_retriever": example_retriever}

    def build(settings: PipelineSettings, scaling: StrategyScaling) -> Pipeline:
        """The strategy ``scaling.strategy`` names, built with these settings."""
        return strategy_class(scaling.strategy)(
            settings=settings, scaling=scaling, own_examples=own_examples, **served, **retrieval
        )

    return DatabasePipeline(
        build, settings=settings, scaling=scaling, sandbox=sandbox, own_examples=own_examples
    )
