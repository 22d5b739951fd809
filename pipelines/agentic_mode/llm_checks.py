"""The agentic mode's two optional LLM checks, each its own step of the question: the plan
verifier before a candidate runs (``verify``), the semantic validator on its result preview
after (``validate``); a verdict's objection is a finding of the taxonomy, an unusable verdict
is none (recorded as ``<step>_unusable``).

    checks = LLMChecks(AgentSettings(), load_taxonomy(), verifier=True, validator=False)
    finding = await checks.verify(run, request, sql, number=1)   # None: no objection
"""

from __future__ import annotations

from pipelines.agentic_mode.attempts import Tried
from pipelines.agentic_mode.generate import GenerationRequest
from pipelines.agentic_mode.taxonomy import Finding, Taxonomy
from pipelines.agents.base import is_fatal
from pipelines.settings import AgentSettings
from pipelines.task_run import TaskRun, record_failure

VERIFY_STEP, VALIDATE_STEP = "verify", "validate"


class LLMChecks:
    """The verifier and the validator the settings switch on (None: off)."""

    def __init__(
        self, agents: AgentSettings, taxonomy: Taxonomy, *, verifier: bool, validator: bool
    ) -> None:
        self.taxonomy = taxonomy
        self.verifier = self.validator = None
        if verifier:
            from pipelines.agentic_mode.verifier import PlanVerifier

            self.verifier = PlanVerifier(settings=agents.verifier)
        if validator:
            from pipelines.agentic_mode.validator import SemanticValidator

            self.validator = SemanticValidator(settings=agents.validator)

    async def verify(
        self, run: TaskRun, request: GenerationRequest, sql: str, number: int
    ) -> Finding | None:
        from pipelines.agentic_mode.verifier import PlanInput

        check = PlanInput(
            question=request.question,
            evidence=request.evidence,
            dialect=request.dialect,
            schema_text=request.schema_text,
            sql=sql,
        )
        return await self._ask(run, self.verifier, check, VERIFY_STEP, number)

    async def validate(self, run: TaskRun, tried: Tried, number: int) -> Finding | None:
        from pipelines.agentic_mode.validator import ValidationInput

        assert tried.result is not None
        check = ValidationInput(
            question=run.task.question,
            evidence=run.task.evidence,
            sql=tried.sql,
            result=tried.result,
        )
        return await self._ask(run, self.validator, check, VALIDATE_STEP, number)

    async def _ask(
        self,
        run: TaskRun,
        agent,  # noqa: ANN001
        check,  # noqa: ANN001
        step: str,
        number: int,
    ) -> Finding | None:
        """One LLM check as its own step: its verdict's finding, None for no objection."""
        run.steps.open(step)
        try:
            verdict = await agent.run(check, run.runtime)
        except Exception as exc:  # noqa: BLE001 - an unusable verdict is no objection
            if is_fatal(exc):
                raise
            record_failure(run, step, f"attempt_{number}", exc)
            return None
        finally:
            run.steps.close()
        return verdict.finding(self.taxonomy)
