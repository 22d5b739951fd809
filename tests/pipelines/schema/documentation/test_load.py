"""load_documentation: every source merged, the owner's YAML first, re-read when a file changes."""

from __future__ import annotations

import json
import os

from pipelines.schema import introspect
from pipelines.schema.documentation import load_documentation


def test_sources_merge_in_precedence_and_reach_the_schema_view(shop_db, tmp_path):
    (tmp_path / "tables.json").write_text(
        json.dumps(
            [
                {
                    "db_id": "shop",
                    "table_names_original": ["customer"],
                    "column_names_original": [[-1, "*"], [0, "city"], [0, "note"]],
                    "column_descriptions": ["", "town of the customer", "free text"],
                }
            ]
        )
    )
    yml = tmp_path / "shop.yml"
    yml.write_text("tables:\n  customer:\n    columns:\n      city: {description: home city}\n")
    docs = load_documentation(shop_db)
    assert docs.sources == ("yaml", "tables_json")
    assert docs.column("customer", "city").description == "home city"  # the YAML wins
    assert docs.column("customer", "note").description == "free text"
    view = introspect(shop_db, 0)
    columns = {c.name: c for t in view.tables for c in t.columns if t.name == "customer"}
    assert columns["note"].description == "free text"

    yml.write_text("tables:\n  customer:\n    columns:\n      city: {description: city v2}\n")
    stat = yml.stat()
    os.utime(yml, (stat.st_atime, stat.st_mtime + 5))
    assert load_documentation(shop_db).column("customer", "city").description == "city v2"
