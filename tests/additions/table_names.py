"""A repair added in one file: a table the engine does not know, named as the schema's table
whose name it is plus an ``s`` (``singers`` -> ``singer``); tests/test_additions.py
registers it with one line (``REPAIRS["table_names"]``) and lists it in ``scaling.repairs``."""

from __future__ import annotations

import re
from typing import ClassVar

from pipelines.repair.base import Phase, RepairContext, Rewrite, Rewriter

_NO_TABLE = re.compile(r"no such table: (\w+)", re.I)


class TableNames(Rewriter):
    name: ClassVar[str] = "table_names"
    phase: ClassVar[Phase] = "failed"

    def rewrite(self, sql: str, context: RepairContext) -> Rewrite | None:
        missing = _NO_TABLE.search(context.error)
        if missing is None or context.index.table(missing[1].removesuffix("s")) is None:
            return None
        after = re.sub(rf"\b{missing[1]}\b", missing[1].removesuffix("s"), sql)
        return Rewrite(stage=self.name, detail=missing[0], before=sql, after=after)
