"""Record/replay of real model responses, so tests run without a model and stay exact.

    replay:  request ──fingerprint(request, model)──► cassette line ──► ChatResponse (or CassetteMiss)
    record:  request ──► real backend ──► ChatResponse ──► appended to the cassette, then returned

A cassette is a JSONL file, one ``{"key", "model", "request", "response"}`` object per line,
written only by recording (``SCALE_ANALYTICS_RECORD=1`` or ``record: true``), never by hand.
The first recording of a cassette in a process starts it afresh, so re-recording drops
entries no test asks for any more. ``SCALE_ANALYTICS_RECORD=missing`` keeps the cassette and
records only the requests it lacks (a prompt or a call added since the last recording).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from models.backends.base import ChatBackend
from models.errors import CassetteMiss
from models.types import ChatRequest, ChatResponse

RECORD_ENV = "SCALE_ANALYTICS_RECORD"

_started_this_process: set[Path] = set()
_started_lock = threading.Lock()


def record_mode_from_env() -> bool:
    return os.environ.get(RECORD_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def fill_missing_from_env() -> bool:
    return os.environ.get(RECORD_ENV, "").strip().lower() == "missing"


class Cassette:
    """The recorded responses of one file, keyed by request fingerprint."""

    KIND = "cassette"  # names the file in errors
    TORN_TAIL_OK = (
        False  # a cassette is written whole by `make cassettes`: any bad line is an error
    )

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._entries: dict[str, ChatResponse] = {}
        lines = self.path.read_text().splitlines() if self.path.exists() else []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                self._entries[entry["key"]] = ChatResponse.model_validate(entry["response"])
            except (ValueError, KeyError) as exc:
                if self.TORN_TAIL_OK and number == len(lines):
                    continue  # a writer killed mid-line: that request is simply asked again
                raise ValueError(f"{self.path}:{number} is not a {self.KIND} entry: {exc}") from exc

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> ChatResponse | None:
        return self._entries.get(key)

    def start_recording(self) -> None:
        """Truncate the file the first time this process records into it."""
        resolved = self.path.resolve()
        with _started_lock:
            if resolved in _started_this_process:
                return
            _started_this_process.add(resolved)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("")
            self._entries.clear()

    def add(self, key: str, model: str, request: ChatRequest, response: ChatResponse) -> None:
        self._entries[key] = response
        line = json.dumps(
            {
                "key": key,
                "model": model,
                "request": request.model_dump(mode="json"),
                "response": response.model_dump(mode="json"),
            },
            sort_keys=True,
            ensure_ascii=False,
        )
        with _started_lock, self.path.open("a") as fh:
            fh.write(line + "\n")


class ReplayBackend:
    """Serves a cassette; when recording, forwards misses and hits alike to ``inner``.

    >>> backend = ReplayBackend(Cassette("tests/cassettes/models/client.jsonl"), model="qwen2.5-coder-0.5b")
    """

    def __init__(
        self,
        cassette: Cassette,
        *,
        model: str,
        inner: ChatBackend | None = None,
        record: bool = False,
        fill_missing: bool = False,
    ) -> None:
        if (record or fill_missing) and inner is None:
            raise ValueError("recording needs a real backend to record from")
        if inner is not None and inner.model != model:
            raise ValueError(
                f"recording backend serves {inner.model!r}, the cassette is for {model!r}"
            )
        self.cassette = cassette
        self._model = model
        self._inner = inner
        self.record = record
        self.fill_missing = fill_missing
        if record:
            cassette.start_recording()

    @property
    def model(self) -> str:
        return self._model

    async def chat(self, request: ChatRequest) -> ChatResponse:
        key = request.fingerprint(self._model)
        if not self.record:
            recorded = self.cassette.get(key)
            if recorded is None and self.fill_missing:
                assert self._inner is not None
                recorded = await self._inner.chat(request)
                self.cassette.add(key, self._model, request, recorded)
            if recorded is None:
                raise CassetteMiss(
                    f"cassette {self.cassette.path} has no response for request {key} to {self._model} "
                    f"({request.excerpt()!r}, n={request.n}, T={request.temperature}); "
                    f"record it with `make cassettes` ({RECORD_ENV}=1)"
                )
            return recorded
        assert self._inner is not None
        response = await self._inner.chat(request)
        self.cassette.add(key, self._model, request, response)
        return response

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()
