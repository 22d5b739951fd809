"""Typed errors of a sweep.

EvalError
└── SweepError
    ├── RunDirConflict   the run directory holds a different configuration's results
    ├── RunDirLocked     another process is writing the run directory
    ├── UnknownRerun     ``sweep.rerun`` names a question the run does not cover
    ├── SweepInterrupted Ctrl-C: finished questions are saved, rerun to resume
    ├── SweepFailed      Ray gave up (a worker crashed past its retries): rerun to resume
    ├── StorageUnreachable  a worker's node cannot reach what the run keeps on its storage
    └── OutsideStorage   a path that must lie in the storage's working copy does not
"""

from __future__ import annotations

from eval.errors import EvalError


class SweepError(EvalError):
    """Base of every sweep error."""


class RunDirConflict(SweepError):
    """Resuming into a run directory whose recorded configuration differs from this one."""


class RunDirLocked(SweepError):
    """Another process holds the run directory's lock (two runs of one configuration at once)."""


class UnknownRerun(SweepError):
    """``sweep.rerun`` names task ids that are not among the run's questions (a typo, or
    another slice): nothing would be answered again for them."""


class SweepInterrupted(SweepError):
    """The sweep was interrupted; ``run_dir`` holds every finished question."""

    def __init__(self, run_dir: str, done: int, total: int) -> None:
        self.run_dir, self.done, self.total = run_dir, done, total
        super().__init__(
            f"sweep interrupted after {done}/{total} questions; rerun with the same "
            f"configuration (run dir {run_dir}) to resume"
        )


class SweepFailed(SweepError):
    """Ray could not finish the sweep (e.g. a worker died more often than ``max_restarts``)."""

    def __init__(self, run_dir: str, done: int, total: int, cause: BaseException) -> None:
        self.run_dir, self.done, self.total = run_dir, done, total
        super().__init__(
            f"sweep stopped after {done}/{total} questions ({type(cause).__name__}: {cause}); "
            f"finished questions are saved in {run_dir}: rerun the same configuration to resume"
        )


class StorageUnreachable(SweepError):
    """A worker cannot see what the driver left on the run's storage (``paths.storage``): its
    node does not share that storage, so it would answer without the indexes and keep its traces
    and cheatsheet rules on its own disk. ``cause``: why a URI storage could not be read."""

    def __init__(self, path: str, storage: str, node_id: str, cause: str = "") -> None:
        self.path, self.storage, self.node_id = path, storage, node_id
        if "://" in storage:
            fix = (
                f"{cause}; give every node the storage's endpoint and credentials (for s3://: "
                "AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION)"
            )
        else:
            fix = (
                "mount that storage at the same path on every node, or set paths.storage to "
                "storage every node reaches"
            )
        super().__init__(
            f"node {node_id or 'local'} cannot reach {path} on the run's storage "
            f"(paths.storage={storage}): {fix}"
        )


class OutsideStorage(SweepError):
    """With a URI ``paths.storage``, a path the run shares (an index root, a run directory)
    lies outside the node's working copy (``paths.working``), so it has no place there."""
