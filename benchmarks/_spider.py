"""Spider's concert_singer database, the fixed workload of the model benchmarks.

from _spider import concert_singer, reference_schema_of   # scripts run as python benchmarks/<name>.py

db, questions = concert_singer()          # SystemExit when Spider is not beside the repository
schema = await reference_schema_of(db)    # CREATE TABLE statements with example rows
"""

from __future__ import annotations

import json
from pathlib import Path

from core.config import load_config
from pipelines.contracts import DatabaseRef

DB_ID = "concert_singer"


def concert_singer() -> tuple[DatabaseRef, list[str]]:
    """The database and its Spider dev questions."""
    spider = Path(load_config().paths.benchmarks) / "spider"
    db_file = spider / "database" / DB_ID / f"{DB_ID}.sqlite"
    if not db_file.exists():
        raise SystemExit(f"Spider's {DB_ID} not found at {db_file}")
    questions = [
        q["question"] for q in json.loads((spider / "dev.json").read_text()) if q["db_id"] == DB_ID
    ]
    return DatabaseRef(db_id=DB_ID, dialect="sqlite", path=str(db_file)), questions


async def reference_schema_of(db: DatabaseRef) -> str:
    """The schema prompt every generation call starts with, read through the sandbox."""
    from pipelines.agents.runtime import as_executor
    from pipelines.sandbox import Sandbox
    from pipelines.schema.reference import reference_schema

    with Sandbox(timeout_s=30, row_cap=100) as sandbox:
        return await reference_schema(as_executor(sandbox), db)
