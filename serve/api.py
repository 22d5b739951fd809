"""The HTTP API: a FastAPI app over a pipeline backend, the state store and the API keys.

    POST   /v1/query              {question, database, evidence?, profile?, max_rows?} -> answer
    POST   /v1/query/stream       the same, as server-sent events: progress..., answer | error
    GET    /v1/databases          registered databases the key may use, with tables and columns
    POST   /v1/databases          register one (admin key)            DELETE /v1/databases/NAME
    GET    /v1/traces/{trace_id}  the reasoning trace of an answer
    POST   /v1/queries/{query_id}/feedback  {accepted}: the asker marks an answer right or wrong
    GET    /healthz  /readyz  /docs  /  (the web page)

Every refusal is ``{"error": {"code", "message"}}`` with a 4xx status (5xx: the server's own
failure), never a stack trace or a filesystem path. A request goes through, in order: body
size, JSON, fields, key, the key's database allow-list, the database, the key's rate and
in-flight limits, the query cache, and then the pipeline under the request deadline.

Each answer carries ``query_id``, its line in the query log. Feedback on it (only from the key
that asked) is kept there: accepted answers become the database's own solved examples, which
the pipeline shows the model (``StateStore.accepted_examples``); a rejected answer leaves the
cache, and its SQL is not cached under that key again until a newer answer with it is accepted.

``build_api(backend, settings, ring)`` takes any :class:`Backend`: ``LocalBackend`` (a
``QueryEngine`` in this process) or the Serve deployment handle (``serve/app.py``).
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Protocol

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from pipelines.contracts import DatabaseRef
from serve.errors import ApiError
from serve.keys import ApiKey, KeyLimiter, KeyRing, presented_key
from serve.settings import ServeSettings
from serve.store import LogEntry, RegisteredDatabase, StateStore, normalise
from serve.types import (
    DatabaseInfo,
    Feedback,
    FeedbackRequest,
    QueryAnswer,
    QueryJob,
    QueryRequest,
    RegisterRequest,
    TableSummary,
)

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
QUERY_ID = re.compile(r"^[1-9][0-9]{0,17}$")
DEADLINE_GRACE_S = 5.0  # the pipeline deployment stops itself at the deadline; this is a backstop


class Backend(Protocol):
    async def answer(self, job: QueryJob) -> dict[str, Any]: ...

    def stream(self, job: QueryJob) -> AsyncIterator[dict[str, Any]]: ...

    async def prepare(self, db: DatabaseRef, name: str) -> str: ...

    async def status(self) -> dict[str, Any]: ...


class LocalBackend:
    """A ``QueryEngine`` in this process (tests; the Serve deployment wraps the same engine)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    async def answer(self, job: QueryJob) -> dict[str, Any]:
        return (await self.engine.answer(job)).model_dump(mode="json")

    async def stream(self, job: QueryJob) -> AsyncIterator[dict[str, Any]]:
        async for event in self.engine.stream(job):
            yield event

    async def prepare(self, db: DatabaseRef, name: str) -> str:
        return await asyncio.to_thread(self.engine.prepare, db, name)

    async def status(self) -> dict[str, Any]:
        return self.engine.status()


# --- small pieces ---------------------------------------------------------------------------


def fingerprint(path: str) -> str:
    """Changes whenever the database file (or its write-ahead log) does."""
    parts = []
    for suffix in ("", "-wal", ".wal"):
        file = Path(path + suffix)
        if file.exists():
            st = file.stat()
            parts.append(f"{suffix}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}")
    return hashlib.sha256("|".join([path, *parts]).encode()).hexdigest()[:16]


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


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def database_ref(name: str, registered: RegisteredDatabase) -> DatabaseRef:
    return DatabaseRef(
        db_id=name,
        path=registered.path,
        dialect=registered.engine,  # type: ignore[arg-type]
        description_dir=registered.description_dir,
    )


def register(store: StateStore, request: RegisterRequest, source: str) -> RegisteredDatabase:
    """Check ``request`` (name, file, engine, readable) and store it; ``ApiError`` when bad.

    Messages never repeat the path: a caller learns what is wrong, not what the disk holds.
    """
    from pipelines.ask_cli import database_ref as file_ref
    from pipelines.schema.introspect import introspect

    if not NAME.fullmatch(request.name):
        raise ApiError(
            422,
            "invalid_name",
            "a database name is 1-64 letters, digits, '_' or '-', starting with a letter or digit",
        )
    try:
        db = file_ref(request.path, request.name, request.description_dir)
    except FileNotFoundError:
        raise ApiError(422, "no_database_file", "no database file at the given path") from None
    except (ValueError, OSError):
        raise ApiError(
            422, "unknown_engine", "the file must end in .sqlite, .sqlite3, .db or .duckdb"
        ) from None
    try:
        introspect(db, sample_values=0, infer_joins=False)
    except Exception:
        raise ApiError(
            422, "unreadable_database", "the file is not a readable SQLite/DuckDB database"
        ) from None
    registered = RegisteredDatabase(
        name=request.name,
        path=db.path,
        engine=db.dialect,
        description_dir=db.description_dir,
        source=source,
    )
    store.put_database(registered)
    return registered


# --- the app --------------------------------------------------------------------------------


def build_api(backend: Backend, settings: ServeSettings, ring: KeyRing) -> FastAPI:
    store = StateStore(settings.state_dir)
    limiter = KeyLimiter(settings.limits.rate_per_minute, settings.limits.concurrency)
    limits = settings.limits
    schemas: dict[tuple[str, str], DatabaseInfo] = {}  # (name, fingerprint) -> info
    background: set[asyncio.Task] = set()

    app = FastAPI(
        title="scale-analytics",
        summary="Ask a registered database a question; get SQL, rows and an explanation.",
        version="1",
    )

    # --- errors ---------------------------------------------------------------------------

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _invalid_response(exc.errors())

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        message = "no such endpoint" if exc.status_code == 404 else str(exc.detail)
        return JSONResponse(ApiError(exc.status_code, code, message).body(), exc.status_code)

    @app.exception_handler(Exception)
    async def _internal(_: Request, exc: Exception) -> JSONResponse:
        log.exception("internal error")
        body = ApiError(500, "internal_error", "the server failed on this request").body()
        return JSONResponse(body, status_code=500)

    # --- request parts --------------------------------------------------------------------

    def caller(request: Request) -> ApiKey:
        key = ring.lookup(
            presented_key(request.headers.get("authorization"), request.headers.get("x-api-key"))
        )
        if key is None:
            raise ApiError(401, "unauthorized", "a valid API key is required")
        return key

    def admin(request: Request) -> ApiKey:
        key = caller(request)
        if not key.admin:
            raise ApiError(403, "forbidden", "this endpoint needs the admin key")
        return key

    async def body_json(request: Request) -> Any:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limits.max_body_bytes:
            raise _too_large()
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limits.max_body_bytes:
                raise _too_large()
            chunks.append(chunk)
        try:
            return json.loads(b"".join(chunks))
        except (ValueError, UnicodeDecodeError):
            raise ApiError(400, "malformed_json", "the request body is not valid JSON") from None

    def _too_large() -> ApiError:
        return ApiError(
            413, "body_too_large", f"the request body exceeds {limits.max_body_bytes} bytes"
        )

    def allowed_database(key: ApiKey, name: str) -> RegisteredDatabase:
        if not NAME.fullmatch(name):
            raise ApiError(404, "unknown_database", "no database of that name is registered")
        if not key.allows(name):
            raise ApiError(403, "forbidden_database", f"this key may not query {name!r}")
        registered = store.database(name)
        if registered is None:
            raise ApiError(404, "unknown_database", f"no database named {name!r} is registered")
        if not Path(registered.path).is_file():
            raise ApiError(503, "database_unavailable", f"the file of {name!r} is missing")
        return registered

    async def parse_query(request: Request) -> tuple[ApiKey, QueryRequest]:
        raw = await body_json(request)
        try:
            query = QueryRequest.model_validate(raw)
        except ValidationError as exc:
            raise _invalid_error(exc.errors()) from None
        key = caller(request)
        if len(query.question) > limits.max_question_chars:
            raise ApiError(
                413,
                "question_too_long",
                f"the question exceeds {limits.max_question_chars} characters",
            )
        if len(query.evidence) > limits.max_evidence_chars:
            raise ApiError(
                413,
                "evidence_too_long",
                f"the evidence exceeds {limits.max_evidence_chars} characters",
            )
        if query.max_rows is not None and query.max_rows > limits.max_rows:
            raise ApiError(422, "too_many_rows", f"max_rows is at most {limits.max_rows}")
        return key, query

    def plan(key: ApiKey, query: QueryRequest) -> tuple[QueryJob, str | None]:
        registered = allowed_database(key, query.database)
        profile = query.profile or settings.default_profile
        if profile not in settings.profiles:
            raise ApiError(422, "unknown_profile", f"profile {profile!r} is not configured")
        max_rows = query.max_rows or limits.default_rows
        job = QueryJob(
            question=query.question,
            evidence=query.evidence,
            db=database_ref(query.database, registered),
            database=query.database,
            profile=profile,
            max_rows=max_rows,
            trace_id=uuid.uuid4().hex,
            deadline_s=limits.deadline_s,
        )
        key_of_cache = (
            cache_key(query, profile, max_rows, fingerprint(registered.path))
            if settings.cache.enabled
            else None
        )
        return job, key_of_cache

    def cached(key_of_cache: str | None, started: float) -> tuple[QueryAnswer, str | None] | None:
        if key_of_cache is None:
            return None
        hit = store.get_cached(key_of_cache)
        if hit is None:
            return None
        answer = QueryAnswer.model_validate(hit["answer"])
        if store.was_rejected(key_of_cache, answer.sql):  # put back by a request in flight
            store.drop_cached(key_of_cache)
            return None
        return answer.model_copy(
            update={
                "cached": True,
                "usage": answer.usage.model_copy(
                    update={
                        "llm_calls": 0,
                        "prompt_tokens": 0,
                        "completion_tokens": 0,
                        "seconds": round(time.monotonic() - started, 3),
                    }
                ),
            }
        ), hit.get("result_hash")

    def record(
        key: ApiKey,
        job: QueryJob,
        answer: QueryAnswer,
        result_hash: str | None,
        key_of_cache: str | None,
        started: float,
    ) -> int:
        """Cache a fresh answer (unless degraded or rejected before) and log it (cached ones
        too); the log id."""
        if (
            key_of_cache is not None
            and not answer.cached
            and not answer.degraded
            and not store.was_rejected(key_of_cache, answer.sql)
        ):
            store.put_cached(
                key_of_cache,
                {
                    "answer": answer.model_dump(mode="json", exclude={"query_id"}),
                    "result_hash": result_hash,
                },
                ttl_s=settings.cache.ttl_s,
            )
        return store.log_query(
            LogEntry(
                key_id=key.id,
                database=job.database,
                profile=job.profile,
                question=job.question,
                sql=answer.sql,
                result_hash=result_hash,
                row_count=answer.row_count,
                latency_s=round(time.monotonic() - started, 4),
                cached=answer.cached,
                degraded=answer.degraded,
                trace_id=answer.trace_id or None,
                cache_key=key_of_cache,
            )
        )

    # --- endpoints ------------------------------------------------------------------------

    query_body = {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": QueryRequest.model_json_schema()}},
        }
    }

    @app.post(
        "/v1/query",
        response_model=QueryAnswer,
        openapi_extra=query_body,
        summary="Answer a question against a registered database",
    )
    async def query(request: Request) -> QueryAnswer:
        started = time.monotonic()
        key, body = await parse_query(request)
        job, key_of_cache = plan(key, body)
        async with limiter.slot(key):
            hit = cached(key_of_cache, started)
            if hit is not None:
                answer, result_hash = hit
                query_id = record(key, job, answer, result_hash, key_of_cache, started)
                return answer.model_copy(update={"query_id": query_id})
            try:
                outcome = await asyncio.wait_for(
                    backend.answer(job), limits.deadline_s + DEADLINE_GRACE_S
                )
            except TimeoutError:
                raise ApiError(
                    504, "deadline_exceeded", f"no answer within {limits.deadline_s:g} s"
                ) from None
            if outcome.get("error"):
                error = outcome["error"]
                raise ApiError(error["status"], error["code"], error["message"])
            answer = QueryAnswer.model_validate(outcome["answer"]["answer"])
            query_id = record(
                key, job, answer, outcome["answer"]["result_hash"], key_of_cache, started
            )
            return answer.model_copy(update={"query_id": query_id})

    @app.post(
        "/v1/query/stream",
        openapi_extra=query_body,
        summary="The same, as server-sent events: progress per stage, then the answer",
        response_class=StreamingResponse,
    )
    async def query_stream(request: Request) -> StreamingResponse:
        started = time.monotonic()
        key, body = await parse_query(request)
        job, key_of_cache = plan(key, body)
        limiter.admit(key)  # released when the stream ends

        async def events() -> AsyncIterator[str]:
            try:
                hit = cached(key_of_cache, started)
                if hit is not None:
                    answer, result_hash = hit
                    query_id = record(key, job, answer, result_hash, key_of_cache, started)
                    answer = answer.model_copy(update={"query_id": query_id})
                    yield _sse("answer", answer.model_dump(mode="json"))
                    return
                try:
                    async with asyncio.timeout(limits.deadline_s + DEADLINE_GRACE_S):
                        async for event in backend.stream(job):
                            kind = event.pop("event")
                            result_hash = event.pop("result_hash", None)
                            if kind == "answer":
                                answer = QueryAnswer.model_validate(event)
                                event["query_id"] = record(
                                    key, job, answer, result_hash, key_of_cache, started
                                )
                            yield _sse(kind, event)
                except TimeoutError:
                    yield _sse(
                        "error",
                        ApiError(504, "deadline_exceeded", "no answer in time").body()["error"],
                    )
            except Exception:
                log.exception("stream failed")
                yield _sse("error", {"code": "internal_error", "message": "the server failed"})
            finally:
                limiter.release(key)

        return StreamingResponse(
            events(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
        )

    @app.get(
        "/v1/databases", response_model=list[DatabaseInfo], summary="Databases this key may use"
    )
    async def databases(request: Request) -> list[DatabaseInfo]:
        key = caller(request)
        return [
            await asyncio.to_thread(describe, db) for db in store.databases() if key.allows(db.name)
        ]

    def describe(db: RegisteredDatabase) -> DatabaseInfo:
        from pipelines.schema.introspect import introspect

        if not Path(db.path).is_file():
            return DatabaseInfo(name=db.name, engine=db.engine, error="the file is missing")
        at = (db.name, fingerprint(db.path))
        if at not in schemas:
            try:
                view = introspect(database_ref(db.name, db), sample_values=0, infer_joins=False)
            except Exception:
                return DatabaseInfo(name=db.name, engine=db.engine, error="cannot be read now")
            schemas[at] = DatabaseInfo(
                name=db.name,
                engine=db.engine,
                tables=tuple(
                    TableSummary(
                        name=t.name,
                        columns=tuple(c.name for c in t.columns),
                        row_count=t.row_count,
                    )
                    for t in view.tables
                ),
            )
        return schemas[at]

    @app.post(
        "/v1/databases",
        status_code=201,
        response_model=DatabaseInfo,
        summary="Register a database (admin key)",
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": RegisterRequest.model_json_schema()}},
            }
        },
    )
    async def add_database(request: Request) -> DatabaseInfo:
        raw = await body_json(request)
        admin(request)
        try:
            body = RegisterRequest.model_validate(raw)
        except ValidationError as exc:
            raise _invalid_error(exc.errors()) from None
        registered = await asyncio.to_thread(register, store, body, "admin")
        if settings.index_on_register:
            db = database_ref(registered.name, registered)
            task = asyncio.ensure_future(backend.prepare(db, registered.name))
            background.add(task)
            task.add_done_callback(background.discard)
        return await asyncio.to_thread(describe, registered)

    @app.delete(
        "/v1/databases/{name}", status_code=204, summary="Unregister a database (admin key)"
    )
    async def delete_database(name: str, request: Request) -> Response:
        admin(request)
        if not NAME.fullmatch(name) or not store.delete_database(name):
            raise ApiError(404, "unknown_database", "no database of that name is registered")
        return Response(status_code=204)

    @app.get("/v1/traces/{trace_id}", summary="The reasoning trace of an answer")
    async def trace(trace_id: str, request: Request) -> Response:
        key = caller(request)
        found = store.trace(trace_id) if TRACE_ID.fullmatch(trace_id) else None
        if found is None or not key.allows(found[0]):
            raise ApiError(404, "unknown_trace", "no trace with that id")
        return Response(found[1], media_type="application/json")

    @app.post(
        "/v1/queries/{query_id}/feedback",
        response_model=Feedback,
        summary="Mark an answer of this key accepted or rejected",
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": FeedbackRequest.model_json_schema()}},
            }
        },
    )
    async def feedback(query_id: str, request: Request) -> Feedback:
        raw = await body_json(request)
        key = caller(request)
        try:
            body = FeedbackRequest.model_validate(raw)
        except ValidationError as exc:
            raise _invalid_error(exc.errors()) from None
        # Another key's answer reads as a missing one: an id says nothing about who asked what.
        entry = store.logged_query(int(query_id)) if QUERY_ID.fullmatch(query_id) else None
        if entry is None or entry.key_id != key.id or not key.allows(entry.database):
            raise ApiError(404, "unknown_query", "no answer of this key with that id")
        store.set_feedback(int(query_id), body.accepted)
        if not body.accepted and entry.cache_key is not None:
            store.drop_cached(entry.cache_key)
        return Feedback(query_id=int(query_id), accepted=body.accepted)

    @app.get("/healthz", summary="The server is up")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", summary="Models loaded and indexes built")
    async def readyz(request: Request) -> JSONResponse:
        try:
            status = await asyncio.wait_for(backend.status(), 10)
        except Exception:
            return JSONResponse({"ready": False, "models": False}, status_code=503)
        key = ring.lookup(
            presented_key(request.headers.get("authorization"), request.headers.get("x-api-key"))
        )
        body: dict[str, Any] = {"ready": bool(status.get("models")), "models": status["models"]}
        if key is not None:  # names only for a caller with a key
            body["indexes"] = {
                name: line for name, line in status["indexes"].items() if key.allows(name)
            }
        return JSONResponse(body, status_code=200 if body["ready"] else 503)

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    return app


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def _invalid_error(errors: list[dict]) -> ApiError:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ()) if p != 'body') or 'body'}: {e.get('msg')}"
        for e in errors[:5]
    )
    return ApiError(422, "invalid_request", problems)


def _invalid_response(errors: list[dict]) -> JSONResponse:
    error = _invalid_error(list(errors))
    return JSONResponse(error.body(), status_code=error.status)
