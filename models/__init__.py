"""The model layer: every LLM call in the project goes through :class:`ModelClient`.

from models import ChatMessage, ChatRequest, build_client, extract_sql, chat_many, TokenBudget

client = build_client(cfg.model)                    # conf/model/<name>.yaml
budget = TokenBudget(max_tokens=cfg.scaling.token_budget)
resp = await client.chat(ChatRequest(messages=(ChatMessage(role="user", content=prompt),), n=8,
                                     temperature=0.8), role="generator", budget=budget)
sqls = [extract_sql(t) for t in resp.texts]
client.close()
"""

from models.budget import Price, TokenBudget
from models.build import build_client, replay_client
from models.client import ROLES, ModelClient, RetryPolicy, chat_many
from models.errors import (
    BudgetExceeded,
    CassetteMiss,
    ChecksumMismatch,
    ContextTooLong,
    InvalidModelOutput,
    ModelError,
    ModelFileCorrupt,
    ModelRequestRejected,
    ModelServerError,
    ModelTimeout,
    ModelUnavailable,
)
from models.sql_extract import extract_sql
from models.types import ChatMessage, ChatRequest, ChatResponse

__all__ = [
    "ROLES",
    "BudgetExceeded",
    "CassetteMiss",
    "ChatMessage",
    "ChatRequest",
    "ChatResponse",
    "ChecksumMismatch",
    "ContextTooLong",
    "InvalidModelOutput",
    "ModelClient",
    "ModelError",
    "ModelFileCorrupt",
    "ModelRequestRejected",
    "ModelServerError",
    "ModelTimeout",
    "ModelUnavailable",
    "Price",
    "RetryPolicy",
    "TokenBudget",
    "build_client",
    "chat_many",
    "extract_sql",
    "replay_client",
]
