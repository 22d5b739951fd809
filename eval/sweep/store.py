"""A run directory that survives crashes: rows land in Parquet parts as questions finish.

    run_dir/
      run.json               identity of the configuration (a resume must match it)
      config.yaml            the resolved config
      parts/part-*.parquet   finished questions; each part is written to a temp name, then renamed
      skipped.jsonl          questions that could not run, with the reason
      predictions.parquet    every row, one per question, in benchmark order (``compact``)

A part appears whole or not at all, so a sweep killed at any moment leaves only finished
questions behind, and ``finished_ids`` tells a rerun which to skip. Reads keep the first row
per task id, so even a crash between compaction and part removal cannot duplicate a question.

    >>> store = RunStore.open(tmp, identity={"config_hash": "abc"})          # doctest: +SKIP
    >>> with store.writer(flush_every=8) as out: out.add(record)             # doctest: +SKIP
    >>> store.compact().height                                               # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from eval.sweep.errors import RunDirConflict
from eval.sweep.records import RECORD_SCHEMA, QuestionRecord, records_to_table
from pipelines.contracts import SkippedTask

PREDICTIONS = "predictions.parquet"
_TMP_PREFIX = ".tmp-"


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{_TMP_PREFIX}{uuid.uuid4().hex[:8]}-{path.name}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _atomic_write_table(path: Path, table: pa.Table) -> None:
    tmp = path.with_name(f"{_TMP_PREFIX}{uuid.uuid4().hex[:8]}-{path.name}")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


class RunStore:
    """The files of one run directory. Use :meth:`open`."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.parts_dir = run_dir / "parts"

    @classmethod
    def open(cls, run_dir: str | Path, identity: dict[str, Any], config_yaml: str = "") -> "RunStore":
        """Create or reopen ``run_dir``; raise :class:`RunDirConflict` if it belongs to another config."""
        store = cls(Path(run_dir))
        store.parts_dir.mkdir(parents=True, exist_ok=True)
        for stale in store.parts_dir.glob(f"{_TMP_PREFIX}*"):  # a writer killed mid-write
            stale.unlink(missing_ok=True)
        identity_file = store.run_dir / "run.json"
        if identity_file.exists():
            recorded = json.loads(identity_file.read_text())
            if recorded != identity:
                raise RunDirConflict(
                    f"{store.run_dir} holds results of another configuration "
                    f"(recorded {recorded}, this run {identity}); pick another sweep.run_dir"
                )
        else:
            _atomic_write_bytes(identity_file, json.dumps(identity, indent=2).encode())
        if config_yaml:
            _atomic_write_bytes(store.run_dir / "config.yaml", config_yaml.encode())
        return store

    @property
    def predictions_path(self) -> Path:
        return self.run_dir / PREDICTIONS

    def _files(self) -> list[Path]:
        parts = sorted(self.parts_dir.glob("part-*.parquet"))
        return ([self.predictions_path] if self.predictions_path.exists() else []) + parts

    def finished_ids(self) -> set[str]:
        ids: set[str] = set()
        for path in self._files():
            ids.update(pq.read_table(path, columns=["task_id"]).column("task_id").to_pylist())
        return ids

    def read(self) -> pl.DataFrame:
        """Every finished question once (the first row written wins), in benchmark order."""
        files = self._files()
        if not files:
            return pl.from_arrow(RECORD_SCHEMA.empty_table())  # type: ignore[return-value]
        table = pa.concat_tables(pq.read_table(path, schema=RECORD_SCHEMA) for path in files)
        frame = pl.from_arrow(table)
        return frame.unique(subset="task_id", keep="first", maintain_order=True).sort("position")  # type: ignore[union-attr]

    def write_part(self, records: list[QuestionRecord]) -> Path:
        path = self.parts_dir / f"part-{uuid.uuid4().hex}.parquet"
        _atomic_write_table(path, records_to_table(records))
        return path

    def writer(self, flush_every: int) -> "PartWriter":
        return PartWriter(self, flush_every)

    def compact(self) -> pl.DataFrame:
        """Fold the parts into ``predictions.parquet`` (atomically) and remove them."""
        parts = sorted(self.parts_dir.glob("part-*.parquet"))
        frame = self.read()
        if parts or not self.predictions_path.exists():
            _atomic_write_table(self.predictions_path, frame.to_arrow().cast(RECORD_SCHEMA))
            for part in parts:
                part.unlink()
        return frame

    def write_skipped(self, skipped: Iterable[SkippedTask]) -> Path:
        path = self.run_dir / "skipped.jsonl"
        _atomic_write_bytes(path, "".join(s.model_dump_json() + "\n" for s in skipped).encode())
        return path

    def read_skipped(self) -> list[SkippedTask]:
        path = self.run_dir / "skipped.jsonl"
        if not path.exists():
            return []
        return [SkippedTask.model_validate_json(line) for line in path.read_text().splitlines() if line]


class PartWriter:
    """Buffers records and writes a part every ``flush_every`` of them, and on exit (even Ctrl-C)."""

    def __init__(self, store: RunStore, flush_every: int) -> None:
        self._store, self._flush_every = store, flush_every
        self._buffer: list[QuestionRecord] = []

    def add(self, record: QuestionRecord) -> None:
        self._buffer.append(record)
        if len(self._buffer) >= self._flush_every:
            self.flush()

    def flush(self) -> None:
        if self._buffer:
            self._store.write_part(self._buffer)
            self._buffer = []

    def __enter__(self) -> "PartWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()
