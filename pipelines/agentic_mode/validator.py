"""The semantic validator: after a candidate ran, does its result clearly contradict the question?
A free rule on the result's shape first, then an LLM on the result preview; lenient by design.

    ValidationInput(question, sql, result)
        ──► count_shape_finding: "how many" answered by rows without a number ──► reject, no call
        ──► semantic_validator.md with render.preview(result) ──► runtime.chat(role="validator")
        ──► {"reason", "plausible"} ──► SemanticVerdict ──finding(taxonomy)──► Finding | None

An error or an empty result is not judged (no call, plausible): the classifier already gives
its class, and an empty answer may be right. The model rejects only clear contradictions — raw
rows for a "how many", a count for a "which", unrelated columns, a negative count — and a
rejection must say why; any other reply is plausible. A reply that is no verdict (not JSON, not
the schema's) raises AgentOutputError, whether the model client's schema check or the parse
noticed it (the orchestrator records it and goes on).

    >>> from pipelines.agentic_mode import load_taxonomy
    >>> from pipelines.contracts import ExecutionResult
    >>> rows = ExecutionResult(rows=(("Login fails",), ("Typo",)), columns=("title",),
    ...                        row_count=2, hash="h")
    >>> count_shape_finding("How many tickets are open?", rows, load_taxonomy()).error_class
    'too_many_rows_for_count'
    >>> count_shape_finding("List the open tickets", rows, load_taxonomy()) is None
    True
"""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import Field

from core.types import Frozen
from models.errors import InvalidModelOutput
from pipelines.agentic_mode.taxonomy import Finding, Taxonomy, load_taxonomy
from pipelines.agents.base import PromptAgent, QuestionInput, parse_json
from pipelines.agents.errors import AgentOutputError
from pipelines.agents.render import preview
from pipelines.agents.runtime import AgentRuntime
from pipelines.contracts import Cell, ExecutionResult
from pipelines.prompts import PromptTemplate
from pipelines.settings import AgentCall

IMPLAUSIBLE_RESULT = "implausible_result"
TOO_MANY_ROWS_FOR_COUNT = "too_many_rows_for_count"
# A verdict's source -> the taxonomy class it reports.
SOURCE_CLASSES = {
    "semantic_validator": IMPLAUSIBLE_RESULT,
    "result_shape": TOO_MANY_ROWS_FOR_COUNT,
}
NOT_A_VERDICT = "semantic validator reply is not a verdict"
REASON_MAX_CHARS = 160  # one short sentence, inside max_tokens under the grammar
# A count is one row, or one row per group with its number: with no number in any row, even
# two rows do not answer how many.
COUNT_MAX_ROWS = 1

# A question that asks for a count: "how many", "(the / total) number of" or "count of", or one
# that starts with "count". Another "count" or "number" is often a column's ("reopen count above
# 2", "the phone number of Ada").
_COUNT_QUESTION = re.compile(
    r"\bhow\s+many\b|(?:^\W*|\bthe\s+|\btotal\s+)(?:number|count)\s+of\b|^\W*count\b",
    re.IGNORECASE,
)
# A question that asks for items even if it also says "number of" ("Which tickets have a number
# of links above 2?"): its rows may well have no number.
_LIST_QUESTION = re.compile(
    r"^\W*(?:which|list|show|name|give|find|display|who|what\s+are)\b|\blist\b", re.IGNORECASE
)
_NUMBER_TEXT = re.compile(r"^\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$")

# The reason comes first: for a small model the sentence it writes is its reasoning.
VALIDATION_SCHEMA = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "maxLength": REASON_MAX_CHARS},
        "plausible": {"type": "boolean"},
    },
    "required": ["reason", "plausible"],
    "additionalProperties": False,
}


def count_shape_finding(
    question: str, result: ExecutionResult, taxonomy: Taxonomy
) -> Finding | None:
    """``too_many_rows_for_count`` when a question asking how many is answered by more than
    ``COUNT_MAX_ROWS`` rows of which no column holds numbers; else None.

    Conservative: a grouped count ("how many ... per stage") has a number in every row and
    passes, as does any result with a numeric column (raw rows with an integer id too: those
    are the model's to judge), a question that asks for items, an error and an empty result.
    """
    if result.error is not None or result.row_count <= COUNT_MAX_ROWS or not result.rows:
        return None
    if not _COUNT_QUESTION.search(question) or _LIST_QUESTION.search(question):
        return None
    if any(_numeric([row[i] for row in result.rows]) for i in range(len(result.rows[0]))):
        return None
    taxonomy.require([TOO_MANY_ROWS_FOR_COUNT], "the result shape check")
    return taxonomy.finding(
        TOO_MANY_ROWS_FOR_COUNT,
        source="result_shape",
        detail=(
            f"the question asks how many, and the query returned {result.row_count} rows "
            f"({', '.join(result.columns)}) with no number in them"
        ),
    )


def _numeric(values: list[Cell]) -> bool:
    """Every non-NULL value is a number (or a number stored or cast as text), and there is one."""
    present = [v for v in values if v is not None]
    return bool(present) and all(
        (isinstance(v, (int, float)) and not isinstance(v, bool))
        or (isinstance(v, str) and _NUMBER_TEXT.match(v) is not None)
        for v in present
    )


class ValidationInput(QuestionInput):
    sql: str
    result: ExecutionResult  # shown as render.preview: row count, columns, first rows


class SemanticVerdict(Frozen):
    """Whether the result may answer the question; else why not, and who said so (the shape
    rule, or the model)."""

    plausible: bool
    reason: str = ""
    source: Literal["semantic_validator", "result_shape"] = "semantic_validator"

    def finding(self, taxonomy: Taxonomy) -> Finding | None:
        """None when plausible; else ``implausible_result`` (the model's) or
        ``too_many_rows_for_count`` (the shape rule's), the reason as its detail."""
        if self.plausible:
            return None
        taxonomy.require(SemanticValidator.emits, "the semantic validator")
        return taxonomy.finding(
            SOURCE_CLASSES[self.source], source=self.source, detail=self.reason.rstrip(". ")
        )


class _ValidationReply(Frozen):
    reason: str = Field(max_length=REASON_MAX_CHARS)
    plausible: bool = Field(strict=True)  # a JSON boolean, not "yes"


class SemanticValidator(PromptAgent[ValidationInput, SemanticVerdict]):
    """The shape rule, then one call on the ``validator`` role (module docstring)."""

    agent_name = "agentic.semantic_validator"
    role = "validator"
    prompt_name = "semantic_validator"
    json_schema = VALIDATION_SCHEMA
    emits: ClassVar[tuple[str, ...]] = tuple(SOURCE_CLASSES.values())  # its verdicts' classes

    def __init__(
        self,
        *,
        settings: AgentCall,
        prompt: PromptTemplate | None = None,
        taxonomy: Taxonomy | None = None,
    ) -> None:
        super().__init__(settings=settings, prompt=prompt)
        self.taxonomy = taxonomy if taxonomy is not None else load_taxonomy()
        self.taxonomy.require(self.emits, "the semantic validator")

    def values(self, inp: ValidationInput) -> dict[str, object]:
        return {
            **inp.prompt_values(),
            "sql": inp.sql.strip(),
            "preview": preview(inp.result),
        }

    def parse(self, text: str, inp: ValidationInput) -> SemanticVerdict:
        reply = parse_json(text, _ValidationReply, NOT_A_VERDICT)
        reason = " ".join(reply.reason.split())
        if reply.plausible or not reason:
            return SemanticVerdict(plausible=True)  # a rejection says why
        return SemanticVerdict(plausible=False, reason=reason)

    async def run(self, inp: ValidationInput, runtime: AgentRuntime) -> SemanticVerdict:
        if not inp.result.ok or inp.result.row_count == 0:
            return SemanticVerdict(plausible=True)  # the classifier's (module docstring)
        shape = count_shape_finding(inp.question, inp.result, self.taxonomy)
        if shape is not None:
            return SemanticVerdict(plausible=False, reason=shape.detail, source="result_shape")
        try:
            return await super().run(inp, runtime)
        except InvalidModelOutput as exc:  # the client's JSON-schema check saw it first
            raise AgentOutputError(f"{NOT_A_VERDICT}: {exc}") from exc
