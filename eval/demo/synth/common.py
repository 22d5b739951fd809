"""Shared pieces of the synthetic-data generator: the calendar, random helpers, and the
in-memory records that the population, medical and pharmacy stages pass along.

Determinism rule for the whole package: every random draw comes from one ``random.Random``
and nothing iterates over a ``set`` (string hashing is randomised per process).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cache

from eval.demo.reference import MAIL_ORDER_PHARMACY, Plan

WINDOW_START = date(2022, 1, 1)  # first month of the claims history
AS_OF = date(2025, 3, 31)  # end of the data extract: nothing is received after it
AGE_REFERENCE = date(2025, 1, 1)


def month_start(d: date) -> date:
    return d.replace(day=1)


@cache
def month_end(d: date) -> date:
    nxt = (d.replace(day=28) + timedelta(days=4)).replace(day=1)
    return nxt - timedelta(days=1)


@cache
def add_months(d: date, n: int) -> date:
    y, m = divmod(d.month - 1 + n, 12)
    return date(d.year + y, m + 1, 1)


@cache
def months_between(first: date, last: date) -> tuple[date, ...]:
    """First days of every month from ``first``'s month through ``last``'s month."""
    out, m = [], month_start(first)
    while m <= last:
        out.append(m)
        m = add_months(m, 1)
    return tuple(out)


def age_on(birth: date, on: date) -> int:
    return on.year - birth.year - ((on.month, on.day) < (birth.month, birth.day))


def zipf_weights(n: int, s: float = 1.0) -> list[float]:
    return [1.0 / (i + 1) ** s for i in range(n)]


def poisson(rng: random.Random, lam: float) -> int:
    # Knuth's method: fine for the small rates used here.
    limit, k, p = math.exp(-lam), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def pick(rng: random.Random, items, weights=None):
    return rng.choices(items, weights=weights)[0]


def random_date(rng: random.Random, first: date, last: date) -> date:
    return first + timedelta(days=rng.randint(0, (last - first).days))


@dataclass
class Provider:
    provider_id: int
    npi: str
    name: str
    entity_type: str
    credential: str | None
    specialty: str
    city: str
    state: str
    zip_code: str
    in_network: bool
    accepting_new_patients: int | None
    network_join_date: date | None
    popularity: float  # Zipf weight within its specialty
    price_factor: float  # negotiated rate relative to the standard rate
    charge_factor: float  # chargemaster markup over the standard rate


class Directory:
    """All providers, indexed by specialty (choosing a provider is the generator's hot path)."""

    def __init__(self, providers: list[Provider]):
        self.providers = providers
        self.by_specialty: dict[str, list[Provider]] = {}
        for p in providers:
            self.by_specialty.setdefault(p.specialty, []).append(p)
        self.mail_order = next(p for p in providers if p.name == MAIL_ORDER_PHARMACY)


@dataclass
class Span:
    """One coverage span of a member."""

    start: date
    end: date | None
    plan: Plan
    reason: str | None = None

    def covers(self, d: date) -> bool:
        return self.start <= d and (self.end is None or d <= self.end)


@dataclass
class Member:
    member_id: str
    first_name: str
    middle_name: str | None
    last_name: str
    gender: str
    birth_date: date
    city: str
    state: str
    zip_code: str
    phone: str | None
    email: str | None
    relationship: str
    subscriber_id: str
    lob: str
    frailty: float
    pcp: Provider | None = None
    spans: list[Span] = field(default_factory=list)
    # diagnosis code -> date the condition starts showing up in claims
    conditions: dict[str, date] = field(default_factory=dict)
    # conditions on a maintenance drug -> drug keys
    treated: dict[str, list[str]] = field(default_factory=dict)
    # specialty -> the provider this member keeps seeing for it
    usual: dict[str, Provider] = field(default_factory=dict)
    home_pharmacy: Provider | None = None
    # provider ids already seen (first visits bill new-patient codes)
    seen_providers: set[int] = field(default_factory=set)
    # acute prescriptions written at encounters: (date, drug key, prescriber or None)
    acute_rx: list[tuple[date, str, Provider | None]] = field(default_factory=list)

    def span_on(self, d: date) -> Span | None:
        for span in self.spans:
            if span.covers(d):
                return span
        return None

    def age_on(self, d: date) -> int:
        return age_on(self.birth_date, d)

    def active_conditions(self, d: date) -> list[str]:
        return [code for code, onset in self.conditions.items() if onset <= d]
