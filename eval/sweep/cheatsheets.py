"""The agentic cheatsheets of a sweep whose storage is a URI: one keeper for every worker.

A sheet is read, changed and written under a file lock (``pipelines/agentic_mode/cheatsheet.py``),
which object storage does not offer. With a URI ``paths.storage`` the driver starts one Ray actor,
the keeper, holding the sheets in the working copy of its node: it takes the workers' reads and
updates one at a time and publishes a sheet each time it changes, so every worker sees every
update and the next run starts from them.

    driver: with kept_cheatsheets(storage, settings) as sheets  the keeper, started from the
                                                            published sheets; after it, they are
                                                            fetched into the driver's copy
    worker: sheets(db) ──► KeptCheatsheet                   render() and record() as a
                                                            Cheatsheet's, each a call to the keeper

Within a Ray session, on a storage the keeper reaches::

    with kept_cheatsheets(storage, settings) as sheets:
        sheets(db).record(finding, fixed=True)      # from any worker, on any node
        sheets(db).render()  ──►  'Rules learned on this database:\\n- There is no column nme: ...'
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import ray
from omegaconf import DictConfig

from core.config import section
from eval.sweep.storage import SharedStorage
from pipelines.agentic_mode.cheatsheet import Cheatsheet, CheatsheetRule
from pipelines.agentic_mode.taxonomy import Finding
from pipelines.contracts import DatabaseRef
from pipelines.settings import CheatsheetSettings
from pipelines.strategies.agentic_settings import AgenticScaling
from pipelines.strategies.registry import scaling_settings


def learned_root(cfg: DictConfig) -> str | None:
    """The directory of the sheets the configured run reads and learns (None: it keeps none)."""
    scaling = scaling_settings(cfg)
    if not (isinstance(scaling, AgenticScaling) and scaling.cheatsheet):
        return None
    return section(cfg, "pipeline.cheatsheet", CheatsheetSettings).root


@ray.remote(num_cpus=0)  # one call at a time: the updates are serialised here
class CheatsheetKeeper:
    def __init__(self, storage: SharedStorage, settings: CheatsheetSettings) -> None:
        self._storage, self._settings = storage, settings
        storage.fetch(settings.root)  # the rules earlier runs learned

    def render(self, db: DatabaseRef, k: int | None) -> str:
        return Cheatsheet.open(self._settings, db).render(k)

    def record(self, db: DatabaseRef, finding: Finding, fixed: bool) -> CheatsheetRule | None:
        sheet = Cheatsheet.open(self._settings, db)
        rule = sheet.record(finding, fixed=fixed)
        if rule is not None:
            self._storage.publish(sheet.path)
        return rule


class KeptCheatsheet:
    """One database's sheet, read and learned through the keeper."""

    def __init__(self, keeper: Any, db: DatabaseRef) -> None:
        self._keeper, self._db = keeper, db

    def render(self, k: int | None = None) -> str:
        return ray.get(self._keeper.render.remote(self._db, k))

    def record(self, finding: Finding, *, fixed: bool = False) -> CheatsheetRule | None:
        return ray.get(self._keeper.record.remote(self._db, finding, fixed))


class KeptCheatsheets:
    """What a worker's pipeline asks for a database's sheet (picklable: the keeper's handle)."""

    def __init__(self, keeper: Any) -> None:
        self._keeper = keeper

    def __call__(self, db: DatabaseRef) -> KeptCheatsheet:
        return KeptCheatsheet(self._keeper, db)


@contextmanager
def kept_cheatsheets(
    storage: SharedStorage, settings: CheatsheetSettings
) -> Iterator[KeptCheatsheets]:
    """The keeper of the sheets under ``settings.root`` for as long as the sweep runs (Ray must
    be up); after it, the sheets as published are fetched into this node's copy."""
    keeper = CheatsheetKeeper.remote(storage, settings)
    try:
        ray.get(keeper.__ray_ready__.remote())  # a storage it cannot reach stops the run here
        yield KeptCheatsheets(keeper)
    finally:
        ray.kill(keeper)
        storage.fetch(settings.root)
