"""The Answer Correctness judge: an LLM reads the question, the predicted SQL and a preview of its
result, and says whether the result answers the question (binary verdict) with a 0-50 rubric score.

    answer graded ──► AnswerJudge.judge(task, sql, result)
                        │ SQL empty or failed to run: wrong, score 0, no call
                        └ prompt pipelines/prompts/answer_judge.md ──► client.chat(role="judge")
                          ──► JSON {"reason", "score", "correct"} ──► JudgeVerdict
                      a reply that is no verdict (garbage, a timeout): JudgeVerdict(error=...)

Off unless ``eval.judge`` names a slot of the model config (``eval/settings.py``); the judge's
calls go to that slot under the role ``judge`` and are priced by it, apart from the pipeline's
cost (``judge_cost_usd``). A run aggregates the verdicts (``judge_metrics``): the share judged
correct, the mean score, and the judge's agreement with EX where both exist (share agreeing,
Cohen's kappa).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import polars as pl
from pydantic import Field, ValidationError

from core.types import Frozen, Usage
from eval.errors import EvalError
from eval.metrics.agreement import agreement
from eval.settings import EvalSettings
from models.client import ModelClient
from models.errors import ModelError
from models.types import ChatRequest
from pipelines.agents.render import DIALECT_NAME, evidence_line, preview
from pipelines.contracts import ExecutionResult, Task
from pipelines.prompts import load_prompt

ROLE = "judge"
RUBRIC_MAX = 50
JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string"},
        "score": {"type": "integer", "minimum": 0, "maximum": RUBRIC_MAX},
        "correct": {"type": "boolean"},
    },
    "required": ["reason", "score", "correct"],
    "additionalProperties": False,
}
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class JudgeError(EvalError):
    """The judge's reply holds no verdict."""


class JudgeSlotMissing(EvalError):
    """``eval.judge`` names no slot of the model config."""


class JudgeVerdict(Frozen):
    """One answer's verdict; ``correct`` and ``score`` are None when the judge gave none (``error``)."""

    correct: bool | None = None
    score: int | None = Field(default=None, ge=0, le=RUBRIC_MAX)
    error: str | None = None
    usage: Usage = Usage()


class _Reply(Frozen):
    reason: str = ""
    score: int = Field(ge=0, le=RUBRIC_MAX)
    correct: bool


def parse_verdict(text: str) -> tuple[bool, int]:
    """``(correct, score)`` from the judge's reply: its JSON object, even amid other text.

    >>> parse_verdict('Here: {"reason": "right count", "score": 47, "correct": true}')
    (True, 47)
    """
    found = _OBJECT.search(text)
    if found is None:
        raise JudgeError(f"no JSON object in the judge's reply: {text[:120]!r}")
    try:
        reply = _Reply.model_validate(json.loads(found.group(0)))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise JudgeError(f"the judge's reply is not a verdict ({exc}): {text[:120]!r}") from exc
    return reply.correct, reply.score


class AnswerJudge:
    """Judges answers with ``client``'s ``judge`` role; never raises for a bad reply."""

    def __init__(self, client: ModelClient, settings: EvalSettings) -> None:
        self._client = client
        self._settings = settings
        self._prompt = load_prompt("answer_judge")

    def request(self, task: Task, sql: str, result: ExecutionResult) -> ChatRequest:
        return ChatRequest(
            messages=self._prompt.render(
                question=task.question,
                evidence=evidence_line(task.evidence),
                dialect=DIALECT_NAME[task.db.dialect],
                sql=sql,
                preview=preview(result, rows=self._settings.judge_preview_rows),
            ),
            max_tokens=self._settings.judge_max_tokens,
            json_schema=JUDGE_SCHEMA,
        )

    async def judge(self, task: Task, sql: str, result: ExecutionResult | None) -> JudgeVerdict:
        if not sql or result is None or not result.ok:
            return JudgeVerdict(correct=False, score=0)  # no result answers nothing
        try:
            response = await self._client.chat(self.request(task, sql, result), role=ROLE)
        except ModelError as exc:  # unreachable, timed out, or a reply off the JSON schema
            return JudgeVerdict(error=f"{type(exc).__name__}: {exc}")
        try:
            correct, score = parse_verdict(response.texts[0])
        except JudgeError as exc:
            return JudgeVerdict(error=f"JudgeError: {exc}", usage=response.usage)
        return JudgeVerdict(correct=correct, score=score, usage=response.usage)


class ConfiguredJudge:
    """The picklable factory a sweep worker calls to build the judge of ``model`` (the model
    config as plain values) on ``settings.judge``'s slot."""

    def __init__(self, model: Mapping[str, Any], settings: EvalSettings) -> None:
        slots = sorted(model.get("slots", {}))
        if settings.judge not in slots:
            raise JudgeSlotMissing(
                f"eval.judge={settings.judge} is not a slot of the model config; its slots: {slots}"
            )
        self._model = {**model, "roles": {ROLE: settings.judge}}
        self._settings = settings

    def __call__(self) -> AnswerJudge:
        from models import build_client

        return AnswerJudge(build_client(self._model), self._settings)


# --- a run's verdicts ---------------------------------------------------------------------


def judge_metrics(frame: pl.DataFrame) -> dict[str, float]:
    """``judge_correct`` (share of verdicts that accept), ``judge_score_mean`` (0-50),
    ``judge_verdicts`` / ``judge_no_verdict`` (questions with and without one),
    ``judge_agreement_ex`` and ``judge_kappa_ex`` (against EX, BIRD semantics, where both
    exist), ``judge_cost_usd_per_question``; empty when no question was judged."""
    if "judge_correct" not in frame.columns:
        return {}
    judged = frame.filter(
        pl.col("judge_correct").is_not_null() | pl.col("judge_error").is_not_null()
    )
    if judged.is_empty():
        return {}
    verdicts = judged.filter(pl.col("judge_correct").is_not_null())
    metrics = {
        "judge_verdicts": float(verdicts.height),
        "judge_no_verdict": float(judged.height - verdicts.height),
        "judge_cost_usd_per_question": float(
            judged.get_column("judge_cost_usd").fill_null(0).mean()
        ),
    }
    if verdicts.height:
        metrics["judge_correct"] = float(verdicts.get_column("judge_correct").mean())
        metrics["judge_score_mean"] = float(verdicts.get_column("judge_score").mean())
    both = verdicts.filter(pl.col("ex_bird").is_not_null())
    if both.height:
        share, kappa = agreement(
            both.get_column("judge_correct").to_list(), both.get_column("ex_bird").to_list()
        )
        metrics["judge_agreement_ex"] = share
        metrics["judge_ex_pairs"] = float(both.height)
        if kappa is not None:
            metrics["judge_kappa_ex"] = kappa
    return metrics


def judge_lines(metrics: Mapping[str, float]) -> list[str]:
    """The summary's and report's judge lines; none when nothing was judged."""
    if "judge_verdicts" not in metrics:
        return []
    verdicts, missing = int(metrics["judge_verdicts"]), int(metrics["judge_no_verdict"])
    if not verdicts:
        return [f"no verdict on any of the {missing} questions judged"]
    line = (
        f"answer correctness {metrics['judge_correct']:.3f} over {verdicts} verdicts, "
        f"mean score {metrics['judge_score_mean']:.1f}/{RUBRIC_MAX}"
    )
    if missing:
        line += f"; {missing} without a verdict"
    lines = [line]
    if "judge_agreement_ex" in metrics:
        kappa = metrics.get("judge_kappa_ex")
        lines.append(
            f"agrees with EX on {metrics['judge_agreement_ex']:.0%} of "
            f"{int(metrics['judge_ex_pairs'])} questions, Cohen's κ "
            + ("n/a (one label only)" if kappa is None else f"{kappa:.2f}")
        )
    return lines
