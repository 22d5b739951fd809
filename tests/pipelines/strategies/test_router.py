"""DifficultyRouter: features, tiers, probe agreement, escalation, profiles."""

from __future__ import annotations

from pipelines.agents.types import Understanding
from pipelines.contracts import (
    CandidateSQL,
    ColumnInfo,
    DatabaseRef,
    ExecutionResult,
    SchemaView,
    TableInfo,
    Task,
)
from pipelines.settings import RouterSettings
from pipelines.strategies.full_width_settings import FullWidthScaling
from pipelines.strategies.router import DifficultyRouter

DB = DatabaseRef(db_id="d", path="/nonexistent")


def view(tables: int, columns: int = 3) -> SchemaView:
    cols = tuple(ColumnInfo(name=f"c{i}", type="int") for i in range(columns))
    return SchemaView(
        db_id="d",
        dialect="sqlite",
        tables=tuple(TableInfo(name=f"t{i}", columns=cols) for i in range(tables)),
    )


def cand(h, ok=True, rows=1):
    return CandidateSQL(
        sql="s",
        producer="icl/cot/T=1",
        exec_result=ExecutionResult(hash=h, error=None if ok else "e", row_count=rows if ok else 0),
    )


def test_simple_question_is_easy_and_complex_one_hard():
    router = DifficultyRouter(RouterSettings())
    narrow = router.assess(
        Task(task_id="1", question="List all singer names.", db=DB), view(2), Understanding()
    )
    wide = router.assess(
        Task(
            task_id="2",
            question="What is the average age of singers in each country who have not performed "
            "in more than two concerts?",
            db=DB,
            evidence="concerts means rows",
        ),
        view(8, 6),
        Understanding(literals=("2014", "France")),
    )
    assert narrow.tier == "narrow" and wide.tier == "wide"
    assert {"aggregation", "grouping", "sets", "comparison"} <= set(wide.features.cues)
    assert wide.features.tables == 8 and wide.features.literals == 2 and wide.features.has_evidence


def test_cue_words_match_whole_words_only():
    router = DifficultyRouter(RouterSettings())
    f = router.features(
        Task(task_id="1", question="Show the notes of each perfume", db=DB), None, Understanding()
    )
    assert "sets" not in f.cues and "grouping" in f.cues  # "notes" is not "not"


def test_agreement_needs_two_matching_nonempty_results():
    router = DifficultyRouter(RouterSettings(agree_share=1.0))
    assert router.agreement([cand("h"), cand("h")]).agreed
    assert not router.agreement([cand("h")]).agreed  # one candidate agrees with nobody
    assert not router.agreement([cand("h"), cand("g")]).agreed
    assert not router.agreement(
        [cand("h", rows=0), cand("h", rows=0)]
    ).agreed  # empty results prove nothing
    assert not router.agreement([cand("E", ok=False), cand("E", ok=False)]).agreed
    assert (
        DifficultyRouter(RouterSettings(agree_share=0.6))
        .agreement([cand("h"), cand("h"), cand("g")])
        .agreed
    )


def test_escalation_and_profiles():
    assert (
        DifficultyRouter.escalate("narrow") == "standard"
        and DifficultyRouter.escalate("wide") == "wide"
    )
    settings = RouterSettings(profiles={"wide": {"k": {"icl/cot": 4}, "fixer_max_passes": 0}})
    wide = settings.scaling_for("wide", FullWidthScaling())
    # a profile's k merges into the configured one: the families it does not name keep their k
    assert wide.k == {"reasoning": 2, "icl/direct": 2, "icl/cot": 4, "icl/decompose": 2}
    assert wide.fixer_max_passes == 0
    assert settings.scaling_for("standard", FullWidthScaling(k={"icl/cot": 1})).k == {"icl/cot": 1}
