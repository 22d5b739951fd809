"""Synthetic healthcare-claims data, fully determined by one seed.

    rows = generate(seed=7)        # table name -> list of row tuples in schema column order
    rows["claims"][0][:3]          # ('C0000001', 'M10....', 42)

Stages: population (providers, members, coverage, conditions) -> medical encounters ->
adjudicated claims -> pharmacy fills. Static code sets come from ``eval.demo.reference``.
"""

from __future__ import annotations

import random
from dataclasses import astuple

from eval.demo import reference as ref
from eval.demo.synth.adjudication import adjudicate
from eval.demo.synth.common import Member, Provider
from eval.demo.synth.medical import EncounterFactory
from eval.demo.synth.pharmacy import make_fills
from eval.demo.synth.population import covered_months, make_members, make_providers


def _iso(d):
    return d.isoformat() if d else None


def _provider_rows(providers: list[Provider]) -> list[tuple]:
    return [
        (
            p.provider_id,
            p.npi,
            p.name,
            p.entity_type,
            p.credential,
            p.specialty,
            p.city,
            p.state,
            p.zip_code,
            "In-Network" if p.in_network else "Out-of-Network",
            p.accepting_new_patients,
            _iso(p.network_join_date),
        )
        for p in providers
    ]


def _member_rows(members: list[Member]) -> list[tuple]:
    return [
        (
            m.member_id,
            m.first_name,
            m.middle_name,
            m.last_name,
            m.gender,
            m.birth_date.isoformat(),
            m.city,
            m.state,
            m.zip_code,
            m.phone,
            m.email,
            m.relationship,
            m.subscriber_id,
            m.pcp.provider_id if m.pcp else None,
        )
        for m in members
    ]


def _coverage_rows(members: list[Member]) -> tuple[list[tuple], list[tuple]]:
    enrollments, months = [], []
    for m in members:
        for span in m.spans:
            enrollments.append(
                (
                    len(enrollments) + 1,
                    m.member_id,
                    span.plan.plan_id,
                    span.start.isoformat(),
                    _iso(span.end),
                    span.reason,
                )
            )
        months += [
            (m.member_id, month.isoformat()[:7], span.plan.plan_id)
            for month, span in covered_months(m)
        ]
    return enrollments, months


def generate(seed: int) -> dict[str, list[tuple]]:
    rng = random.Random(seed)
    directory = make_providers(rng)
    members = make_members(rng, directory)
    factory = EncounterFactory(rng, directory)
    encounters = [enc for member in members for enc in factory.for_member(member)]
    claims, claim_lines, claim_diagnoses = adjudicate(rng, encounters)
    fills = make_fills(rng, members, directory)
    enrollments, member_months = _coverage_rows(members)
    return {
        "plans": [astuple(p) for p in ref.PLANS],
        "providers": _provider_rows(directory.providers),
        "members": _member_rows(members),
        "member_enrollments": enrollments,
        "member_months": member_months,
        "diagnoses": [
            (code, desc, ref.chapter_of(code), chronic) for code, desc, chronic in ref.DIAGNOSES
        ],
        "procedures": list(ref.PROCEDURES),
        "claims": claims,
        "claim_lines": claim_lines,
        "claim_diagnoses": claim_diagnoses,
        "drugs": [
            (
                d.ndc,
                d.drug_name,
                d.generic_name,
                d.strength,
                d.dosage_form,
                d.therapeutic_class,
                d.is_generic,
                d.is_specialty,
                d.unit_cost,
            )
            for d in ref.DRUGS
        ],
        "pharmacy_fills": fills,
    }
