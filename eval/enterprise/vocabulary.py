"""The fixed vocabularies of the work-item database's enum-like columns, each label with what it
denotes. The generator draws from them and the column comments list them, so the two agree.

    >>> labels(TICKET_STAGES)[:2]
    ('queued', 'work_in_progress')
"""

from __future__ import annotations

Vocabulary = tuple[tuple[str, str], ...]  # (label, meaning)


def labels(vocabulary: Vocabulary) -> tuple[str, ...]:
    return tuple(label for label, _ in vocabulary)


def described(vocabulary: Vocabulary) -> str:
    """``'a' (meaning), 'b' (meaning)`` for a column comment."""
    return "; ".join(f"'{label}' = {meaning}" for label, meaning in vocabulary)


TICKET_STAGES: Vocabulary = (
    ("queued", "open, waiting for a support engineer to pick it up"),
    ("work_in_progress", "open, a support engineer is working on it"),
    ("awaiting_customer_response", "open, waiting for the customer to answer"),
    ("awaiting_product_assist", "open, support asked product or engineering for help"),
    ("awaiting_development", "open, waiting for an engineering fix or feature"),
    ("resolved", "closed, the customer's problem was solved"),
    ("canceled", "closed without a resolution (a duplicate, withdrawn, or spam)"),
)
TICKET_CLOSED_STAGES = ("resolved", "canceled")

ISSUE_STAGES: Vocabulary = (
    ("triage", "open, new and not yet assessed"),
    ("backlog", "open, accepted but not scheduled"),
    ("prioritized", "open, scheduled for an upcoming sprint"),
    ("in_development", "open, being built"),
    ("in_review", "open, code written and under review or test"),
    ("completed", "closed, the fix or task shipped"),
    ("wont_fix", "closed without a change (a duplicate, not reproducible, or declined)"),
)
ISSUE_CLOSED_STAGES = ("completed", "wont_fix")

ENHANCEMENT_STAGES: Vocabulary = (
    ("ideation", "a proposal being shaped, not committed"),
    ("prioritized", "committed to a target release"),
    ("in_development", "being built"),
    ("beta", "available to beta customers"),
    ("released", "generally available"),
    ("deferred", "shelved for now"),
)

CONVERSATION_STAGES: Vocabulary = (
    ("needs_response", "open, the customer wrote last and waits for an answer"),
    ("waiting_on_customer", "open, the team answered and waits for the customer"),
    ("resolved", "closed, the question was answered"),
    ("archived", "closed without an answer needed (spam, auto-replies, thank-you notes)"),
)
CONVERSATION_CLOSED_STAGES = ("resolved", "archived")

SEVERITIES: Vocabulary = (
    ("blocker", "the customer cannot work at all"),
    ("high", "a key workflow is broken"),
    ("medium", "degraded, with a workaround"),
    ("low", "a question or cosmetic problem"),
)

PRIORITIES: Vocabulary = (
    ("p0", "drop everything"),
    ("p1", "this sprint"),
    ("p2", "this quarter"),
    ("p3", "when there is room"),
)

ISSUE_TYPES: Vocabulary = (
    ("bug", "a defect in shipped behaviour"),
    ("task", "planned work, usually part of an enhancement"),
    ("tech_debt", "internal clean-up"),
    ("security", "a vulnerability or hardening item"),
)

SENTIMENTS: Vocabulary = (
    ("positive", "the customer sounds pleased"),
    ("neutral", "matter-of-fact"),
    ("negative", "the customer sounds unhappy"),
    ("frustrated", "the customer is angry or threatens to leave"),
)

TICKET_CHANNELS: Vocabulary = (
    ("email", "a support e-mail"),
    ("portal", "the customer support portal"),
    ("chat", "the in-app chat widget"),
    ("slack", "a shared Slack channel"),
    ("phone", "a phone call"),
    ("api", "created by the customer's own integration through the API"),
)
CONVERSATION_CHANNELS: Vocabulary = (
    ("chat", "the in-app chat widget"),
    ("email", "a support e-mail"),
    ("slack", "a shared Slack channel"),
    ("portal", "the customer support portal"),
    ("whatsapp", "a WhatsApp business thread"),
)

ACCOUNT_TIERS: Vocabulary = (
    ("strategic", "the largest customers, named executive sponsor, premier SLA"),
    ("enterprise", "large customers with a dedicated success manager"),
    ("growth", "mid-size customers"),
    ("starter", "small self-serve customers"),
)
ACCOUNT_HEALTH: Vocabulary = (
    ("healthy", "no concern"),
    ("watch", "some warning signs"),
    ("at_risk", "likely to churn or shrink at renewal"),
)
REGIONS: Vocabulary = (
    ("north_america", "United States and Canada"),
    ("emea", "Europe, Middle East and Africa"),
    ("apac", "Asia-Pacific"),
    ("latam", "Latin America"),
)
INDUSTRIES: Vocabulary = (
    ("fintech", "financial services and payments"),
    ("healthcare", "providers, payers and health tech"),
    ("retail", "retail and e-commerce"),
    ("saas", "software companies"),
    ("manufacturing", "manufacturing and logistics"),
    ("education", "schools, universities, ed tech"),
    ("public_sector", "government agencies"),
    ("media", "media and entertainment"),
)

PART_TYPES: Vocabulary = (
    ("product", "a product sold on its own, the top of the part tree"),
    ("capability", "a functional area of a product; its parent is a product"),
    ("feature", "a feature of a capability; its parent is a capability"),
)
PART_LIFECYCLES: Vocabulary = (
    ("general_availability", "sold and supported"),
    ("beta", "in beta with selected customers"),
    ("deprecated", "being retired, no new customers"),
)

USER_TITLES: Vocabulary = (
    ("support_engineer", "answers tickets and conversations"),
    ("support_lead", "leads a support team"),
    ("software_engineer", "builds and fixes the product"),
    ("engineering_manager", "manages an engineering team"),
    ("product_manager", "owns parts and enhancements"),
    ("account_executive", "sells to and renews accounts"),
    ("customer_success_manager", "looks after accounts after the sale"),
    ("executive", "a director or vice president"),
)
USER_STATES: Vocabulary = (
    ("active", "can sign in"),
    ("deactivated", "left the company; still named on the items they owned"),
)

# Link types, each with its inverse: every link is stored on both of its ends.
LINK_TYPES: Vocabulary = (
    ("is_resolved_by", "ticket -> issue whose fix resolves the ticket (inverse: resolves)"),
    ("resolves", "issue -> ticket it resolves (inverse: is_resolved_by)"),
    ("is_blocked_by", "ticket or issue -> issue that must finish first (inverse: blocks)"),
    ("blocks", "issue -> ticket or issue waiting on it (inverse: is_blocked_by)"),
    ("duplicates", "ticket -> earlier ticket, issue -> earlier issue it repeats"),
    ("is_duplicated_by", "the earlier item -> its duplicate (inverse of duplicates)"),
    ("parent_of", "enhancement -> issue that implements part of it (inverse: child_of)"),
    ("child_of", "issue -> enhancement it belongs to (inverse: parent_of)"),
    ("converted_to", "conversation -> ticket opened from it (inverse: converted_from)"),
    ("converted_from", "ticket -> conversation it was opened from (inverse: converted_to)"),
    ("relates_to", "a loose relation in either direction, e.g. a ticket asking for an enhancement"),
)
INVERSE_LINK = {
    "is_resolved_by": "resolves",
    "resolves": "is_resolved_by",
    "is_blocked_by": "blocks",
    "blocks": "is_blocked_by",
    "duplicates": "is_duplicated_by",
    "is_duplicated_by": "duplicates",
    "parent_of": "child_of",
    "child_of": "parent_of",
    "converted_to": "converted_from",
    "converted_from": "converted_to",
    "relates_to": "relates_to",
}
LINK_TARGET_TYPES: Vocabulary = (
    ("ticket", "display_id starts with TKT-"),
    ("issue", "display_id starts with ISS-"),
    ("enhancement", "display_id starts with ENH-"),
    ("conversation", "display_id starts with CONV-"),
)

TAG_TYPES: Vocabulary = (
    ("topic", "what the item is about (billing, login, performance, ...)"),
    ("signal", "a flag for attention (vip, churn-risk, regression, ...)"),
    ("release", "the release an item ships in, named release-YYYY.Q"),
    ("segment", "a customer segment label on an account"),
)
TAG_SOURCES: Vocabulary = (
    ("manual", "added by a person"),
    ("rule", "added by an automation rule"),
    ("ai", "suggested by the AI classifier and kept"),
)

ITEM_OWNER_ROLES: Vocabulary = (
    ("primary", "the one accountable owner; every item has exactly one"),
    ("secondary", "a helper; zero to two per item"),
)
ACCOUNT_OWNER_ROLES: Vocabulary = (
    ("account_executive", "the seller who owns the commercial relationship; one per account"),
    ("customer_success_manager", "the success manager; none for starter accounts"),
)

SLA_TRACKER_STATUSES: Vocabulary = (
    ("running", "the ticket is open and its clocks are counting"),
    ("paused", "the ticket waits for the customer, so its clocks are stopped"),
    ("completed", "the ticket is closed; the clocks are final"),
)
