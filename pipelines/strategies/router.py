"""Difficulty router: cheap signals pick a scaling profile per question, and the agreement of the
first (probe) candidates decides whether to stop early or widen.

    task, schema, Understanding ──► RouteFeatures ──► score ──► narrow | standard | wide
    probe candidates ──► agreement share ──► stop early (one bucket) | escalate one tier

No LLM call: features are counts (tables, columns, question words, literals, evidence) and
question cue words (aggregation, comparison, negation/sets, grouping, nesting). The profiles
themselves (FullWidthScaling overrides) are config (``pipeline.router.profiles``); the
orchestrator applies them.

    >>> from pipelines.schema import introspect
    >>> router = DifficultyRouter(RouterSettings())
    >>> task = Task(task_id="ask", question="How many singers do we have?", db=db)
    >>> decision = router.assess(task, introspect(db), Understanding())
    >>> decision.tier, decision.features.cues
    ('narrow', ('aggregation',))
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from core.types import Frozen
from pipelines.agents.types import Understanding
from pipelines.contracts import CandidateSQL, SchemaView, Task
from pipelines.settings import RouterSettings

# The router's tiers, cheapest first: how widely the orchestrator searches, named apart from the
# benchmarks' difficulty labels (Spider's easy/medium/hard/extra, BIRD's simple/moderate/challenging).
TIERS = ("narrow", "standard", "wide")

# cue -> words that signal it (matched as whole words, lower-case)
CUES: dict[str, tuple[str, ...]] = {
    "aggregation": ("average", "avg", "total", "sum", "how many", "number of", "count", "mean"),
    "comparison": (
        "more than",
        "less than",
        "greater",
        "fewer",
        "than",
        "most",
        "least",
        "highest",
        "lowest",
        "maximum",
        "minimum",
        "top",
        "largest",
        "smallest",
        "oldest",
        "youngest",
    ),
    "sets": ("not", "never", "without", "except", "both", "either", "neither", "but not", "no "),
    "grouping": ("each", "per", "every", "for all", "group"),
    "nesting": ("whose", "which have", "that have", "who have", "among", "at least"),
}


class RouteFeatures(Frozen):
    tables: int
    columns: int
    question_words: int
    literals: int
    has_evidence: bool
    cues: tuple[str, ...]

    def as_dict(self) -> dict[str, int | bool | str]:
        return {**self.model_dump(exclude={"cues"}), "cues": ",".join(self.cues)}


class RouteDecision(Frozen):
    tier: str
    score: float
    features: RouteFeatures


class Agreement(Frozen):
    share: float  # largest share of the probe candidates in one non-error, non-empty result
    size: int  # probe candidates
    agreed: bool


def _cue_hits(question: str) -> tuple[str, ...]:
    text = f" {question.lower()} "
    return tuple(
        cue
        for cue, words in CUES.items()
        if any(re.search(rf"(?<![a-z]){re.escape(w.strip())}(?![a-z])", text) for w in words)
    )


class DifficultyRouter:
    def __init__(self, settings: RouterSettings) -> None:
        self.settings = settings

    def features(
        self, task: Task, view: SchemaView | None, understanding: Understanding
    ) -> RouteFeatures:
        return RouteFeatures(
            tables=len(view.tables) if view else 0,
            columns=sum(len(t.columns) for t in view.tables) if view else 0,
            question_words=len(task.question.split()),
            literals=len(understanding.literals),
            has_evidence=bool(task.evidence.strip()),
            cues=_cue_hits(task.question),
        )

    def assess(
        self, task: Task, view: SchemaView | None, understanding: Understanding
    ) -> RouteDecision:
        f = self.features(task, view, understanding)
        score = (
            len(f.cues)
            + (f.tables > 5)
            + (f.columns > 40)
            + (f.question_words > 20)
            + (f.literals >= 2)
            + 0.5 * f.has_evidence
        )
        if score >= self.settings.wide_score:
            tier = "wide"
        elif score <= self.settings.narrow_score:
            tier = "narrow"
        else:
            tier = "standard"
        return RouteDecision(tier=tier, score=float(score), features=f)

    def agreement(self, probe: Sequence[CandidateSQL]) -> Agreement:
        """Stop early only when at least two probe candidates ran and the share agreeing on one
        non-empty result reaches ``agree_share``."""
        good = Counter(
            c.exec_result.hash
            for c in probe
            if c.exec_result is not None and c.exec_result.ok and not c.exec_result.empty
        )
        top = max(good.values(), default=0)
        share = top / len(probe) if probe else 0.0
        return Agreement(
            share=share,
            size=len(probe),
            agreed=len(probe) >= 2 and share >= self.settings.agree_share,
        )

    @staticmethod
    def escalate(tier: str) -> str:
        """One tier wider (the probe disagreed): widen and refine more."""
        return TIERS[min(TIERS.index(tier) + 1, len(TIERS) - 1)]
