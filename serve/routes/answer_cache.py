"""The answer cache and the query log around the pipeline: a repeated question is answered from
the cache, and every answer (cached or not) gets its line in the log, whose id is the answer's
``query_id``.

    >>> from serve.types import QueryRequest
    >>> len(cache_key(QueryRequest(question="How many?", database="x"), "fast", 100, "f00d"))
    64

A degraded answer is not cached, nor SQL that the asker rejected under the same cache key
(until a newer answer with it is accepted).
"""

from __future__ import annotations

import hashlib
import json
import time

from core.types import Frozen
from serve.keys import ApiKey
from serve.routes.context import ApiContext
from serve.store import LogEntry, normalise
from serve.types import QueryAnswer, QueryJob, QueryRequest


class Asked(Frozen):
    """One request on its way: who asked, the job, its cache key (None: cache off), and when
    (``time.monotonic``) it came in."""

    key: ApiKey
    job: QueryJob
    cache_key: str | None
    started: float


def cache_key(request: QueryRequest, profile: str, max_rows: int, db_fingerprint: str) -> str:
    raw = json.dumps(
        [
            normalise(request.question),
            normalise(request.evidence),
            profile,
            max_rows,
            db_fingerprint,
        ]
    )
    return hashlib.sha256(raw.encode()).hexdigest()


def from_cache(ctx: ApiContext, asked: Asked) -> QueryAnswer | None:
    """The cached answer to ``asked``, logged and carrying its ``query_id``; None on a miss."""
    hit = _cached(ctx, asked)
    if hit is None:
        return None
    answer, result_hash = hit
    return answer.model_copy(update={"query_id": record(ctx, asked, answer, result_hash)})


def record(ctx: ApiContext, asked: Asked, answer: QueryAnswer, result_hash: str | None) -> int:
    """Cache a fresh answer (unless degraded or rejected before) and log it (cached ones
    too); the log id."""
    store = ctx.store
    if (
        asked.cache_key is not None
        and not answer.cached
        and not answer.degraded
        and not store.was_rejected(asked.cache_key, answer.sql)
    ):
        store.put_cached(
            asked.cache_key,
            {
                "answer": answer.model_dump(mode="json", exclude={"query_id"}),
                "result_hash": result_hash,
            },
            ttl_s=ctx.settings.cache.ttl_s,
        )
    job = asked.job
    return store.log_query(
        LogEntry(
            key_id=asked.key.id,
            database=job.database,
            profile=job.profile,
            question=job.question,
            sql=answer.sql,
            result_hash=result_hash,
            row_count=answer.row_count,
            latency_s=round(time.monotonic() - asked.started, 4),
            cached=answer.cached,
            degraded=answer.degraded,
            trace_id=answer.trace_id or None,
            cache_key=asked.cache_key,
        )
    )


def _cached(ctx: ApiContext, asked: Asked) -> tuple[QueryAnswer, str | None] | None:
    if asked.cache_key is None:
        return None
    hit = ctx.store.get_cached(asked.cache_key)
    if hit is None:
        return None
    answer = QueryAnswer.model_validate(hit["answer"])
    if ctx.store.was_rejected(asked.cache_key, answer.sql):  # put back by a request in flight
        ctx.store.drop_cached(asked.cache_key)
        return None
    return answer.model_copy(
        update={
            "cached": True,
            "usage": answer.usage.model_copy(
                update={
                    "llm_calls": 0,
                    "prompt_tokens": 0,
                    "completion_tokens": 0,
                    "seconds": round(time.monotonic() - asked.started, 3),
                }
            ),
        }
    ), hit.get("result_hash")
