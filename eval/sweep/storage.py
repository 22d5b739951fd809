"""The run's storage (``paths.storage``) as a sweep's nodes share it.

A directory every node mounts at the same path is used in place. A URI (``s3://bucket/prefix``,
or any filesystem ``pyarrow.fs`` resolves) holds published, immutable objects, and each node
works on a copy on its own disk (``paths.working``) laid out as the URI's keys are: object stores
have no rename and no file lock, which the index store, the run directory and the trace files
rely on. Every object is written whole, so a reader sees an old or a new one, never half of one.

    driver: SharedStorage(storage, working, traces, indexes, directories)
            adopt_indexes(pointers)  before the indexes are ensured: the published ones this node
                                     has no version of, fetched (a new driver rebuilds nothing)
            publish_indexes()        each live index: its version's files, then its manifest
                                     (CURRENT.json) last, so a manifest names only what is there
            fetch(run_dir)           a run directory this driver lacks, to resume it
            fetch(trace_dir)         the traces the workers published, before they are read
            publish(run_dir)         the run directory as it is now, after the sweep
    worker: check()                  before its pipeline is built: a directory storage must
                                     show every path; from a URI each live index this node lacks
                                     (or holds another version of) is fetched into its working
                                     copy. Raises StorageUnreachable naming the first path missed
            trace_sinks(directory)   each question's trace written here and published at once

An agentic run's cheatsheets are kept by one actor that publishes them (eval/sweep/cheatsheets.py).

The driver is the only builder of indexes and the only writer of the run directory; a worker
publishes only its own traces, each question's under a name of its own. Any URI
``pyarrow.fs.FileSystem.from_uri`` resolves works alike (``file://`` here, ``s3://`` on a moto
server in ``tests/eval/sweep/test_storage.py``):

    >>> import tempfile
    >>> from pathlib import Path
    >>> root, driver, worker = (Path(tempfile.mkdtemp()) for _ in range(3))
    >>> run = driver / "runs" / "demo" / "run-1"
    >>> (run / "traces").mkdir(parents=True)
    >>> _ = (run / "run.json").write_text("{}")
    >>> storage = SharedStorage(storage=root.as_uri(), working=str(driver))
    >>> storage.publish(run)                                          # the driver, after a run
    >>> sorted(p.name for p in (root / "runs" / "demo" / "run-1").iterdir())
    ['run.json']
    >>> here = storage.model_copy(update={"working": str(worker)})    # another node's copy
    >>> here.fetch(worker / "runs" / "demo" / "run-1")
    >>> (worker / "runs" / "demo" / "run-1" / "run.json").read_text()
    '{}'
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pyarrow import fs

from core.types import Frozen
from eval.sweep.errors import OutsideStorage, StorageUnreachable
from pipelines.indexing.store import Manifest, VersionedStore
from pipelines.trace import JsonlTraceSink, ReasoningTrace, TraceSink

_INDEX_LOCK_S = 600.0  # a worker waits this long for another worker of its node to fetch an index
_MTIME_STEP_S = 1.0  # S3 keeps whole seconds: a copy made within one may be older than it looks


class SharedStorage(Frozen):
    """What a run keeps on its storage, and what every worker must reach there."""

    storage: str  # paths.storage, as the driver resolved it: a directory or a URI
    working: str | None = None  # paths.working: this node's copy of a URI storage
    traces: str | None = None  # the run's trace directory (None: no traces kept)
    indexes: tuple[str, ...] = ()  # the manifest (CURRENT.json) of each index live for the run
    directories: tuple[str, ...] = ()  # the traces' and cheatsheets' directories

    @property
    def remote(self) -> bool:
        """The storage is a URI: nodes work on copies and publish to it."""
        return "://" in self.storage

    # --- a worker --------------------------------------------------------------------------

    def check(self) -> None:
        """Make sure this node sees what the run needs; raise :class:`StorageUnreachable`
        naming the first path it cannot see (a URI storage: cannot read)."""
        if not self.remote:
            for path in (*self.indexes, *self.directories):
                filesystem, inner = fs.FileSystem.from_uri(path)
                if filesystem.get_file_info(inner).type == fs.FileType.NotFound:
                    raise StorageUnreachable(path, self.storage, _node_id())
            return
        for directory in self.directories:  # this node's own: its traces go there first
            Path(directory).mkdir(parents=True, exist_ok=True)
        for pointer in self.indexes:
            self._fetch_index(Path(pointer))

    def trace_sinks(self, directory: str) -> tuple[TraceSink, ...]:
        """Where a worker's pipeline writes its traces: ``directory``, and with a URI storage
        each question's trace published at once, as objects of its own."""
        if not self.remote:
            return (JsonlTraceSink(directory),)
        return (PublishedTraces(self, directory),)

    def _fetch_index(self, pointer: Path, published: bytes | None = None) -> None:
        """The index whose manifest is ``pointer`` in this node's copy, as published (its
        manifest's bytes, when read already): its version fetched beside the local store's,
        then made live as a build would be."""
        published = published if published is not None else self._read(pointer)
        index = pointer.parent
        store = VersionedStore(index.parent.parent, index.parent.name, index.name)
        with store.lock(_INDEX_LOCK_S):  # the workers of one node fetch it once
            if pointer.is_file() and pointer.read_bytes() == published and store.current():
                return
            manifest = Manifest.model_validate_json(published)
            version = store.base / manifest.version
            if not version.is_dir():
                staged = store.base / f".fetch-{uuid.uuid4().hex[:8]}"
                try:
                    with self._reaching(version):
                        self._download(version, staged)
                    os.rename(staged, version)
                finally:
                    shutil.rmtree(staged, ignore_errors=True)
            store.publish(version, manifest)

    def _read(self, local: Path) -> bytes:
        """``local``'s published bytes; StorageUnreachable naming it when they cannot be read."""
        data = self._read_published(local)
        if data is None:
            raise StorageUnreachable(
                self.shown(local), self.storage, _node_id(), "not published there"
            )
        return data

    def _read_published(self, local: Path) -> bytes | None:
        """``local``'s published bytes; None when the storage has none."""
        with self._reaching(local):
            filesystem, key = self._remote(local)
            return _read_or_none(filesystem, key)

    @contextmanager
    def _reaching(self, local: Path) -> Iterator[None]:
        """What fails on the way to the storage (no route, refused credentials, no such bucket)
        raised as StorageUnreachable, naming ``local``'s place there."""
        try:
            yield
        except OSError as exc:
            raise StorageUnreachable(self.shown(local), self.storage, _node_id(), str(exc)) from exc

    # --- the driver ------------------------------------------------------------------------

    def adopt_indexes(self, pointers: Iterable[str]) -> None:
        """Fetch the published indexes among ``pointers`` (manifests in this node's copy) that
        this node has no version of, before it builds what is missing or stale: a driver on
        another machine than the last one rebuilds only what changed."""
        if not self.remote:
            return
        for name in pointers:
            pointer = Path(name)
            if not pointer.exists() and (published := self._read_published(pointer)):
                self._fetch_index(pointer, published)

    def publish_indexes(self) -> None:
        """Publish each live index whose manifest the storage does not hold yet: its version's
        files first, the manifest last (one write), then versions older than the one replaced
        are removed, as the local store does."""
        if not self.remote:
            return
        for name in self.indexes:
            with self._reaching(Path(name)):
                self._publish_index(Path(name))

    def _publish_index(self, pointer: Path) -> None:
        filesystem, key = self._remote(pointer)
        manifest_bytes = pointer.read_bytes()
        previous = _read_or_none(filesystem, key)
        if previous == manifest_bytes:
            return
        manifest = Manifest.model_validate_json(manifest_bytes)
        self._publish(pointer.parent / manifest.version)
        _write(filesystem, key, manifest_bytes)
        keep = {manifest.version}
        if previous is not None:
            keep.add(Manifest.model_validate_json(previous).version)
        for info in filesystem.get_file_info(fs.FileSelector(key.rsplit("/", 1)[0])):
            is_version = info.type == fs.FileType.Directory and info.base_name.startswith("v-")
            if is_version and info.base_name not in keep:
                filesystem.delete_dir(info.path)

    def publish(self, local: str | Path) -> None:
        """Make the storage's copy of ``local`` (a file, or a directory's files but those whose
        name starts with a dot: locks, temp files) what it is here, removing files it no longer
        has. Nothing to do for a directory storage."""
        if self.remote:
            with self._reaching(Path(local)):
                self._publish(Path(local))

    def fetch(self, local: str | Path) -> None:
        """Bring what the storage holds under ``local``'s name that this node lacks (or holds at
        another size) into ``local``; each file arrives whole. Nothing to do for a directory
        storage, or when the storage holds nothing there."""
        if self.remote:
            with self._reaching(Path(local)):
                self._download(Path(local), Path(local))

    def _publish(self, local: Path) -> None:
        filesystem, key = self._remote(local)
        if local.is_file():
            _put(local, filesystem, key)
            return
        files = {path.relative_to(local).as_posix(): path for path in _files(local)}
        there = {
            info.path[len(key) + 1 :]: info
            for info in _listing(filesystem, key)
            if info.type == fs.FileType.File
        }
        for relative, path in files.items():
            published = there.get(relative)
            stat = path.stat()
            if published is None or published.size != stat.st_size or _older(published, stat):
                _put(path, filesystem, f"{key}/{relative}")
        for relative, info in there.items():
            if relative not in files:
                filesystem.delete_file(info.path)

    def _download(self, local: Path, into: Path) -> None:
        filesystem, key = self._remote(local)
        info = filesystem.get_file_info(key)
        if info.type == fs.FileType.File:
            entries = [(info, into)]
        else:
            entries = [(i, into / i.path[len(key) + 1 :]) for i in _listing(filesystem, key)]
        for item, target in entries:
            if item.type != fs.FileType.File:
                continue
            if target.is_file() and _holds(target, item):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            staged = target.with_name(f".fetch-{uuid.uuid4().hex[:8]}-{target.name}")
            fs.copy_files(item.path, str(staged), source_filesystem=filesystem)
            os.replace(staged, target)

    # --- paths -----------------------------------------------------------------------------

    def holds(self, local: str | Path) -> bool:
        """``local`` lies in the working copy of a URI storage (so it can be published)."""
        return self.working is not None and Path(local).is_relative_to(self.working)

    def _remote(self, local: Path) -> tuple[fs.FileSystem, str]:
        """The filesystem of the storage and the key of ``local`` (a path in the working copy)."""
        filesystem, root = _filesystem(self.storage)
        return filesystem, f"{root}/{self._relative(local)}"

    def _relative(self, local: Path) -> str:
        assert self.working is not None, "a URI storage needs its working copy (paths.working)"
        try:
            return Path(local).relative_to(self.working).as_posix()
        except ValueError:
            raise OutsideStorage(
                f"{local} is not in this node's copy of paths.storage={self.storage} "
                f"(paths.working={self.working}): keep paths.indexes and paths.runs under "
                "paths.working"
            ) from None

    def shown(self, local: str | Path) -> str:
        """``local``'s place on the storage, as a person would name it (no query, no secret)."""
        if not self.remote:
            return str(local)
        scheme, rest = self.storage.split("://", 1)
        location = rest.split("?", 1)[0].rsplit("@", 1)[-1].rstrip("/")
        return f"{scheme}://{location}/{self._relative(Path(local))}"


class PublishedTraces:
    """A worker's trace sink on a URI storage: each question's trace in a directory of its own
    (``<directory>/<task id>/traces.jsonl`` and ``events.jsonl``), published as soon as it is
    written, so the driver finds every trace at the same place under the run's traces."""

    def __init__(self, storage: SharedStorage, directory: str) -> None:
        self._storage, self._directory = storage, Path(directory)

    def _folder(self, task_id: str) -> Path:
        return self._directory / re.sub(r"[^A-Za-z0-9_.-]", "_", task_id)

    def location(self, task_id: str) -> str:
        return f"{self._folder(task_id) / 'traces.jsonl'}#{task_id}"

    def write(self, trace: ReasoningTrace) -> None:
        folder = self._folder(trace.task_id)
        JsonlTraceSink(folder).write(trace)
        self._storage.publish(folder)  # its failure is the sink's: warned of, the answer kept

    def close(self) -> None:
        pass


@functools.cache
def _filesystem(storage: str) -> tuple[fs.FileSystem, str]:
    """The storage's filesystem (once per process: opening one may ask the server its region)."""
    filesystem, root = fs.FileSystem.from_uri(storage)
    return filesystem, root.rstrip("/")


def _listing(filesystem: fs.FileSystem, key: str) -> list[fs.FileInfo]:
    return filesystem.get_file_info(fs.FileSelector(key, allow_not_found=True, recursive=True))


def _files(directory: Path) -> Iterator[Path]:
    for path in sorted(directory.rglob("*")):
        if path.is_file() and not any(
            part.startswith(".") for part in path.relative_to(directory).parts
        ):
            yield path


def _put(local: Path, filesystem: fs.FileSystem, key: str) -> None:
    try:
        fs.copy_files(str(local), key, destination_filesystem=filesystem)
    except FileNotFoundError:  # a filesystem with real directories (file://): make its parents
        filesystem.create_dir(key.rsplit("/", 1)[0], recursive=True)
        fs.copy_files(str(local), key, destination_filesystem=filesystem)


def _holds(target: Path, item: fs.FileInfo) -> bool:
    """``target`` has what ``item`` has: the same size, and written no earlier (a cheatsheet is
    rewritten at its size, a trace file grows)."""
    stat = target.stat()
    newer = item.mtime is not None and item.mtime.timestamp() + _MTIME_STEP_S > stat.st_mtime
    return stat.st_size == item.size and not newer


def _older(item: fs.FileInfo, stat: os.stat_result) -> bool:
    """The published ``item`` may predate the local file whose ``stat`` this is (then it is
    written again)."""
    return item.mtime is None or item.mtime.timestamp() < stat.st_mtime


def _read_or_none(filesystem: fs.FileSystem, key: str) -> bytes | None:
    try:
        with filesystem.open_input_stream(key) as stream:
            return stream.read()
    except FileNotFoundError:
        return None


def _write(filesystem: fs.FileSystem, key: str, data: bytes) -> None:
    with filesystem.open_output_stream(key) as stream:
        stream.write(data)


def _node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id() if ray.is_initialized() else ""
