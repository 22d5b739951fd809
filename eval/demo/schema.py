"""The demo database's schema, declared once: DDL, BIRD ``dev_tables.json`` and the per-table
description CSVs are all derived from these specs, so they cannot drift apart.

    >>> [t.name for t in TABLES][:3]
    ['plans', 'providers', 'members']
    >>> TABLES[0].ddl().splitlines()[0]
    'CREATE TABLE plans ('
"""

from __future__ import annotations

from dataclasses import dataclass, field

from eval.embedded_benchmark import create_table


@dataclass(frozen=True)
class Column:
    name: str
    sql_type: str  # SQLite declared type: INTEGER, REAL or TEXT
    label: str  # human-readable column name (BIRD's ``column_name``)
    description: str
    data_format: str  # BIRD's data_format: integer, real, text, date
    value_description: str = ""
    not_null: bool = False
    references: tuple[str, str] | None = None  # (table, column)


@dataclass(frozen=True)
class Table:
    name: str
    description: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]
    unique: tuple[tuple[str, ...], ...] = field(default=())
    indexes: tuple[tuple[str, ...], ...] = field(default=())  # secondary indexes for common lookups

    def ddl(self) -> str:
        columns = [(c.name, c.sql_type, c.not_null, c.references) for c in self.columns]
        return create_table(self.name, columns, self.primary_key, self.unique)

    def index_ddl(self) -> list[str]:
        return [
            f"CREATE INDEX idx_{self.name}_{'_'.join(cols)} ON {self.name} ({', '.join(cols)})"
            for cols in self.indexes
        ]


def _id(name: str, label: str, description: str, *, sql_type: str = "TEXT", **kw) -> Column:
    fmt = "integer" if sql_type == "INTEGER" else "text"
    return Column(name, sql_type, label, description, fmt, not_null=True, **kw)


def _text(name: str, label: str, description: str, values: str = "", **kw) -> Column:
    return Column(name, "TEXT", label, description, "text", values, **kw)


def _date(name: str, label: str, description: str, values: str = "", **kw) -> Column:
    fmt = "ISO-8601 date text, YYYY-MM-DD."
    return Column(name, "TEXT", label, description, "date", f"{fmt} {values}".strip(), **kw)


def _int(name: str, label: str, description: str, values: str = "", **kw) -> Column:
    return Column(name, "INTEGER", label, description, "integer", values, **kw)


def _money(name: str, label: str, description: str, values: str = "", **kw) -> Column:
    return Column(name, "REAL", label, description, "real", f"US dollars. {values}".strip(), **kw)


STATES = "Two-letter US state code: OH, PA, MI, IN, KY or WV."

PLANS = Table(
    "plans",
    "Health plan products offered by the insurer.",
    (
        _id(
            "plan_id",
            "plan id",
            "Unique code of the health plan product.",
            value_description="e.g. 'COM-PPO-GLD'.",
        ),
        _text("plan_name", "plan name", "Marketing name of the plan.", not_null=True),
        _text(
            "line_of_business",
            "line of business",
            "Market segment the plan belongs to.",
            "'Commercial' (employer and individual), 'Medicare Advantage' or 'Medicaid'.",
            not_null=True,
        ),
        _text(
            "plan_type",
            "plan type",
            "Network design of the plan.",
            "'HMO', 'PPO', 'EPO' or 'HDHP' (high-deductible health plan).",
            not_null=True,
        ),
        _text(
            "metal_tier",
            "metal tier",
            "ACA metal level of a commercial plan.",
            "'Bronze', 'Silver', 'Gold' or 'Platinum'; NULL for Medicare Advantage and Medicaid plans.",
        ),
        _money("monthly_premium", "monthly premium", "Premium charged per member per month."),
        _money(
            "annual_deductible",
            "annual deductible",
            "Amount a member pays each year before the plan starts sharing costs.",
        ),
        _money(
            "out_of_pocket_max",
            "out-of-pocket maximum",
            "Most a member pays in cost sharing in one year.",
        ),
        _money("pcp_copay", "PCP copay", "Fixed copayment for a primary care office visit."),
        _money(
            "specialist_copay", "specialist copay", "Fixed copayment for a specialist office visit."
        ),
        Column(
            "coinsurance_rate",
            "REAL",
            "coinsurance rate",
            "Share of the allowed amount the member pays for services without a copay.",
            "real",
            "Fraction between 0 and 1, e.g. 0.2 means the member pays 20%.",
        ),
        _date("effective_date", "effective date", "Date the plan was first offered."),
        _date(
            "retired_date",
            "retired date",
            "Last date the plan was offered.",
            "NULL when the plan is still offered.",
        ),
    ),
    primary_key=("plan_id",),
)

PROVIDERS = Table(
    "providers",
    "Clinicians and facilities that bill the plan or prescribe and dispense drugs.",
    (
        _id(
            "provider_id", "provider id", "Internal identifier of the provider.", sql_type="INTEGER"
        ),
        _text(
            "npi",
            "NPI",
            "National Provider Identifier of the provider.",
            "10-digit number stored as text, starting with 1 (individuals) or 2 (organizations).",
            not_null=True,
        ),
        _text(
            "provider_name",
            "provider name",
            "Full name of an individual clinician, or the name of an organization.",
            not_null=True,
        ),
        _text(
            "entity_type",
            "entity type",
            "Whether the provider is a person or an organization.",
            "'Individual' or 'Organization'.",
            not_null=True,
        ),
        _text(
            "credential",
            "credential",
            "Professional credential of an individual clinician.",
            "'MD', 'DO', 'NP', 'PA', 'DPT', 'PhD' or 'PharmD'; NULL for organizations.",
        ),
        _text(
            "specialty",
            "specialty",
            "Primary specialty or facility type of the provider.",
            "e.g. 'Family Medicine', 'Cardiology', 'Acute Care Hospital', 'Clinical Laboratory', 'Pharmacy'.",
            not_null=True,
        ),
        _text("city", "city", "City of the provider's practice location."),
        _text("state", "state", "State of the provider's practice location.", STATES),
        _text(
            "zip_code", "ZIP code", "Five-digit ZIP code of the practice location, stored as text."
        ),
        _text(
            "network_status",
            "network status",
            "Whether the provider is contracted with the plan.",
            "'In-Network' or 'Out-of-Network'.",
            not_null=True,
        ),
        _int(
            "accepting_new_patients",
            "accepting new patients",
            "Whether an individual clinician accepts new patients.",
            "1 = yes, 0 = no; NULL for organizations.",
        ),
        _date(
            "network_join_date",
            "network join date",
            "Date the provider joined the plan's network.",
            "NULL for out-of-network providers.",
        ),
    ),
    primary_key=("provider_id",),
    unique=(("npi",),),
)

MEMBERS = Table(
    "members",
    "People covered by the plan (subscribers and their dependents).",
    (
        _id(
            "member_id",
            "member id",
            "Unique identifier of the member.",
            value_description="e.g. 'M100001'.",
        ),
        _text("first_name", "first name", "Member's first name.", not_null=True),
        _text(
            "middle_name",
            "middle name",
            "Member's middle name.",
            "NULL when the member has no middle name on file.",
        ),
        _text("last_name", "last name", "Member's last (family) name.", not_null=True),
        _text(
            "gender",
            "gender",
            "Member's gender as recorded at enrolment.",
            "'F' = female, 'M' = male.",
            not_null=True,
        ),
        _date("birth_date", "birth date", "Member's date of birth.", not_null=True),
        _text("city", "city", "City of the member's home address."),
        _text("state", "state", "State of the member's home address.", STATES),
        _text("zip_code", "ZIP code", "Five-digit ZIP code of the home address, stored as text."),
        _text(
            "phone",
            "phone",
            "Member's phone number.",
            "Format 'NNN-NNN-NNNN'; NULL when not on file.",
        ),
        _text("email", "email", "Member's email address.", "NULL when not on file."),
        _text(
            "relationship",
            "relationship to subscriber",
            "Member's relationship to the policy holder.",
            "'Subscriber' (the policy holder), 'Spouse' or 'Child'.",
            not_null=True,
        ),
        _text(
            "subscriber_id",
            "subscriber id",
            "member_id of the policy holder this member is covered under.",
            "Equal to member_id for subscribers.",
            not_null=True,
            references=("members", "member_id"),
        ),
        _int(
            "pcp_provider_id",
            "primary care provider id",
            "provider_id of the member's assigned primary care provider.",
            "NULL when no primary care provider is assigned (common on PPO plans).",
            references=("providers", "provider_id"),
        ),
    ),
    primary_key=("member_id",),
)

MEMBER_ENROLLMENTS = Table(
    "member_enrollments",
    "Coverage spans: which plan a member was enrolled in, from when to when.",
    (
        _id(
            "enrollment_id",
            "enrollment id",
            "Unique identifier of the coverage span.",
            sql_type="INTEGER",
        ),
        _id(
            "member_id",
            "member id",
            "Member covered by this span.",
            references=("members", "member_id"),
        ),
        _id(
            "plan_id",
            "plan id",
            "Plan the member was enrolled in.",
            references=("plans", "plan_id"),
        ),
        _date(
            "start_date",
            "start date",
            "First day of coverage (always the first day of a month).",
            not_null=True,
        ),
        _date(
            "end_date",
            "end date",
            "Last day of coverage (always the last day of a month).",
            "NULL while the coverage is still active.",
        ),
        _text(
            "termination_reason",
            "termination reason",
            "Why the coverage span ended.",
            "'Plan change', 'Plan retired', 'Voluntary disenrollment', 'Non-payment of premium', "
            "'Moved out of service area', 'Lost eligibility' or 'Deceased'; NULL while the coverage is active.",
        ),
    ),
    primary_key=("enrollment_id",),
    indexes=(("member_id",),),
)

MEMBER_MONTHS = Table(
    "member_months",
    "Eligibility by month: one row for every calendar month a member was covered, "
    "from 2022-01 (start of the claims history) through 2025-03 (end of the data extract).",
    (
        _id("member_id", "member id", "Covered member.", references=("members", "member_id")),
        _text(
            "month",
            "month",
            "Calendar month of coverage.",
            "Text 'YYYY-MM', e.g. '2024-03'.",
            not_null=True,
        ),
        _id(
            "plan_id",
            "plan id",
            "Plan covering the member in that month.",
            references=("plans", "plan_id"),
        ),
    ),
    primary_key=("member_id", "month"),
)

DIAGNOSES = Table(
    "diagnoses",
    "Reference list of ICD-10-CM diagnosis codes.",
    (
        _id(
            "diagnosis_code",
            "diagnosis code",
            "ICD-10-CM code with its dot.",
            value_description="e.g. 'E11.9', 'I10'.",
        ),
        _text(
            "description",
            "description",
            "Official description of the diagnosis code.",
            not_null=True,
        ),
        _text(
            "category",
            "category",
            "ICD-10-CM chapter the code belongs to.",
            "e.g. 'Diseases of the circulatory system'.",
            not_null=True,
        ),
        _int(
            "is_chronic",
            "is chronic",
            "Whether the condition is a chronic (long-lasting) condition.",
            "1 = chronic, 0 = acute or other.",
            not_null=True,
        ),
    ),
    primary_key=("diagnosis_code",),
)

PROCEDURES = Table(
    "procedures",
    "Reference list of CPT procedure codes billed on claim lines.",
    (
        _id(
            "procedure_code",
            "procedure code",
            "Five-character CPT code.",
            value_description="e.g. '99213'.",
        ),
        _text("description", "description", "Short description of the service.", not_null=True),
        _text(
            "category",
            "category",
            "CPT section of the code.",
            "'Evaluation and Management', 'Surgery', 'Radiology', 'Pathology and Laboratory' or 'Medicine'.",
            not_null=True,
        ),
        _money(
            "standard_rate",
            "standard rate",
            "Reference allowed amount for one unit, before plan and provider adjustments.",
        ),
    ),
    primary_key=("procedure_code",),
)

CLAIMS = Table(
    "claims",
    "Medical claim headers: one bill from one provider for one member's encounter or stay.",
    (
        _id(
            "claim_id",
            "claim id",
            "Unique identifier of the claim.",
            value_description="e.g. 'C0000123'.",
        ),
        _id(
            "member_id",
            "member id",
            "Member who received the services.",
            references=("members", "member_id"),
        ),
        _id(
            "provider_id",
            "provider id",
            "Billing provider.",
            sql_type="INTEGER",
            references=("providers", "provider_id"),
        ),
        _id(
            "plan_id",
            "plan id",
            "Plan covering the member on the first date of service.",
            references=("plans", "plan_id"),
        ),
        _text(
            "claim_type",
            "claim type",
            "Billing form of the claim.",
            "'Professional' (clinician services) or 'Institutional' (hospital, surgery centre or nursing facility).",
            not_null=True,
        ),
        _text(
            "place_of_service",
            "place of service",
            "Setting where the services were delivered.",
            "'Office', 'Telehealth', 'Urgent Care', 'Emergency Room', 'Inpatient Hospital', 'Outpatient Hospital', "
            "'Ambulatory Surgical Center', 'Independent Laboratory' or 'Skilled Nursing Facility'.",
            not_null=True,
        ),
        _date(
            "service_start_date",
            "service start date",
            "First date of service (admission date for stays).",
            not_null=True,
        ),
        _date(
            "service_end_date",
            "service end date",
            "Last date of service (discharge date for stays).",
            "Equal to service_start_date for one-day encounters.",
            not_null=True,
        ),
        _date(
            "received_date",
            "received date",
            "Date the plan received the claim.",
            "The data extract holds claims received through 2025-03-31.",
            not_null=True,
        ),
        _date(
            "adjudicated_date",
            "adjudicated date",
            "Date the plan decided to pay or deny the claim.",
            "NULL while the claim is pending.",
        ),
        _date(
            "paid_date",
            "paid date",
            "Date payment was issued to the provider.",
            "NULL for pending and denied claims.",
        ),
        _text(
            "claim_status",
            "claim status",
            "Processing status of the claim.",
            "'Paid', 'Denied' or 'Pending'.",
            not_null=True,
        ),
        _text(
            "denial_reason",
            "denial reason",
            "Why the claim was denied.",
            "e.g. 'Prior authorization required', 'Service not covered', 'Duplicate claim'; "
            "NULL unless the claim is denied.",
        ),
        _money(
            "billed_amount",
            "billed amount",
            "Total charges the provider billed (sum of the lines).",
            not_null=True,
        ),
        _money(
            "allowed_amount",
            "allowed amount",
            "Total amount the plan allows for the services (sum of the lines).",
            "0 for denied claims; NULL while pending.",
        ),
        _money(
            "paid_amount",
            "paid amount",
            "Total amount the plan paid the provider (sum of the lines).",
            "0 for denied claims; NULL while pending.",
        ),
        _money(
            "member_cost_share",
            "member cost share",
            "Copay and coinsurance the member owes for the claim.",
            "allowed_amount = paid_amount + member_cost_share; NULL while pending.",
        ),
    ),
    primary_key=("claim_id",),
    indexes=(("member_id", "provider_id"), ("provider_id",), ("service_start_date",)),
)

CLAIM_LINES = Table(
    "claim_lines",
    "Service lines of a medical claim: one procedure code per line.",
    (
        _id(
            "claim_id", "claim id", "Claim the line belongs to.", references=("claims", "claim_id")
        ),
        _id(
            "line_number",
            "line number",
            "Position of the line on the claim, starting at 1.",
            sql_type="INTEGER",
        ),
        _id(
            "procedure_code",
            "procedure code",
            "CPT code of the service.",
            references=("procedures", "procedure_code"),
        ),
        _text(
            "modifier",
            "modifier",
            "CPT modifier that qualifies the procedure code.",
            "'25' (separate visit on the day of a procedure), 'RT'/'LT' (right/left side), '95' (telehealth), "
            "'GP' (physical therapy plan of care); NULL when no modifier applies.",
        ),
        _date(
            "service_date",
            "service date",
            "Date the service on this line was performed.",
            not_null=True,
        ),
        _int("units", "units", "Number of units of the service.", not_null=True),
        _money("billed_amount", "billed amount", "Charges billed for the line.", not_null=True),
        _money(
            "allowed_amount",
            "allowed amount",
            "Amount allowed by the plan for the line.",
            "0 on denied claims; NULL while pending.",
        ),
        _money(
            "paid_amount",
            "paid amount",
            "Amount paid by the plan for the line.",
            "0 on denied claims; NULL while pending.",
        ),
    ),
    primary_key=("claim_id", "line_number"),
    indexes=(("procedure_code",),),
)

CLAIM_DIAGNOSES = Table(
    "claim_diagnoses",
    "Diagnosis codes reported on a medical claim.",
    (
        _id(
            "claim_id",
            "claim id",
            "Claim the diagnosis is reported on.",
            references=("claims", "claim_id"),
        ),
        _id(
            "sequence_number",
            "sequence number",
            "Position of the diagnosis on the claim, starting at 1.",
            sql_type="INTEGER",
        ),
        _id(
            "diagnosis_code",
            "diagnosis code",
            "ICD-10-CM code.",
            references=("diagnoses", "diagnosis_code"),
        ),
        _int(
            "is_primary",
            "is primary",
            "Whether this is the claim's principal diagnosis.",
            "1 = principal diagnosis (sequence 1), 0 = secondary.",
            not_null=True,
        ),
    ),
    primary_key=("claim_id", "sequence_number"),
    indexes=(("diagnosis_code",),),
)

DRUGS = Table(
    "drugs",
    "Reference list of drug products by National Drug Code.",
    (
        _id(
            "ndc",
            "NDC",
            "11-digit National Drug Code in 5-4-2 format.",
            value_description="e.g. '00093-7212-01'.",
        ),
        _text(
            "drug_name",
            "drug name",
            "Name on the label: the brand name for brand drugs, the generic name otherwise.",
            "e.g. 'Atorvastatin', 'Eliquis'.",
            not_null=True,
        ),
        _text(
            "generic_name",
            "generic name",
            "Active ingredient(s).",
            "e.g. 'apixaban'.",
            not_null=True,
        ),
        _text("strength", "strength", "Strength of the product.", "e.g. '20 mg'."),
        _text(
            "dosage_form",
            "dosage form",
            "Form of the product.",
            "e.g. 'Tablet', 'Capsule', 'Pen injector', 'Inhaler'.",
            not_null=True,
        ),
        _text(
            "therapeutic_class",
            "therapeutic class",
            "Therapeutic class of the drug.",
            "e.g. 'Statin', 'Anticoagulant'.",
            not_null=True,
        ),
        _int(
            "is_generic",
            "is generic",
            "Whether the product is a generic drug.",
            "1 = generic, 0 = brand.",
            not_null=True,
        ),
        _int(
            "is_specialty",
            "is specialty",
            "Whether the drug is a high-cost specialty drug.",
            "1 = specialty, 0 = not.",
            not_null=True,
        ),
        _money(
            "unit_cost",
            "unit cost",
            "Ingredient cost of one dispensed unit (tablet, capsule, pen, mL...).",
        ),
    ),
    primary_key=("ndc",),
)

PHARMACY_FILLS = Table(
    "pharmacy_fills",
    "Prescription drug claims: one row per prescription filled at a pharmacy.",
    (
        _id("fill_id", "fill id", "Unique identifier of the pharmacy claim.", sql_type="INTEGER"),
        _id(
            "member_id",
            "member id",
            "Member the prescription was filled for.",
            references=("members", "member_id"),
        ),
        _id("ndc", "NDC", "Drug product dispensed.", references=("drugs", "ndc")),
        _int(
            "prescriber_provider_id",
            "prescriber id",
            "provider_id of the prescribing clinician.",
            "NULL when the prescriber is not in the provider directory.",
            references=("providers", "provider_id"),
        ),
        _id(
            "pharmacy_provider_id",
            "pharmacy id",
            "provider_id of the dispensing pharmacy.",
            sql_type="INTEGER",
            references=("providers", "provider_id"),
        ),
        _date("fill_date", "fill date", "Date the prescription was dispensed.", not_null=True),
        _int(
            "days_supply",
            "days supply",
            "Number of days the dispensed quantity lasts.",
            not_null=True,
        ),
        Column(
            "quantity",
            "REAL",
            "quantity",
            "Number of units dispensed.",
            "real",
            "Units of the drug's dosage form.",
            not_null=True,
        ),
        _int(
            "refill_number",
            "refill number",
            "Which fill of the prescription this is.",
            "0 = new prescription, 1 or more = refill.",
            not_null=True,
        ),
        _money("ingredient_cost", "ingredient cost", "Cost of the drug dispensed.", not_null=True),
        _money(
            "dispensing_fee",
            "dispensing fee",
            "Fee paid to the pharmacy for dispensing.",
            not_null=True,
        ),
        _money(
            "plan_paid",
            "plan paid",
            "Amount the plan paid for the fill.",
            "ingredient_cost + dispensing_fee = plan_paid + member_copay.",
            not_null=True,
        ),
        _money(
            "member_copay", "member copay", "Amount the member paid at the pharmacy.", not_null=True
        ),
        _text(
            "fill_status",
            "fill status",
            "Status of the pharmacy claim.",
            "'Paid', or 'Reversed' when the fill was cancelled after payment (e.g. never picked up).",
            not_null=True,
        ),
    ),
    primary_key=("fill_id",),
    indexes=(("member_id",), ("ndc",)),
)

# In dependency order: referenced tables come first.
TABLES: tuple[Table, ...] = (
    PLANS,
    PROVIDERS,
    MEMBERS,
    MEMBER_ENROLLMENTS,
    MEMBER_MONTHS,
    DIAGNOSES,
    PROCEDURES,
    CLAIMS,
    CLAIM_LINES,
    CLAIM_DIAGNOSES,
    DRUGS,
    PHARMACY_FILLS,
)
