"""The Ray Serve application: an HTTP ingress and a pipeline deployment, scaled independently.

    HTTP ──► Ingress (FastAPI: keys, limits, cache, log)  serve.ingress: replicas / autoscaling
               └─► PipelineDeployment (QueryEngine)       serve.pipeline: replicas / autoscaling
                      ├─► SandboxPool: read-only sandbox actors     serve.sandbox_actors
                      └─► model slots: the shared LocalModelServer actor (llama.cpp, CPU) or the
                          Ray Serve LLM deployments (vLLM, GPU), as the ``model`` config says

``scale-analytics serve`` (``serve/cli.py``) starts Ray, the sandbox pool and the model servers,
then ``build_application(...)``; the replicas attach to those actors.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

from ray import serve

from pipelines.contracts import DatabaseRef
from serve.keys import KeyRing
from serve.settings import ServeSettings
from serve.types import QueryJob

log = logging.getLogger(__name__)

APP_NAME = "scale-analytics"


@serve.deployment(name="pipeline")
class PipelineDeployment:
    """Answers questions with the configured pipelines (``serve.engine.QueryEngine``)."""

    def __init__(self, cfgs: Mapping[str, dict], settings_json: str, sandbox: Any) -> None:
        from serve.databases import database_ref
        from serve.engine import QueryEngine

        self.engine = QueryEngine(cfgs, ServeSettings.model_validate_json(settings_json), sandbox)
        for registered in self.engine.store.databases():  # cheap when already built
            try:
                self.engine.prepare(database_ref(registered.name, registered), registered.name)
            except Exception as exc:  # an index is never worth the endpoint
                log.warning("indexes of %s: %s", registered.name, exc)

    async def answer(self, job_json: str) -> dict[str, Any]:
        job = QueryJob.model_validate_json(job_json)
        return (await self.engine.answer(job)).model_dump(mode="json")

    async def stream(self, job_json: str) -> AsyncIterator[dict[str, Any]]:
        async for event in self.engine.stream(QueryJob.model_validate_json(job_json)):
            yield event

    async def prepare(self, db_json: str, name: str) -> str:
        db = DatabaseRef.model_validate_json(db_json)
        return await asyncio.to_thread(self.engine.prepare, db, name)

    async def status(self) -> dict[str, Any]:
        return self.engine.status()

    async def __del__(self) -> None:
        await self.engine.aclose()


class HandleBackend:
    """The ingress's view of the pipeline deployment (``serve.api.Backend``)."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    async def answer(self, job: QueryJob) -> dict[str, Any]:
        response = self.handle.answer.remote(job.model_dump_json())
        try:
            return await response
        except asyncio.CancelledError:
            response.cancel()
            raise

    async def stream(self, job: QueryJob) -> AsyncIterator[dict[str, Any]]:
        events = self.handle.options(stream=True).stream.remote(job.model_dump_json())
        try:
            async for event in events:
                yield event
        finally:
            events.cancel()

    async def prepare(self, db: DatabaseRef, name: str) -> str:
        return await self.handle.prepare.remote(db.model_dump_json(), name)

    async def status(self) -> dict[str, Any]:
        return await self.handle.status.remote()


@serve.deployment(name="ingress")
@serve.ingress()
class Ingress:
    def __init__(self, pipeline: Any, settings_json: str, ring_json: str) -> None:
        self.backend = HandleBackend(pipeline)
        self.settings = ServeSettings.model_validate_json(settings_json)
        self.ring = KeyRing.model_validate_json(ring_json)

    def __serve_build_asgi_app__(self) -> Any:
        from serve.api import build_api

        return build_api(self.backend, self.settings, self.ring)


def build_application(
    cfgs: Mapping[str, dict], settings: ServeSettings, ring: KeyRing, sandbox: Any
) -> Any:
    """The bound application for ``serve.run`` (keys travel as hashes only)."""
    pipeline = PipelineDeployment.options(**settings.pipeline.options()).bind(
        dict(cfgs), settings.model_dump_json(), sandbox
    )
    return Ingress.options(**settings.ingress.options()).bind(
        pipeline, settings.model_dump_json(), ring.model_dump_json()
    )
