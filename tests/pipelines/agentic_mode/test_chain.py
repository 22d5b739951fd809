"""The checker chain end to end: the enterprise and claims gold queries pass untouched, every
documented label of an enterprise gold query misspelled is caught, broken nesting is caught,
and the chain's own contract (order, syntax errors, stages that fail)."""

from __future__ import annotations

import logging
import re
from typing import ClassVar

import pytest

from eval.demo.generator import load_examples as claims_examples
from eval.demo.generator import load_questions as claims_questions
from eval.enterprise.questions import load_examples, load_questions
from pipelines.agentic_mode.chain import CheckerChain, CheckResult
from pipelines.agentic_mode.checks import DialectFunctions, UnknownFunctions, parse
from pipelines.repair.base import Blocker

ENTERPRISE_GOLD = [q.sql for q in load_questions()] + [e.sql for e in load_examples()]
CLAIMS_GOLD = [q.sql for q in claims_questions()] + [e.sql for e in claims_examples()]


@pytest.fixture(scope="module")
def enterprise_chain(enterprise_view) -> CheckerChain:
    return CheckerChain(enterprise_view)


def test_enterprise_gold_queries_pass_untouched(enterprise_chain):
    assert len(ENTERPRISE_GOLD) > 100
    for sql in ENTERPRISE_GOLD:
        # qualified, so the blockers judged it rather than passing what they could not read
        assert parse(sql, enterprise_chain.context.index).qualified is not None, sql
        assert enterprise_chain.check(sql) == CheckResult(sql=sql), sql


def test_claims_gold_queries_pass_untouched(claims_view):
    chain = CheckerChain(claims_view)
    assert len(CLAIMS_GOLD) > 80
    for sql in CLAIMS_GOLD:
        assert parse(sql, chain.context.index).qualified is not None, sql
        assert chain.check(sql) == CheckResult(sql=sql), sql


def test_every_misspelled_label_of_an_enterprise_gold_query_is_caught(enterprise_chain):
    labels = {
        label for vocab in enterprise_chain.context.index.vocabularies.values() for label in vocab
    }
    caught, missed = 0, []
    for sql in ENTERPRISE_GOLD:
        for label in sorted(set(re.findall(r"'([a-z0-9_]+)'", sql)) & labels):
            wrong = f"{label}_x"
            result = enterprise_chain.check(sql.replace(f"'{label}'", f"'{wrong}'"))
            if [(f.error_class, f.identifier) for f in result.findings] == [
                ("enum_value_outside_vocabulary", wrong)
            ]:
                caught += 1
            else:
                missed.append(label)
    assert caught > 150
    # the two literals that are no comparison with a documented column: an output value of
    # a UNION branch ('conversation') and a filter on that derived column ('ticket')
    assert sorted(missed) == ["conversation", "ticket"]


def test_broken_nesting_in_an_enterprise_gold_query_is_caught(enterprise_chain):
    sql = next(s for s in ENTERPRISE_GOLD if "UNNEST(t.links) AS u(link)" in s)
    typo = enterprise_chain.check(sql.replace("link.type", "link.kind"))
    assert [(f.error_class, f.identifier, f.suggestion) for f in typo.findings] == [
        ("missing_subfield", "links.kind", "type, target_type, display_id, linked_at")
    ]
    flat = sql.replace(", UNNEST(t.links) AS u(link)", "").replace("link.", "t.links.")
    assert {(f.error_class, f.identifier) for f in enterprise_chain.check(flat).findings} == {
        ("unnest_missing", "links")
    }


def test_rewrites_come_first_and_blockers_see_the_rewritten_sql(work_view):
    result = CheckerChain(work_view).check("SELECT IFF(STAGE = 'open', 1, 0) AS o FROM TICKETS")
    assert result.sql == "SELECT CASE WHEN stage = 'open' THEN 1 ELSE 0 END AS o FROM tickets"
    assert [r.stage for r in result.rewrites] == ["identifier_casing", "dialect_functions"]
    assert result.rewrites[0].after == result.rewrites[1].before
    assert [(f.error_class, f.source) for f in result.findings] == [
        ("enum_value_outside_vocabulary", "enum_values")
    ]
    assert not result.passed


def test_findings_of_several_blockers_are_all_reported(work_view):
    sql = "SELECT t.stagee, shout(t.title) FROM tickets AS t WHERE t.links.type = 'fixes'"
    classes = [f.error_class for f in CheckerChain(work_view).check(sql).findings]
    assert classes == [
        "function_not_in_dialect",
        "column_not_found",
        "unnest_missing",
        "enum_value_outside_vocabulary",
    ]


def test_an_sql_that_does_not_parse_is_one_syntax_error(work_view):
    result = CheckerChain(work_view).check("SELECT stage FROM tickets WHERE (stage = 'queued'")
    (finding,) = result.findings
    assert (finding.error_class, finding.source, finding.action) == (
        "syntax_error",
        "parse",
        "repair_in_place",
    )
    assert "duckdb" in finding.detail


@pytest.mark.parametrize("sql", ["", "SELECT 1; SELECT 2"])
def test_anything_but_one_statement_is_a_syntax_error(work_view, sql):
    assert [f.error_class for f in CheckerChain(work_view).check(sql).findings] == ["syntax_error"]


def test_the_stages_are_a_setting(work_view):
    chain = CheckerChain(
        work_view, stages=(DialectFunctions(sources=("postgres",)), UnknownFunctions())
    )
    result = chain.check("SELECT IFF(stage = 'queued', 1, 0) FROM tickets")
    assert result.rewrites == ()
    assert [(f.error_class, f.identifier) for f in result.findings] == [
        ("function_not_in_dialect", "IFF")
    ]


class Failing(Blocker):
    name: ClassVar[str] = "failing"

    def check(self, parsed, context):
        raise ValueError("sqlglot could not resolve a scope")


def test_a_stage_that_fails_on_odd_sql_is_skipped(work_view, caplog):
    chain = CheckerChain(work_view, stages=(Failing(), UnknownFunctions()))
    with caplog.at_level(logging.WARNING):
        result = chain.check("SELECT IFF(1 = 1, 1, 0)")
    assert [f.error_class for f in result.findings] == ["function_not_in_dialect"]
    assert "blocker failing skipped" in caplog.text


def test_only_stages_are_stages(work_view):
    with pytest.raises(TypeError, match="not a Rewriter or Blocker of the written phase"):
        CheckerChain(work_view, stages=(object(),))  # type: ignore[arg-type]
