"""Static reference data of the demo database: plans, code sets, drugs, places and names.

Nothing here depends on the seed, so literal values used by the gold questions (a plan id,
a specialty, an ICD-10 description, a drug name) exist in every build. The synthetic part
(people, providers, claims) lives in ``synth.py``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property

# --- geography: a regional insurer centred on Ohio -----------------------------------------

# state -> (weight, [(city, zip prefix)])
# fmt: off
GEOGRAPHY: dict[str, tuple[float, list[tuple[str, str]]]] = {
    "OH": (0.68, [("Columbus", "432"), ("Cleveland", "441"), ("Cincinnati", "452"), ("Toledo", "436"),
                  ("Akron", "443"), ("Dayton", "454"), ("Youngstown", "445"), ("Canton", "447")]),
    "PA": (0.09, [("Pittsburgh", "152"), ("Erie", "165")]),
    "MI": (0.07, [("Detroit", "482"), ("Ann Arbor", "481")]),
    "IN": (0.07, [("Indianapolis", "462"), ("Fort Wayne", "468")]),
    "KY": (0.05, [("Louisville", "402"), ("Lexington", "405")]),
    "WV": (0.04, [("Charleston", "253"), ("Wheeling", "260")]),
}
# fmt: on

# --- plans ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    plan_id: str
    plan_name: str
    line_of_business: str
    plan_type: str
    metal_tier: str | None
    monthly_premium: float
    annual_deductible: float
    out_of_pocket_max: float
    pcp_copay: float
    specialist_copay: float
    coinsurance_rate: float
    effective_date: str
    retired_date: str | None = None


# fmt: off
PLANS: tuple[Plan, ...] = (
    Plan("COM-HMO-SLV", "Buckeye Choice HMO Silver", "Commercial", "HMO", "Silver", 412.0, 3000.0, 8000.0, 30.0, 60.0, 0.3, "2015-01-01"),
    Plan("COM-HMO-GLD", "Buckeye Choice HMO Gold", "Commercial", "HMO", "Gold", 498.0, 1500.0, 6000.0, 20.0, 45.0, 0.2, "2015-01-01"),
    Plan("COM-PPO-GLD", "Buckeye Open Access PPO Gold", "Commercial", "PPO", "Gold", 561.0, 1000.0, 5500.0, 25.0, 50.0, 0.2, "2015-01-01"),
    Plan("COM-PPO-PLT", "Buckeye Open Access PPO Platinum", "Commercial", "PPO", "Platinum", 689.0, 250.0, 3000.0, 15.0, 30.0, 0.1, "2023-01-01"),
    Plan("COM-HDHP-BRZ", "Buckeye Saver HDHP Bronze", "Commercial", "HDHP", "Bronze", 318.0, 6000.0, 8050.0, 0.0, 0.0, 0.4, "2017-01-01"),
    Plan("COM-EPO-SLV", "Buckeye Select EPO Silver", "Commercial", "EPO", "Silver", 436.0, 2500.0, 7500.0, 30.0, 55.0, 0.25, "2016-01-01", "2023-12-31"),
    Plan("MA-HMO", "Buckeye Medicare Advantage HMO", "Medicare Advantage", "HMO", None, 0.0, 0.0, 4900.0, 0.0, 35.0, 0.2, "2015-01-01"),
    Plan("MA-PPO", "Buckeye Medicare Advantage PPO", "Medicare Advantage", "PPO", None, 39.0, 250.0, 6700.0, 5.0, 45.0, 0.2, "2018-01-01"),
    Plan("MCD-MCO", "Buckeye Community Medicaid", "Medicaid", "HMO", None, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, "2015-01-01"),
    Plan("MCD-CHIP", "Buckeye Kids CHIP", "Medicaid", "HMO", None, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, "2015-01-01"),
)
# fmt: on

# Payment level of each line of business relative to the standard rate.
LOB_PRICE_FACTOR = {"Commercial": 1.2, "Medicare Advantage": 0.9, "Medicaid": 0.7}

# --- providers ------------------------------------------------------------------------------

PRIMARY_CARE = ("Family Medicine", "Internal Medicine", "Pediatrics")
# Facilities that bill on the institutional form.
INSTITUTIONAL = ("Acute Care Hospital", "Ambulatory Surgery Center", "Skilled Nursing Facility")

# specialty -> (number of providers, credentials to draw from)
# fmt: off
SPECIALTIES: dict[str, tuple[int, tuple[str, ...]]] = {
    "Family Medicine": (40, ("MD", "MD", "DO", "NP", "PA")),
    "Internal Medicine": (32, ("MD", "MD", "DO", "NP")),
    "Pediatrics": (20, ("MD", "MD", "DO", "NP")),
    "Cardiology": (14, ("MD", "MD", "DO")),
    "Endocrinology": (6, ("MD", "DO")),
    "Pulmonology": (6, ("MD",)),
    "Nephrology": (5, ("MD",)),
    "Gastroenterology": (8, ("MD", "DO")),
    "Orthopedic Surgery": (11, ("MD", "DO")),
    "Obstetrics and Gynecology": (12, ("MD", "DO", "NP")),
    "Dermatology": (7, ("MD", "PA")),
    "Psychiatry": (8, ("MD", "DO", "NP")),
    "Clinical Psychology": (8, ("PhD",)),
    "Neurology": (6, ("MD",)),
    "Hematology and Oncology": (6, ("MD",)),
    "Urology": (5, ("MD",)),
    "Ophthalmology": (6, ("MD",)),
    "Radiology": (8, ("MD",)),
    "Emergency Medicine": (12, ("MD", "DO", "PA")),
    "Physical Therapy": (12, ("DPT",)),
    "Acute Care Hospital": (14, ()),
    "Ambulatory Surgery Center": (6, ()),
    "Skilled Nursing Facility": (5, ()),
    "Urgent Care Center": (8, ()),
    "Clinical Laboratory": (5, ()),
    "Pharmacy": (18, ()),
}
# fmt: on

# Name patterns for organizations; {city} is the facility's city.
# fmt: off
FACILITY_NAMES: dict[str, tuple[str, ...]] = {
    "Acute Care Hospital": ("{city} General Hospital", "Mercy Medical Center {city}", "St. Luke's Hospital of {city}",
                            "{city} Regional Medical Center", "University Hospital {city}"),
    "Ambulatory Surgery Center": ("{city} Surgery Center", "Lakeside Ambulatory Surgery {city}"),
    "Skilled Nursing Facility": ("Maple Grove Nursing and Rehab {city}", "{city} Care Center"),
    "Urgent Care Center": ("QuickCare Urgent Care {city}", "{city} Walk-In Clinic"),
    "Clinical Laboratory": ("Precision Labs {city}", "{city} Diagnostic Laboratory"),
    "Pharmacy": ("Main Street Pharmacy {city}", "Corner Drug {city}", "Valley Pharmacy {city}",
                 "HealthPlus Pharmacy {city}"),
}
# fmt: on
MAIL_ORDER_PHARMACY = "Buckeye Mail Order Pharmacy"

# --- people ---------------------------------------------------------------------------------

FIRST_NAMES_F = (
    "Mary",
    "Patricia",
    "Jennifer",
    "Linda",
    "Elizabeth",
    "Barbara",
    "Susan",
    "Jessica",
    "Sarah",
    "Karen",
    "Lisa",
    "Nancy",
    "Betty",
    "Sandra",
    "Ashley",
    "Emily",
    "Donna",
    "Michelle",
    "Carol",
    "Amanda",
    "Melissa",
    "Deborah",
    "Stephanie",
    "Rebecca",
    "Laura",
    "Sharon",
    "Cynthia",
    "Kathleen",
    "Amy",
    "Angela",
    "Olivia",
    "Emma",
    "Sophia",
    "Ava",
    "Mia",
    "Harper",
    "Aaliyah",
    "Maria",
    "Priya",
    "Mei",
)
FIRST_NAMES_M = (
    "James",
    "Robert",
    "John",
    "Michael",
    "David",
    "William",
    "Richard",
    "Joseph",
    "Thomas",
    "Christopher",
    "Charles",
    "Daniel",
    "Matthew",
    "Anthony",
    "Mark",
    "Donald",
    "Steven",
    "Andrew",
    "Paul",
    "Joshua",
    "Kenneth",
    "Kevin",
    "Brian",
    "George",
    "Timothy",
    "Ronald",
    "Jason",
    "Edward",
    "Jeffrey",
    "Ryan",
    "Liam",
    "Noah",
    "Elijah",
    "Lucas",
    "Mason",
    "Ethan",
    "Jamal",
    "Carlos",
    "Raj",
    "Wei",
)
MIDDLE_NAMES = (
    "Ann",
    "Marie",
    "Lynn",
    "Rose",
    "Jean",
    "Louise",
    "Grace",
    "Elaine",
    "Renee",
    "Nicole",
    "Lee",
    "James",
    "Allen",
    "Wayne",
    "Ray",
    "Edward",
    "Joseph",
    "Michael",
    "Scott",
    "Thomas",
)
LAST_NAMES = (
    "Smith",
    "Johnson",
    "Williams",
    "Brown",
    "Jones",
    "Miller",
    "Davis",
    "Wilson",
    "Anderson",
    "Taylor",
    "Thomas",
    "Moore",
    "Martin",
    "Jackson",
    "Thompson",
    "White",
    "Harris",
    "Clark",
    "Lewis",
    "Robinson",
    "Walker",
    "Young",
    "Allen",
    "King",
    "Wright",
    "Scott",
    "Hill",
    "Green",
    "Adams",
    "Baker",
    "Nelson",
    "Carter",
    "Mitchell",
    "Roberts",
    "Turner",
    "Phillips",
    "Campbell",
    "Parker",
    "Evans",
    "Edwards",
    "Collins",
    "Stewart",
    "Morris",
    "Murphy",
    "Cook",
    "Rogers",
    "Morgan",
    "Cooper",
    "Peterson",
    "Reed",
    "Kowalski",
    "Novak",
    "Schmidt",
    "Mueller",
    "Garcia",
    "Martinez",
    "Rodriguez",
    "Hernandez",
    "Lopez",
    "Gonzalez",
    "Nguyen",
    "Tran",
    "Kim",
    "Patel",
    "Shah",
    "Chen",
    "Wang",
    "Ali",
    "Hassan",
    "O'Brien",
    "Sullivan",
    "Murray",
    "Kelly",
    "Bauer",
    "Fischer",
    "Yoder",
    "Hostetler",
    "Stoltzfus",
    "Washington",
    "Brooks",
)

# --- code sets ------------------------------------------------------------------------------

CHAPTERS = {
    "A": "Certain infectious and parasitic diseases",
    "C": "Neoplasms",
    "D": "Diseases of the blood and blood-forming organs",
    "E": "Endocrine, nutritional and metabolic diseases",
    "F": "Mental, behavioral and neurodevelopmental disorders",
    "G": "Diseases of the nervous system",
    "H2": "Diseases of the eye and adnexa",
    "H6": "Diseases of the ear and mastoid process",
    "I": "Diseases of the circulatory system",
    "J": "Diseases of the respiratory system",
    "K": "Diseases of the digestive system",
    "L": "Diseases of the skin and subcutaneous tissue",
    "M": "Diseases of the musculoskeletal system and connective tissue",
    "N": "Diseases of the genitourinary system",
    "O": "Pregnancy, childbirth and the puerperium",
    "R": "Symptoms, signs and abnormal clinical and laboratory findings",
    "S": "Injury, poisoning and certain other consequences of external causes",
    "U": "Codes for special purposes",
    "Z": "Factors influencing health status and contact with health services",
}

# (code, description, is_chronic)
# fmt: off
DIAGNOSES: tuple[tuple[str, str, int], ...] = (
    ("I10", "Essential (primary) hypertension", 1),
    ("E78.5", "Hyperlipidemia, unspecified", 1),
    ("E11.9", "Type 2 diabetes mellitus without complications", 1),
    ("E11.65", "Type 2 diabetes mellitus with hyperglycemia", 1),
    ("E66.9", "Obesity, unspecified", 1),
    ("E03.9", "Hypothyroidism, unspecified", 1),
    ("E55.9", "Vitamin D deficiency, unspecified", 1),
    ("I25.10", "Atherosclerotic heart disease of native coronary artery without angina pectoris", 1),
    ("I48.91", "Unspecified atrial fibrillation", 1),
    ("I50.9", "Heart failure, unspecified", 1),
    ("J44.9", "Chronic obstructive pulmonary disease, unspecified", 1),
    ("J45.909", "Unspecified asthma, uncomplicated", 1),
    ("N18.30", "Chronic kidney disease, stage 3 unspecified", 1),
    ("F32.9", "Major depressive disorder, single episode, unspecified", 1),
    ("F41.1", "Generalized anxiety disorder", 1),
    ("F90.0", "Attention-deficit hyperactivity disorder, predominantly inattentive type", 1),
    ("F10.20", "Alcohol dependence, uncomplicated", 1),
    ("G43.909", "Migraine, unspecified, not intractable, without status migrainosus", 1),
    ("G47.33", "Obstructive sleep apnea (adult) (pediatric)", 1),
    ("K21.9", "Gastro-esophageal reflux disease without esophagitis", 1),
    ("M54.50", "Low back pain, unspecified", 1),
    ("M17.11", "Unilateral primary osteoarthritis, right knee", 1),
    ("M81.0", "Age-related osteoporosis without current pathological fracture", 1),
    ("M79.7", "Fibromyalgia", 1),
    ("N40.0", "Benign prostatic hyperplasia without lower urinary tract symptoms", 1),
    ("L40.0", "Psoriasis vulgaris", 1),
    ("L70.0", "Acne vulgaris", 1),
    ("D64.9", "Anemia, unspecified", 1),
    ("C50.911", "Malignant neoplasm of unspecified site of right female breast", 1),
    ("C61", "Malignant neoplasm of prostate", 1),
    ("H25.9", "Unspecified age-related cataract", 1),
    ("J06.9", "Acute upper respiratory infection, unspecified", 0),
    ("J02.9", "Acute pharyngitis, unspecified", 0),
    ("J01.90", "Acute sinusitis, unspecified", 0),
    ("J20.9", "Acute bronchitis, unspecified", 0),
    ("J18.9", "Pneumonia, unspecified organism", 0),
    ("U07.1", "COVID-19", 0),
    ("H66.90", "Otitis media, unspecified, unspecified ear", 0),
    ("N39.0", "Urinary tract infection, site not specified", 0),
    ("R05.9", "Cough, unspecified", 0),
    ("R07.9", "Chest pain, unspecified", 0),
    ("R10.9", "Unspecified abdominal pain", 0),
    ("R51.9", "Headache, unspecified", 0),
    ("M25.561", "Pain in right knee", 0),
    ("S93.401A", "Sprain of unspecified ligament of right ankle, initial encounter", 0),
    ("S52.501A", "Unspecified fracture of the lower end of right radius, initial encounter for closed fracture", 0),
    ("S61.411A", "Laceration without foreign body of right hand, initial encounter", 0),
    ("I21.4", "Non-ST elevation (NSTEMI) myocardial infarction", 0),
    ("I63.9", "Cerebral infarction, unspecified", 0),
    ("A41.9", "Sepsis, unspecified organism", 0),
    ("K57.30", "Diverticulosis of large intestine without perforation or abscess without bleeding", 0),
    ("Z00.00", "Encounter for general adult medical examination without abnormal findings", 0),
    ("Z00.129", "Encounter for routine child health examination without abnormal findings", 0),
    ("Z23", "Encounter for immunization", 0),
    ("Z12.31", "Encounter for screening mammogram for malignant neoplasm of breast", 0),
    ("Z12.11", "Encounter for screening for malignant neoplasm of colon", 0),
    ("Z34.90", "Encounter for supervision of normal pregnancy, unspecified, unspecified trimester", 0),
    ("O80", "Encounter for full-term uncomplicated delivery", 0),
    ("Z51.11", "Encounter for antineoplastic chemotherapy", 0),
)
# fmt: on


def chapter_of(code: str) -> str:
    return CHAPTERS.get(code[:2]) or CHAPTERS[code[0]]


EM, SURG, RAD, LAB, MED = (
    "Evaluation and Management",
    "Surgery",
    "Radiology",
    "Pathology and Laboratory",
    "Medicine",
)

# (code, description, category, standard rate per unit). Like a real code table it lists a few
# codes nobody billed (99205, 97530): the generator never emits them.
# fmt: off
PROCEDURES: tuple[tuple[str, str, str, float], ...] = (
    ("99202", "Office visit, new patient, straightforward", EM, 75.0),
    ("99203", "Office visit, new patient, low complexity", EM, 112.0),
    ("99204", "Office visit, new patient, moderate complexity", EM, 168.0),
    ("99205", "Office visit, new patient, high complexity", EM, 222.0),
    ("99212", "Office visit, established patient, straightforward", EM, 58.0),
    ("99213", "Office visit, established patient, low complexity", EM, 92.0),
    ("99214", "Office visit, established patient, moderate complexity", EM, 131.0),
    ("99215", "Office visit, established patient, high complexity", EM, 184.0),
    ("99283", "Emergency department visit, low complexity", EM, 76.0),
    ("99284", "Emergency department visit, moderate complexity", EM, 131.0),
    ("99285", "Emergency department visit, high complexity", EM, 192.0),
    ("99222", "Initial hospital inpatient care, moderate complexity", EM, 137.0),
    ("99223", "Initial hospital inpatient care, high complexity", EM, 204.0),
    ("99232", "Subsequent hospital inpatient care, moderate complexity", EM, 77.0),
    ("99238", "Hospital discharge day management, 30 minutes or less", EM, 76.0),
    ("99309", "Subsequent nursing facility care, moderate complexity", EM, 96.0),
    ("99391", "Preventive visit, established patient, infant under 1 year", EM, 104.0),
    ("99392", "Preventive visit, established patient, age 1-4", EM, 111.0),
    ("99393", "Preventive visit, established patient, age 5-11", EM, 111.0),
    ("99394", "Preventive visit, established patient, age 12-17", EM, 121.0),
    ("99395", "Preventive visit, established patient, age 18-39", EM, 124.0),
    ("99396", "Preventive visit, established patient, age 40-64", EM, 134.0),
    ("99397", "Preventive visit, established patient, age 65 and over", EM, 145.0),
    ("90791", "Psychiatric diagnostic evaluation", MED, 167.0),
    ("90834", "Psychotherapy, 45 minutes", MED, 101.0),
    ("90837", "Psychotherapy, 60 minutes", MED, 149.0),
    ("80053", "Comprehensive metabolic panel", LAB, 11.0),
    ("80061", "Lipid panel", LAB, 13.4),
    ("83036", "Hemoglobin A1c", LAB, 9.7),
    ("85025", "Complete blood count with automated differential", LAB, 7.8),
    ("84443", "Thyroid stimulating hormone (TSH)", LAB, 16.8),
    ("84153", "Prostate specific antigen (PSA), total", LAB, 18.4),
    ("82306", "Vitamin D, 25-hydroxy", LAB, 29.6),
    ("81001", "Urinalysis with microscopy", LAB, 3.2),
    ("87880", "Rapid strep test", LAB, 12.1),
    ("87635", "SARS-CoV-2 (COVID-19) amplified probe test", LAB, 51.3),
    ("71046", "Chest X-ray, 2 views", RAD, 31.0),
    ("73562", "Knee X-ray, 3 views", RAD, 38.0),
    ("73610", "Ankle X-ray, 3 views", RAD, 35.0),
    ("73110", "Wrist X-ray, 3 views", RAD, 36.0),
    ("77067", "Screening mammography, bilateral", RAD, 136.0),
    ("77080", "DXA bone density study", RAD, 41.0),
    ("70450", "CT head or brain without contrast", RAD, 116.0),
    ("74177", "CT abdomen and pelvis with contrast", RAD, 312.0),
    ("72148", "MRI lumbar spine without contrast", RAD, 226.0),
    ("76805", "Obstetric ultrasound after first trimester", RAD, 127.0),
    ("93000", "Electrocardiogram, 12-lead, with interpretation", MED, 17.0),
    ("93306", "Echocardiogram, complete, with Doppler", MED, 216.0),
    ("93015", "Cardiovascular stress test", MED, 76.0),
    ("92928", "Coronary artery stent placement, single vessel", MED, 552.0),
    ("94010", "Spirometry", MED, 36.0),
    ("95810", "Sleep study, attended polysomnography", MED, 590.0),
    ("90686", "Influenza vaccine, quadrivalent, preservative free", MED, 20.5),
    ("90471", "Immunization administration, first vaccine", MED, 18.0),
    ("96372", "Therapeutic injection, subcutaneous or intramuscular", MED, 15.5),
    ("96413", "Chemotherapy intravenous infusion, first hour", MED, 141.0),
    ("97161", "Physical therapy evaluation, low complexity", MED, 101.0),
    ("97110", "Therapeutic exercise, each 15 minutes", MED, 30.5),
    ("97140", "Manual therapy, each 15 minutes", MED, 28.0),
    ("97530", "Therapeutic activities, each 15 minutes", MED, 33.0),
    ("92014", "Eye exam, established patient, comprehensive", MED, 131.0),
    ("20610", "Arthrocentesis or joint injection, major joint", SURG, 62.0),
    ("27447", "Total knee arthroplasty", SURG, 1352.0),
    ("29881", "Knee arthroscopy with meniscectomy", SURG, 521.0),
    ("45378", "Colonoscopy, diagnostic", SURG, 382.0),
    ("45380", "Colonoscopy with biopsy", SURG, 441.0),
    ("43239", "Upper GI endoscopy with biopsy", SURG, 301.0),
    ("59400", "Routine obstetric care, vaginal delivery", SURG, 2310.0),
    ("59510", "Routine obstetric care, cesarean delivery", SURG, 2605.0),
    ("11102", "Tangential biopsy of skin, single lesion", SURG, 96.0),
    ("17000", "Destruction of premalignant skin lesion, first lesion", SURG, 66.0),
    ("25600", "Closed treatment of distal radius fracture", SURG, 301.0),
    ("66984", "Cataract removal with intraocular lens", SURG, 622.0),
    ("12001", "Simple repair of superficial wound, 2.5 cm or less", SURG, 91.0),
)
# fmt: on

# --- drugs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Drug:
    key: str  # short handle used by the generator
    drug_name: str
    generic_name: str
    strength: str
    dosage_form: str
    therapeutic_class: str
    is_generic: int
    is_specialty: int
    unit_cost: float
    units_per_30_days: float  # maintenance dose; for acute drugs, quantity of one course
    acute_days: int = 0  # days supply of one course; 0 = maintenance drug

    @cached_property
    def ndc(self) -> str:
        # NDC-like 5-4-2 code, fixed per product (independent of the seed).
        digest = hashlib.sha256(f"{self.drug_name}|{self.strength}".encode()).hexdigest()
        labeler = (
            "00093",
            "00378",
            "68180",
            "00781",
            "16729",
            "00069",
            "00006",
            "00002",
            "00074",
            "50090",
        )
        return f"{labeler[int(digest[:4], 16) % len(labeler)]}-{int(digest[4:12], 16) % 10000:04d}-{int(digest[12:16], 16) % 90 + 1:02d}"


def _g(key, name, strength, form, cls, cost, units, acute_days=0, generic=None):
    return Drug(
        key, name, generic or name.lower(), strength, form, cls, 1, 0, cost, units, acute_days
    )


def _b(key, name, generic, strength, form, cls, cost, units, specialty=0, acute_days=0):
    return Drug(key, name, generic, strength, form, cls, 0, specialty, cost, units, acute_days)


# fmt: off
DRUGS: tuple[Drug, ...] = (
    _g("lisinopril10", "Lisinopril", "10 mg", "Tablet", "ACE inhibitor", 0.05, 30),
    _g("lisinopril20", "Lisinopril", "20 mg", "Tablet", "ACE inhibitor", 0.06, 30),
    _g("amlodipine", "Amlodipine", "5 mg", "Tablet", "Calcium channel blocker", 0.05, 30, generic="amlodipine besylate"),
    _g("losartan", "Losartan", "50 mg", "Tablet", "Angiotensin receptor blocker", 0.09, 30, generic="losartan potassium"),
    _g("hctz", "Hydrochlorothiazide", "25 mg", "Tablet", "Thiazide diuretic", 0.04, 30),
    _g("metoprolol", "Metoprolol Succinate ER", "50 mg", "Tablet", "Beta blocker", 0.12, 30, generic="metoprolol succinate"),
    _g("carvedilol", "Carvedilol", "12.5 mg", "Tablet", "Beta blocker", 0.05, 60),
    _g("atorvastatin20", "Atorvastatin", "20 mg", "Tablet", "Statin", 0.07, 30, generic="atorvastatin calcium"),
    _g("atorvastatin40", "Atorvastatin", "40 mg", "Tablet", "Statin", 0.09, 30, generic="atorvastatin calcium"),
    _g("rosuvastatin", "Rosuvastatin", "10 mg", "Tablet", "Statin", 0.11, 30, generic="rosuvastatin calcium"),
    _g("simvastatin", "Simvastatin", "20 mg", "Tablet", "Statin", 0.05, 30),
    _g("metformin", "Metformin", "500 mg", "Tablet", "Biguanide", 0.03, 60, generic="metformin hydrochloride"),
    _g("glipizide", "Glipizide", "5 mg", "Tablet", "Sulfonylurea", 0.06, 60),
    _b("jardiance", "Jardiance", "empagliflozin", "10 mg", "Tablet", "SGLT2 inhibitor", 19.21, 30),
    _b("januvia", "Januvia", "sitagliptin", "100 mg", "Tablet", "DPP-4 inhibitor", 17.52, 30),
    _b("ozempic", "Ozempic", "semaglutide", "1 mg/dose", "Pen injector", "GLP-1 receptor agonist", 968.0, 1),
    _b("trulicity", "Trulicity", "dulaglutide", "1.5 mg/0.5 mL", "Pen injector", "GLP-1 receptor agonist", 238.5, 4),
    _b("lantus", "Lantus", "insulin glargine", "100 units/mL", "Pen injector", "Insulin", 57.4, 5),
    _b("wegovy", "Wegovy", "semaglutide", "2.4 mg/0.75 mL", "Pen injector", "GLP-1 receptor agonist", 337.0, 4),
    _b("eliquis", "Eliquis", "apixaban", "5 mg", "Tablet", "Anticoagulant", 9.62, 60),
    _b("xarelto", "Xarelto", "rivaroxaban", "20 mg", "Tablet", "Anticoagulant", 19.05, 30),
    _g("warfarin", "Warfarin", "5 mg", "Tablet", "Anticoagulant", 0.08, 30, generic="warfarin sodium"),
    _g("clopidogrel", "Clopidogrel", "75 mg", "Tablet", "Antiplatelet", 0.08, 30, generic="clopidogrel bisulfate"),
    _b("entresto", "Entresto", "sacubitril/valsartan", "49-51 mg", "Tablet", "Heart failure agent", 10.55, 60),
    _g("furosemide", "Furosemide", "40 mg", "Tablet", "Loop diuretic", 0.04, 30),
    _b("symbicort", "Symbicort", "budesonide/formoterol", "160-4.5 mcg/actuation", "Inhaler", "Inhaled corticosteroid/LABA", 342.0, 1),
    _b("spiriva", "Spiriva Respimat", "tiotropium", "2.5 mcg/actuation", "Inhaler", "Anticholinergic bronchodilator", 521.0, 1),
    _g("albuterol", "Albuterol", "90 mcg/actuation", "Inhaler", "Short-acting bronchodilator", 28.4, 1, generic="albuterol sulfate"),
    _g("montelukast", "Montelukast", "10 mg", "Tablet", "Leukotriene receptor antagonist", 0.1, 30, generic="montelukast sodium"),
    _g("sertraline", "Sertraline", "50 mg", "Tablet", "SSRI antidepressant", 0.06, 30, generic="sertraline hydrochloride"),
    _g("escitalopram", "Escitalopram", "10 mg", "Tablet", "SSRI antidepressant", 0.07, 30, generic="escitalopram oxalate"),
    _g("bupropion", "Bupropion XL", "150 mg", "Tablet", "Antidepressant", 0.31, 30, generic="bupropion hydrochloride"),
    _g("trazodone", "Trazodone", "50 mg", "Tablet", "Antidepressant", 0.06, 30, generic="trazodone hydrochloride"),
    _g("buspirone", "Buspirone", "10 mg", "Tablet", "Anxiolytic", 0.07, 60, generic="buspirone hydrochloride"),
    _g("levothyroxine50", "Levothyroxine", "50 mcg", "Tablet", "Thyroid hormone", 0.2, 30, generic="levothyroxine sodium"),
    _g("levothyroxine100", "Levothyroxine", "100 mcg", "Tablet", "Thyroid hormone", 0.22, 30, generic="levothyroxine sodium"),
    _b("synthroid", "Synthroid", "levothyroxine sodium", "100 mcg", "Tablet", "Thyroid hormone", 1.61, 30),
    _g("omeprazole", "Omeprazole", "20 mg", "Capsule", "Proton pump inhibitor", 0.08, 30),
    _g("pantoprazole", "Pantoprazole", "40 mg", "Tablet", "Proton pump inhibitor", 0.09, 30, generic="pantoprazole sodium"),
    _g("methylphenidate", "Methylphenidate ER", "36 mg", "Tablet", "CNS stimulant", 3.2, 30, generic="methylphenidate hydrochloride"),
    _g("amphetamine", "Amphetamine-Dextroamphetamine ER", "20 mg", "Capsule", "CNS stimulant", 2.4, 30, generic="amphetamine/dextroamphetamine"),
    _g("sumatriptan", "Sumatriptan", "50 mg", "Tablet", "Triptan", 0.6, 9, generic="sumatriptan succinate"),
    _g("tretinoin", "Tretinoin", "0.05%", "Cream", "Topical retinoid", 2.5, 45),
    _g("doxycycline", "Doxycycline Hyclate", "100 mg", "Capsule", "Tetracycline antibiotic", 0.3, 60, generic="doxycycline hyclate"),
    _b("humira", "Humira", "adalimumab", "40 mg/0.4 mL", "Pen injector", "TNF inhibitor", 3452.0, 2, specialty=1),
    _g("alendronate", "Alendronate", "70 mg", "Tablet", "Bisphosphonate", 0.5, 4, generic="alendronate sodium"),
    _g("tamsulosin", "Tamsulosin", "0.4 mg", "Capsule", "Alpha blocker", 0.1, 30, generic="tamsulosin hydrochloride"),
    _g("anastrozole", "Anastrozole", "1 mg", "Tablet", "Aromatase inhibitor", 0.15, 30),
    _g("bicalutamide", "Bicalutamide", "50 mg", "Tablet", "Antiandrogen", 0.9, 30),
    _g("ergocalciferol", "Ergocalciferol", "50,000 units", "Capsule", "Vitamin D analog", 0.4, 4),
    _g("naltrexone", "Naltrexone", "50 mg", "Tablet", "Opioid antagonist", 1.1, 30, generic="naltrexone hydrochloride"),
    _g("ferrous", "Ferrous Sulfate", "325 mg", "Tablet", "Iron supplement", 0.03, 30),
    _g("gabapentin", "Gabapentin", "300 mg", "Capsule", "Anticonvulsant", 0.08, 90),
    _g("amoxicillin", "Amoxicillin", "500 mg", "Capsule", "Penicillin antibiotic", 0.09, 30, acute_days=10),
    _g("azithromycin", "Azithromycin", "250 mg", "Tablet", "Macrolide antibiotic", 0.52, 6, acute_days=5),
    _g("cephalexin", "Cephalexin", "500 mg", "Capsule", "Cephalosporin antibiotic", 0.12, 28, acute_days=7),
    _g("nitrofurantoin", "Nitrofurantoin", "100 mg", "Capsule", "Urinary anti-infective", 0.61, 10, acute_days=5,
       generic="nitrofurantoin monohydrate/macrocrystals"),
    _g("prednisone", "Prednisone", "10 mg", "Tablet", "Corticosteroid", 0.05, 21, acute_days=6),
    _g("ibuprofen", "Ibuprofen", "800 mg", "Tablet", "NSAID", 0.08, 30, acute_days=10),
    _g("cyclobenzaprine", "Cyclobenzaprine", "10 mg", "Tablet", "Muscle relaxant", 0.06, 30, acute_days=10,
       generic="cyclobenzaprine hydrochloride"),
    _g("benzonatate", "Benzonatate", "100 mg", "Capsule", "Antitussive", 0.15, 30, acute_days=10),
    _b("paxlovid", "Paxlovid", "nirmatrelvir/ritonavir", "300-100 mg", "Tablet", "Antiviral", 46.3, 30, acute_days=5),
    _g("ondansetron", "Ondansetron ODT", "4 mg", "Tablet", "Antiemetic", 0.2, 12, acute_days=4),
    _g("oxycodone", "Oxycodone-Acetaminophen", "5-325 mg", "Tablet", "Opioid analgesic", 0.21, 20, acute_days=5,
       generic="oxycodone/acetaminophen"),
    _g("fluticasone", "Fluticasone Propionate", "50 mcg/actuation", "Nasal spray", "Nasal corticosteroid", 12.1, 1, acute_days=30),
)
# fmt: on
DRUG_BY_KEY = {d.key: d for d in DRUGS}

# --- clinical model: how conditions show up in claims and fills -----------------------------


@dataclass(frozen=True)
class Condition:
    code: str
    # prevalence at ages (18, 45, 65, 80), linearly interpolated; children use `child`
    adult: tuple[float, float, float, float]
    child: float = 0.0
    sex: str | None = None  # 'F' or 'M' when sex-specific
    female_factor: float = 1.0
    specialty: str | None = None  # specialist who manages it besides primary care
    specialist_procedures: tuple[str, ...] = ()
    labs: tuple[str, ...] = ()
    imaging: tuple[str, ...] = ()  # ordered now and then at a follow-up, done by a radiologist
    drugs: tuple[str, ...] = ()  # candidate drug keys, most prescribed first
    treated_share: float = 0.75  # share of members with the condition on a maintenance drug


# fmt: off
CONDITIONS: tuple[Condition, ...] = (
    Condition("I10", (0.06, 0.22, 0.45, 0.58), drugs=("lisinopril10", "amlodipine", "losartan", "lisinopril20", "hctz", "metoprolol"),
              labs=("80053",), specialty="Cardiology", specialist_procedures=("93000",)),
    Condition("E78.5", (0.04, 0.2, 0.38, 0.42), drugs=("atorvastatin20", "atorvastatin40", "rosuvastatin", "simvastatin"),
              labs=("80061",)),
    Condition("E11.9", (0.02, 0.08, 0.18, 0.2), drugs=("metformin", "jardiance", "ozempic", "glipizide", "trulicity", "januvia", "lantus"),
              labs=("83036", "80053"), specialty="Endocrinology", specialist_procedures=("83036",), treated_share=0.85),
    Condition("E66.9", (0.1, 0.16, 0.14, 0.08), child=0.04, drugs=("wegovy",), treated_share=0.1),
    Condition("E03.9", (0.02, 0.05, 0.09, 0.1), female_factor=3.0, drugs=("levothyroxine50", "levothyroxine100", "synthroid"),
              labs=("84443",), treated_share=0.9),
    Condition("E55.9", (0.03, 0.05, 0.06, 0.07), drugs=("ergocalciferol",), labs=("82306",), treated_share=0.5),
    Condition("I25.10", (0.0, 0.03, 0.1, 0.16), drugs=("clopidogrel", "atorvastatin40"), specialty="Cardiology",
              specialist_procedures=("93000", "93306", "93015")),
    Condition("I48.91", (0.0, 0.01, 0.05, 0.1), drugs=("eliquis", "xarelto", "warfarin"), specialty="Cardiology",
              specialist_procedures=("93000",), treated_share=0.85),
    Condition("I50.9", (0.0, 0.01, 0.04, 0.09), drugs=("furosemide", "entresto", "carvedilol"), specialty="Cardiology",
              specialist_procedures=("93306",), treated_share=0.85),
    Condition("J44.9", (0.0, 0.03, 0.08, 0.1), drugs=("symbicort", "spiriva", "albuterol"), specialty="Pulmonology",
              specialist_procedures=("94010",)),
    Condition("J45.909", (0.07, 0.07, 0.06, 0.05), child=0.09, drugs=("albuterol", "montelukast", "symbicort"),
              specialty="Pulmonology", specialist_procedures=("94010",), treated_share=0.7),
    Condition("N18.30", (0.0, 0.02, 0.07, 0.12), labs=("80053",), specialty="Nephrology", specialist_procedures=("80053",),
              treated_share=0.0),
    Condition("F32.9", (0.08, 0.08, 0.06, 0.05), child=0.02, female_factor=1.6,
              drugs=("sertraline", "escitalopram", "bupropion", "trazodone"), specialty="Clinical Psychology",
              specialist_procedures=("90834", "90837")),
    Condition("F41.1", (0.08, 0.07, 0.05, 0.04), child=0.02, female_factor=1.6, drugs=("buspirone", "sertraline", "escitalopram"),
              specialty="Psychiatry", specialist_procedures=("90834",), treated_share=0.6),
    Condition("F90.0", (0.03, 0.02, 0.0, 0.0), child=0.07, drugs=("methylphenidate", "amphetamine"), specialty="Psychiatry",
              specialist_procedures=("90791",), treated_share=0.8),
    Condition("F10.20", (0.02, 0.02, 0.01, 0.0), drugs=("naltrexone",), specialty="Psychiatry", specialist_procedures=("90834",),
              treated_share=0.3),
    Condition("G43.909", (0.05, 0.05, 0.02, 0.01), female_factor=2.5, drugs=("sumatriptan",), imaging=("70450",),
              specialty="Neurology", treated_share=0.6),
    Condition("G47.33", (0.01, 0.05, 0.07, 0.05), specialty="Pulmonology", specialist_procedures=("95810",), treated_share=0.0),
    Condition("K21.9", (0.04, 0.08, 0.1, 0.1), drugs=("omeprazole", "pantoprazole"), specialty="Gastroenterology",
              specialist_procedures=("43239",), treated_share=0.7),
    Condition("M54.50", (0.06, 0.1, 0.1, 0.08), drugs=("gabapentin",), imaging=("72148",), specialty="Physical Therapy",
              specialist_procedures=("97110", "97140"), treated_share=0.2),
    Condition("M17.11", (0.0, 0.04, 0.1, 0.14), specialty="Orthopedic Surgery", specialist_procedures=("73562", "20610"),
              treated_share=0.0),
    Condition("M81.0", (0.0, 0.01, 0.08, 0.15), sex="F", drugs=("alendronate",), labs=("82306",), imaging=("77080",),
              treated_share=0.6),
    Condition("M79.7", (0.01, 0.02, 0.02, 0.01), sex="F", drugs=("gabapentin",), treated_share=0.5),
    Condition("N40.0", (0.0, 0.04, 0.2, 0.3), sex="M", drugs=("tamsulosin",), labs=("84153",), specialty="Urology", treated_share=0.7),
    Condition("L40.0", (0.02, 0.025, 0.02, 0.02), drugs=("humira",), specialty="Dermatology", specialist_procedures=("11102", "17000"),
              treated_share=0.35),
    Condition("L70.0", (0.05, 0.01, 0.0, 0.0), child=0.1, drugs=("tretinoin", "doxycycline"), specialty="Dermatology", treated_share=0.6),
    Condition("D64.9", (0.02, 0.03, 0.04, 0.06), female_factor=1.8, drugs=("ferrous",), labs=("85025",), treated_share=0.5),
    Condition("C50.911", (0.002, 0.015, 0.03, 0.03), sex="F", imaging=("77067",), drugs=("anastrozole",), specialty="Hematology and Oncology",
              specialist_procedures=("96413", "85025"), treated_share=0.8),
    Condition("C61", (0.0, 0.003, 0.03, 0.05), sex="M", drugs=("bicalutamide",), labs=("84153",), specialty="Urology",
              specialist_procedures=("84153",), treated_share=0.5),
    Condition("H25.9", (0.0, 0.01, 0.08, 0.2), specialty="Ophthalmology", specialist_procedures=("92014",), treated_share=0.0),
)
# fmt: on
CONDITION_BY_CODE = {c.code: c for c in CONDITIONS}

# Acute problems seen at an office, urgent care or telehealth visit:
# (diagnosis, relative frequency, child factor, test code or None, drug key or None, drug probability)
# fmt: off
ACUTE_PROBLEMS: tuple[tuple[str, float, float, str | None, str | None, float], ...] = (
    ("J06.9", 10.0, 1.5, None, "azithromycin", 0.2),
    ("J02.9", 5.0, 2.0, "87880", "amoxicillin", 0.6),
    ("U07.1", 4.0, 0.6, "87635", "paxlovid", 0.3),
    ("J01.90", 3.5, 0.6, None, "fluticasone", 0.5),
    ("R05.9", 3.0, 1.0, "71046", "benzonatate", 0.4),
    ("J20.9", 3.0, 0.8, None, "prednisone", 0.3),
    ("N39.0", 3.0, 0.3, "81001", "nitrofurantoin", 0.8),
    ("H66.90", 2.5, 4.0, None, "amoxicillin", 0.8),
    ("R51.9", 2.0, 0.6, None, None, 0.0),
    ("M25.561", 2.0, 0.3, "73562", "ibuprofen", 0.4),
    ("S93.401A", 1.5, 1.0, "73610", "ibuprofen", 0.5),
    ("R10.9", 1.5, 0.8, "81001", "ondansetron", 0.2),
    ("K57.30", 0.6, 0.0, None, None, 0.0),
    ("M54.50", 2.0, 0.1, None, "cyclobenzaprine", 0.5),  # a flare of chronic back pain
)
# fmt: on


# Primary care preventive visit code by age.
def preventive_code(age: int) -> str:
    if age < 1:
        return "99391"
    if age < 5:
        return "99392"
    if age < 12:
        return "99393"
    if age < 18:
        return "99394"
    if age < 40:
        return "99395"
    if age < 65:
        return "99396"
    return "99397"


# Denials with no specific trigger, by relative frequency. Duplicates, late filing, out-of-network
# care and services after coverage ended are denied by rule (see ``synth/adjudication.py``).
OTHER_DENIAL_REASONS: tuple[tuple[str, float], ...] = (
    ("Missing or invalid information", 0.3),
    ("Service not covered", 0.22),
    ("Prior authorization required", 0.18),
    ("Medical necessity not established", 0.3),
)
