"""The plan verifier: an LLM reads a candidate SQL before it runs and names one structural flaw
— a join that fans out, an aggregate at the wrong grain after UNNEST, DISTINCT or GROUP BY
missing where rows repeat — or lets it pass. Its finding goes straight back to the generator.

    PlanInput(question, schema_text, sql) ──► plan_verifier.md ──► runtime.chat(role="verifier")
        ──► {"problem", "check", "ok"} ──► PlanVerdict ──finding(taxonomy)──► Finding | None

It is lenient by construction: a verdict objects only when the reply says not ok, names one of
the three checks and states the problem; any other reply is no objection. A reply that is no
verdict (not JSON, not the schema's) raises AgentOutputError, whether the model client's schema
check or the parse noticed it (the orchestrator records it and goes on).

    >>> from pipelines.agentic_mode import load_taxonomy
    >>> verdict = PlanVerdict(ok=False, check="grain", problem="COUNT(*) counts links.")
    >>> finding = verdict.finding(load_taxonomy())
    >>> finding.error_class, finding.source, finding.detail
    ('wrong_grain', 'plan_verifier', 'COUNT(*) counts links')
    >>> PlanVerdict(ok=True).finding(load_taxonomy()) is None
    True
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from core.types import Frozen
from models.errors import InvalidModelOutput
from pipelines.agentic_mode.taxonomy import Finding, Taxonomy
from pipelines.agents.base import PromptAgent, WrittenSQLInput, parse_json
from pipelines.agents.errors import AgentOutputError
from pipelines.agents.runtime import AgentRuntime
from pipelines.contracts import Dialect

Check = Literal["join_safety", "grain", "deduplication", "none"]

# The taxonomy class each check reports.
CHECK_CLASSES: dict[str, str] = {
    "join_safety": "unsafe_join",
    "grain": "wrong_grain",
    "deduplication": "misplaced_deduplication",
}
NOT_A_VERDICT = "plan verifier reply is not a verdict"
# One or two short sentences; the bound keeps a grammar-constrained reply inside max_tokens.
PROBLEM_MAX_CHARS = 200

# The problem comes first: for a small model the sentence it writes is its reasoning, and the
# check and the verdict that follow are read off it.
PLAN_SCHEMA = {
    "type": "object",
    "properties": {
        "problem": {"type": "string", "maxLength": PROBLEM_MAX_CHARS},
        "check": {"type": "string", "enum": [*CHECK_CLASSES, "none"]},
        "ok": {"type": "boolean"},
    },
    "required": ["problem", "check", "ok"],
    "additionalProperties": False,
}


class PlanInput(WrittenSQLInput):
    # ``schema_text`` as the generator saw it: the verifier's prompt shares its system message.
    dialect: Dialect


class PlanVerdict(Frozen):
    """Whether the SQL's plan may run as it is; else which check failed and why."""

    ok: bool
    check: Check = "none"
    problem: str = ""  # one or two sentences the generator can act on; "" when ok

    @model_validator(mode="after")
    def _objection_names_its_check(self) -> PlanVerdict:
        if not self.ok and self.check == "none":
            raise ValueError("a verdict that is not ok names the check that failed")
        return self

    def finding(self, taxonomy: Taxonomy) -> Finding | None:
        """None when ok; else the class of ``check``, the problem as its detail (without a final
        period: ``Finding.feedback`` adds one)."""
        if self.ok:
            return None
        taxonomy.require(PlanVerifier.emits, "the plan verifier")
        return taxonomy.finding(
            CHECK_CLASSES[self.check], source="plan_verifier", detail=self.problem.rstrip(". ")
        )


class _PlanReply(Frozen):
    problem: str = Field(max_length=PROBLEM_MAX_CHARS)
    check: Check
    ok: bool = Field(strict=True)  # a JSON boolean, not "yes"


class PlanVerifier(PromptAgent[PlanInput, PlanVerdict]):
    """One call on the ``verifier`` role (module docstring)."""

    agent_name = "agentic.plan_verifier"
    role = "verifier"
    prompt_name = "plan_verifier"
    json_schema = PLAN_SCHEMA
    emits: ClassVar[tuple[str, ...]] = tuple(CHECK_CLASSES.values())  # its verdicts' classes

    def values(self, inp: PlanInput) -> dict[str, object]:
        return {**inp.prompt_values(), "sql": inp.sql.strip()}

    def parse(self, text: str, inp: PlanInput) -> PlanVerdict:
        reply = parse_json(text, _PlanReply, NOT_A_VERDICT)
        problem = " ".join(reply.problem.split())
        if reply.ok or reply.check == "none" or not problem:
            return PlanVerdict(ok=True)  # an objection names its check and its problem
        return PlanVerdict(ok=False, check=reply.check, problem=problem)

    async def run(self, inp: PlanInput, runtime: AgentRuntime) -> PlanVerdict:
        try:
            return await super().run(inp, runtime)
        except InvalidModelOutput as exc:  # the client's JSON-schema check saw it first
            raise AgentOutputError(f"{NOT_A_VERDICT}: {exc}") from exc
