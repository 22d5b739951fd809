"""A read-through cache of real model responses shared by the runs of one experiment.

Ablation variants ask many identical questions of the model: −tournament issues exactly the
full pipeline's extraction and synthesis calls, −refinement the same minus the loops. With the
cache, each distinct request is computed once per experiment and every variant sees the same
samples (common random numbers), so a variant's difference from the full run is the removed
stage's effect and its cost is only the calls it adds.

    request ──fingerprint(request, model)#k──► cached? ──► the recorded ChatResponse
                                              └─ no ──► real backend ──► appended, returned

``k`` counts identical requests within one process: the second identical request of a run
gets the second recorded sample, not the first again, so sampling stays as diverse as
without the cache. Responses keep their recorded usage and latency, so token and call counts
are what the configuration costs; wall-clock seconds of a cached run are not, unless
``replay_latency`` holds each reply back for its recorded seconds (a time-budgeted pipeline
then decides as it did when the replies were computed).

    backend = CachedBackend(inner, ResponseCache("runs/ablation/responses.jsonl"))  # inner: a model
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from filelock import FileLock

from models.backends.base import ChatBackend
from models.backends.replay import Cassette
from models.types import ChatRequest, ChatResponse


class ResponseCache(Cassette):
    """A :class:`Cassette` written while runs go on, by one or more processes: appends are
    locked across processes, a torn last line is tolerated, and identical requests are
    numbered (``next_key``) over every backend that shares the cache."""

    KIND = "response-cache"
    TORN_TAIL_OK = True

    def __init__(self, path: Path | str) -> None:
        super().__init__(path)
        self._lock = FileLock(str(self.path) + ".lock")
        self._seen: Counter[str] = Counter()

    def next_key(self, fingerprint: str) -> str:
        """``fingerprint#k`` for the k-th request with this fingerprint in this process."""
        key = f"{fingerprint}#{self._seen[fingerprint]}"
        self._seen[fingerprint] += 1
        return key

    def add(self, key: str, model: str, request: ChatRequest, response: ChatResponse) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            super().add(key, model, request, response)


class CachedBackend:
    """``inner`` behind a :class:`ResponseCache`; failures are not cached."""

    def __init__(
        self, inner: ChatBackend, cache: ResponseCache, *, replay_latency: bool = False
    ) -> None:
        self._inner = inner
        self.cache = cache
        self.replay_latency = replay_latency
        self.hits = 0
        self.misses = 0

    @property
    def model(self) -> str:
        return self._inner.model

    async def chat(self, request: ChatRequest) -> ChatResponse:
        # no await before the key is taken: occurrence numbers follow issue order
        key = self.cache.next_key(request.fingerprint(self.model))
        cached = self.cache.get(key)
        if cached is not None:
            self.hits += 1
            if self.replay_latency:
                await asyncio.sleep(cached.latency_s)
            return cached
        response = await self._inner.chat(request)
        self.misses += 1
        await asyncio.to_thread(self.cache.add, key, self.model, request, response)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
