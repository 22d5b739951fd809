"""Typed inputs and outputs of the pipeline's agents (all frozen).

question ──► KeywordSkeletonExtractor ──► Understanding(literals, skeleton, keywords)
candidates ──► ExecutionBucketer ──► Bucket(hash, members, size, producer mix, ...)
Bucket ──► CritiqueAgent ──► Critique(error_class, complexity, verdict, suggested_fix, ...)
Critiques ──► LessonsBlock(corrections, warnings) ──► generators on re-synthesis
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.types import Frozen
from pipelines.contracts import CandidateSQL, CellHit, ErrorClass, ExampleHit, RetrievalSource

Verdict = Literal["accept", "edit", "retry"]
ALL_GENERATORS = "all"


class Understanding(Frozen):
    """What L1 read out of the question. Empty when the extractor failed (degradation 1)."""

    literals: tuple[str, ...] = ()  # database values the SQL must match verbatim
    skeleton: str = ""  # the question with literals and schema words masked
    keywords: tuple[str, ...] = ()  # schema-ish words (tables, columns, measures)


class Context(Frozen):
    """L1's output as the generators read it."""

    understanding: Understanding = Understanding()
    cell_hits: tuple[CellHit, ...] = ()
    example_hits: tuple[ExampleHit, ...] = ()
    # The retrievers that answered (their index existed and the search did not fail), hits or not.
    retrieval: tuple[RetrievalSource, ...] = ()


class Bucket(Frozen):
    """Candidates whose results hash alike; ``error``: they errored, ``empty``: they returned no rows."""

    hash: str
    members: tuple[CandidateSQL, ...] = Field(min_length=1)
    error: bool
    empty: bool

    @property
    def size(self) -> int:
        return len(self.members)

    @property
    def representative(self) -> CandidateSQL:
        """The member the critic, revisor and selector look at (members are pre-sorted)."""
        return self.members[0]

    @property
    def producers(self) -> tuple[str, ...]:
        return tuple(sorted({family_of(m.producer) for m in self.members}))

    @property
    def mean_rationale_chars(self) -> float:
        return sum(len(m.rationale or "") for m in self.members) / self.size


class Critique(Frozen):
    """The critic's reading of one bucket's representative.

    ``verdict`` is what the model said; the orchestrator may force ``retry`` (see ``forced``).
    """

    bucket_hash: str
    error_class: ErrorClass | None = None  # None: the critic found nothing wrong
    complexity: int = Field(ge=1, le=10)
    verdict: Verdict
    suggested_fix: str = ""
    generator_feedback: str = ""
    feedback_kind: Literal["correction", "warning"] = "warning"
    forced: bool = False


class Lesson(Frozen):
    text: str
    scope: tuple[str, ...] = (ALL_GENERATORS,)  # generator families it applies to

    def applies_to(self, family: str) -> bool:
        return ALL_GENERATORS in self.scope or family in self.scope


class LessonsBlock(Frozen):
    """Critique-derived lessons injected into generator prompts on re-synthesis."""

    avoid: tuple[ErrorClass, ...] = ()
    corrections: tuple[Lesson, ...] = ()
    warnings: tuple[Lesson, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.avoid or self.corrections or self.warnings)

    def for_generator(self, family: str) -> LessonsBlock:
        return LessonsBlock(
            avoid=self.avoid,
            corrections=tuple(x for x in self.corrections if x.applies_to(family)),
            warnings=tuple(x for x in self.warnings if x.applies_to(family)),
        )

    def render(self) -> str:
        """Markdown for a prompt; "" when there is nothing to say."""
        if self.empty:
            return ""
        lines = ["# Lessons from earlier attempts at this question"]
        if self.avoid:
            lines.append("Avoid: " + ", ".join(e.value for e in self.avoid))
        for title, items in (("## Corrections", self.corrections), ("## Warnings", self.warnings)):
            if items:
                lines.append(title)
                lines += [f"- {x.text} [{_scope_label(x.scope)}]" for x in items]
        return "\n".join(lines)


def _scope_label(scope: tuple[str, ...]) -> str:
    return "all generators" if ALL_GENERATORS in scope else ", ".join(scope) + " only"


class FixAttempt(Frozen):
    """One SQLFixer call: what it got, what it returned, whether the new SQL ran."""

    producer: str
    pass_no: int = Field(ge=1)
    error_before: str
    sql_before: str
    sql_after: str | None  # None when the fixer call itself failed
    error_after: str | None = None

    @property
    def succeeded(self) -> bool:
        return self.sql_after is not None and self.error_after is None


class RevisionDelta(Frozen):
    """A revisor call after an ``edit`` verdict: did the result change? (critic adherence)."""

    bucket_hash: str
    before_hash: str
    after_hash: str | None  # None when the revisor failed
    error_class: ErrorClass | None = None

    @property
    def adhered(self) -> bool:
        return self.after_hash is not None and self.after_hash != self.before_hash


class Match(Frozen):
    """One pairwise selector call in the tournament."""

    a: str  # bucket hashes
    b: str
    winner: str | None  # None: the selector failed


def family_of(producer: str) -> str:
    """``"icl/cot/T=0.7"`` → ``"icl/cot"``; ``"reasoning/T=0.2"`` → ``"reasoning"``."""
    parts = [p for p in producer.split("/") if not p.startswith("T=")]
    return "/".join(parts[:2]) if parts and parts[0] == "icl" else (parts[0] if parts else producer)
