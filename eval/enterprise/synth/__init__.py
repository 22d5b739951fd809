"""Synthetic work-item data, fully determined by one seed and a scale.

    rows = generate(seed=11, scale=1.0)     # table name -> list of row dicts (schema columns)
    len(rows["tickets"])                    # 20000

Stages: people and parts -> customers -> enhancements -> issues -> tickets -> conversations.
``scale`` multiplies the customer and work-item counts (people, parts and SLA policies stay);
tests build a small scale, the benchmark scale 1.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from eval.enterprise.synth.common import Row, sort_links
from eval.enterprise.synth.engineering import make_enhancements, make_issues
from eval.enterprise.synth.organisation import (
    make_customers,
    make_parts,
    make_sla_policies,
    make_users,
)
from eval.enterprise.synth.support import make_conversations, make_tickets
from eval.enterprise.synth.world import make_world

# Rows of each scaled table at scale 1.
COUNTS = {
    "accounts": 1200,
    "enhancements": 1500,
    "issues": 8000,
    "tickets": 20000,
    "conversations": 40000,
}
STAGES = ("people and parts", "customers", "enhancements", "issues", "tickets", "conversations")


def generate(
    seed: int, scale: float = 1.0, step: Callable[[str], None] = lambda _: None
) -> dict[str, list[Row]]:
    """Every table's rows; ``step(stage)`` is called as each of :data:`STAGES` finishes."""
    rng = random.Random(seed)
    counts = {table: max(1, round(n * scale)) for table, n in COUNTS.items()}
    users = make_users(rng)
    parts = make_parts(rng, users)
    step(STAGES[0])
    accounts, rev_orgs = make_customers(rng, users, counts["accounts"])
    world = make_world(rng, users, parts, accounts, rev_orgs)
    step(STAGES[1])
    enhancements = make_enhancements(rng, world, counts["enhancements"])
    step(STAGES[2])
    issues = make_issues(rng, world, enhancements, counts["issues"])
    step(STAGES[3])
    tickets = make_tickets(rng, world, issues, enhancements, counts["tickets"])
    step(STAGES[4])
    conversations = make_conversations(rng, world, tickets, issues, counts["conversations"])
    for rows in (enhancements, issues, tickets, conversations):
        sort_links(rows)
    step(STAGES[5])
    return {
        "users": users,
        "parts": parts,
        "accounts": accounts,
        "rev_orgs": rev_orgs,
        "sla_policies": make_sla_policies(),
        "enhancements": enhancements,
        "issues": issues,
        "tickets": tickets,
        "conversations": conversations,
    }
