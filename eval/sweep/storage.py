"""What a sweep's workers must reach on the run's storage (``paths.storage``), as the driver
left it there.

    driver: SharedStorage(storage, traces, required)   the indexes it built or found live, the
                                                       trace and cheatsheet directories it made
    worker: storage.check()                            before its pipeline is built: raises
                                                       StorageUnreachable naming the first path
                                                       it cannot see

A worker never creates a shared directory itself: one it created would lie on its own node's
disk, where the driver never reads. Paths are looked up with ``pyarrow.fs``.
"""

from __future__ import annotations

from pyarrow import fs

from core.types import Frozen
from eval.sweep.errors import StorageUnreachable


class SharedStorage(Frozen):
    """The paths on the run's storage that every worker must see."""

    storage: str  # paths.storage, as the driver resolved it
    traces: str | None = None  # the run's trace directory (None: no traces kept)
    required: tuple[str, ...] = ()  # the traces' and cheatsheets' directories, the live indexes

    def unreachable(self) -> str | None:
        """The first required path this process cannot see; None when it sees them all."""
        for path in self.required:
            filesystem, inner = fs.FileSystem.from_uri(path)
            if filesystem.get_file_info(inner).type == fs.FileType.NotFound:
                return path
        return None

    def check(self) -> None:
        """Raise :class:`StorageUnreachable` when a required path cannot be seen from here."""
        missing = self.unreachable()
        if missing is not None:
            raise StorageUnreachable(missing, self.storage, _node_id())


def _node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id() if ray.is_initialized() else ""
