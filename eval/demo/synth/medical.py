"""What happens to members: encounters (visits, tests, ER visits, stays) over their covered months.

An encounter is one bill to be: provider, place, dates, diagnoses (principal first) and service
lines. ``adjudication.py`` turns encounters into claims.

    encounters = EncounterFactory(rng, directory).for_member(member)
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from functools import partial

from eval.demo import reference as ref
from eval.demo.synth.common import (
    AS_OF,
    Directory,
    Member,
    Provider,
    month_end,
    pick,
    poisson,
    random_date,
)
from eval.demo.synth.population import covered_months, usual_provider


@dataclass
class Line:
    code: str
    service_date: date
    units: int = 1
    modifier: str | None = None


@dataclass
class Encounter:
    member: Member
    provider: Provider
    place: str
    start: date
    end: date
    diagnoses: list[str]
    lines: list[Line]
    elective: bool = False  # planned facility care: may be denied for missing prior authorization
    denial: str | None = None  # forced denial (duplicates, services after coverage ended)
    received_after: date | None = None  # earliest receipt (duplicates arrive after the original)


SERIOUS = ("I50.9", "J44.9", "I48.91", "N18.30", "I25.10")
PREVENTIVE_DX = ("Z00.00", "Z00.129", "Z12.31", "Z12.11", "Z23")
ESTABLISHED = (["99212", "99213", "99214", "99215"], [0.06, 0.46, 0.4, 0.08])
NEW_PATIENT = (["99202", "99203", "99204"], [0.2, 0.55, 0.25])
# ER problems: (diagnosis, weight for adults, weight for children, tests, drug key)
ER_PROBLEMS = (
    ("R07.9", 3.0, 0.2, ("93000", "71046", "85025", "80053"), None),
    ("R10.9", 3.0, 1.0, ("74177", "85025", "81001", "96372"), "ondansetron"),
    ("S93.401A", 1.5, 1.5, ("73610",), "ibuprofen"),
    ("S52.501A", 1.0, 1.5, ("73110", "25600"), "oxycodone"),
    ("R51.9", 1.5, 0.5, ("70450", "96372"), None),
    ("S61.411A", 1.2, 1.0, ("12001",), "cephalexin"),
    ("J18.9", 1.5, 0.5, ("71046", "85025"), "azithromycin"),
    ("U07.1", 1.0, 0.5, ("87635", "71046"), None),
    ("N39.0", 0.8, 0.3, ("81001",), "cephalexin"),
    ("H66.90", 0.1, 2.0, (), "amoxicillin"),
)
# Inpatient stays: reason -> (length of stay range, extra hospital lines, professional specialty billing a procedure)
STAYS = {
    "J18.9": ((2, 6), ("71046",), None),
    "I50.9": ((3, 7), ("93306",), None),
    "A41.9": ((4, 10), ("85025",), None),
    "I21.4": ((2, 5), ("93306",), ("Cardiology", "92928")),
    "I63.9": ((3, 8), ("70450",), None),
    "J44.9": ((2, 5), ("71046",), None),
    "M17.11": ((1, 3), (), ("Orthopedic Surgery", "27447")),
    "O80": ((1, 4), (), ("Obstetrics and Gynecology", "59400")),
}
READMISSION_REASONS = ("I50.9", "J44.9", "A41.9", "J18.9")
SURGICAL_CODES = frozenset(code for code, _, category, _ in ref.PROCEDURES if category == ref.SURG)


class EncounterFactory:
    """Generates every encounter of one member, month by month."""

    def __init__(self, rng: random.Random, directory: Directory):
        self.rng = rng
        self.directory = directory

    # --- helpers ---------------------------------------------------------------------------

    def _usual(self, member: Member, specialty: str) -> Provider:
        return usual_provider(self.rng, member, specialty, self.directory)

    def _em(self, member: Member, provider: Provider) -> str:
        codes, weights = (
            ESTABLISHED if provider.provider_id in member.seen_providers else NEW_PATIENT
        )
        member.seen_providers.add(provider.provider_id)
        return pick(self.rng, codes, weights)

    def _dx(self, member: Member, d: date, principal: str, extra: int = 2) -> list[str]:
        coded = "E11.65" if principal == "E11.9" and self.rng.random() < 0.25 else principal
        others = [c for c in member.active_conditions(d) if c != principal]
        k = min(len(others), self.rng.randint(0, extra))
        return [coded] + self.rng.sample(others, k)

    def _covered(self, member: Member, d: date) -> bool:
        return d <= AS_OF and member.span_on(d) is not None

    def _encounter(self, member, provider, place, d, dx, lines, end=None, **kw) -> Encounter:
        return Encounter(member, provider, place, d, end or d, dx, lines, **kw)

    def _ordered(
        self,
        member: Member,
        d: date,
        days: tuple[int, int],
        specialty: str,
        place: str,
        dx: list[str],
        codes: Iterable[str],
    ) -> list[Encounter]:
        """The services ``codes`` ordered on ``d``, done ``days`` (a range) later by the member's
        usual ``specialty`` at ``place``; none when the member is not covered on that day."""
        day = d + timedelta(days=self.rng.randint(*days))
        if not self._covered(member, day):
            return []
        provider = self._usual(member, specialty)
        return [self._encounter(member, provider, place, day, dx, [Line(c, day) for c in codes])]

    # --- the month loop --------------------------------------------------------------------

    def for_member(self, member: Member) -> list[Encounter]:
        rng, out = self.rng, []
        done: dict[str, set[int]] = {"preventive": set(), "mammogram": set(), "flu": set()}
        once: list[str] = []  # one-time events already had
        for month, span in covered_months(member):
            last = min(month_end(month), AS_OF, span.end or AS_OF)
            age = member.age_on(month)
            active = member.active_conditions(last)
            year = month.year

            day = partial(random_date, rng, month, last)
            # Yearly events: a monthly chance, first success wins; x1.6 keeps the yearly rate near
            # the nominal one despite months lost to coverage gaps and the once-a-year cap.

            if (
                year not in done["preventive"]
                and rng.random() < (0.7 if age < 18 else 0.5) / 12 * 1.6
            ):
                done["preventive"].add(year)
                out.append(self.preventive(member, day()))
            if (
                member.gender == "F"
                and age >= 40
                and year not in done["mammogram"]
                and rng.random() < 0.55 / 12 * 1.6
            ):
                done["mammogram"].add(year)
                out.append(self.mammogram(member, day()))
            if month.month in (9, 10, 11) and year not in done["flu"] and rng.random() < 0.12:
                done["flu"].add(year)
                shot = day()
                out.append(
                    self._encounter(
                        member,
                        self._usual(member, "primary care"),
                        "Office",
                        shot,
                        ["Z23"],
                        [Line("90686", shot), Line("90471", shot)],
                    )
                )
            if 45 <= age <= 75 and "colonoscopy" not in once and rng.random() < 0.004:
                once.append("colonoscopy")
                out += self.colonoscopy(member, day())
            if (
                member.gender == "F"
                and 18 <= age <= 42
                and member.lob != "Medicare Advantage"
                and "pregnancy" not in once
                and rng.random() < 0.0014
            ):
                once.append("pregnancy")
                out += self.pregnancy(member, day())
            serious = sum(c in SERIOUS for c in active)
            p_stay = 0.0012 * (3 if age >= 65 else 1) * (1 + 0.7 * serious) * member.frailty
            if rng.random() < p_stay:
                out += self.inpatient(member, day(), self._stay_reason(member, active, age))

            base = (
                0.3
                if age < 2
                else 0.11
                if age < 18
                else 0.1
                if age < 45
                else 0.14
                if age < 65
                else 0.2
            )
            lam = base * (1 + 0.35 * len(active)) * member.frailty
            for _ in range(poisson(rng, lam)):
                kinds = ["followup", "specialist", "acute", "er"]
                weights = [
                    2.0 * len(active),
                    1.3
                    * sum(
                        ref.CONDITION_BY_CODE[c].specialty is not None
                        for c in active
                        if c in ref.CONDITION_BY_CODE
                    ),
                    2.5 + (1.5 if age < 18 else 0),
                    0.3 + (0.25 if age >= 65 else 0),
                ]
                kind = pick(rng, kinds, weights)
                d = day()
                if kind == "followup":
                    out += self.followup(member, d, pick(rng, active))
                elif kind == "specialist":
                    out += self.specialist(member, d, active, once)
                elif kind == "acute":
                    out += self.acute(member, d)
                else:
                    out += self.emergency(member, d)
        return out + self.after_coverage(member)

    def after_coverage(self, member: Member) -> list[Encounter]:
        """Now and then a provider bills a visit after the member's coverage ended."""
        last = member.spans[-1]
        if last.end is None or last.reason == "Deceased" or self.rng.random() > 0.08:
            return []
        d = last.end + timedelta(days=self.rng.randint(3, 40))
        if d > AS_OF:
            return []
        doctor = self._usual(member, "primary care")
        principal = pick(self.rng, member.active_conditions(d) or ["J06.9"])
        return [
            self._encounter(
                member,
                doctor,
                "Office",
                d,
                self._dx(member, d, principal),
                [Line("99213", d)],
                denial="Member not eligible on date of service",
            )
        ]

    # --- encounter kinds -------------------------------------------------------------------

    def followup(self, member: Member, d: date, principal: str) -> list[Encounter]:
        rng = self.rng
        doctor = self._usual(member, "primary care")
        tele = rng.random() < (0.22 if d.year == 2022 else 0.1)
        dx = self._dx(member, d, principal)
        lines = [Line(self._em(member, doctor), d, 1, "95" if tele else None)]
        labs: list[str] = []
        for code in dx:
            cond = ref.CONDITION_BY_CODE.get(code)
            labs += [lab for lab in (cond.labs if cond else ()) if lab not in labs]
        out = []
        if labs and not tele and rng.random() < 0.55:
            if rng.random() < 0.5:
                lines += [Line(code, d) for code in labs]
            else:
                out += self._ordered(
                    member, d, (0, 3), "Clinical Laboratory", "Independent Laboratory", dx, labs
                )
        out.insert(
            0, self._encounter(member, doctor, "Telehealth" if tele else "Office", d, dx, lines)
        )
        cond = ref.CONDITION_BY_CODE.get(dx[0])
        if cond and cond.imaging and rng.random() < 0.12:
            out += self._ordered(
                member, d, (2, 14), "Radiology", "Outpatient Hospital", dx, cond.imaging
            )
        return out

    def specialist(
        self, member: Member, d: date, active: list[str], once: list[str]
    ) -> list[Encounter]:
        rng = self.rng
        managed = [
            c for c in active if c in ref.CONDITION_BY_CODE and ref.CONDITION_BY_CODE[c].specialty
        ]
        if not managed:
            return self.followup(member, d, pick(rng, active))
        weights = [2.5 if c in ("F32.9", "F41.1") else 1.0 for c in managed]
        cond = ref.CONDITION_BY_CODE[pick(rng, managed, weights)]
        spec = cond.specialty
        doc = self._usual(member, spec)
        dx = self._dx(member, d, cond.code, extra=1)
        if spec == "Physical Therapy":
            return self._therapy_episode(member, doc, d, dx)
        if spec == "Clinical Psychology":
            return self._psychotherapy_episode(member, doc, d, dx)
        if spec == "Ophthalmology" and "cataract" not in once and rng.random() < 0.25:
            once.append("cataract")
            return self._asc(member, d, dx, "66984", rng.choice(("RT", "LT")), spec)
        if spec == "Gastroenterology" and "egd" not in once and rng.random() < 0.2:
            once.append("egd")
            return self._asc(member, d, dx, "43239", None, spec)
        if spec == "Orthopedic Surgery" and "knee" not in once and rng.random() < 0.12:
            once.append("knee")
            surgery_day = d + timedelta(days=rng.randint(21, 60))
            if self._covered(member, surgery_day):
                if member.age_on(d) < 60 and rng.random() < 0.6:  # younger knees: arthroscopy first
                    return self._asc(member, surgery_day, dx, "29881", "RT", spec)
                return self.inpatient(member, surgery_day, "M17.11", elective=True)
        if spec == "Pulmonology" and cond.code == "G47.33" and "sleep study" not in once:
            once.append("sleep study")
            return [self._encounter(member, doc, "Outpatient Hospital", d, dx, [Line("95810", d)])]
        if spec == "Hematology and Oncology" and rng.random() < 0.6:
            units = rng.randint(1, 3)
            return [
                self._encounter(
                    member,
                    doc,
                    "Outpatient Hospital",
                    d,
                    ["Z51.11", *dx],
                    [Line("96413", d, units), Line("85025", d)],
                )
            ]
        tele = spec == "Psychiatry" and rng.random() < 0.35
        em = (
            "90791"
            if spec == "Psychiatry" and doc.provider_id not in member.seen_providers
            else self._em(member, doc)
        )
        member.seen_providers.add(doc.provider_id)
        lines = [Line(em, d, 1, "95" if tele else None)]
        if not tele:
            for code in cond.specialist_procedures:
                if code != em and rng.random() < 0.4:
                    lines.append(Line(code, d, 1, "RT" if code == "20610" else None))
        if any(ln.code in SURGICAL_CODES for ln in lines):
            lines[0].modifier = "25"  # separately identifiable visit on the day of a procedure
        return [self._encounter(member, doc, "Telehealth" if tele else "Office", d, dx, lines)]

    def _therapy_episode(self, member, therapist, d, dx) -> list[Encounter]:
        rng, out = self.rng, []
        for visit in range(rng.randint(3, 9)):
            day = d + timedelta(days=7 * visit + rng.randint(0, 2))
            if not self._covered(member, day):
                break
            if therapist.provider_id not in member.seen_providers:
                member.seen_providers.add(therapist.provider_id)
                lines = [Line("97161", day)]
            else:
                lines = [Line("97110", day, rng.randint(2, 3), "GP")]
                if rng.random() < 0.6:
                    lines.append(Line("97140", day, rng.randint(1, 2), "GP"))
            out.append(self._encounter(member, therapist, "Office", day, dx, lines))
        return out

    def _psychotherapy_episode(self, member, therapist, d, dx) -> list[Encounter]:
        rng, out = self.rng, []
        tele_share = 0.5 if d.year == 2022 else 0.35
        for visit in range(rng.randint(2, 6)):
            day = d + timedelta(days=14 * visit + rng.randint(0, 3))
            if not self._covered(member, day):
                break
            tele = rng.random() < tele_share
            code = pick(rng, ["90834", "90837"], [0.6, 0.4])
            out.append(
                self._encounter(
                    member,
                    therapist,
                    "Telehealth" if tele else "Office",
                    day,
                    dx,
                    [Line(code, day, 1, "95" if tele else None)],
                )
            )
        return out

    def _asc(self, member, d, dx, code, modifier, specialty) -> list[Encounter]:
        """A same-day surgery: the surgery center's facility bill and the surgeon's bill."""
        center = self._usual(member, "Ambulatory Surgery Center")
        surgeon = self._usual(member, specialty)
        return [
            self._encounter(
                member,
                center,
                "Ambulatory Surgical Center",
                d,
                dx,
                [Line(code, d, 1, modifier)],
                elective=True,
            ),
            self._encounter(
                member, surgeon, "Ambulatory Surgical Center", d, dx, [Line(code, d, 1, modifier)]
            ),
        ]

    def acute(self, member: Member, d: date) -> list[Encounter]:
        rng = self.rng
        child = member.age_on(d) < 18
        covid = {2022: 2.2, 2023: 1.0, 2024: 0.6, 2025: 0.5}[d.year]
        winter = d.month in (12, 1, 2, 3)
        weights = []
        for code, w, child_factor, *_ in ref.ACUTE_PROBLEMS:
            w *= child_factor if child else 1.0
            w *= covid if code == "U07.1" else 1.0
            w *= 1.6 if winter and (code[0] in "JUH" or code == "R05.9") else 1.0
            weights.append(w)
        code, _, _, test, drug, p_drug = pick(rng, list(ref.ACUTE_PROBLEMS), weights)
        setting = pick(rng, ["Office", "Urgent Care", "Telehealth"], [0.55, 0.3, 0.15])
        provider = self._usual(
            member, "Urgent Care Center" if setting == "Urgent Care" else "primary care"
        )
        lines = [Line(self._em(member, provider), d, 1, "95" if setting == "Telehealth" else None)]
        if test and setting != "Telehealth" and rng.random() < 0.7:
            lines.append(Line(test, d))
        if drug and rng.random() < p_drug:
            if drug == "paxlovid" and member.age_on(d) < 50:
                drug = "benzonatate"
            member.acute_rx.append(
                (d, drug, provider if provider.entity_type == "Individual" else None)
            )
        return [
            self._encounter(member, provider, setting, d, self._dx(member, d, code, extra=1), lines)
        ]

    def emergency(self, member: Member, d: date) -> list[Encounter]:
        rng = self.rng
        child = member.age_on(d) < 18
        problem = pick(rng, list(ER_PROBLEMS), [p[2] if child else p[1] for p in ER_PROBLEMS])
        code, _, _, tests, drug = problem
        elderly = member.age_on(d) >= 65
        level = pick(
            rng, ["99283", "99284", "99285"], [0.2, 0.45, 0.35] if elderly else [0.35, 0.45, 0.2]
        )
        dx = self._dx(member, d, code, extra=2)
        hospital = self._usual(member, "Acute Care Hospital")
        out = [
            self._encounter(
                member,
                hospital,
                "Emergency Room",
                d,
                dx,
                [Line(level, d)] + [Line(t, d) for t in tests if rng.random() < 0.85],
            )
        ]
        physician = None
        if rng.random() < 0.6:
            physician = self._usual(member, "Emergency Medicine")
            out.append(
                self._encounter(member, physician, "Emergency Room", d, dx, [Line(level, d)])
            )
        if drug and rng.random() < 0.5:
            member.acute_rx.append((d, drug, physician))
        admit = {"R07.9": ("I21.4", 0.12), "J18.9": ("J18.9", 0.35), "R10.9": ("A41.9", 0.04)}.get(
            code
        )
        if admit and rng.random() < admit[1]:
            out += self.inpatient(member, d, admit[0])
        return out

    def _stay_reason(self, member: Member, active: list[str], age: int) -> str:
        def has(code: str) -> bool:
            return code in active

        reasons = ["J18.9", "I50.9", "A41.9", "I21.4", "I63.9", "J44.9", "M17.11"]
        weights = [
            1 + 2 * (age >= 65),
            4 * has("I50.9"),
            0.6 + 0.6 * (age >= 65),
            0.4 + 2 * has("I25.10"),
            0.3 + 1.5 * has("I48.91"),
            3 * has("J44.9"),
            1.5 * has("M17.11"),
        ]
        return pick(self.rng, reasons, weights)

    def inpatient(
        self, member: Member, d: date, reason: str, *, elective: bool = False, readmit: bool = True
    ) -> list[Encounter]:
        rng = self.rng
        (lo, hi), extra, professional = STAYS[reason]
        los = rng.randint(lo, hi)
        if reason == "O80":
            cesarean = rng.random() < 0.32
            los = rng.randint(3, 4) if cesarean else rng.randint(1, 2)
            professional = ("Obstetrics and Gynecology", "59510" if cesarean else "59400")
        end = d + timedelta(days=los)
        hospital = self._usual(member, "Acute Care Hospital")
        lines = [Line("99223" if rng.random() < 0.7 else "99222", d)]
        if los >= 2:
            lines.append(Line("99232", d + timedelta(days=1), los - 1))
        lines.append(Line("99238", end))
        lines += [Line(code, d) for code in ("85025", "80053") if rng.random() < 0.8]
        lines += [Line(code, d + timedelta(days=min(1, los))) for code in extra]
        dx = self._dx(member, d, reason, extra=3)
        out = [
            self._encounter(
                member,
                hospital,
                "Inpatient Hospital",
                d,
                dx,
                lines,
                end=end,
                elective=elective or reason == "M17.11",
            )
        ]
        if professional:
            specialty, code = professional
            modifier = "RT" if code == "27447" else None
            surgeon = self._usual(member, specialty)
            out.append(
                self._encounter(
                    member, surgeon, "Inpatient Hospital", d, dx, [Line(code, d, 1, modifier)]
                )
            )
            if code == "27447":
                member.acute_rx.append((end, "oxycodone", surgeon))
        discharge = end
        if (
            member.age_on(d) >= 70
            and reason in ("I50.9", "I63.9", "A41.9", "M17.11", "J18.9")
            and rng.random() < 0.3
        ):
            stay = rng.randint(7, 24)
            if self._covered(member, end):
                snf = self._usual(member, "Skilled Nursing Facility")
                discharge = end + timedelta(days=stay)
                out.append(
                    self._encounter(
                        member,
                        snf,
                        "Skilled Nursing Facility",
                        end,
                        [reason, *dx[1:]],
                        [Line("99309", end, stay // 7 + 1)],
                        end=discharge,
                    )
                )
        if reason != "O80" and rng.random() < 0.6:
            visit = discharge + timedelta(days=rng.randint(3, 14))
            if self._covered(member, visit):
                out += self.followup(member, visit, reason)
        if readmit and reason in READMISSION_REASONS and rng.random() < 0.15:
            again = discharge + timedelta(days=rng.randint(3, 28))
            if self._covered(member, again):
                out += self.inpatient(member, again, reason, readmit=False)
        return out

    def preventive(self, member: Member, d: date) -> Encounter:
        rng = self.rng
        doctor = self._usual(member, "primary care")
        age = member.age_on(d)
        member.seen_providers.add(doctor.provider_id)
        lines = [Line(ref.preventive_code(age), d)]
        dx = ["Z00.129" if age < 18 else "Z00.00"]
        if age >= 18 and rng.random() < 0.5:
            lines += [Line(code, d) for code in ("80053", "80061", "85025")]
        if d.month in (9, 10, 11, 12) and rng.random() < 0.45:
            lines += [Line("90686", d), Line("90471", d)]
            dx.append("Z23")
        return self._encounter(member, doctor, "Office", d, dx, lines)

    def mammogram(self, member: Member, d: date) -> Encounter:
        radiologist = self._usual(member, "Radiology")
        place = "Outpatient Hospital" if self.rng.random() < 0.65 else "Office"
        return self._encounter(member, radiologist, place, d, ["Z12.31"], [Line("77067", d)])

    def colonoscopy(self, member: Member, d: date) -> list[Encounter]:
        rng = self.rng
        code = "45380" if rng.random() < 0.35 else "45378"
        dx = ["Z12.11"] + (["K57.30"] if rng.random() < 0.3 else [])
        return self._asc(member, d, dx, code, None, "Gastroenterology")

    def pregnancy(self, member: Member, d: date) -> list[Encounter]:
        rng = self.rng
        ob = self._usual(member, "Obstetrics and Gynecology")
        out = []
        for i, offset in enumerate((0, 56, 112, 168)):
            day = d + timedelta(days=offset + rng.randint(0, 6))
            if not self._covered(member, day):
                return out
            lines = [Line(self._em(member, ob), day)] + ([Line("76805", day)] if i == 2 else [])
            out.append(self._encounter(member, ob, "Office", day, ["Z34.90"], lines))
        delivery = d + timedelta(days=rng.randint(200, 230))
        if self._covered(member, delivery):
            out += self.inpatient(member, delivery, "O80")
        return out
