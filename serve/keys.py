"""API keys, their database allow-lists, and the per-key rate and concurrency limits.

Keys come from ``SCALE_ANALYTICS_API_KEY`` (one admin key for every database) and/or a keys
file, and are kept only as SHA-256 hashes: the file holds hashes, and the environment's key is
hashed when the server starts. A keys file (JSON)::

    {"keys": [
      {"id": "ops",     "sha256": "<hex>", "admin": true},
      {"id": "analyst", "sha256": "<hex>", "databases": ["demo"], "rate_per_minute": 30}
    ]}

(``printf %s "$KEY" | sha256sum`` gives a key's hash.) A request names its key in
``Authorization: Bearer KEY`` or ``X-API-Key: KEY``.

    >>> ring = KeyRing.build(env_key="s3cret")
    >>> ring.lookup("s3cret").id, ring.lookup("wrong")
    ('env', None)
    >>> ring.lookup("s3cret").allows("any_db")
    True

Without any key the ring is open: every request acts as ``anonymous`` with admin rights, which
the server allows only on a loopback address (``serve/cli.py`` refuses anything else).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import Field

from core.types import Frozen
from serve.errors import ApiError, ServeConfigError

ALL = "*"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ApiKey(Frozen):
    id: str = Field(min_length=1, max_length=64)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    databases: tuple[str, ...] = (ALL,)
    admin: bool = False
    rate_per_minute: int | None = Field(default=None, ge=1)  # None: serve.limits'
    concurrency: int | None = Field(default=None, ge=1)

    def allows(self, database: str) -> bool:
        return ALL in self.databases or database in self.databases


ANONYMOUS = ApiKey(id="anonymous", sha256="0" * 64, admin=True)


class KeysFile(Frozen):
    keys: tuple[ApiKey, ...]


class KeyRing(Frozen):
    """The configured keys by hash; empty means open (loopback only)."""

    keys: dict[str, ApiKey] = Field(default_factory=dict)

    @classmethod
    def build(cls, *, env_key: str | None = None, file: str | None = None) -> KeyRing:
        keys: list[ApiKey] = []
        if env_key:
            keys.append(ApiKey(id="env", sha256=hash_key(env_key), admin=True))
        if file:
            path = Path(file).expanduser()
            try:
                keys += KeysFile.model_validate(json.loads(path.read_text())).keys
            except (OSError, ValueError) as exc:
                raise ServeConfigError(f"cannot read the keys file {path}: {exc}") from exc
        ids = [k.id for k in keys]
        if len(set(ids)) != len(ids):
            raise ServeConfigError(f"key ids must be unique, got {ids}")
        return cls(keys={k.sha256: k for k in keys})

    @property
    def open(self) -> bool:
        return not self.keys

    def lookup(self, presented: str | None) -> ApiKey | None:
        if self.open:
            return ANONYMOUS
        if not presented:
            return None
        return self.keys.get(hash_key(presented))


def presented_key(authorization: str | None, x_api_key: str | None) -> str | None:
    """The key a request carries (``Authorization: Bearer KEY`` or ``X-API-Key``)."""
    if x_api_key:
        return x_api_key.strip()
    if authorization and authorization[:7].lower() == "bearer ":
        return authorization[7:].strip()
    return None


class KeyLimiter:
    """Per-key token bucket (``rate`` a minute, bursts up to ``rate``) and in-flight cap.

    One per ingress replica: with N replicas a key gets up to N times the configured rate.
    """

    def __init__(
        self, rate_per_minute: int, concurrency: int, clock: Callable[[], float] = time.monotonic
    ):
        self.rate, self.concurrency, self._clock = rate_per_minute, concurrency, clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key id -> (tokens, at)
        self._in_flight: dict[str, int] = {}

    def admit(self, key: ApiKey) -> None:
        """Take one token and one concurrency slot for ``key``, or raise a 429."""
        rate = key.rate_per_minute or self.rate
        cap = key.concurrency or self.concurrency
        now = self._clock()
        tokens, at = self._buckets.get(key.id, (float(rate), now))
        tokens = min(float(rate), tokens + (now - at) * rate / 60)
        if tokens < 1:
            wait = math.ceil((1 - tokens) * 60 / rate)
            raise ApiError(
                429,
                "rate_limited",
                f"more than {rate} requests a minute for this key; retry in {wait} s",
                headers={"Retry-After": str(wait)},
            )
        if self._in_flight.get(key.id, 0) >= cap:
            raise ApiError(
                429, "too_many_in_flight", f"this key already has {cap} requests in flight"
            )
        self._buckets[key.id] = (tokens - 1, now)
        self._in_flight[key.id] = self._in_flight.get(key.id, 0) + 1

    def release(self, key: ApiKey) -> None:
        self._in_flight[key.id] = max(0, self._in_flight.get(key.id, 0) - 1)

    def slot(self, key: ApiKey) -> _Slot:
        """``async with limiter.slot(key):`` admits, then releases on exit."""
        return _Slot(self, key)


class _Slot:
    def __init__(self, limiter: KeyLimiter, key: ApiKey) -> None:
        self.limiter, self.key = limiter, key

    async def __aenter__(self) -> None:
        self.limiter.admit(self.key)

    async def __aexit__(self, *exc: object) -> None:
        self.limiter.release(self.key)
