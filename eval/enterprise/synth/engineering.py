"""Enhancements and issues, with the links among them (an enhancement is parent of the issues
that build it; issues block and duplicate each other).

    enhancements = make_enhancements(rng, world, count=1500)
    issues = make_issues(rng, world, enhancements, count=8000)
"""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta

from eval.enterprise import vocabulary
from eval.enterprise.synth import catalog
from eval.enterprise.synth.common import (
    LAST_MINUTE,
    SNAPSHOT_AT,
    Row,
    add_tag,
    link,
    moment,
    number_by_time,
    owner,
    quarter_of,
    weighted,
)
from eval.enterprise.synth.world import World
from eval.enterprise.vocabulary import labels

# Items created after this are owned by people still here (the others left before it).
OWNERS_STILL_HERE_AFTER = datetime(2024, 9, 1)


def owners_for(
    rng: random.Random, pool: list[Row], created: datetime, secondaries: int
) -> list[Row]:
    """One primary and up to ``secondaries`` secondary owners, distinct people from ``pool``."""
    if created >= OWNERS_STILL_HERE_AFTER:
        pool = [u for u in pool if u["state"] == "active"]
    people = rng.sample(pool, 1 + secondaries)
    return [owner(people[0], "primary")] + [owner(p, "secondary") for p in people[1:]]


def _topic_tags(rng: random.Random, row: Row, topics: tuple[str, ...], most: int) -> None:
    for name in rng.sample(topics, rng.randint(0, most)):
        add_tag(row, name, "topic", weighted(rng, ("manual", "ai", "rule"), (45, 40, 15)))


ENHANCEMENT_STAGES_BY_AGE = {
    # stage weights for: older than a year, half a year to a year, younger
    "old": (12, 8, 10, 5, 50, 15),
    "middle": (25, 18, 20, 8, 20, 9),
    "young": (40, 25, 20, 5, 5, 5),
}
_ENHANCEMENT_STAGES = labels(vocabulary.ENHANCEMENT_STAGES)


def make_enhancements(rng: random.Random, world: World, count: int) -> list[Row]:
    rows = []
    for _ in range(count):
        part = world.work_parts.pick(rng)
        product = world.product_of[part["part_id"]]
        created = moment(rng)
        age = (SNAPSHOT_AT - created).days
        band = "old" if age > 365 else "middle" if age > 180 else "young"
        stage = weighted(rng, _ENHANCEMENT_STAGES, ENHANCEMENT_STAGES_BY_AGE[band])
        released_at = None
        if stage == "released":
            released_at = created + timedelta(days=60 * math.exp(rng.gauss(0.9, 0.5)))
            if released_at >= SNAPSHOT_AT:
                stage, released_at = "beta", None
        if stage == "released":
            target = quarter_of(released_at)
        elif stage in ("prioritized", "in_development", "beta"):
            planned = created + timedelta(days=rng.randint(90, 360))
            # Most plans are moved forward when they slip; some still name a past quarter.
            target = quarter_of(planned if rng.random() < 0.15 else max(planned, SNAPSHOT_AT))
        else:
            target = None
        row = {
            "display_id": "",
            "title": rng.choice(catalog.ENHANCEMENT_TITLES).format(part=part["name"]),
            "applies_to_part_id": part["part_id"],
            "stage": stage,
            "target_release": target,
            "customer_votes": min(500, int(math.exp(rng.gauss(1.8, 1.1)))),
            "created_at": created,
            "released_at": released_at,
            "owned_by": [],
            "tags": [],
            "links": [],
        }
        pms = world.product_managers[product]
        row["owned_by"] = [owner(rng.choice(pms), "primary")]
        if rng.random() < 0.4:
            row["owned_by"].append(
                owner(rng.choice(world.engineering_managers[product]), "secondary")
            )
        _topic_tags(rng, row, world.topics[product], 1)
        if target:
            add_tag(row, f"release-{target}", "release", "rule")
        rows.append(row)
    number_by_time(rows, "ENH", "created_at")
    return rows


ISSUE_TYPES = labels(vocabulary.ISSUE_TYPES)
PRIORITY_WEIGHTS = {
    "bug": (3, 17, 45, 35),
    "task": (0, 15, 50, 35),
    "tech_debt": (0, 8, 42, 50),
    "security": (15, 45, 30, 10),
}
DAYS_TO_CLOSE = {"p0": 3, "p1": 14, "p2": 45, "p3": 90}  # medians
STORY_POINTS = (1, 2, 3, 5, 8, 13)


def make_issues(rng: random.Random, world: World, enhancements: list[Row], count: int) -> list[Row]:
    rows = [_issue(rng, world) for _ in range(count)]
    number_by_time(rows, "ISS", "created_at")
    _link_to_enhancements(rng, world, rows, enhancements)
    _link_blockers_and_duplicates(rng, world, rows)
    return rows


def _issue(rng: random.Random, world: World) -> Row:
    issue_type = weighted(rng, ISSUE_TYPES, (58, 27, 10, 5))
    part = world.work_parts.pick(rng)
    product = world.product_of[part["part_id"]]
    priority = weighted(rng, labels(vocabulary.PRIORITIES), PRIORITY_WEIGHTS[issue_type])
    created = moment(rng)
    days_to_close = DAYS_TO_CLOSE[priority] * math.exp(rng.gauss(0, 0.8))
    closes = created + timedelta(days=days_to_close)
    if closes < SNAPSHOT_AT:
        stage = "completed" if rng.random() < 0.88 else "wont_fix"
        closed_at = closes
    else:
        progress = (SNAPSHOT_AT - created) / (closes - created)
        stage = (
            "triage"
            if progress < 0.15
            else "backlog"
            if progress < 0.35
            else "prioritized"
            if progress < 0.6
            else "in_development"
            if progress < 0.85
            else "in_review"
        )
        closed_at = None
    committed = stage not in ("triage", "backlog") and (closed_at is None or rng.random() < 0.7)
    target_close = (
        (created + timedelta(days=days_to_close * rng.uniform(0.6, 1.3))).date()
        if committed
        else None
    )
    if issue_type == "security":
        title = f"{part['name']}: {rng.choice(catalog.SECURITY_FINDINGS)}"
    elif issue_type == "bug":
        title = f"{part['name']}: {rng.choice(catalog.BUG_SYMPTOMS)}"
    elif issue_type == "tech_debt":
        title = f"Refactor {part['name']} internals"
    else:
        title = f"Build {part['name']} change"
    row = {
        "display_id": "",
        "title": title,
        "applies_to_part_id": part["part_id"],
        "issue_type": issue_type,
        "priority": priority,
        "stage": stage,
        "story_points": rng.choice(STORY_POINTS),
        "created_at": created,
        "target_close_date": target_close,
        "closed_at": closed_at,
        "owned_by": owners_for(
            rng, world.engineers[product], created, weighted(rng, (0, 1, 2), (50, 35, 15))
        ),
        "tags": [],
        "links": [],
    }
    _topic_tags(rng, row, world.topics[product], 2)
    if issue_type == "bug" and rng.random() < 0.15:
        add_tag(row, "regression", "signal", "manual")
    if issue_type == "security":
        add_tag(row, "security", "topic", "rule")
    if stage == "completed" and rng.random() < 0.5:
        add_tag(row, f"release-{quarter_of(closed_at)}", "release", "rule")
    return row


def _link_to_enhancements(
    rng: random.Random, world: World, issues: list[Row], enhancements: list[Row]
) -> None:
    """Most tasks, and a few bugs, belong to a committed enhancement of their product."""
    committed = [e for e in enhancements if e["stage"] not in ("ideation", "deferred")]
    by_product: dict[str, list[Row]] = {}
    for e in committed:
        by_product.setdefault(world.product_of[e["applies_to_part_id"]], []).append(e)
    for issue in issues:
        share = {"task": 0.75, "bug": 0.04}.get(issue["issue_type"], 0.0)
        if rng.random() >= share:
            continue
        product = world.product_of[issue["applies_to_part_id"]]
        older = [e for e in by_product.get(product, []) if e["created_at"] <= issue["created_at"]]
        same_part = [e for e in older if e["applies_to_part_id"] == issue["applies_to_part_id"]]
        pool = same_part if same_part and rng.random() < 0.6 else older
        if pool:
            parent = rng.choice(pool)
            link(parent, "enhancement", issue, "issue", "parent_of", issue["created_at"])


def _link_blockers_and_duplicates(rng: random.Random, world: World, issues: list[Row]) -> None:
    by_product: dict[str, list[Row]] = {}
    for issue in issues:  # oldest first: every candidate below was created earlier
        product = world.product_of[issue["applies_to_part_id"]]
        earlier = by_product.setdefault(product, [])
        created = issue["created_at"]
        if earlier and rng.random() < 0.08:
            finishes = issue["closed_at"] or SNAPSHOT_AT
            # Open when this issue was created, and done before this one is.
            candidates = [
                e
                for e in earlier[-300:]
                if (e["closed_at"] is None or e["closed_at"] > created)
                and (e["closed_at"] or SNAPSHOT_AT) <= finishes
            ]
            if candidates:
                blocker = rng.choice(candidates)
                at = created + timedelta(hours=rng.randint(1, 72))
                link(issue, "issue", blocker, "issue", "is_blocked_by", min(at, LAST_MINUTE))
        if issue["issue_type"] == "bug" and rng.random() < 0.04:
            recent = [
                e
                for e in earlier[-400:]
                if e["issue_type"] == "bug"
                and e["applies_to_part_id"] == issue["applies_to_part_id"]
                and created - e["created_at"] < timedelta(days=90)
            ]
            if recent:
                original = rng.choice(recent)
                closed = created + timedelta(days=rng.uniform(0.1, 5))
                if closed < SNAPSHOT_AT:
                    issue["stage"], issue["closed_at"] = "wont_fix", closed
                    issue["target_close_date"] = None
                    issue["tags"] = [t for t in issue["tags"] if t["type"] != "release"]
                link(
                    issue,
                    "issue",
                    original,
                    "issue",
                    "duplicates",
                    min(created + timedelta(hours=2), LAST_MINUTE),
                )
        earlier.append(issue)
