"""Make sure the L0 indexes a run needs exist before it answers, and say what it will run without.

    ensure_indexes(cfg, dbs)        `ask`, `eval` and `demo` call this before building the pipeline
        needs(cfg): which retrievers the configured pipeline queries (none for single pass)
        auto_build ──► build_all(local executor): only missing or stale indexes are built
                   └─ off ──► what is already published is used; the rest is reported missing
        ──► RetrievalStatus: live sources, and why each missing one is off

    >>> from core.config import load_config
    >>> ensure_indexes(load_config(["scaling=single_pass"]), [db]).summary()
    'retrieval: off (the single-pass pipeline retrieves nothing)'

With the default pipeline, once built: ``'retrieval: cells (1/1 databases), examples'``.

Builds run in-process (no Ray): a run touches a handful of databases, and the unchanged check
(fingerprints, no model load) makes every later call cheap. For a whole benchmark from
scratch, ``scale-analytics index`` builds with Ray workers. Never raises for a build problem:
a failure turns that source off, with its reason.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig
from pydantic import Field

from core.config import section
from core.types import Frozen
from pipelines.contracts import DatabaseRef, RetrievalSource
from pipelines.indexing.builder.reports import EXAMPLES_NAME, BuildReport
from pipelines.indexing.builder.runner import WORKER_ENV, build_all
from pipelines.indexing.settings import IndexSettings
from pipelines.indexing.store import VersionedStore
from pipelines.settings import UnderstandingSettings
from pipelines.strategies.registry import scaling_settings

log = logging.getLogger(__name__)

NOT_AUTO_BUILT = "not built (pipeline.index.auto_build=false; run `scale-analytics index`)"


class RetrievalNeeds(Frozen):
    """Which L0 retrievers the configured pipeline queries."""

    cells: bool
    examples: bool
    why_not: str = ""  # when neither: why the pipeline uses no retrieval


class RetrievalStatus(Frozen):
    """The L0 retrieval a run starts with: live sources, and why each missing one is off."""

    needed: tuple[RetrievalSource, ...] = ()
    cells: tuple[str, ...] = ()  # databases whose cell index is live
    cells_off: dict[str, str] = Field(default_factory=dict)  # db_id -> why it has none
    examples: bool = False
    examples_off: str = ""  # why there is no example index (when needed)
    off: str = ""  # why retrieval is off altogether, before any index was looked at
    built: tuple[str, ...] = ()  # indexes this call (re)built: first use or stale

    @property
    def sources(self) -> tuple[RetrievalSource, ...]:
        return (("cells",) if self.cells else ()) + (("examples",) if self.examples else ())

    @property
    def label(self) -> str:
        """``cells+examples``, ``cells``, ``examples`` or ``off`` (the MLflow ``retrieval`` tag)."""
        return "+".join(self.sources) or "off"

    def live_pointers(self, root: str) -> tuple[str, ...]:
        """The manifest of each live index under ``root``: what a reader of them must see."""
        stores = [VersionedStore(root, "databases", db_id) for db_id in self.cells]
        if self.examples:
            stores.append(VersionedStore(root, "examples", EXAMPLES_NAME))
        return tuple(str(store.pointer) for store in stores)

    def reasons(self) -> list[str]:
        """Why each needed part is off (empty when everything needed is live)."""
        if self.off:
            return [self.off]
        out = []
        if "cells" in self.needed and self.cells_off:
            out.append(f"cells: {_by_reason(self.cells_off)}")
        if "examples" in self.needed and not self.examples:
            out.append(f"examples: {self.examples_off or 'no example index'}")
        return out

    def summary(self) -> str:
        """One line for a run's printed summary, e.g. ``retrieval: off (examples: ...)``."""
        if not self.sources:
            return f"retrieval: off ({'; '.join(self.reasons()) or 'no index'})"
        parts = []
        if "cells" in self.needed:
            total = len(self.cells) + len(self.cells_off)
            parts.append(
                f"cells ({len(self.cells)}/{total} databases)" if self.cells else "cells off"
            )
        if "examples" in self.needed:
            parts.append("examples" if self.examples else "examples off")
        line = f"retrieval: {', '.join(parts)}"
        if self.reasons():
            line += f" ({'; '.join(self.reasons())})"
        if self.built:
            line += f"; built now: {', '.join(self.built)}"
        return line


def _by_reason(off: dict[str, str], shown: int = 3) -> str:
    groups: dict[str, list[str]] = {}
    for db_id, reason in off.items():
        groups.setdefault(reason, []).append(db_id)
    parts = []
    for reason, names in groups.items():
        more = f" and {len(names) - shown} more" if len(names) > shown else ""
        parts.append(f"{', '.join(names[:shown])}{more}: {reason}")
    return "; ".join(parts)


def retrieval_needs(cfg: DictConfig) -> RetrievalNeeds:
    """What the configured pipeline retrieves: single pass none; else by the understanding ``k``s."""
    scaling = scaling_settings(cfg)
    if not scaling.retrieves:
        return RetrievalNeeds(
            cells=False,
            examples=False,
            why_not=f"the {scaling.strategy.replace('_', '-')} pipeline retrieves nothing",
        )
    u = section(cfg, "pipeline.understanding", UnderstandingSettings)
    cells = u.cell_k > 0
    examples = u.example_k > 0 and u.examples_in_prompt > 0
    why = "" if cells or examples else "pipeline.understanding.cell_k and example_k are 0"
    return RetrievalNeeds(cells=cells, examples=examples, why_not=why)


def _live(settings: IndexSettings, kind: str, name: str) -> bool:
    return VersionedStore(settings.root, kind, name).current() is not None


def _example_source_missing(settings: IndexSettings) -> str:
    train = settings.examples.train_file
    if not train:
        return "no training questions configured (pipeline.index.examples.train_file)"
    if not Path(train).is_file():
        return f"example source missing: {train} (Spider train; is the shared benchmarks folder there?)"
    return ""


def ensure_indexes(
    cfg: DictConfig, dbs: Sequence[DatabaseRef], *, progress: bool = True
) -> RetrievalStatus:
    """Build the missing or stale L0 indexes of ``dbs`` (and the example index) that the configured
    pipeline queries, unless ``pipeline.index.auto_build`` is false; report what is live."""
    needs = retrieval_needs(cfg)
    if not (needs.cells or needs.examples):
        return RetrievalStatus(off=needs.why_not)
    needed: tuple[RetrievalSource, ...] = (("cells",) if needs.cells else ()) + (
        ("examples",) if needs.examples else ()
    )
    try:
        # An auto build never forces: `pipeline.index.force` is for `scale-analytics index`.
        settings = section(cfg, "pipeline.index", IndexSettings).model_copy(
            update={"executor": "local", "force": False}
        )
    except Exception as exc:  # noqa: BLE001 - a bad index section turns retrieval off, loudly
        return RetrievalStatus(needed=needed, off=f"index settings: {type(exc).__name__}: {exc}")
    unique = list({db.db_id: db for db in dbs}.values()) if needs.cells else []
    if not settings.auto_build:
        return _published(settings, needed, unique)
    examples_missing = _example_source_missing(settings) if needs.examples else ""
    for key, value in WORKER_ENV.items():  # offline model, quiet LanceDB: as the index command
        os.environ.setdefault(key, value)
    try:
        reports = build_all(
            unique, settings, examples=needs.examples and not examples_missing, progress=progress
        )
    except Exception as exc:  # noqa: BLE001 - a build problem must not stop the run, only retrieval
        log.exception("index build failed")
        return RetrievalStatus(
            needed=needed, off=f"index build failed: {type(exc).__name__}: {exc}"
        )
    status = _from_reports(needed, unique, reports, examples_missing)
    if examples_missing and _live(settings, "examples", EXAMPLES_NAME):
        # The source went away after a build: the published index still serves (it cannot be checked).
        status = status.model_copy(update={"examples": True, "examples_off": ""})
    return status


def _published(
    settings: IndexSettings, needed: tuple[RetrievalSource, ...], dbs: list[DatabaseRef]
) -> RetrievalStatus:
    """auto_build off: what is already published (possibly stale) is what the run gets."""
    examples = "examples" in needed and _live(settings, "examples", EXAMPLES_NAME)
    cells = tuple(db.db_id for db in dbs if _live(settings, "databases", db.db_id))
    return RetrievalStatus(
        needed=needed,
        cells=cells,
        cells_off={db.db_id: NOT_AUTO_BUILT for db in dbs if db.db_id not in cells},
        examples=examples,
        examples_off="" if examples or "examples" not in needed else NOT_AUTO_BUILT,
    )


def _from_reports(
    needed: tuple[RetrievalSource, ...],
    dbs: list[DatabaseRef],
    reports: list[BuildReport],
    examples_missing: str,
) -> RetrievalStatus:
    live = {"built", "unchanged"}
    by_db = {r.name: r for r in reports if r.kind == "database"}
    example_report = next((r for r in reports if r.kind == "examples"), None)
    cells = tuple(db.db_id for db in dbs if db.db_id in by_db and by_db[db.db_id].status in live)
    cells_off = {
        db.db_id: (by_db[db.db_id].reason or by_db[db.db_id].status)
        if db.db_id in by_db
        else "not built"
        for db in dbs
        if db.db_id not in cells
    }
    examples = example_report is not None and example_report.status in live
    if examples or "examples" not in needed:
        examples_off = ""
    elif example_report is not None:
        examples_off = example_report.reason or example_report.status
    else:
        examples_off = examples_missing or "not built"
    return RetrievalStatus(
        needed=needed,
        cells=cells,
        cells_off=cells_off,
        examples=examples,
        examples_off=examples_off,
        built=tuple(r.name for r in reports if r.status == "built"),
    )
