"""The vendor's people and product tree, its customers, and the SLA policies.

users = make_users(rng)                       # executives, support, engineering, product, sales, CS
parts = make_parts(rng, users)                # PROD-, CAPL-, FEAT- rows, parents first
accounts, rev_orgs = make_customers(rng, users, count=1200)
"""

from __future__ import annotations

import math
import random
from datetime import date, timedelta

from eval.enterprise.synth import catalog
from eval.enterprise.synth.common import SNAPSHOT_AT, Row, add_tag, owner, weighted
from eval.enterprise.vocabulary import ACCOUNT_TIERS, INDUSTRIES, REGIONS, labels

REGION_TEAMS = {
    "north_america": "North America",
    "emea": "EMEA",
    "apac": "APAC",
    "latam": "LATAM",
}
# (team, support engineers in it, title of its lead)
SUPPORT_TEAMS = (
    ("Support Tier 1", 44, "support_lead"),
    ("Support Tier 2", 30, "support_lead"),
    ("Support Escalations", 14, "support_lead"),
)
SALES_PER_REGION = {"north_america": 14, "emea": 10, "apac": 7, "latam": 4}
SUCCESS_PER_REGION = {"north_america": 12, "emea": 9, "apac": 6, "latam": 3}
ENGINEERS_PER_MANAGER = 15
PRODUCT_MANAGERS_PER_PRODUCT = 3


class _People:
    """Hands out unique names and numbered user rows."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        names = [f"{first} {last}" for first in catalog.FIRST_NAMES for last in catalog.LAST_NAMES]
        self.names = rng.sample(names, len(names))
        self.rows: list[Row] = []

    def add(self, title: str, team: str, manager: Row | None) -> Row:
        name = self.names[len(self.rows)]
        row = {
            "user_id": f"DEVU-{len(self.rows) + 1}",
            "display_name": name,
            "email": name.lower().replace(" ", ".") + "@vendor.example",
            "title": title,
            "team": team,
            "manager_id": manager["user_id"] if manager else None,
            # Leaders stay; about one in fourteen of the others has left.
            "state": "deactivated"
            if title not in ("executive",) and self.rng.random() < 0.07
            else "active",
            "joined_date": date(2016, 1, 4) + timedelta(days=self.rng.randrange(3300)),
        }
        self.rows.append(row)
        return row


def make_users(rng: random.Random) -> list[Row]:
    people = _People(rng)
    ceo = people.add("executive", "Leadership", None)
    vps = {
        area: people.add("executive", "Leadership", ceo)
        for area in ("support", "engineering", "product", "sales", "success")
    }
    for team, size, lead_title in SUPPORT_TEAMS:
        lead = people.add(lead_title, team, vps["support"])
        for _ in range(size):
            people.add("support_engineer", team, lead)
    for product in catalog.PRODUCTS:
        team = f"{product} Engineering"
        for _ in range(2):
            manager = people.add("engineering_manager", team, vps["engineering"])
            for _ in range(ENGINEERS_PER_MANAGER):
                people.add("software_engineer", team, manager)
        for _ in range(PRODUCT_MANAGERS_PER_PRODUCT):
            people.add("product_manager", f"{product} Product", vps["product"])
    for region, size in SALES_PER_REGION.items():
        for _ in range(size):
            people.add("account_executive", f"Sales {REGION_TEAMS[region]}", vps["sales"])
    for region, size in SUCCESS_PER_REGION.items():
        for _ in range(size):
            people.add(
                "customer_success_manager",
                f"Customer Success {REGION_TEAMS[region]}",
                vps["success"],
            )
    return people.rows


def team_members(users: list[Row], team: str, title: str, active_only: bool = False) -> list[Row]:
    return [
        u
        for u in users
        if u["team"] == team and u["title"] == title and (u["state"] == "active" or not active_only)
    ]


def make_parts(rng: random.Random, users: list[Row]) -> list[Row]:
    """The product tree, products first, then capabilities, then features."""
    products, capabilities, features = [], [], []
    for product_name, (_, tree) in catalog.PRODUCTS.items():
        pms = team_members(users, f"{product_name} Product", "product_manager")
        ems = team_members(users, f"{product_name} Engineering", "engineering_manager")
        product = _part(products, "PROD", product_name, "product", None, "general_availability")
        product["owned_by"] = [owner(pms[0], "primary")]
        product["created_date"] = date(2016, 3, 1) + timedelta(days=rng.randrange(700))
        for capability_name, feature_names in tree.items():
            capability = _part(
                capabilities, "CAPL", capability_name, "capability", product, "general_availability"
            )
            capability["owned_by"] = [
                owner(rng.choice(pms), "primary"),
                owner(rng.choice(ems), "secondary"),
            ]
            capability["created_date"] = product["created_date"] + timedelta(
                days=rng.randrange(900)
            )
            for feature_name in feature_names:
                lifecycle = weighted(
                    rng, ("general_availability", "beta", "deprecated"), (80, 12, 8)
                )
                feature = _part(features, "FEAT", feature_name, "feature", capability, lifecycle)
                feature["owned_by"] = [
                    owner(rng.choice(ems), "primary"),
                    owner(rng.choice(pms), "secondary"),
                ]
                feature["created_date"] = capability["created_date"] + timedelta(
                    days=rng.randrange(1500 if lifecycle != "beta" else 2400)
                )
    return products + capabilities + features


def _part(
    rows: list[Row], prefix: str, name: str, part_type: str, parent: Row | None, lifecycle: str
) -> Row:
    row = {
        "part_id": f"{prefix}-{len(rows) + 1}",
        "name": name,
        "part_type": part_type,
        "parent_part_id": parent["part_id"] if parent else None,
        "lifecycle": lifecycle,
        "owned_by": [],
        "created_date": None,
    }
    rows.append(row)
    return row


def product_of(parts: list[Row]) -> dict[str, str]:
    """part_id -> the name of the product at the top of its tree."""
    by_id = {p["part_id"]: p for p in parts}
    out = {}
    for part in parts:
        top = part
        while top["parent_part_id"]:
            top = by_id[top["parent_part_id"]]
        out[part["part_id"]] = top["name"]
    return out


def part_weights(rng: random.Random, parts: list[Row]) -> list[float]:
    """How much work each part draws: features most, a few of them far more (log-normal)."""
    base = {"product": 0.0, "capability": 0.25, "feature": 1.0}
    deprecated = {"deprecated": 0.4}
    return [
        base[p["part_type"]] * deprecated.get(p["lifecycle"], 1.0) * math.exp(rng.gauss(0, 0.8))
        for p in parts
    ]


TIER_WEIGHTS = (4, 16, 35, 45)  # strategic, enterprise, growth, starter
ARR_RANGE = {
    "strategic": (600_000, 3_500_000),
    "enterprise": (150_000, 700_000),
    "growth": (30_000, 160_000),
    "starter": (3_000, 30_000),
}
REV_ORGS_PER_ACCOUNT = {
    "strategic": (4, 8),
    "enterprise": (2, 5),
    "growth": (1, 3),
    "starter": (1, 2),
}
# Tickets and conversations an account produces, relative to a starter account.
TIER_ACTIVITY = {"strategic": 12.0, "enterprise": 5.0, "growth": 2.0, "starter": 1.0}


def make_customers(rng: random.Random, users: list[Row], count: int) -> tuple[list[Row], list[Row]]:
    """Accounts and their rev orgs; every rev org row carries an ``_activity`` weight (not a
    column) that the ticket and conversation stages draw customers by."""
    names = [
        f"{p} {s}{f}"
        for f in catalog.COMPANY_FORMS
        for p in catalog.COMPANY_PREFIXES
        for s in catalog.COMPANY_SUFFIXES
    ]
    chosen = rng.sample(names, count)
    sellers = {
        r: team_members(users, f"Sales {team}", "account_executive")
        for r, team in REGION_TEAMS.items()
    }
    success = {
        r: team_members(users, f"Customer Success {team}", "customer_success_manager")
        for r, team in REGION_TEAMS.items()
    }
    accounts: list[Row] = []
    rev_orgs: list[Row] = []
    for i, name in enumerate(chosen, start=1):
        tier = weighted(rng, labels(ACCOUNT_TIERS), TIER_WEIGHTS)
        region = weighted(rng, labels(REGIONS), (45, 30, 17, 8))
        since = date(2017, 1, 2) + timedelta(days=rng.randrange(3040))
        renewal = (
            since.replace(year=2025) if (since.month, since.day) != (2, 29) else date(2025, 3, 1)
        )
        while renewal < SNAPSHOT_AT.date():
            renewal = renewal.replace(year=renewal.year + 1)
        low, high = ARR_RANGE[tier]
        account = {
            "account_id": f"ACC-{i}",
            "display_name": name,
            "tier": tier,
            "industry": rng.choice(labels(INDUSTRIES)),
            "region": region,
            "arr_usd": int(round(rng.uniform(low, high), -2)),
            "customer_since": since,
            "renewal_date": renewal,
            "health": weighted(rng, ("healthy", "watch", "at_risk"), (65, 22, 13)),
            "owned_by": [owner(rng.choice(sellers[region]), "account_executive")],
            "tags": [],
        }
        if tier != "starter":
            account["owned_by"].append(
                owner(rng.choice(success[region]), "customer_success_manager")
            )
        _account_tags(rng, account)
        accounts.append(account)
        low_n, high_n = REV_ORGS_PER_ACCOUNT[tier]
        units = rng.sample(catalog.REV_ORG_UNITS, rng.randint(low_n, high_n))
        activity = TIER_ACTIVITY[tier] * math.exp(rng.gauss(0, 0.6))
        shares = [rng.random() + 0.2 for _ in units]
        for unit, share in zip(units, shares, strict=True):
            rev_orgs.append(
                {
                    "rev_org_id": f"REV-{len(rev_orgs) + 1}",
                    "account_id": account["account_id"],
                    "display_name": f"{name} - {unit}",
                    "created_date": since + timedelta(days=rng.randrange(400)),
                    "_activity": activity * share / sum(shares),
                }
            )
    return accounts, rev_orgs


def _account_tags(rng: random.Random, account: Row) -> None:
    if account["tier"] == "strategic" and rng.random() < 0.7:
        add_tag(account, "executive-sponsor", "segment", "manual")
    if rng.random() < 0.08:
        add_tag(account, "reference-customer", "segment", "manual")
    if rng.random() < 0.10:
        add_tag(account, "beta-program", "segment", "manual")
    if rng.random() < 0.12:
        add_tag(account, "expansion-target", "segment", "rule")
    risk = {"at_risk": 0.6, "watch": 0.15}.get(account["health"], 0.0)
    if rng.random() < risk:
        add_tag(account, "churn-risk", "signal", "ai")


def make_sla_policies() -> list[Row]:
    return [
        {
            "policy_name": name,
            "severity": severity,
            "account_tier": tier,
            "first_response_target_minutes": first_response,
            "resolution_target_minutes": resolution,
        }
        for tier, (name, targets) in catalog.SLA_POLICIES.items()
        for severity, (first_response, resolution) in targets.items()
    ]
