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
are what the configuration costs; wall-clock seconds of a cached run are not.

>>> backend = CachedBackend(inner, ResponseCache("runs/ablation/responses.jsonl"))  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

from filelock import FileLock

from models.backends.base import ChatBackend
from models.types import ChatRequest, ChatResponse


class ResponseCache:
    """JSONL file of ``{"key", "model", "response"}`` lines; appends are locked across processes."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = FileLock(str(self.path) + ".lock")
        self._entries: dict[str, ChatResponse] = {}
        lines = self.path.read_text().splitlines() if self.path.exists() else []
        for number, line in enumerate(lines, start=1):
            try:
                entry = json.loads(line)
                self._entries[entry["key"]] = ChatResponse.model_validate(entry["response"])
            except (ValueError, KeyError):
                if number < len(lines):
                    raise ValueError(f"{self.path}:{number} is not a response-cache entry") from None
                # a torn last line from a killed writer: that request is simply asked again

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> ChatResponse | None:
        return self._entries.get(key)

    def add(self, key: str, model: str, response: ChatResponse) -> None:
        self._entries[key] = response
        line = json.dumps(
            {"key": key, "model": model, "response": response.model_dump(mode="json")},
            sort_keys=True,
            ensure_ascii=False,
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, self.path.open("a") as fh:
            fh.write(line + "\n")


class CachedBackend:
    """``inner`` behind a :class:`ResponseCache`; failures are not cached."""

    def __init__(self, inner: ChatBackend, cache: ResponseCache) -> None:
        self._inner = inner
        self.cache = cache
        self._seen: Counter[str] = Counter()
        self.hits = 0
        self.misses = 0

    @property
    def model(self) -> str:
        return self._inner.model

    async def chat(self, request: ChatRequest) -> ChatResponse:
        fingerprint = request.fingerprint(self.model)
        # no await between reading and bumping the count: occurrence numbers follow issue order
        key = f"{fingerprint}#{self._seen[fingerprint]}"
        self._seen[fingerprint] += 1
        cached = self.cache.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        response = await self._inner.chat(request)
        self.misses += 1
        await asyncio.to_thread(self.cache.add, key, self.model, response)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
