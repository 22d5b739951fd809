from __future__ import annotations

from pipelines.contracts import DatabaseRef
from pipelines.schema.documentation import yaml_file

DBT = """
version: 2
models:
  - name: members
    description: One row per enrolled member.
    columns:
      - name: state
        description: State of residence
        data_tests:
          - accepted_values:
              values: [OH, PA, WV]
      - name: dob
        description: date of birth
        meta: {values: YYYY-MM-DD}
sources:
  - name: raw
    tables:
      - name: claims
        columns:
          - name: pos
            description: place of service
"""


def _db(tmp_path, text, name="claims.yml"):
    (tmp_path / name).write_text(text)
    return DatabaseRef(db_id="claims", path=str(tmp_path / "claims.duckdb"), dialect="duckdb")


def test_dbt_models_sources_and_accepted_values(tmp_path):
    docs = yaml_file.read(_db(tmp_path, DBT))
    assert docs.sources == ("yaml",)
    assert docs.table("members").description == "One row per enrolled member."
    assert docs.column("members", "state").values == "one of OH, PA, WV"
    assert docs.column("members", "dob").values == "YYYY-MM-DD"
    assert docs.column("claims", "pos").description == "place of service"


def test_plain_mapping_in_schema_yml(tmp_path):
    text = (
        "tables:\n  members:\n    columns:\n      dob: date of birth\n"
        "      st: {description: state, values: two letters}\n"
    )
    docs = yaml_file.read(_db(tmp_path, text, "schema.yml"))
    assert docs.column("members", "dob").description == "date of birth"
    assert docs.column("members", "st").values == "two letters"


def test_broken_or_foreign_yaml_documents_nothing(tmp_path, caplog):
    assert not yaml_file.read(_db(tmp_path, "models: [unclosed"))
    assert "unreadable documentation file" in caplog.text
    assert not yaml_file.read(_db(tmp_path, "- just\n- a list\n"))
    assert not yaml_file.read(DatabaseRef(db_id="x", path=str(tmp_path / "none" / "x.sqlite")))
