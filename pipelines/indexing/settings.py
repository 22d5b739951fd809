"""Index settings: the ``pipeline.index`` config section.

>>> from core.config import load_config, section
>>> settings = section(load_config(["benchmark=demo"]), "pipeline.index", IndexSettings)
>>> settings.cells.max_values_per_column
1000
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import Field

from core.types import Frozen

# Bump when the column/value rules in cell_values/cells.py change: every cell index is then rebuilt.
CELL_RULES_VERSION = 2


class CellSettings(Frozen):
    """Which cell values are indexed."""

    max_values_per_column: int = Field(default=1000, ge=1)  # most frequent values kept
    max_value_chars: int = Field(default=256, ge=1)
    skip_primary_keys: bool = True
    # ISO dates, 1992, 216-201-3124: questions state them verbatim.
    skip_dates_and_numbers: bool = True


class ExampleSettings(Frozen):
    """Where the example index's (question skeleton -> SQL) pairs come from (Spider-format JSON)."""

    train_file: str | None = None
    tables_file: str | None = None


class IndexSettings(Frozen):
    root: str
    sample_values: int = Field(default=3, ge=0)  # distinct sample values per column in schema views
    cells: CellSettings = CellSettings()
    examples: ExampleSettings = ExampleSettings()
    # stat: file size + mtime (cheap); content: BLAKE2b of the file bytes (robust to copies).
    fingerprint: Literal["stat", "content"] = "stat"
    executor: Literal["ray", "local"] = "ray"  # local: in-process, sequential
    local_threads: int = Field(default=0, ge=0)  # torch threads of a local build; 0: every core
    ray_num_cpus: float = Field(default=2, gt=0)
    workers: int = Field(default=2, ge=1)  # Ray actors, each loads the embedding model once
    worker_cpus: float = Field(default=1.0, gt=0)
    embed_batch_size: int = Field(default=128, ge=1)
    lock_timeout_s: float = Field(default=600, gt=0)
    force: bool = False  # rebuild even when the fingerprint is unchanged
    # ask / eval / demo build the missing or stale indexes of the databases they touch on first
    # use (pipelines/indexing/builder/ensure.py); false: they use what is built and say what is missing.
    auto_build: bool = True

    def content_settings_hash(self) -> str:
        """What, besides the database, decides an index's content: a change rebuilds it."""
        key = f"{self.cells.model_dump_json()}|rules={CELL_RULES_VERSION}|samples={self.sample_values}"
        return hashlib.blake2b(key.encode(), digest_size=8).hexdigest()
