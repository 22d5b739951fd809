"""From encounters to claims: receipt lag, denials, pending claims, prices and cost sharing.

    claims, lines, diagnoses = adjudicate(rng, encounters)   # rows in schema column order

Rules, in the order they apply to one encounter:
  * received = last service date + a lognormal lag (1% arrive over a year late); claims
    received after the extract date are not in the data (incurred but not reported);
  * forced denials (duplicates, services after coverage ended), then late filing, out-of-network
    care on HMO/EPO plans, missing prior authorisation for elective facility care, and a small
    share of other denials;
  * adjudicated a few days after receipt, paid on the next Friday; anything not finished by the
    extract date (or held for review) is pending, with no adjudication, payment or amounts;
  * allowed = standard rate x line-of-business factor x provider factor x facility factor
    (x 0.75 out of network); the member owes a copay on the first office-type visit line,
    coinsurance on the rest, nothing for preventive care or on Medicaid.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import date, timedelta

from eval.demo import reference as ref
from eval.demo.synth.common import AS_OF, pick
from eval.demo.synth.medical import PREVENTIVE_DX, Encounter

CATEGORY = {code: category for code, _, category, _ in ref.PROCEDURES}
RATE = {code: rate for code, _, _, rate in ref.PROCEDURES}
PREVENTIVE_CODES = (
    "99391",
    "99392",
    "99393",
    "99394",
    "99395",
    "99396",
    "99397",
    "77067",
    "90686",
    "90471",
)
VISIT_PLACES = ("Office", "Telehealth", "Urgent Care")
# Facility bills bundle room, board and nursing into the coded services.
FACILITY_FACTOR = {
    "Inpatient Hospital": 8.0,
    "Skilled Nursing Facility": 12.0,
    "Emergency Room": 3.0,
    "Ambulatory Surgical Center": 2.0,
}


def _cents(x: float) -> float:
    return round(x + 1e-9, 2)


def claim_type(enc: Encounter) -> str:
    return "Institutional" if enc.provider.specialty in ref.INSTITUTIONAL else "Professional"


def _denial(rng: random.Random, enc: Encounter, plan: ref.Plan, lag: int) -> str | None:
    if enc.denial:
        return enc.denial
    if lag > 365:
        return "Timely filing limit exceeded"
    if (
        not enc.provider.in_network
        and plan.plan_type in ("HMO", "EPO")
        and enc.place != "Emergency Room"
        and rng.random() < 0.85
    ):
        return "Out-of-network provider"
    if enc.elective and rng.random() < 0.1:
        return "Prior authorization required"
    if rng.random() < 0.045:
        return pick(
            rng, [r for r, _ in ref.OTHER_DENIAL_REASONS], [w for _, w in ref.OTHER_DENIAL_REASONS]
        )
    return None


def _next_friday(d: date) -> date:
    return d + timedelta(days=(4 - d.weekday()) % 7 or 7)


def _price(enc: Encounter, plan: ref.Plan) -> list[tuple[float, float, float]]:
    """(billed, allowed, member cost share) of each line."""
    institutional = claim_type(enc) == "Institutional"
    facility = FACILITY_FACTOR.get(enc.place, 1.8) if institutional else 1.0
    preventive = enc.diagnoses[0] in PREVENTIVE_DX
    copay_taken = False
    out = []
    for line in enc.lines:
        base = RATE[line.code] * facility * line.units
        billed = _cents(base * enc.provider.charge_factor)
        allowed = base * ref.LOB_PRICE_FACTOR[plan.line_of_business] * enc.provider.price_factor
        allowed = _cents(allowed * (1.0 if enc.provider.in_network else 0.75))
        if plan.line_of_business == "Medicaid" or preventive or line.code in PREVENTIVE_CODES:
            share = 0.0
        elif (
            CATEGORY[line.code] == "Evaluation and Management"
            and enc.place in VISIT_PLACES
            and plan.plan_type != "HDHP"
        ):
            copay = (
                plan.pcp_copay
                if enc.provider.specialty in ref.PRIMARY_CARE
                else plan.specialist_copay
            )
            share = 0.0 if copay_taken else min(copay, allowed)
            copay_taken = True
        else:
            share = _cents(allowed * plan.coinsurance_rate)
        out.append((billed, allowed, share))
    return out


def _claim(rng: random.Random, enc: Encounter):
    """One claim (header, lines, diagnoses) without its id, or None if not received yet."""
    member = enc.member
    span = member.span_on(enc.start) or member.spans[-1]  # after coverage ended: the last plan
    plan = span.plan
    lag = 2 + int(rng.lognormvariate(2.0, 0.75))
    if rng.random() < 0.01:
        lag = rng.randint(366, 420)
    received = enc.end + timedelta(days=lag)
    if enc.received_after:
        received = max(received, enc.received_after)
    if received > AS_OF:
        return None
    denial = _denial(rng, enc, plan, lag)
    adjudicated = received + timedelta(days=1 + int(rng.expovariate(1 / 8)))
    paid_date = None if denial else _next_friday(adjudicated)
    pending = (
        rng.random() < 0.004 or adjudicated > AS_OF or (paid_date is not None and paid_date > AS_OF)
    )
    status = "Pending" if pending else "Denied" if denial else "Paid"
    priced = _price(enc, plan)
    lines = []
    for n, (line, (billed, allowed, share)) in enumerate(zip(enc.lines, priced), start=1):
        if status == "Pending":
            amounts = (None, None)
        elif status == "Denied":
            amounts = (0.0, 0.0)
        else:
            amounts = (allowed, _cents(allowed - share))
        lines.append(
            [
                n,
                line.code,
                line.modifier,
                line.service_date.isoformat(),
                line.units,
                billed,
                *amounts,
            ]
        )
    share_total = {"Pending": None, "Denied": 0.0}.get(status, _cents(sum(s for _, _, s in priced)))

    def total(i: int) -> float | None:
        return None if lines[0][i] is None else _cents(sum(ln[i] for ln in lines))

    header = [
        member.member_id,
        enc.provider.provider_id,
        plan.plan_id,
        claim_type(enc),
        enc.place,
        enc.start.isoformat(),
        enc.end.isoformat(),
        received.isoformat(),
        None if pending else adjudicated.isoformat(),
        None if pending or denial else paid_date.isoformat(),
        status,
        None if pending else denial,
        total(5),
        total(6),
        total(7),
        share_total,
    ]
    diagnoses = list(dict.fromkeys(enc.diagnoses))  # de-duplicated, order kept
    return received, header, lines, diagnoses


def adjudicate(rng: random.Random, encounters: list[Encounter]):
    """Rows for ``claims``, ``claim_lines`` and ``claim_diagnoses``; ids follow receipt order."""
    made = []
    for enc in encounters:
        claim = _claim(rng, enc)
        if claim is None:
            continue
        made.append(claim)
        received, header, _, _ = claim
        if header[10] == "Paid" and claim_type(enc) == "Professional" and rng.random() < 0.01:
            resubmitted = replace(
                enc,
                denial="Duplicate claim",
                received_after=received + timedelta(days=rng.randint(10, 45)),
            )
            duplicate = _claim(rng, resubmitted)
            if duplicate is not None:
                made.append(duplicate)
    order = sorted(range(len(made)), key=lambda i: (made[i][0], i))
    claims, lines, diagnoses = [], [], []
    for n, i in enumerate(order, start=1):
        _, header, claim_lines, claim_dx = made[i]
        claim_id = f"C{n:07d}"
        claims.append((claim_id, *header))
        lines += [(claim_id, *line) for line in claim_lines]
        diagnoses += [
            (claim_id, seq, code, int(seq == 1)) for seq, code in enumerate(claim_dx, start=1)
        ]
    return claims, lines, diagnoses
