"""The bounds every sandboxed query runs under, in one frozen model.

=====================  =====================================================================
``timeout_s``          wall clock for the whole query, guard included; held by the engine's
                       own interrupt, and in ``process`` isolation by killing the worker
                       ``kill_grace_s`` later if the engine does not stop
``row_cap``            rows kept; more are cut and the result is marked ``truncated``
``max_result_bytes``   approximate bytes of the fetched rows in Python; past it, fetching
                       stops with ``ResultTooLarge``
``max_value_bytes``    the longest string or blob SQLite may build (``SQLITE_LIMIT_LENGTH``)
``max_sql_chars``      the longest SQL text the guard parses (its time grows with length)
``max_sql_tokens``     the most words and symbols the guard parses; counted before parsing,
                       as is the guard's expected time, which must fit in what is left of
                       ``timeout_s`` (``guard.parse_budget``)
``max_sql_depth``      the deepest nesting of parentheses the guard parses
``memory_mb``          memory a query may use in its worker process: the process's data
                       limit is its size at start plus this; DuckDB's ``memory_limit`` and
                       SQLite's heap limit are half of it each
``pool_size``          connections open at once to one server database (PostgreSQL) from
                       one process; a query waits for one within its deadline
``allow_write_role``   PostgreSQL: connect with a role that can write (refused by default)
``isolation``          ``process``: queries run in worker processes (every bound holds);
                       ``inline``: in the calling thread (no memory bound, and a single
                       expensive function call can overrun the deadline); a server
                       database always runs in the calling thread, bounded by the server
                       (``statement_timeout``) and the client's cancel at the deadline
=====================  =====================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

MIB = 1 << 20


class SandboxLimits(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # 30, not 30.0: defaults enter the composed config as written, and it is hashed as JSON
    # (eval.run.config_identity).
    timeout_s: float = Field(default=30, gt=0)
    row_cap: int = Field(default=10_000, ge=1)
    max_result_bytes: int = Field(default=64 * MIB, ge=1024)
    max_value_bytes: int = Field(default=16 * MIB, ge=1024)
    max_sql_chars: int = Field(default=100_000, ge=16)
    max_sql_tokens: int = Field(default=10_000, ge=16)
    max_sql_depth: int = Field(default=100, ge=4)
    memory_mb: int = Field(default=4096, ge=128)
    kill_grace_s: float = Field(default=0.5, gt=0)
    isolation: Literal["process", "inline"] = "process"
    pool_size: int = Field(default=4, ge=1)
    allow_write_role: bool = False

    @model_validator(mode="before")
    @classmethod
    def _value_fits_the_result(cls, data: Any) -> Any:
        # One value longer than the whole result budget could never be returned.
        if isinstance(data, Mapping):
            fields = cls.model_fields
            result = data.get("max_result_bytes", fields["max_result_bytes"].default)
            value = data.get("max_value_bytes", fields["max_value_bytes"].default)
            if isinstance(result, int) and isinstance(value, int) and value > result:
                data = {**data, "max_value_bytes": result}
        return data

    @property
    def engine_memory_mb(self) -> int:
        """DuckDB's ``memory_limit`` and SQLite's hard heap limit, each."""
        return max(32, self.memory_mb // 2)


class SandboxSettings(SandboxLimits):
    """The ``pipeline.sandbox`` config section: the limits, and the result rows ``ask`` prints."""

    preview_rows: int = Field(default=10, ge=1)

    @property
    def limits(self) -> SandboxLimits:
        return SandboxLimits(**self.model_dump(exclude={"preview_rows"}))
