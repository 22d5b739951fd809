"""The taxonomy file: what the packaged one holds, what loading refuses, and that a class is
added by editing the file alone."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
import yaml

from pipelines.agentic_mode import Classifier, TaxonomyError, load_taxonomy
from pipelines.agentic_mode.chain import CheckerChain
from pipelines.agentic_mode.taxonomy import TAXONOMY_FILE, Action, Phase
from pipelines.contracts import SchemaView
from pipelines.repair.registry import REPAIRS, repair_class


def write(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def packaged() -> dict:
    return yaml.safe_load(TAXONOMY_FILE.read_text(encoding="utf-8"))


def test_the_packaged_taxonomy_spans_every_phase_and_action():
    taxonomy = load_taxonomy()
    assert len(taxonomy.classes) >= 15
    assert {c.phase for c in taxonomy.classes} == set(get_args(Phase))
    assert {c.action for c in taxonomy.classes} == set(get_args(Action))
    assert taxonomy.fallback == "unclassified"
    # the routing the orchestrator relies on: missing context is fetched, not repaired
    for name in ("table_not_found", "column_not_found", "unresolved_alias"):
        assert taxonomy[name].action == "expand_schema"
    assert taxonomy["unnest_missing"].phase == "nested_type"
    assert taxonomy["engine_failure"].action == "stop"


def test_the_packaged_taxonomy_has_every_class_the_code_emits():
    emitted = {name for repair in REPAIRS for name in repair_class(repair).emits}
    assert emitted <= {c.name for c in load_taxonomy().classes}
    assert emitted >= {
        "table_not_found",
        "column_not_found",
        "unresolved_alias",
        "ambiguous_column",
        "missing_subfield",
        "unnest_missing",
        "enum_value_outside_vocabulary",
        "like_on_enum",
        "function_not_in_dialect",
    }


def test_directives_are_short_instructions():
    for cls in load_taxonomy().classes:
        assert 20 <= len(cls.directive) <= 240, cls.name
        assert "\n" not in cls.directive, cls.name


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["classes"].append(dict(d["classes"][0])), "class names repeated"),
        (lambda d: d["classes"][0].update(phase="planning"), "phase"),
        (lambda d: d["classes"][0].update(action="retry"), "action"),
        (lambda d: d.update(fallback="generic"), "fallback class 'generic'"),
        (lambda d: d["classes"][0].update(messages={"sqlite": ["no such (table"]}), "compile"),
        (lambda d: d["classes"][0].update(messages={"sqlite": ["(?P<table>x)"]}), "groups"),
        (lambda d: d["classes"][0].update(messages={"oracle": ["x"]}), "messages"),
        (lambda d: d["classes"][0].update(directive=""), "directive"),
        (lambda d: d["classes"][0].update(name="Table Not Found"), "name"),
        (lambda d: d["classes"][0].update(colour="red"), "colour"),
    ],
)
def test_loading_refuses_an_inconsistent_file(tmp_path, change, message):
    data = packaged()
    change(data)
    with pytest.raises(TaxonomyError, match=message):
        load_taxonomy(write(tmp_path / "taxonomy.yaml", data))


def test_loading_refuses_a_missing_or_unreadable_file(tmp_path):
    with pytest.raises(TaxonomyError, match="cannot read"):
        load_taxonomy(tmp_path / "absent.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("classes: [\n", encoding="utf-8")
    with pytest.raises(TaxonomyError, match="cannot read"):
        load_taxonomy(broken)


def test_a_new_class_needs_no_code(tmp_path):
    data = packaged()
    data["classes"].insert(
        0,
        {
            "name": "too_many_columns",
            "phase": "syntax_dialect",
            "action": "repair_in_place",
            "description": "A row value compared with the wrong number of columns.",
            "directive": "Compare row values of the same length on both sides.",
            "messages": {"sqlite": ["row value misused"]},
        },
    )
    taxonomy = load_taxonomy(write(tmp_path / "taxonomy.yaml", data))
    found = Classifier(taxonomy).classify_error("row value misused", "sqlite")
    assert (found.error_class, found.action) == ("too_many_columns", "repair_in_place")


def test_a_taxonomy_without_a_class_the_chain_emits_is_refused(tmp_path):
    data = packaged()
    data["classes"] = [c for c in data["classes"] if c["name"] != "like_on_enum"]
    taxonomy = load_taxonomy(write(tmp_path / "taxonomy.yaml", data))
    view = SchemaView(db_id="x", dialect="sqlite", tables=())
    with pytest.raises(TaxonomyError, match="like_on_enum"):
        CheckerChain(view, taxonomy=taxonomy)
    data["classes"] = [c for c in data["classes"] if c["name"] != "empty_result"]
    with pytest.raises(TaxonomyError, match="empty_result"):
        Classifier(load_taxonomy(write(tmp_path / "smaller.yaml", data)))


def test_a_finding_reads_as_one_line_of_feedback():
    finding = load_taxonomy().finding(
        "column_not_found",
        source="unknown_names",
        detail="t.stagee: table tickets has no column stagee",
        identifier="t.stagee",
        suggestion="stage",
    )
    assert finding.feedback() == (
        "[column_not_found] t.stagee: table tickets has no column stagee. Candidates: stage. "
        + load_taxonomy()["column_not_found"].directive
    )
    with pytest.raises(KeyError):
        load_taxonomy().finding("no_such_class", source="x", detail="y")
