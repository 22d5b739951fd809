"""Per-task reasoning trace, agent-call events, and where they are written.

    agent call ──► AgentEvent (gen_ai.* attributes, surface tag) ─┐
    orchestrator decision / degradation ──► DecisionEvent ────────┤──► TraceRecorder (one task)
    candidates, buckets, fixes, critiques, lessons, matches ──────┘          │ freeze()
                                                                             ▼
                        ReasoningTrace ──► sinks: JsonlTraceSink (traces.jsonl, events.jsonl)

The trace is ephemeral: it lives for one question and is serialised beside the prediction. A
sweep turns the JSONL of its answered questions into MLflow traces of its run
(``eval.reporting.tracking.log_traces``) and into per-surface metrics (``eval.metrics.traces``).
A failing sink warns once and never stops the pipeline (:class:`SafeSink`).

Event attribute names follow the OpenTelemetry GenAI semantic conventions where one exists
(``gen_ai.operation.name``, ``gen_ai.request.model``, ``gen_ai.usage.input_tokens``, ...);
project-specific ones live under ``scale_analytics.*``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import Field

from core.types import Frozen, Usage
from pipelines.agents.types import (
    Bucket,
    Context,
    Critique,
    FixAttempt,
    LessonsBlock,
    Match,
    RevisionDelta,
    family_of,
)
from pipelines.contracts import CandidateSQL, Prediction

log = logging.getLogger(__name__)

Surface = Literal["cognitive", "operational", "contextual"]
AttrValue = str | int | float | bool | None | list[str] | list[int] | list[float]


class AgentEvent(Frozen):
    """One agent (LLM or tool) call, as an OpenTelemetry GenAI-style span."""

    name: str  # e.g. "l2.icl_generator.cot", "l2.sandbox"
    surface: Surface
    task_id: str
    start_unix_s: float
    duration_s: float = Field(ge=0)
    ok: bool
    attributes: dict[str, AttrValue] = Field(default_factory=dict)


class DecisionEvent(Frozen):
    """An orchestrator decision (router, forced retry, re-synthesis) or a degradation."""

    label: str  # "extractor_failed", "router.stop_early", "critique.forced_retry", ...
    stage: str
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    features: dict[str, AttrValue] = Field(default_factory=dict)
    degradation: bool = False
    at_s: float = Field(default=0.0, ge=0)  # seconds since the task started


class BucketSnapshot(Frozen):
    """Bucket metadata at one point of the loop (what downstream agents could see)."""

    stage: str
    hash: str
    size: int
    producers: tuple[str, ...]
    mean_rationale_chars: float
    error: bool
    empty: bool

    @classmethod
    def of(cls, stage: str, bucket: Bucket) -> BucketSnapshot:
        return cls(
            stage=stage,
            hash=bucket.hash,
            size=bucket.size,
            producers=bucket.producers,
            mean_rationale_chars=bucket.mean_rationale_chars,
            error=bucket.error,
            empty=bucket.empty,
        )


class RouteRecord(Frozen):
    tier: str  # assessed; ``profile`` is the tier after an escalation
    profile: str
    features: dict[str, AttrValue] = Field(default_factory=dict)
    stopped_early: bool = False
    agreement: float | None = None


class ReasoningTrace(Frozen):
    """Everything one question went through. Serialised beside its prediction."""

    task_id: str
    question: str
    db_id: str
    started_unix_s: float = Field(default=0.0, ge=0)  # wall clock at the start; 0: unknown
    context: Context = Context()
    route: RouteRecord | None = None
    candidates: tuple[CandidateSQL, ...] = ()  # every candidate, dropped ones included
    buckets: tuple[BucketSnapshot, ...] = ()
    fixes: tuple[FixAttempt, ...] = ()
    critiques: tuple[Critique, ...] = ()
    revisions: tuple[RevisionDelta, ...] = ()
    lessons: tuple[LessonsBlock, ...] = ()
    matches: tuple[Match, ...] = ()
    ranking: tuple[str, ...] = ()  # bucket hashes, best first
    decisions: tuple[DecisionEvent, ...] = ()
    events: tuple[AgentEvent, ...] = ()
    chosen_sql: str = ""
    chosen_producer: str = ""
    degraded: bool = False
    usage: Usage = Usage()
    latency_s: float = 0.0
    retrieval_precision: float | None = None  # share of cell hits used by the gold SQL

    @property
    def degradation_reasons(self) -> tuple[str, ...]:
        return tuple(d.label for d in self.decisions if d.degradation)

    def summary(self) -> dict[str, Any]:
        """The numbers ``scale-analytics ask`` prints."""
        return {
            "candidates": len(self.candidates),
            "buckets": len({b.hash for b in self.buckets if not b.error}),
            "llm_calls": sum(
                e.attributes.get("gen_ai.operation.name") == "chat" for e in self.events
            ),
            "tokens": self.usage.total_tokens,
            "cached_prompt_tokens": self.usage.cached_prompt_tokens,
            "seconds": round(self.latency_s, 2),
            "degraded": self.degraded,
        }


class TraceRecorder:
    """The mutable scratchpad of one task; ``freeze()`` makes the ReasoningTrace.

    Agents never see it: the orchestrator and :class:`pipelines.agents.runtime.AgentRuntime`
    write to it. Single event loop, so plain lists suffice.
    """

    def __init__(self, task_id: str, question: str, db_id: str, *, clock=time.monotonic) -> None:
        self.task_id, self.question, self.db_id = task_id, question, db_id
        self._clock = clock
        self._t0 = clock()
        self.started_unix_s = time.time()
        self.context = Context()
        self.route: RouteRecord | None = None
        self.candidates: list[CandidateSQL] = []
        self.buckets: list[BucketSnapshot] = []
        self.fixes: list[FixAttempt] = []
        self.critiques: list[Critique] = []
        self.revisions: list[RevisionDelta] = []
        self.lessons: list[LessonsBlock] = []
        self.matches: list[Match] = []
        self.ranking: tuple[str, ...] = ()
        self.decisions: list[DecisionEvent] = []
        self.events: list[AgentEvent] = []

    @property
    def elapsed_s(self) -> float:
        return max(0.0, self._clock() - self._t0)

    def event(self, event: AgentEvent) -> None:
        self.events.append(event)

    def decide(
        self,
        label: str,
        stage: str,
        *,
        degradation: bool = False,
        confidence: float = 1.0,
        **features: AttrValue,
    ) -> DecisionEvent:
        decision = DecisionEvent(
            label=label,
            stage=stage,
            confidence=confidence,
            features=features,
            degradation=degradation,
            at_s=self.elapsed_s,
        )
        self.decisions.append(decision)
        if degradation:
            log.info("task %s degraded: %s (%s)", self.task_id, label, features)
        return decision

    def snapshot_buckets(self, stage: str, buckets: Iterable[Bucket]) -> None:
        self.buckets += [BucketSnapshot.of(stage, b) for b in buckets]

    def recent_fixes(self, producer: str) -> tuple[FixAttempt, ...]:
        family = family_of(producer)
        return tuple(f for f in self.fixes if family_of(f.producer) == family)

    def freeze(
        self, prediction: Prediction | None = None, gold_sql: str | None = None
    ) -> ReasoningTrace:
        degraded = any(d.degradation for d in self.decisions)
        return ReasoningTrace(
            task_id=self.task_id,
            question=self.question,
            db_id=self.db_id,
            started_unix_s=self.started_unix_s,
            context=self.context,
            route=self.route,
            candidates=tuple(self.candidates),
            buckets=tuple(self.buckets),
            fixes=tuple(self.fixes),
            critiques=tuple(self.critiques),
            revisions=tuple(self.revisions),
            lessons=tuple(self.lessons),
            matches=tuple(self.matches),
            ranking=self.ranking,
            decisions=tuple(self.decisions),
            events=tuple(self.events),
            chosen_sql=prediction.sql if prediction else "",
            chosen_producer=prediction.producer if prediction else "",
            degraded=degraded or bool(prediction and prediction.degraded),
            usage=prediction.usage if prediction else Usage(),
            latency_s=prediction.latency_s if prediction else self.elapsed_s,
            retrieval_precision=retrieval_precision(self.context, gold_sql),
        )


def retrieval_precision(context: Context, gold_sql: str | None) -> float | None:
    """Share of retrieved cell values that the gold SQL mentions (None without gold or hits)."""
    if not gold_sql or not context.cell_hits:
        return None
    gold = gold_sql.lower()
    used = sum(1 for hit in context.cell_hits if hit.value.strip().lower() in gold)
    return used / len(context.cell_hits)


# --- sinks -----------------------------------------------------------------------------------


class TraceSink(Protocol):
    def write(self, trace: ReasoningTrace) -> None: ...

    def close(self) -> None: ...


class JsonlTraceSink:
    """Appends one JSON line per task to ``<directory>/traces.jsonl`` and one per agent call to
    ``<directory>/events.jsonl`` (``{"task_id", "name", "surface", ..., "attributes"}``)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.traces_path = self.directory / "traces.jsonl"
        self.events_path = self.directory / "events.jsonl"
        self._lock = threading.Lock()

    def location(self, task_id: str) -> str:
        return f"{self.traces_path}#{task_id}"

    def write(self, trace: ReasoningTrace) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        events = "".join(e.model_dump_json() + "\n" for e in trace.events)
        with self._lock:
            with self.traces_path.open("a", encoding="utf-8") as fh:
                fh.write(trace.model_dump_json() + "\n")
            with self.events_path.open("a", encoding="utf-8") as fh:
                fh.write(events)

    def close(self) -> None:
        pass


class SafeSink:
    """Wraps a sink so its failures warn once and never reach the pipeline."""

    def __init__(self, sink: TraceSink, name: str | None = None) -> None:
        self.sink = sink
        self.name = name or type(sink).__name__
        self.failures = 0

    def write(self, trace: ReasoningTrace) -> None:
        try:
            self.sink.write(trace)
        except Exception as exc:  # noqa: BLE001 - a sink must never stop the pipeline
            self.failures += 1
            if self.failures == 1:
                log.warning(
                    "trace sink %s failed (%s: %s); continuing without it",
                    self.name,
                    type(exc).__name__,
                    exc,
                )

    def close(self) -> None:
        try:
            self.sink.close()
        except Exception:  # noqa: BLE001
            pass

    def location(self, task_id: str) -> str | None:
        locate = getattr(self.sink, "location", None)
        return locate(task_id) if locate else None


def location(sinks: Iterable[SafeSink], task_id: str) -> str | None:
    """Where the first sink that can tell stored this task's trace (``path#task_id``)."""
    return next((where for s in sinks if (where := s.location(task_id))), None)


def read_traces(path: str | os.PathLike[str]) -> list[ReasoningTrace]:
    """Read a ``traces.jsonl`` back (the inverse of :class:`JsonlTraceSink`)."""
    with open(path, encoding="utf-8") as fh:
        return [ReasoningTrace.model_validate_json(line) for line in fh if line.strip()]


def safe_sinks(sinks: Iterable[TraceSink]) -> tuple[SafeSink, ...]:
    return tuple(s if isinstance(s, SafeSink) else SafeSink(s) for s in sinks)


def conclude(
    task_id: str,
    recorder: TraceRecorder,
    sinks: Sequence[SafeSink],
    *,
    chosen: CandidateSQL | None,
    candidates: Sequence[CandidateSQL],
    usage: Usage,
    started: float,
    failure: str,
    gold_sql: str | None,
    **fields: Any,
) -> tuple[Prediction, ReasoningTrace]:
    """The Prediction for ``chosen`` (degradations read from the recorder's decisions; ``failure``
    is the error when nothing was chosen), its frozen trace, written to every sink. ``fields``:
    pipeline-specific Prediction fields (``answered_by``, ``steps``, ``retrieval``)."""
    degradations = tuple(d.label for d in recorder.decisions if d.degradation)
    prediction = Prediction(
        task_id=task_id,
        sql=chosen.sql if chosen else "",
        producer=chosen.producer if chosen else "",
        exec_result=chosen.exec_result if chosen else None,
        candidates=tuple(candidates),
        usage=usage,
        latency_s=time.monotonic() - started,
        degraded=bool(degradations),
        degradation_reasons=degradations,
        error=None if chosen else failure,
        trace_path=location(sinks, task_id),
        **fields,
    )
    trace = recorder.freeze(prediction, gold_sql=gold_sql)
    for sink in sinks:
        sink.write(trace)
    return prediction, trace


__all__ = [
    "AgentEvent",
    "DecisionEvent",
    "BucketSnapshot",
    "RouteRecord",
    "ReasoningTrace",
    "TraceRecorder",
    "retrieval_precision",
    "JsonlTraceSink",
    "SafeSink",
    "safe_sinks",
    "location",
    "conclude",
    "read_traces",
]
