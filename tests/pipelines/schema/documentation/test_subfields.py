"""A nested column's documentation shared out among its sub-fields: clauses, and the sub-field
each is about."""

from __future__ import annotations

from pipelines.schema.documentation.subfields import clauses, share


def test_clauses_keep_a_vocabulary_and_its_meanings_together():
    text = (
        "SLA clocks. status is one of: 'running' = open; counting; 'paused' = waiting. "
        "policy.name names the policy (e.g. 'Premier'; or 'Basic')."
    )
    assert clauses(text, ["status", "policy.name"]) == [
        "SLA clocks.",
        "status is one of: 'running' = open; counting; 'paused' = waiting.",
        "policy.name names the policy (e.g. 'Premier'; or 'Basic').",
    ]


def test_a_clause_goes_to_its_subject_or_to_what_holds_every_field_it_names():
    doc = (
        "SLA clocks of the ticket. status is one of: 'running' = counting. policy.name names "
        "the row whose targets apply. policy.targets.first_response and "
        "policy.targets.resolution each hold target_minutes and breached."
    )
    paths = [
        "status",
        "policy",
        "policy.name",
        "policy.targets",
        "policy.targets.first_response",
        "policy.targets.first_response.breached",
        "policy.targets.resolution",
        "policy.targets.resolution.breached",
    ]
    shared = share(doc, paths)
    assert shared[""] == "SLA clocks of the ticket."
    assert shared["status"].startswith("status is one of")
    assert shared["policy.name"].startswith("policy.name names")  # not policy, not targets
    assert shared["policy.targets"].startswith("policy.targets.first_response and")
    assert "policy" not in shared


def test_a_clause_naming_a_sub_field_in_the_plural_is_about_it():
    doc = (
        "Typed links, a list. target_type names the table of the target. All link types: "
        "'blocks' = it blocks; 'relates_to' = related. Link categories: 'hard' = a dependency."
    )
    shared = share(doc, ["type", "target_type", "category"])
    assert shared[""] == "Typed links, a list."
    assert shared["type"].startswith("All link types: 'blocks' = it blocks;")
    assert shared["target_type"] == "target_type names the table of the target."
    assert shared["category"] == "Link categories: 'hard' = a dependency."


def test_a_list_naming_no_sub_field_goes_where_the_clause_before_it_went():
    doc = (
        "Owners. role is the kind of ownership. One of: 'primary' = the owner; "
        "'secondary' = a helper. Owners are users. Kinds: 'a' = x."
    )
    shared = share(doc, ["user_id", "role"])
    assert shared["role"] == (
        "role is the kind of ownership. One of: 'primary' = the owner; 'secondary' = a helper."
    )
    assert shared[""] == "Owners. Owners are users. Kinds: 'a' = x."
