"""What ``tests/test_additions.py`` sets up in every Ray worker process of its ``eval`` run (Ray's
``worker_process_setup_hook``): the two registry lines, and a model that answers every request
with the SQL in ``$ADDITIONS_REPLY``. A worker imports the registries afresh, so the driver's
registration alone would not reach it."""

from __future__ import annotations

import os

import models
from core.types import Usage
from models.types import ChatResponse
from pipelines.repair import registry as repairs
from pipelines.strategies import registry as strategies

FIRST_SQL = "tests.additions.first_sql:FirstSQL"
TABLE_NAMES = "tests.additions.table_names:TableNames"


class OneReply:
    """Answers every request with ``sql`` (each of its ``n``), and counts the requests."""

    def __init__(self, sql: str) -> None:
        self.sql, self.requests = sql, 0

    async def chat(self, request, *, role: str = "generator", budget=None) -> ChatResponse:
        self.requests += 1
        return ChatResponse(
            texts=(f"```sql\n{self.sql}\n```",) * request.n,
            usage=Usage(calls=1, prompt_tokens=100, completion_tokens=10),
            latency_s=0.0,
            model="one-reply",
            finish_reasons=("stop",) * request.n,
        )

    def close(self) -> None:
        pass


def register() -> None:
    strategies.STRATEGIES["first_sql"] = FIRST_SQL
    strategies._adapter.cache_clear()  # the settings union is built once per process
    repairs.REPAIRS["table_names"] = TABLE_NAMES
    reply = os.environ["ADDITIONS_REPLY"]
    models.build_client = lambda cfg: OneReply(reply)
