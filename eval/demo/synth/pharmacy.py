"""Prescription fills: maintenance drugs refilled with member-specific adherence, plus the
short courses written at acute visits.

    fills = make_fills(rng, members, providers)   # rows of pharmacy_fills, ids by fill date
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from eval.demo import reference as ref
from eval.demo.synth.common import AS_OF, WINDOW_START, Directory, Member, Provider, pick
from eval.demo.synth.population import usual_provider


def _copay(drug: ref.Drug, plan: ref.Plan, total: float, days: int, mail: bool) -> float:
    ninety = days > 34
    if plan.line_of_business == "Medicaid":
        copay = 1.0 if drug.is_generic else 3.0
    elif drug.is_specialty:
        copay = min(0.25 * total, 250.0) if plan.line_of_business == "Commercial" else 0.33 * total
    elif plan.plan_type == "HDHP":
        copay = 0.4 * total
    elif plan.line_of_business == "Medicare Advantage":
        copay = (
            (0.0 if mail else 12.0 if ninety else 5.0)
            if drug.is_generic
            else (141.0 if ninety else 47.0)
        )
    else:
        copay = (25.0 if ninety else 10.0) if drug.is_generic else (110.0 if ninety else 45.0)
    return round(min(copay, total), 2)


class FillWriter:
    """Prices fills and collects them as rows."""

    def __init__(self, rng: random.Random, mail_order: Provider):
        self.rng = rng
        self.mail_order = mail_order
        self.rows: list[tuple] = []

    def fill(
        self,
        member: Member,
        drug: ref.Drug,
        prescriber: Provider | None,
        pharmacy: Provider,
        day: date,
        days: int,
        quantity: float,
        refill: int,
    ) -> None:
        plan = member.span_on(day).plan
        mail = pharmacy is self.mail_order
        ingredient = round(drug.unit_cost * quantity, 2)
        fee = 0.0 if mail else 1.75 if drug.is_generic else 2.5
        total = round(ingredient + fee, 2)
        copay = _copay(drug, plan, total, days, mail)
        status = "Reversed" if self.rng.random() < 0.025 else "Paid"
        self.rows.append(
            (
                member.member_id,
                drug.ndc,
                prescriber.provider_id if prescriber else None,
                pharmacy.provider_id,
                day.isoformat(),
                days,
                quantity,
                refill,
                ingredient,
                fee,
                round(total - copay, 2),
                copay,
                status,
            )
        )


def _next_covered(member: Member, d: date) -> date | None:
    later = [s.start for s in member.spans if s.start > d]
    return min(later) if later else None


def _maintenance(
    rng: random.Random,
    writer: FillWriter,
    member: Member,
    condition: str,
    drug: ref.Drug,
    directory: Directory,
) -> None:
    cond = ref.CONDITION_BY_CODE[condition]
    if (
        cond.specialty
        and cond.specialty not in ("Physical Therapy", "Clinical Psychology")
        and rng.random() < 0.4
    ):
        prescriber = usual_provider(rng, member, cond.specialty, directory)
    else:
        prescriber = member.usual["primary care"]
    if rng.random() < 0.04:
        prescriber = None  # prescriber outside the provider directory
    pen = drug.dosage_form == "Pen injector"
    ninety = (
        not pen
        and drug.is_generic
        and rng.random() < (0.45 if member.lob == "Medicare Advantage" else 0.3)
    )
    days = 28 if pen else 90 if ninety else 30
    quantity = float(drug.units_per_30_days * (3 if ninety else 1))
    pharmacy = writer.mail_order if ninety and rng.random() < 0.6 else member.home_pharmacy
    delay = pick(rng, [1, 3, 7, 15], [0.35, 0.3, 0.2, 0.15])  # this member's habitual lateness
    first_covered = next(
        (max(s.start, WINDOW_START) for s in member.spans if (s.end or AS_OF) >= WINDOW_START), None
    )
    if first_covered is None:
        return
    d = max(member.conditions[condition], first_covered) + timedelta(days=rng.randint(0, 25))
    refill, max_refills = 0, 3 if ninety else 11
    while d <= AS_OF:
        if member.span_on(d) is None:
            resume = _next_covered(member, d)
            if resume is None:
                return
            d, refill = resume + timedelta(days=rng.randint(0, 20)), 0
            continue
        writer.fill(member, drug, prescriber, pharmacy, d, days, quantity, refill)
        refill = 0 if refill >= max_refills else refill + 1
        if rng.random() < 0.012:  # discontinued
            return
        d += timedelta(days=days + max(-4, int(rng.gauss(delay, delay / 2 + 1))))


def make_fills(rng: random.Random, members: list[Member], directory: Directory) -> list[tuple]:
    writer = FillWriter(rng, directory.mail_order)
    for member in members:
        for condition, drug_keys in member.treated.items():
            for key in drug_keys:
                _maintenance(rng, writer, member, condition, ref.DRUG_BY_KEY[key], directory)
        for day, key, prescriber in member.acute_rx:
            day += timedelta(days=pick(rng, [0, 1, 2], [0.8, 0.15, 0.05]))
            if day <= AS_OF and member.span_on(day) is not None:
                drug = ref.DRUG_BY_KEY[key]
                writer.fill(
                    member,
                    drug,
                    prescriber,
                    member.home_pharmacy,
                    day,
                    drug.acute_days,
                    float(drug.units_per_30_days),
                    0,
                )
    order = sorted(range(len(writer.rows)), key=lambda i: (writer.rows[i][4], writer.rows[i][0], i))
    return [(n, *writer.rows[i]) for n, i in enumerate(order, start=1)]
