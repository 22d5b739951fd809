"""A strategy added in one file: the model's first SQL, executed, answers (tests/test_additions.py
registers it with one line: ``STRATEGIES["first_sql"]``)."""

from __future__ import annotations

from typing import Literal

from models.sql_extract import extract_sql
from models.types import ChatMessage, ChatRequest
from pipelines.contracts import CandidateSQL
from pipelines.strategies.base import Strategy
from pipelines.strategies.scaling import StrategyScaling
from pipelines.task_run import TaskRun


class FirstSQLScaling(StrategyScaling):
    strategy: Literal["first_sql"] = "first_sql"
    max_tokens: int = 128


class FirstSQL(Strategy[FirstSQLScaling]):
    """One greedy request with the question; its SQL, executed, is the answer."""

    Settings = FirstSQLScaling

    def call_allowance(self) -> int:
        return 1

    async def search(self, run: TaskRun, memo: None) -> CandidateSQL | None:
        request = ChatRequest(
            messages=(ChatMessage(role="user", content=run.task.question),),
            max_tokens=self.scaling.max_tokens,
            temperature=0.0,
        )
        response = await run.runtime.chat(request, role="generator", agent="first_sql")
        (candidate,) = await run.execute_all(
            [CandidateSQL(sql=extract_sql(response.texts[0]), producer="first_sql")]
        )
        run.add([candidate])
        return candidate
