"""Who is in the data: providers, households of members, their coverage spans and conditions.

directory = make_providers(rng)           # every provider, indexed by specialty
members = make_members(rng, directory)    # with spans, conditions, PCPs, pharmacies
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from eval.demo import reference as ref
from eval.demo.synth.common import (
    AGE_REFERENCE,
    AS_OF,
    WINDOW_START,
    Directory,
    Member,
    Provider,
    Span,
    add_months,
    month_end,
    month_start,
    months_between,
    pick,
    random_date,
    zipf_weights,
)

N_MEMBERS = 2000
AREA_CODES = {
    "OH": ("614", "216", "513", "419", "330", "937"),
    "PA": ("412", "814"),
    "MI": ("313", "734"),
    "IN": ("317", "260"),
    "KY": ("502", "859"),
    "WV": ("304",),
}
STATES = list(ref.GEOGRAPHY)
STATE_WEIGHTS = [ref.GEOGRAPHY[s][0] for s in STATES]

# --- providers ------------------------------------------------------------------------------


def _npi(rng: random.Random, first_digit: str, taken: set[str]) -> str:
    """A 10-digit NPI with a valid Luhn check digit (computed with the 80840 prefix)."""
    while True:
        base = first_digit + "".join(str(rng.randint(0, 9)) for _ in range(8))
        total = 0
        for i, ch in enumerate(reversed("80840" + base)):
            d = int(ch) * (2 if i % 2 == 0 else 1)
            total += d - 9 if d > 9 else d
        npi = base + str((10 - total % 10) % 10)
        if npi not in taken:
            taken.add(npi)
            return npi


def _place(rng: random.Random, state: str | None = None) -> tuple[str, str, str]:
    state = state or pick(rng, STATES, STATE_WEIGHTS)
    city, prefix = rng.choice(ref.GEOGRAPHY[state][1])
    return city, state, f"{prefix}{rng.randint(1, 99):02d}"


def make_providers(rng: random.Random) -> Directory:
    providers: list[Provider] = []
    npis: set[str] = set()
    names: set[str] = set()
    for specialty, (count, credentials) in ref.SPECIALTIES.items():
        weights = zipf_weights(count, 1.1)
        for i in range(count):
            is_org = not credentials
            if specialty == "Pharmacy" and i == 0:
                city, state, zip_code = "Columbus", "OH", "43215"
                name = ref.MAIL_ORDER_PHARMACY
            else:
                city, state, zip_code = _place(rng)
                if is_org:
                    name = rng.choice(ref.FACILITY_NAMES[specialty]).format(city=city)
                    while name in names:  # a second branch in the same city
                        name = f"{name} #{rng.randint(2, 99)}"
                else:
                    gender = rng.choice("FM")
                    first = rng.choice(ref.FIRST_NAMES_F if gender == "F" else ref.FIRST_NAMES_M)
                    middle = f" {rng.choice('ABCDEFGHJKLMNPRSTW')}." if rng.random() < 0.6 else ""
                    name = f"{first}{middle} {rng.choice(ref.LAST_NAMES)}"
            names.add(name)
            in_network = specialty == "Pharmacy" or rng.random() < 0.9
            providers.append(
                Provider(
                    provider_id=len(providers) + 1,
                    npi=_npi(rng, "2" if is_org else "1", npis),
                    name=name,
                    entity_type="Organization" if is_org else "Individual",
                    credential=None if is_org else rng.choice(credentials),
                    specialty=specialty,
                    city=city,
                    state=state,
                    zip_code=zip_code,
                    in_network=in_network,
                    accepting_new_patients=None if is_org else int(rng.random() < 0.78),
                    network_join_date=random_date(rng, date(2006, 1, 1), date(2024, 6, 30))
                    if in_network
                    else None,
                    popularity=weights[i],
                    price_factor=round(rng.uniform(0.9, 1.3), 3),
                    charge_factor=round(rng.uniform(1.7, 3.2), 3),
                )
            )
    return Directory(providers)


def choose_provider(
    rng: random.Random,
    directory: Directory,
    specialty: str,
    state: str,
    *,
    in_network_only: bool = False,
) -> Provider:
    """A provider of ``specialty``, usually in ``state``, weighted by popularity."""
    pool = [p for p in directory.by_specialty[specialty] if p.in_network or not in_network_only]
    local = [p for p in pool if p.state == state]
    if local and rng.random() < 0.9:
        pool = local
    return pick(rng, pool, [p.popularity for p in pool])


# --- members --------------------------------------------------------------------------------


def _birth(rng: random.Random, age: int) -> date:
    return date(AGE_REFERENCE.year - age - 1, 1, 1) + timedelta(days=rng.randint(1, 365))


def _household_ages(rng: random.Random, lob: str) -> list[tuple[str, int]]:
    """(relationship, age) of each person in a new household."""
    if lob == "Medicare Advantage":
        return [("Subscriber", min(96, 66 + int(rng.expovariate(1 / 8))))]
    if lob == "Medicaid":
        adult = rng.randint(19, 58)
        if rng.random() < 0.35:
            return [("Subscriber", adult)]
        kids = pick(rng, [1, 2, 3, 4], [0.35, 0.35, 0.2, 0.1])
        return [("Subscriber", adult)] + [
            ("Child", rng.randint(0, min(18, adult - 17))) for _ in range(kids)
        ]
    adult = int(rng.triangular(22, 65, 45))
    people = [("Subscriber", adult)]
    if rng.random() < 0.55:
        people.append(("Spouse", max(21, min(70, adult + rng.randint(-6, 6)))))
    if adult < 60:
        kids = pick(rng, [0, 1, 2, 3], [0.35, 0.25, 0.25, 0.15])
        people += [("Child", rng.randint(0, min(25, adult - 20))) for _ in range(kids)]
    return people


def _condition_probability(cond: ref.Condition, age: int, gender: str) -> float:
    if cond.sex and cond.sex != gender:
        return 0.0
    if age < 18:
        p = cond.child
    else:
        ages = (18, 45, 65, 80)
        p = cond.adult[-1]
        for (a0, p0), (a1, p1) in zip(zip(ages, cond.adult), zip(ages[1:], cond.adult[1:])):
            if age < a1:
                p = p0 + (p1 - p0) * max(0, age - a0) / (a1 - a0)
                break
    if cond.sex is None and cond.female_factor != 1.0:
        mean = (1 + cond.female_factor) / 2
        p *= (cond.female_factor if gender == "F" else 1.0) / mean
    return p


def _conditions(rng: random.Random, member: Member) -> None:
    age = member.age_on(AGE_REFERENCE)
    for cond in ref.CONDITIONS:
        if rng.random() < _condition_probability(cond, age, member.gender) * member.frailty**0.5:
            already = rng.random() < 0.8
            onset = (
                WINDOW_START - timedelta(days=1)
                if already
                else random_date(rng, WINDOW_START, date(2024, 12, 31))
            )
            member.conditions[cond.code] = onset
            if cond.drugs and rng.random() < cond.treated_share:
                drugs = [pick(rng, list(cond.drugs), zipf_weights(len(cond.drugs), 1.2))]
                if cond.code == "E11.9" and rng.random() < 0.35:  # add-on therapy
                    second = pick(rng, list(cond.drugs[1:]))
                    if second not in drugs:
                        drugs.append(second)
                member.treated[cond.code] = drugs


def _choose_plan(
    rng: random.Random, lob: str, on: date, relationship: str, chip_household: bool
) -> ref.Plan:
    offered = [
        p
        for p in ref.PLANS
        if p.line_of_business == lob
        and p.effective_date <= on.isoformat()
        and (p.retired_date is None or on.isoformat() <= p.retired_date)
    ]
    if lob == "Medicaid":
        chip = relationship == "Child" and chip_household
        return next(p for p in offered if (p.plan_id == "MCD-CHIP") == chip)
    preference = {
        "COM-HMO-SLV": 0.2,
        "COM-HMO-GLD": 0.15,
        "COM-PPO-GLD": 0.25,
        "COM-PPO-PLT": 0.1,
        "COM-HDHP-BRZ": 0.15,
        "COM-EPO-SLV": 0.15,
        "MA-HMO": 0.6,
        "MA-PPO": 0.4,
    }
    return pick(rng, offered, [preference[p.plan_id] for p in offered])


def _household_plans(
    rng: random.Random, household: list[Member], on: date, chip_household: bool
) -> list[ref.Plan]:
    """One plan for the whole household; Medicaid children may be on CHIP instead."""
    lob = household[0].lob
    plan = _choose_plan(rng, lob, on, "Subscriber", chip_household)
    return [
        _choose_plan(rng, lob, on, m.relationship, chip_household) if lob == "Medicaid" else plan
        for m in household
    ]


_TERMINATION = {
    "Commercial": (
        0.09,
        ("Voluntary disenrollment", "Non-payment of premium", "Moved out of service area"),
        (0.5, 0.2, 0.3),
    ),
    "Medicare Advantage": (
        0.07,
        ("Deceased", "Voluntary disenrollment", "Moved out of service area"),
        (0.45, 0.4, 0.15),
    ),
    "Medicaid": (0.14, ("Lost eligibility", "Moved out of service area"), (0.75, 0.25)),
}


def _coverage(rng: random.Random, household: list[Member], chip_household: bool) -> None:
    """Coverage spans shared by a household: plan changes at January, terminations, re-enrolment."""
    lob = household[0].lob
    if rng.random() < 0.55:
        start = month_start(random_date(rng, date(2016, 1, 1), date(2021, 12, 1)))
    else:
        start = month_start(random_date(rng, WINDOW_START, date(2025, 2, 28)))
    if lob == "Medicare Advantage":  # coverage starts the month the member turns 65
        birth = household[0].birth_date
        start = max(start, date(birth.year + 65, birth.month, 1))
    rate, reasons, reason_weights = _TERMINATION[lob]
    plans = _household_plans(rng, household, start, chip_household)
    span_start = start
    month = max(month_start(start), WINDOW_START)
    while month <= AS_OF:
        ended, reason = None, None
        if month.month == 1 and month > span_start:
            retired = [p for p in plans if p.retired_date and p.retired_date < month.isoformat()]
            if retired:
                ended, reason = month - timedelta(days=1), "Plan retired"
            elif lob == "Commercial" and rng.random() < 0.1:
                ended, reason = month - timedelta(days=1), "Plan change"
            if ended:
                for m, plan in zip(household, plans):
                    m.spans.append(Span(span_start, ended, plan, reason))
                span_start = month
                new = _choose_plan(rng, lob, month, "Subscriber", chip_household)
                while reason == "Plan change" and new == plans[0]:
                    new = _choose_plan(rng, lob, month, "Subscriber", chip_household)
                plans = [new] * len(household)  # only commercial households change plans
        if rng.random() < rate / 12 and month < month_start(AS_OF):
            reason = pick(rng, list(reasons), list(reason_weights))
            for m, plan in zip(household, plans):
                m.spans.append(Span(span_start, month_end(month), plan, reason))
            if reason == "Deceased" or rng.random() > 0.25:
                return
            month = add_months(month, rng.randint(3, 15))  # re-enrols after a gap
            span_start = month
            plans = _household_plans(rng, household, month, chip_household)
            continue
        month = add_months(month, 1)
    if span_start <= AS_OF:
        for m, plan in zip(household, plans):
            m.spans.append(Span(span_start, None, plan))


def _contact(
    rng: random.Random, first: str, last: str, age: int, state: str, own_phone: float
) -> tuple[str | None, str | None]:
    phone = None
    if rng.random() < own_phone:
        phone = (
            f"{rng.choice(AREA_CODES[state])}-{rng.randint(200, 999)}-{rng.randint(0, 9999):04d}"
        )
    email = None
    if age >= 18 and rng.random() < (0.75 if age < 70 else 0.4):
        handle = f"{first}.{last}".lower().replace("'", "")
        number = rng.randint(1, 99) if rng.random() < 0.5 else ""
        email = f"{handle}{number}@{rng.choice(('example.com', 'example.net', 'example.org'))}"
    return phone, email


def make_members(rng: random.Random, directory: Directory) -> list[Member]:
    members: list[Member] = []
    while len(members) < N_MEMBERS:
        lob = pick(rng, ["Commercial", "Medicare Advantage", "Medicaid"], [0.54, 0.28, 0.18])
        city, state, zip_code = _place(rng)
        family = rng.choice(ref.LAST_NAMES)
        household: list[Member] = []
        for relationship, age in _household_ages(rng, lob):
            gender = rng.choice("FM")
            if relationship == "Spouse":
                gender = "M" if household[0].gender == "F" else "F"
            first = rng.choice(ref.FIRST_NAMES_F if gender == "F" else ref.FIRST_NAMES_M)
            last = (
                family
                if relationship != "Spouse" or rng.random() < 0.85
                else rng.choice(ref.LAST_NAMES)
            )
            member_id = f"M{100001 + len(members) + len(household)}"
            phone, email = _contact(
                rng,
                first,
                last,
                age,
                state,
                0.88 if relationship == "Subscriber" else 0.6 if age >= 16 else 0.0,
            )
            household.append(
                Member(
                    member_id=member_id,
                    first_name=first,
                    middle_name=rng.choice(ref.MIDDLE_NAMES) if rng.random() < 0.62 else None,
                    last_name=last,
                    gender=gender,
                    birth_date=_birth(rng, age),
                    city=city,
                    state=state,
                    zip_code=zip_code,
                    phone=phone,
                    email=email,
                    relationship=relationship,
                    subscriber_id=household[0].member_id if household else member_id,
                    lob=lob,
                    frailty=rng.lognormvariate(-0.2, 0.65),
                )
            )
        _coverage(rng, household, chip_household=rng.random() < 0.5)
        for member in household:
            _conditions(rng, member)
            _assign_providers(rng, member, directory)
        members.extend(household)
    return members


def _assign_providers(rng: random.Random, member: Member, directory: Directory) -> None:
    age = member.age_on(AGE_REFERENCE)
    if age < 18:
        primary = "Pediatrics"
    else:
        primary = (
            "Internal Medicine"
            if rng.random() < (0.55 if age >= 65 else 0.4)
            else "Family Medicine"
        )
    doctor = choose_provider(rng, directory, primary, member.state, in_network_only=True)
    member.usual[primary] = doctor
    member.usual["primary care"] = doctor
    first_plan_type = member.spans[0].plan.plan_type
    if rng.random() < (0.96 if first_plan_type == "HMO" else 0.45):
        member.pcp = doctor
    pharmacies = [p for p in directory.by_specialty["Pharmacy"] if p is not directory.mail_order]
    local = [p for p in pharmacies if p.state == member.state] or pharmacies
    member.home_pharmacy = pick(rng, local, [p.popularity for p in local])


def usual_provider(
    rng: random.Random, member: Member, specialty: str, directory: Directory
) -> Provider:
    """The provider a member keeps seeing for ``specialty`` (chosen on first need)."""
    if specialty not in member.usual:
        member.usual[specialty] = choose_provider(rng, directory, specialty, member.state)
    return member.usual[specialty]


def covered_months(member: Member) -> list[tuple[date, Span]]:
    """(first day of month, coverage span) for every covered month inside the claims window."""
    return [
        (month, span)
        for span in member.spans
        for month in months_between(max(span.start, WINDOW_START), min(span.end or AS_OF, AS_OF))
    ]
