"""A run directory that survives crashes: rows land in Parquet parts as questions finish.

    run_dir/
      .lock                  held (flock) by the process writing the run; names its pid and host
      run.json               identity of the configuration (a resume must match it)
      config.yaml            the resolved config
      parts/part-<seq>-*.parquet   finished questions; <seq> numbers the parts in write order
      damaged/               unreadable parts, set aside (their questions are answered again)
      skipped.jsonl          questions that could not run, with the reason
      predictions.parquet    every row, one per question, in benchmark order (``compact``)

One writer at a time: ``open`` takes an exclusive lock on ``.lock`` and a second process gets
:class:`RunDirLocked` (stores of one directory within a process share the lock). Every file is
written to a temp name, fsynced, renamed, and the directory fsynced, so a part appears whole
or not at all and survives a power cut once written; a sweep killed at any moment leaves only
finished questions behind, and ``finished_ids`` tells a rerun which to skip. A part that cannot
be read anyway (a disk fault, a copy cut short) is moved to ``damaged/`` with a
:class:`DamagedPart` warning, and its questions count as not answered.

**The last row written wins.** Files are read in write order — ``predictions.parquet`` (older
than any part), then parts by sequence number — and a question that appears more than once keeps
its latest row. A retried question (``sweep.retry``) thereby replaces its earlier row, and a
crash between compaction and part removal leaves only copies of rows already compacted.

    >>> import tempfile
    >>> record = QuestionRecord(task_id="spider_dev:0", position=0, benchmark="spider_dev",
    ...                         db_id="concert_singer", question="How many singers do we have?",
    ...                         sql="SELECT count(*) FROM singer")
    >>> with RunStore.open(tempfile.mkdtemp(), identity={"config_hash": "abc"}) as store:
    ...     with store.writer(flush_every=8) as out:
    ...         out.add(record)
    ...     store.compact().height
    1
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import socket
import threading
import time
import uuid
import warnings
import weakref
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any, BinaryIO

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from eval.sweep.errors import RunDirConflict, RunDirLocked
from eval.sweep.records import RECORD_SCHEMA, QuestionRecord, records_to_table
from pipelines.contracts import SkippedTask

PREDICTIONS = "predictions.parquet"
LOCK_FILE = ".lock"
DAMAGED_DIR = "damaged"
_TMP_PREFIX = ".tmp-"
_NUMBERED_PART = re.compile(r"part-(\d+)-[0-9a-f]+\.parquet")


class DamagedPart(UserWarning):
    """A part or ``predictions.parquet`` could not be read and was moved to ``damaged/``."""


# --- durable writes ---------------------------------------------------------------------------


def _fsync_dir(path: Path) -> None:
    """Make a rename or removal in ``path`` durable (the file's own fsync does not cover it)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _atomic_write(path: Path, write: Callable[[BinaryIO], None]) -> None:
    tmp = path.with_name(f"{_TMP_PREFIX}{uuid.uuid4().hex[:8]}-{path.name}")
    try:
        with tmp.open("wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    _atomic_write(path, lambda handle: handle.write(data))


def _atomic_write_table(path: Path, table: pa.Table) -> None:
    _atomic_write(path, lambda handle: pq.write_table(table, handle))


# --- the per-directory lock -------------------------------------------------------------------

# realpath -> (open lock file, stores of this process using it). flock belongs to an open file,
# so stores of one directory in one process share one handle instead of locking each other out.
_held: dict[str, tuple[IO[str], int]] = {}
_held_guard = (
    threading.RLock()
)  # re-entrant: a store collected while a lock is taken releases its share


def _acquire(run_dir: Path) -> str:
    key = str(run_dir.resolve())
    with _held_guard:
        if key in _held:
            handle, users = _held[key]
            _held[key] = (handle, users + 1)
            return key
        handle = (run_dir / LOCK_FILE).open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise RunDirLocked(
                f"{run_dir} is in use by another run ({holder}); wait for it to finish, "
                "or pick another sweep.run_dir"
            ) from None
        except BaseException:
            handle.close()
            raise
        handle.seek(0)
        handle.truncate()
        handle.write(
            f"pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%Y-%m-%d %H:%M:%S')}\n"
        )
        handle.flush()
        _held[key] = (handle, 1)
        return key


def _release(key: str) -> None:
    with _held_guard:
        handle, users = _held[key]
        if users > 1:
            _held[key] = (handle, users - 1)
            return
        del _held[key]
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def _write_order(path: Path) -> tuple[int, int, str]:
    """Parts by sequence number; unnumbered ones (older run directories) first, by name."""
    match = _NUMBERED_PART.fullmatch(path.name)
    return (1, int(match.group(1)), path.name) if match else (0, 0, path.name)


def _latest_rows(
    files: list[Path], on_damaged: Callable[[Path, BaseException], None]
) -> tuple[pl.DataFrame, list[Path]]:
    """Each question's last row written across ``files`` (in write order), in benchmark order,
    and the files read; a damaged file goes to ``on_damaged``."""
    tables, read = [], []
    for path in files:
        try:
            tables.append(pq.read_table(path, schema=RECORD_SCHEMA))
        except (pa.ArrowException, OSError) as exc:
            if isinstance(exc, PermissionError):
                raise
            on_damaged(path, exc)
            continue
        read.append(path)
    if not tables:
        return pl.from_arrow(RECORD_SCHEMA.empty_table()), read  # type: ignore[return-value]
    frame: pl.DataFrame = pl.from_arrow(pa.concat_tables(tables))  # type: ignore[assignment]
    return frame.unique(subset="task_id", keep="last", maintain_order=True).sort("position"), read


def _run_files(run_dir: str | Path) -> list[Path]:
    files = RunStore(Path(run_dir))._files()
    if not files:
        raise FileNotFoundError(f"{run_dir} holds no predictions ({PREDICTIONS} or parts/)")
    return files


def _skip_damaged(path: Path, exc: BaseException) -> None:
    warnings.warn(f"{path} is unreadable ({exc}); its rows are left out", DamagedPart, stacklevel=3)


def read_predictions(run_dir: str | Path) -> pl.DataFrame:
    """A run directory's finished questions, each once (its last row written wins, so a question
    answered again after a retry counts once), in benchmark order.

    Reads without the run's lock and changes nothing, so reports and comparisons can read a
    run while its sweep writes it; a damaged part is skipped with a :class:`DamagedPart` warning
    (the sweep sets it aside when it next opens the directory). Raises ``FileNotFoundError``
    when ``run_dir`` holds no predictions.
    """
    return _latest_rows(_run_files(run_dir), _skip_damaged)[0]


def read_answers(run_dirs: str | Path | Sequence[str | Path]) -> pl.DataFrame:
    """One configuration's answers kept in several run directories, as one frame: their files
    read as ``read_predictions`` reads one directory's, in the order given, so a question
    answered in a later directory takes its answer from there. ``run_dirs``: the directories,
    or one string of them joined by ``+`` (``runs/e/adaptive-a+runs/e/adaptive-b``: the
    benchmark scripts' arguments), so questions answered again after a change that touches only
    them count with the run they belong to."""
    if isinstance(run_dirs, str | Path):
        run_dirs = [d for d in str(run_dirs).split("+") if d]
    return _latest_rows([f for d in run_dirs for f in _run_files(d)], _skip_damaged)[0]


class RunStore:
    """The files of one run directory. Use :meth:`open`; ``close`` (or ``with``) releases the lock."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.parts_dir = run_dir / "parts"
        self._unlock: Callable[[], None] = lambda: None

    @classmethod
    def open(cls, run_dir: str | Path, identity: dict[str, Any], config_yaml: str = "") -> RunStore:
        """Lock, create or reopen ``run_dir``.

        Raises :class:`RunDirLocked` while another process writes it, and :class:`RunDirConflict`
        if it belongs to another configuration.
        """
        store = cls(Path(run_dir))
        store.parts_dir.mkdir(parents=True, exist_ok=True)
        # The lock is released when the store is closed or garbage-collected, at the latest at exit.
        store._unlock = weakref.finalize(store, _release, _acquire(store.run_dir))
        try:
            store._prepare(identity, config_yaml)
        except BaseException:
            store.close()
            raise
        return store

    def _prepare(self, identity: dict[str, Any], config_yaml: str) -> None:
        for stale in self.parts_dir.glob(f"{_TMP_PREFIX}*"):  # a writer killed mid-write
            stale.unlink(missing_ok=True)
        identity_file = self.run_dir / "run.json"
        if identity_file.exists():
            try:
                recorded = json.loads(identity_file.read_text())
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise RunDirConflict(
                    f"{identity_file} is unreadable ({exc}); pick another sweep.run_dir"
                ) from None
            if recorded != identity:
                raise RunDirConflict(
                    f"{self.run_dir} holds results of another configuration "
                    f"(recorded {recorded}, this run {identity}); pick another sweep.run_dir"
                )
        else:
            _atomic_write_bytes(identity_file, json.dumps(identity, indent=2).encode())
        if config_yaml:
            _atomic_write_bytes(self.run_dir / "config.yaml", config_yaml.encode())

    def close(self) -> None:
        self._unlock()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def predictions_path(self) -> Path:
        return self.run_dir / PREDICTIONS

    def parts(self) -> list[Path]:
        """The parts, in write order."""
        return sorted(self.parts_dir.glob("part-*.parquet"), key=_write_order)

    def _files(self) -> list[Path]:
        return ([self.predictions_path] if self.predictions_path.exists() else []) + self.parts()

    def _load(self) -> tuple[pl.DataFrame, list[Path]]:
        """Every question's latest row, in benchmark order, and the files read (damaged ones set aside)."""
        return _latest_rows(self._files(), self._set_aside)

    def _set_aside(self, path: Path, exc: BaseException) -> None:
        aside = self.run_dir / DAMAGED_DIR
        aside.mkdir(exist_ok=True)
        target = aside / f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}-{path.name}"
        os.replace(path, target)
        _fsync_dir(path.parent)
        warnings.warn(
            f"{path} is unreadable ({type(exc).__name__}: {exc}); moved it to {target}: "
            "its questions count as not answered and run again",
            DamagedPart,
            stacklevel=4,
        )

    def read(self) -> pl.DataFrame:
        """Every finished question once (its last row written wins), in benchmark order."""
        return self._load()[0]

    def write_part(self, records: list[QuestionRecord]) -> Path:
        numbered = [_write_order(p)[1] for p in self.parts()]
        sequence = max(numbered, default=0) + 1
        path = self.parts_dir / f"part-{sequence:08d}-{uuid.uuid4().hex[:8]}.parquet"
        _atomic_write_table(path, records_to_table(records))
        return path

    def writer(self, flush_every: int, flush_within_s: float = 30.0) -> PartWriter:
        return PartWriter(self, flush_every, flush_within_s)

    def compact(self) -> pl.DataFrame:
        """Fold the parts into ``predictions.parquet`` (atomically) and remove them, oldest first.

        Removing in write order means a crash midway leaves the newest parts, whose rows are
        the ones ``predictions.parquet`` already holds, so reading again gives the same rows.
        """
        frame, read = self._load()
        parts = [path for path in read if path != self.predictions_path]
        if parts or not self.predictions_path.exists():
            _atomic_write_table(self.predictions_path, frame.to_arrow().cast(RECORD_SCHEMA))
            for part in parts:
                part.unlink(missing_ok=True)
            _fsync_dir(self.parts_dir)
        return frame

    def write_skipped(self, skipped: Iterable[SkippedTask]) -> Path:
        path = self.run_dir / "skipped.jsonl"
        _atomic_write_bytes(path, "".join(s.model_dump_json() + "\n" for s in skipped).encode())
        return path


class PartWriter:
    """Buffers records and writes a part every ``flush_every`` of them, or with the first record
    added ``flush_within_s`` after the last write, and on exit (even Ctrl-C)."""

    def __init__(self, store: RunStore, flush_every: int, flush_within_s: float = 30.0) -> None:
        self._store, self._flush_every, self._flush_within_s = store, flush_every, flush_within_s
        self._buffer: list[QuestionRecord] = []
        self._written_at = time.monotonic()

    def add(self, record: QuestionRecord) -> None:
        self._buffer.append(record)
        if (
            len(self._buffer) >= self._flush_every
            or time.monotonic() - self._written_at >= self._flush_within_s
        ):
            self.flush()

    def flush(self) -> None:
        if self._buffer:
            self._store.write_part(self._buffer)
            self._buffer = []
        self._written_at = time.monotonic()

    def __enter__(self) -> PartWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()
