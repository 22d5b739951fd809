"""The lookups the work-item stages draw from: who works on which product, which parts draw
work, which customers are busy, and which SLA targets apply."""

from __future__ import annotations

import random

from pydantic import ConfigDict

from core.types import Frozen
from eval.enterprise.synth import catalog
from eval.enterprise.synth.common import Picker, Row
from eval.enterprise.synth.organisation import part_weights, product_of, team_members


class World(Frozen):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    product_of: dict[str, str]  # part_id -> product name
    part_names: dict[str, str]  # part_id -> part name
    work_parts: Picker  # parts weighted by how much work they draw
    topics: dict[str, tuple[str, ...]]  # product -> topic tags of its work
    engineers: dict[str, list[Row]]  # product -> software engineers
    engineering_managers: dict[str, list[Row]]
    product_managers: dict[str, list[Row]]
    support: dict[str, list[Row]]  # support team -> support engineers
    customers: Picker  # rev orgs weighted by activity
    account_of: dict[str, Row]  # rev_org_id -> account
    sla: dict[tuple[str, str], tuple[str, int, int]]  # (tier, severity) -> policy, targets


def make_world(
    rng: random.Random, users: list[Row], parts: list[Row], accounts: list[Row], rev_orgs: list[Row]
) -> World:
    products = list(catalog.PRODUCTS)
    accounts_by_id = {a["account_id"]: a for a in accounts}
    return World(
        product_of=product_of(parts),
        part_names={p["part_id"]: p["name"] for p in parts},
        work_parts=Picker(parts, part_weights(rng, parts)),
        topics={p: catalog.PRODUCTS[p][0] + catalog.GENERIC_TOPICS for p in products},
        engineers={
            p: team_members(users, f"{p} Engineering", "software_engineer") for p in products
        },
        engineering_managers={
            p: team_members(users, f"{p} Engineering", "engineering_manager") for p in products
        },
        product_managers={
            p: team_members(users, f"{p} Product", "product_manager") for p in products
        },
        support={
            team: team_members(users, team, "support_engineer")
            for team in ("Support Tier 1", "Support Tier 2", "Support Escalations")
        },
        customers=Picker(rev_orgs, [r["_activity"] for r in rev_orgs]),
        account_of={r["rev_org_id"]: accounts_by_id[r["account_id"]] for r in rev_orgs},
        sla={
            (tier, severity): (name, first_response, resolution)
            for tier, (name, targets) in catalog.SLA_POLICIES.items()
            for severity, (first_response, resolution) in targets.items()
        },
    )
