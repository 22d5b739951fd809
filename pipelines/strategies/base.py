"""What every strategy does alike, once: the per-question lifecycle. A strategy supplies its
search (``search``), its call allowance (``call_allowance``) and, where it answers from what
exists when the search found nothing, ``conclude_search``; its settings are ``scaling``.

    Task ──► TaskRun.start (token budget, call cap = call_allowance())
         ──► search(run, memo) under the global timeout and the budget (within_limits)
               a schema that cannot be read, a model that cannot answer ──► run.failure
         ──► the open step closed ──► conclude_search(run, memo, chosen)
         ──► run.conclude ──► (Prediction, ReasoningTrace), the trace written to the sinks

    class Echo(Strategy[EchoScaling]):
        Settings = EchoScaling                       # a StrategyScaling
        def call_allowance(self): return 1
        async def search(self, run, memo): ...       # ──► CandidateSQL | None

    prediction = await Echo(client=client, sandbox=sandbox, scaling=EchoScaling()).answer(task)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from models.errors import ModelError
from pipelines.agents.runtime import ModelClientLike, as_executor
from pipelines.contracts import CandidateSQL, DatabaseRef, Prediction, Task
from pipelines.database_rules import settle
from pipelines.schema.cache import SchemaCache
from pipelines.schema.focus import SchemaFocuser
from pipelines.schema.reference import ReferenceSchema, SchemaReadError, reference_schema
from pipelines.settings import PipelineSettings
from pipelines.strategies.scaling import StrategyScaling
from pipelines.task_run import TaskRun, describe, within_limits
from pipelines.trace import ReasoningTrace, SafeSink, TraceSink, safe_sinks

T = TypeVar("T")
S = TypeVar("S", bound=StrategyScaling)


class Strategy(Generic[S]):
    """The shared state and the per-question lifecycle of the pipelines in ``pipelines.strategies``.

    Built with the pipeline settings and the strategy's scaling settings (its ``Settings``, the
    model ``S`` names; ``Settings()`` when none are given), each ``auto`` setting
    chosen as for a database that was not measured (``pipelines.database_rules.settle``; the
    factory builds one per database's choice), the optional L0 retrievers, and the schema focus.
    """

    Settings: ClassVar[type[StrategyScaling]]
    scaling: S

    def __init__(
        self,
        *,
        client: ModelClientLike,
        sandbox: object,
        scaling: S | None = None,
        settings: PipelineSettings = PipelineSettings(),
        sinks: Sequence[TraceSink] = (),
        model_name: str = "",
        cell_retriever: object | None = None,
        example_retriever: object | None = None,
        own_examples: Any | None = None,
        focuser: SchemaFocuser | None = None,
    ) -> None:
        scaling = self.Settings() if scaling is None else scaling
        if not isinstance(scaling, self.Settings):
            raise ValueError(
                f"{type(self).__name__} takes {self.Settings.__name__}, not "
                f"{type(scaling).__name__} (scaling.strategy={scaling.strategy!r})"
            )
        self.settings, self.scaling, _ = settle(settings, scaling, None)
        self.client = client
        self.executor = as_executor(sandbox)
        self.sinks: tuple[SafeSink, ...] = safe_sinks(sinks)
        self.model_name = model_name
        self.cell_retriever = cell_retriever
        self.example_retriever = example_retriever
        self.own_examples = own_examples
        # The schema focus of the strategies that read the reference schema (its settings'
        # by default); a test passes its own.
        self.focuser = focuser or SchemaFocuser(self.settings.focus)

    @property
    def stage(self) -> str:
        """Where the trace records the question's limits being reached: the strategy's name (a
        subclass may name another, as a class attribute)."""
        return self.scaling.strategy

    # --- what a strategy supplies ----------------------------------------------------------

    def call_allowance(self) -> int:
        """Upper bound of LLM calls of one question (the runtime's call cap)."""
        raise NotImplementedError

    def memo(self) -> Any:
        """The strategy's own memory of one question, handed to ``search`` and
        ``conclude_search`` (None: it keeps nothing beyond the run)."""
        return None

    async def search(self, run: TaskRun, memo: Any) -> CandidateSQL | None:
        raise NotImplementedError

    async def conclude_search(
        self, run: TaskRun, memo: Any, chosen: CandidateSQL | None
    ) -> CandidateSQL | None:
        """The answer: ``chosen``, or what the strategy answers from when the search chose
        nothing (it ran out of time or budget, or failed)."""
        return chosen

    # --- the lifecycle ---------------------------------------------------------------------

    async def answer(self, task: Task) -> Prediction:
        prediction, _ = await self.answer_with_trace(task)
        return prediction

    async def answer_with_trace(self, task: Task) -> tuple[Prediction, ReasoningTrace]:
        run = TaskRun.start(
            task,
            client=self.client,
            executor=self.executor,
            scaling=self.scaling,
            call_cap=self.call_allowance(),
            model_name=self.model_name,
        )
        memo = self.memo()
        chosen: CandidateSQL | None = None
        try:
            chosen = await within_limits(run, self.stage, self.search(run, memo))
        except SchemaReadError as exc:
            run.failure = f"cannot read the schema of {task.db.db_id}: {exc}"
        except ModelError as exc:  # the model cannot answer: what exists answers
            run.failure = describe(exc)
        run.steps.close()
        chosen = await self.conclude_search(run, memo, chosen)
        return run.conclude(self.sinks, chosen=chosen)

    async def aclose(self) -> None:
        for sink in self.sinks:
            sink.close()

    # --- reading a database once -----------------------------------------------------------

    @staticmethod
    async def once_per_database(
        cache: SchemaCache[T], db: DatabaseRef, read: Callable[[], Awaitable[T]]
    ) -> T:
        """``read()`` of ``db``, once per cache; any failure is this question's
        ``SchemaReadError`` (one task's timeout does not cancel the read others wait for)."""
        try:
            return await cache.get(db, read)
        except SchemaReadError:
            raise
        except Exception as exc:  # noqa: BLE001 - this task fails alone
            raise SchemaReadError(describe(exc)) from exc

    async def focused_reference(
        self, db: DatabaseRef, focuser: SchemaFocuser, *, sample_rows: int
    ) -> ReferenceSchema:
        """``db``'s reference schema prompt with ``sample_rows`` example rows per table and the
        configured column notes, prepared for ``focuser`` (its per-table scores)."""
        reference = await reference_schema(
            self.executor,
            db,
            sample_rows=sample_rows,
            column_notes=self.settings.single_pass.column_notes,
        )
        await focuser.prepare(db, reference)
        return reference
