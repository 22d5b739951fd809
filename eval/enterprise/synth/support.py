"""Tickets and conversations: the customer side of the work-item graph.

A ticket may be resolved by a bug (``is_resolved_by``), blocked by an open issue, related to an
issue or an enhancement it asks for, or a duplicate of an earlier ticket of the same customer;
its stage, clocks, SLA breaches, sentiment and survey follow from those links and its severity.
About half the chat, e-mail, Slack and portal tickets were converted from a conversation.

    tickets = make_tickets(rng, world, issues, enhancements, count=20000)
    conversations = make_conversations(rng, world, tickets, issues, count=40000)
"""

from __future__ import annotations

import bisect
import random
from datetime import datetime, timedelta

from eval.enterprise import vocabulary
from eval.enterprise.synth import catalog
from eval.enterprise.synth.common import (
    HISTORY_START,
    LAST_MINUTE,
    SNAPSHOT_AT,
    Row,
    add_tag,
    link,
    linked,
    minutes_between,
    minutes_lognormal,
    moment,
    number_by_time,
    plus_minutes,
    survey,
    weighted,
)
from eval.enterprise.synth.engineering import owners_for
from eval.enterprise.synth.world import World
from eval.enterprise.vocabulary import SENTIMENTS, SEVERITIES, labels

SEVERITY_WEIGHTS = {
    "strategic": (6, 22, 45, 27),
    "enterprise": (4, 18, 46, 32),
    "growth": (2, 12, 46, 40),
    "starter": (1, 8, 41, 50),
}
TICKET_CHANNELS = labels(vocabulary.TICKET_CHANNELS)
# Shared Slack channels are set up for the two largest tiers only.
CHANNEL_WEIGHTS = {True: (30, 22, 20, 12, 10, 6), False: (36, 26, 26, 0, 6, 6)}
# Median first response as a share of the SLA target: larger customers are answered faster.
FIRST_RESPONSE_SHARE = {"strategic": 0.35, "enterprise": 0.5, "growth": 0.7, "starter": 0.8}
RESOLUTION_MEDIAN_HOURS = {"blocker": 6, "high": 20, "medium": 40, "low": 60}
ESCALATION_RATE = {"blocker": 0.45, "high": 0.15, "medium": 0.03, "low": 0.01}
SENTIMENT_PENALTY = {"positive": -0.3, "neutral": 0.0, "negative": 0.7, "frustrated": 1.3}
CONVERTED_CHANNELS = ("chat", "email", "slack", "portal")


def _clamp(at: datetime) -> datetime:
    return min(at, LAST_MINUTE)


class _IssueIndex:
    """Issues by part and by product, oldest first, for finding a ticket's related issue."""

    def __init__(self, world: World, issues: list[Row]) -> None:
        self.bugs_by_part: dict[str, list[Row]] = {}
        self.by_product: dict[str, list[Row]] = {}
        for issue in issues:
            if issue["issue_type"] == "bug" and issue["stage"] != "wont_fix":
                self.bugs_by_part.setdefault(issue["applies_to_part_id"], []).append(issue)
            self.by_product.setdefault(world.product_of[issue["applies_to_part_id"]], []).append(
                issue
            )
        self.bug_starts = {
            p: [i["created_at"] for i in rows] for p, rows in self.bugs_by_part.items()
        }
        self.starts = {p: [i["created_at"] for i in rows] for p, rows in self.by_product.items()}

    def resolving_bug(self, rng: random.Random, part_id: str, created: datetime) -> Row | None:
        """A bug on the part opened up to half a year before the ticket or within a week after
        it, and still open when the ticket came in."""
        rows = self.bugs_by_part.get(part_id, [])
        starts = self.bug_starts.get(part_id, [])
        lo = bisect.bisect_left(starts, created - timedelta(days=180))
        hi = bisect.bisect_right(starts, created + timedelta(days=7))
        window = [b for b in rows[lo:hi] if b["closed_at"] is None or b["closed_at"] >= created]
        return rng.choice(window) if window else None

    def open_issue(self, rng: random.Random, product: str, created: datetime) -> Row | None:
        """An issue of the product that was open when the ticket came in."""
        rows = self.by_product.get(product, [])
        hi = bisect.bisect_right(self.starts.get(product, []), created)
        window = [
            r
            for r in rows[max(0, hi - 200) : hi]
            if r["closed_at"] is None or r["closed_at"] > created
        ]
        return rng.choice(window) if window else None


def make_tickets(
    rng: random.Random, world: World, issues: list[Row], enhancements: list[Row], count: int
) -> list[Row]:
    index = _IssueIndex(world, issues)
    enhancements_by_product: dict[str, list[Row]] = {}
    for e in enhancements:
        enhancements_by_product.setdefault(world.product_of[e["applies_to_part_id"]], []).append(e)
    created_times = sorted(moment(rng) for _ in range(count))
    tickets: list[Row] = []
    by_rev_org: dict[str, list[Row]] = {}
    for number, created in enumerate(created_times, start=1):
        ticket = _ticket(rng, world, index, enhancements_by_product, by_rev_org, number, created)
        tickets.append(ticket)
        by_rev_org.setdefault(ticket["rev_org_id"], []).append(ticket)
    for issue in issues:
        if sum(item["type"] == "resolves" for item in issue["links"]) >= 5:
            add_tag(issue, "customer-impact", "signal", "rule")
    return tickets


def _ticket(
    rng: random.Random,
    world: World,
    index: _IssueIndex,
    enhancements_by_product: dict[str, list[Row]],
    by_rev_org: dict[str, list[Row]],
    number: int,
    created: datetime,
) -> Row:
    rev_org = world.customers.pick(rng)
    account = world.account_of[rev_org["rev_org_id"]]
    tier = account["tier"]
    part = world.work_parts.pick(rng)
    product = world.product_of[part["part_id"]]
    severity = weighted(rng, labels(SEVERITIES), SEVERITY_WEIGHTS[tier])
    ticket: Row = {
        "display_id": f"TKT-{number}",
        "title": rng.choice(catalog.TICKET_TITLES).format(part=part["name"]),
        "rev_org_id": rev_org["rev_org_id"],
        "applies_to_part_id": part["part_id"],
        "severity": severity,
        "channel": weighted(
            rng, TICKET_CHANNELS, CHANNEL_WEIGHTS[tier in ("strategic", "enterprise")]
        ),
        "created_at": created,
        "owned_by": [],
        "tags": [],
        "links": [],
    }

    resolver = index.resolving_bug(rng, part["part_id"], created) if rng.random() < 0.32 else None
    if resolver:
        at = max(created, resolver["created_at"]) + timedelta(hours=rng.uniform(0.5, 24))
        link(ticket, "ticket", resolver, "issue", "is_resolved_by", _clamp(at))
    blocker = None
    if resolver is None and rng.random() < 0.05:
        blocker = index.open_issue(rng, product, created)
        if blocker:
            link(
                ticket,
                "ticket",
                blocker,
                "issue",
                "is_blocked_by",
                _clamp(created + timedelta(hours=2)),
            )
    if rng.random() < 0.08:
        related = index.open_issue(rng, product, created)
        if related and not linked(ticket, related["display_id"]):
            link(
                ticket,
                "ticket",
                related,
                "issue",
                "relates_to",
                _clamp(created + timedelta(hours=rng.uniform(1, 96))),
            )
    if rng.random() < 0.07:
        ideas = [
            e
            for e in enhancements_by_product.get(product, [])
            if e["created_at"] <= created + timedelta(days=30)
        ]
        if ideas:
            wanted = rng.choice(ideas[-150:])
            at = max(created, wanted["created_at"]) + timedelta(hours=rng.uniform(1, 48))
            link(ticket, "ticket", wanted, "enhancement", "relates_to", _clamp(at))
            add_tag(ticket, "feature-request", "signal", "manual")
    original = None
    if rng.random() < 0.03:
        recent = [
            t
            for t in by_rev_org.get(rev_org["rev_org_id"], [])[-20:]
            if created - t["created_at"] < timedelta(days=30)
        ]
        if recent:
            original = rng.choice(recent)
            link(
                ticket,
                "ticket",
                original,
                "ticket",
                "duplicates",
                _clamp(created + timedelta(hours=1)),
            )

    policy, first_target, resolution_target = world.sla[(tier, severity)]
    first_response_at: datetime | None = plus_minutes(
        created, minutes_lognormal(rng, first_target * FIRST_RESPONSE_SHARE[tier], 0.9)
    )
    closes, outcome = _closing(rng, severity, created, resolver, blocker, original)
    if closes is not None and closes >= SNAPSHOT_AT:
        closes = None
    if closes is not None and first_response_at > closes:
        first_response_at = created + (closes - created) / 2
    if first_response_at >= SNAPSHOT_AT:
        first_response_at = None

    if closes is not None:
        stage = outcome
    elif first_response_at is None:
        stage = "queued"
    elif resolver or blocker:
        stage = weighted(rng, ("awaiting_development", "awaiting_product_assist"), (80, 20))
    else:
        stage = weighted(
            rng,
            ("work_in_progress", "awaiting_customer_response", "awaiting_product_assist"),
            (45, 38, 17),
        )
    total = minutes_between(created, closes or SNAPSHOT_AT)
    waited_on_customer = stage == "awaiting_customer_response" or rng.random() < 0.4
    paused = int(total * rng.uniform(0.02, 0.3)) if waited_on_customer else 0
    first_elapsed = minutes_between(created, first_response_at) if first_response_at else None
    first_breached = (first_elapsed if first_elapsed is not None else total) > first_target
    resolution_breached = total - paused > resolution_target

    weights = [22.0, 50.0, 20.0, 8.0]  # positive, neutral, negative, frustrated
    if first_breached or resolution_breached:
        weights = [8.0, 35.0, 35.0, 22.0]
    if account["health"] == "at_risk":
        weights[2] += 10
        weights[3] += 8
    if severity == "blocker":
        weights[3] += 12
    sentiment = weighted(rng, labels(SENTIMENTS), weights)
    escalation = ESCALATION_RATE[severity] * (1.5 if tier == "strategic" else 1.0)
    escalation += 0.15 * resolution_breached + 0.1 * (sentiment == "frustrated")
    escalated = rng.random() < escalation
    team = (
        "Support Escalations"
        if escalated
        else "Support Tier 2"
        if severity in ("blocker", "high")
        else "Support Tier 1"
    )
    reopens = weighted(rng, (0, 1, 2, 3), (88, 9, 2.5, 0.5)) if stage == "resolved" else 0

    ticket.update(
        stage=stage,
        sentiment=sentiment,
        is_escalated=int(escalated),
        reopen_count=reopens,
        first_response_at=first_response_at,
        closed_at=closes,
        owned_by=owners_for(rng, world.support[team], created, 1 if rng.random() < 0.2 else 0),
        sla_tracker={
            "status": "completed"
            if closes is not None
            else "paused"
            if stage == "awaiting_customer_response"
            else "running",
            "policy": {
                "name": policy,
                "targets": {
                    "first_response": {
                        "target_minutes": first_target,
                        "elapsed_minutes": first_elapsed,
                        "breached": first_breached,
                    },
                    "resolution": {
                        "target_minutes": resolution_target,
                        "elapsed_minutes": total - paused,
                        "breached": resolution_breached,
                    },
                },
            },
        },
        surveys_aggregation=None,
    )
    if stage == "resolved" and rng.random() < 0.85:
        sent = 1 + (tier in ("strategic", "enterprise") and rng.random() < 0.3)
        mean = 4.5 - 1.0 * (first_breached or resolution_breached) - SENTIMENT_PENALTY[sentiment]
        ticket["surveys_aggregation"] = survey(rng, sent, 0.4, mean - 0.3 * (reopens > 0))
    _ticket_tags(rng, world, ticket, product, tier, account["health"], resolver)
    return ticket


def _closing(
    rng: random.Random,
    severity: str,
    created: datetime,
    resolver: Row | None,
    blocker: Row | None,
    original: Row | None,
) -> tuple[datetime | None, str]:
    """When the ticket closes (None: still open) and in which stage."""
    if original is not None:
        return created + timedelta(hours=rng.uniform(1, 24)), "canceled"
    waiting_on = resolver or blocker
    if waiting_on is not None:
        if waiting_on["closed_at"] is None:
            return None, ""
        after = max(waiting_on["closed_at"], created)
        if waiting_on["stage"] == "wont_fix":
            outcome = "resolved" if rng.random() < 0.7 else "canceled"
            return after + timedelta(days=rng.uniform(0.5, 4)), outcome
        if rng.random() < 0.04:  # the fix shipped but nobody closed the ticket yet
            return None, ""
        return plus_minutes(after, minutes_lognormal(rng, 24 * 60, 0.8)), "resolved"
    hours = RESOLUTION_MEDIAN_HOURS[severity]
    outcome = "resolved" if rng.random() < 0.95 else "canceled"
    return plus_minutes(created, minutes_lognormal(rng, hours * 60, 0.9)), outcome


def _ticket_tags(
    rng: random.Random,
    world: World,
    ticket: Row,
    product: str,
    tier: str,
    health: str,
    resolver: Row | None,
) -> None:
    for name in rng.sample(world.topics[product], weighted(rng, (0, 1, 2), (20, 60, 20))):
        add_tag(ticket, name, "topic", weighted(rng, ("ai", "manual", "rule"), (50, 30, 20)))
    if tier == "strategic":
        add_tag(ticket, "vip", "signal", "rule")
    if ticket["is_escalated"]:
        add_tag(ticket, "escalation", "signal", "rule")
    if resolver:
        add_tag(ticket, "bug", "signal", "ai")
    if ticket["sentiment"] == "frustrated" and health == "at_risk" and rng.random() < 0.6:
        add_tag(ticket, "churn-risk", "signal", "ai")
    if ticket["severity"] == "low" and rng.random() < 0.3:
        add_tag(ticket, "how-to", "signal", "ai")


CONVERSATION_CHANNELS = labels(vocabulary.CONVERSATION_CHANNELS)
BOT_RATE = {"chat": 0.45, "whatsapp": 0.4, "portal": 0.3, "email": 0.1, "slack": 0.05}
FIRST_RESPONSE_MEDIAN = {"chat": 12, "whatsapp": 20, "portal": 60, "slack": 30, "email": 180}
MINUTES_PER_MESSAGE = {"chat": 4, "whatsapp": 30, "portal": 120, "slack": 25, "email": 240}


def make_conversations(
    rng: random.Random, world: World, tickets: list[Row], issues: list[Row], count: int
) -> list[Row]:
    rows: list[Row] = []
    opened_as_ticket: list[tuple[Row, Row]] = []
    for ticket in tickets:
        if len(rows) < count and ticket["channel"] in CONVERTED_CHANNELS and rng.random() < 0.5:
            conversation = _converted(rng, world, ticket)
            rows.append(conversation)
            opened_as_ticket.append((conversation, ticket))
    rows += [_conversation(rng, world) for _ in range(count - len(rows))]
    number_by_time(rows, "CONV", "started_at")
    issues_by_product: dict[str, list[Row]] = {}
    for issue in issues:
        issues_by_product.setdefault(world.product_of[issue["applies_to_part_id"]], []).append(
            issue
        )
    for conversation, ticket in opened_as_ticket:
        link(conversation, "conversation", ticket, "ticket", "converted_to", ticket["created_at"])
    for conversation in rows:
        if rng.random() < 0.03:
            product = world.product_of[conversation["_part_id"]]
            related = [
                i
                for i in issues_by_product.get(product, [])
                if i["created_at"] <= conversation["started_at"]
            ]
            if related:
                at = _clamp(conversation["started_at"] + timedelta(hours=rng.uniform(1, 24)))
                link(conversation, "conversation", rng.choice(related), "issue", "relates_to", at)
    return rows


def _converted(rng: random.Random, world: World, ticket: Row) -> Row:
    started = max(HISTORY_START, ticket["created_at"] - timedelta(minutes=rng.randint(5, 180)))
    first_response = min(rng.randint(1, 30), max(0, minutes_between(started, ticket["created_at"])))
    return {
        "display_id": "",
        "title": ticket["title"],
        "rev_org_id": ticket["rev_org_id"],
        "channel": ticket["channel"],
        "stage": "resolved",
        "sentiment": ticket["sentiment"],
        "message_count": rng.randint(3, 15),
        "first_response_minutes": first_response,
        "bot_resolved": 0,
        "started_at": started,
        "last_message_at": ticket["created_at"],
        "owned_by": owners_for(rng, world.support["Support Tier 1"], started, 0),
        "tags": [dict(tag) for tag in ticket["tags"] if tag["type"] == "topic"],
        "links": [],
        "surveys_aggregation": None,
        "_part_id": ticket["applies_to_part_id"],  # not a column: what a related issue is about
    }


def _conversation(rng: random.Random, world: World) -> Row:
    started = moment(rng)
    rev_org = world.customers.pick(rng)
    tier = world.account_of[rev_org["rev_org_id"]]["tier"]
    part = world.work_parts.pick(rng)
    product = world.product_of[part["part_id"]]
    channel = weighted(
        rng,
        CONVERSATION_CHANNELS,
        (40, 25, 10 if tier in ("strategic", "enterprise") else 0, 15, 10),
    )
    bot = rng.random() < BOT_RATE[channel]
    messages = rng.randint(2, 6) if bot else max(2, minutes_lognormal(rng, 6, 0.6))
    first_response: int | None = (
        rng.randint(0, 1) if bot else minutes_lognormal(rng, FIRST_RESPONSE_MEDIAN[channel], 0.9)
    )
    last = _clamp(
        plus_minutes(started, messages * minutes_lognormal(rng, MINUTES_PER_MESSAGE[channel], 0.7))
    )
    if plus_minutes(started, first_response) >= SNAPSHOT_AT:
        first_response, messages, last = None, 1, started
        stage = "needs_response"
    elif SNAPSHOT_AT - last < timedelta(days=2):
        stage = weighted(rng, ("needs_response", "waiting_on_customer", "resolved"), (45, 40, 15))
    else:
        stage = weighted(rng, ("resolved", "archived", "waiting_on_customer"), (82, 15, 3))
    sentiment = weighted(rng, labels(SENTIMENTS), (25, 50, 18, 7))
    row: Row = {
        "display_id": "",
        "title": rng.choice(catalog.CONVERSATION_TITLES).format(part=part["name"]),
        "rev_org_id": rev_org["rev_org_id"],
        "channel": channel,
        "stage": stage,
        "sentiment": sentiment,
        "message_count": messages,
        "first_response_minutes": first_response,
        "bot_resolved": int(bot and stage == "resolved"),
        "started_at": started,
        "last_message_at": last,
        "owned_by": []
        if bot
        else owners_for(rng, world.support["Support Tier 1"], started, int(rng.random() < 0.1)),
        "tags": [],
        "links": [],
        "surveys_aggregation": None,
        "_part_id": part["part_id"],
    }
    if rng.random() < 0.6:
        add_tag(row, rng.choice(world.topics[product]), "topic", "ai")
    if rng.random() < 0.25:
        add_tag(row, "how-to", "signal", "ai")
    if stage == "archived" and rng.random() < 0.4:
        add_tag(row, "spam", "signal", "rule")
    if stage == "resolved" and rng.random() < 0.6:
        mean = 4.0 - 0.4 * bot - SENTIMENT_PENALTY[sentiment]
        row["surveys_aggregation"] = survey(rng, 1, 0.3, mean)
    return row
