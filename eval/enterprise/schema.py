"""The work-item database's schema, declared once: the DDL and every ``COMMENT ON`` come from
these specs, and the generator fills the columns in this order.

Nested columns: typed, polymorphic ``links`` arrays, ``tags`` and ``owned_by`` arrays of
structs, a ``surveys_aggregation`` record, and a ``sla_tracker`` object four levels deep
(``sla_tracker.policy.targets.first_response.breached``).

    >>> [t.name for t in TABLES][:3]
    ['users', 'parts', 'accounts']
    >>> TICKETS.ddl().splitlines()[0]
    'CREATE TABLE tickets ('
"""

from __future__ import annotations

from core.types import Frozen
from eval.embedded_benchmark import create_table
from eval.enterprise import vocabulary as v

LINKS_TYPE = "STRUCT(type VARCHAR, target_type VARCHAR, display_id VARCHAR, linked_at TIMESTAMP)[]"
TAGS_TYPE = "STRUCT(name VARCHAR, type VARCHAR, source VARCHAR)[]"
OWNERS_TYPE = "STRUCT(user_id VARCHAR, display_name VARCHAR, role VARCHAR)[]"
SURVEYS_TYPE = (
    "STRUCT(surveys_sent INTEGER, responses INTEGER, csat_sum INTEGER, csat_average DOUBLE, "
    "satisfied INTEGER, dissatisfied INTEGER)"
)
_CLOCK = "STRUCT(target_minutes INTEGER, elapsed_minutes INTEGER, breached BOOLEAN)"
SLA_TRACKER_TYPE = (
    "STRUCT(status VARCHAR, policy STRUCT(name VARCHAR, "
    f"targets STRUCT(first_response {_CLOCK}, resolution {_CLOCK})))"
)


class Column(Frozen):
    name: str
    type: str  # DuckDB type
    comment: str
    not_null: bool = False
    references: tuple[str, str] | None = None  # (table, column)


class Table(Frozen):
    name: str
    comment: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]

    @property
    def self_reference(self) -> str | None:
        """The column that references this table's own key (a tree: parts, users), if any."""
        return next(
            (c.name for c in self.columns if c.references and c.references[0] == self.name), None
        )

    def ddl(self) -> str:
        columns = [(c.name, c.type, c.not_null, c.references) for c in self.columns]
        return create_table(self.name, columns, self.primary_key)

    def comments(self) -> list[str]:
        """``COMMENT ON`` statements for the table and every column."""
        out = [f"COMMENT ON TABLE {self.name} IS {_literal(self.comment)}"]
        out += [
            f"COMMENT ON COLUMN {self.name}.{c.name} IS {_literal(c.comment)}" for c in self.columns
        ]
        return out


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _vocab(vocabulary: v.Vocabulary) -> str:
    return f"One of: {v.described(vocabulary)}."


# Columns are NOT NULL unless marked nullable; a nullable column's comment says when it is NULL.
def _col(
    name: str,
    sql_type: str,
    comment: str,
    *,
    nullable: bool = False,
    references: tuple[str, str] | None = None,
) -> Column:
    return Column(
        name=name, type=sql_type, comment=comment, not_null=not nullable, references=references
    )


def _key(name: str, what: str, prefix: str) -> Column:
    return _col(name, "VARCHAR", f"Key of the {what}, '{prefix}-' followed by a number.")


def _ref(name: str, table: str, column: str, comment: str, *, nullable: bool = False) -> Column:
    return _col(name, "VARCHAR", comment, nullable=nullable, references=(table, column))


def _enum(name: str, comment: str, vocabulary: v.Vocabulary) -> Column:
    return _col(name, "VARCHAR", f"{comment} {_vocab(vocabulary)}")


def _stage(stages: v.Vocabulary, closed: tuple[str, ...]) -> Column:
    return _enum("stage", f"Workflow stage; {' and '.join(closed)} are the closed stages.", stages)


def _flag(name: str, when: str) -> Column:
    """A 0/1 INTEGER, said in its comment so that it is not read as a count."""
    return _col(name, "INTEGER", f"Flag, not a count: 1 if {when}, else 0.")


def _owned_by(what: str, roles: v.Vocabulary) -> Column:
    return _col(
        "owned_by",
        OWNERS_TYPE,
        f"Users who own {what}: a list of typed user references. user_id joins users.user_id; "
        "display_name is the user's name when assigned; role is the kind of ownership. "
        f"role is one of: {v.described(roles)}.",
    )


def _tags(what: str) -> Column:
    return _col(
        "tags",
        TAGS_TYPE,
        f"Labels on {what}, a list (possibly empty), each label once. name is the label "
        f"(e.g. 'billing', 'churn-risk', 'release-2025.3'); type is one of: "
        f"{v.described(v.TAG_TYPES)}; source is one of: {v.described(v.TAG_SOURCES)}.",
    )


def _links(what: str, kinds: str) -> Column:
    return _col(
        "links",
        LINKS_TYPE,
        f"Typed links from {what} to other work items, a list (possibly empty). type is the "
        f"relation from this item to the target ({kinds}); target_type says which table holds "
        "the target, the table of that name in the plural (one of: "
        f"{v.described(v.LINK_TARGET_TYPES)}), and display_id is its key there; linked_at is "
        "when the link was made. "
        "Every link is also stored on the target with the inverse type. All link types: "
        f"{v.described(v.LINK_TYPES)}.",
    )


def _surveys(what: str) -> Column:
    return _col(
        "surveys_aggregation",
        SURVEYS_TYPE,
        f"Customer satisfaction (CSAT) survey results of {what}; NULL when no survey was sent "
        "(only closed items get one). surveys_sent = surveys sent (count); responses = surveys "
        "answered (count, may be 0); csat_sum = sum of the 1-5 scores given; csat_average = "
        "csat_sum / responses (NULL when responses = 0); satisfied = answers scoring 4 or 5 "
        "(count); dissatisfied = answers scoring 1 or 2 (count).",
        nullable=True,
    )


USERS = Table(
    name="users",
    comment="People of the vendor's own organisation (dev users): support, engineering, product, "
    "sales, customer success and executives. Customers are not users.",
    primary_key=("user_id",),
    columns=(
        _key("user_id", "user", "DEVU"),
        _col("display_name", "VARCHAR", "Full name of the user."),
        _col("email", "VARCHAR", "Work e-mail address of the user."),
        _enum("title", "Job title of the user.", v.USER_TITLES),
        _col(
            "team",
            "VARCHAR",
            "Team the user belongs to, e.g. 'Support Tier 1', 'Analytics Studio Engineering', "
            "'Sales EMEA'.",
        ),
        _ref(
            "manager_id",
            "users",
            "user_id",
            "user_id of the user's manager; NULL for the chief executive.",
            nullable=True,
        ),
        _enum("state", "Whether the user still works here.", v.USER_STATES),
        _col("joined_date", "DATE", "Date the user joined the company."),
    ),
)

PARTS = Table(
    name="parts",
    comment="The product catalogue as a tree of parts: products contain capabilities, "
    "capabilities contain features. Work items say which part they apply to.",
    primary_key=("part_id",),
    columns=(
        _col(
            "part_id",
            "VARCHAR",
            "Key of the part: 'PROD-', 'CAPL-' or 'FEAT-' followed by a number, by part_type.",
        ),
        _col("name", "VARCHAR", "Name of the part, e.g. 'Analytics Studio'."),
        _enum("part_type", "Level of the part in the tree.", v.PART_TYPES),
        _ref(
            "parent_part_id",
            "parts",
            "part_id",
            "part_id of the part one level up (a feature's capability, a capability's "
            "product); NULL for products.",
            nullable=True,
        ),
        _enum("lifecycle", "Commercial lifecycle of the part.", v.PART_LIFECYCLES),
        _owned_by("the part (product managers and engineering managers)", v.ITEM_OWNER_ROLES),
        _col("created_date", "DATE", "Date the part was added to the catalogue."),
    ),
)

ACCOUNTS = Table(
    name="accounts",
    comment="Customer companies. Their people and tickets belong to rev orgs (rev_orgs), "
    "each of which belongs to one account.",
    primary_key=("account_id",),
    columns=(
        _key("account_id", "account", "ACC"),
        _col("display_name", "VARCHAR", "Name of the customer company."),
        _enum(
            "tier",
            "Commercial tier; it decides the SLA policy of the account's tickets.",
            v.ACCOUNT_TIERS,
        ),
        _enum("industry", "Industry of the customer.", v.INDUSTRIES),
        _enum("region", "Sales region of the customer.", v.REGIONS),
        _col(
            "arr_usd",
            "INTEGER",
            "Annual recurring revenue of the account's contract, in US dollars.",
        ),
        _col("customer_since", "DATE", "Date the first contract started."),
        _col("renewal_date", "DATE", "Date the current contract renews."),
        _enum("health", "Customer success team's health rating.", v.ACCOUNT_HEALTH),
        _owned_by("the account (its seller and success manager)", v.ACCOUNT_OWNER_ROLES),
        _tags("the account"),
    ),
)

REV_ORGS = Table(
    name="rev_orgs",
    comment="Customer organisations (rev orgs): business units or workspaces of an account. "
    "Tickets and conversations name the rev org they come from; reach the account through "
    "rev_orgs.account_id.",
    primary_key=("rev_org_id",),
    columns=(
        _key("rev_org_id", "rev org", "REV"),
        _ref("account_id", "accounts", "account_id", "Account the rev org belongs to."),
        _col("display_name", "VARCHAR", "Name of the unit, e.g. 'Acme Corp - Finance'."),
        _col("created_date", "DATE", "Date the rev org was set up."),
    ),
)

SLA_POLICIES = Table(
    name="sla_policies",
    comment="Service-level agreement targets: one policy per account tier, one row per ticket "
    "severity. A ticket's sla_tracker.policy.name names its policy.",
    primary_key=("policy_name", "severity"),
    columns=(
        _col("policy_name", "VARCHAR", "Name of the policy, e.g. 'Premier'."),
        _enum("severity", "Ticket severity the targets apply to.", v.SEVERITIES),
        _enum("account_tier", "Account tier the policy covers.", v.ACCOUNT_TIERS),
        _col(
            "first_response_target_minutes",
            "INTEGER",
            "Minutes allowed from ticket creation to the first response.",
        ),
        _col(
            "resolution_target_minutes",
            "INTEGER",
            "Minutes allowed from ticket creation to closing it, excluding time paused while "
            "waiting for the customer.",
        ),
    ),
)

ENHANCEMENTS = Table(
    name="enhancements",
    comment="Product enhancements (feature requests and roadmap items) owned by product managers.",
    primary_key=("display_id",),
    columns=(
        _key("display_id", "enhancement", "ENH"),
        _col("title", "VARCHAR", "Short description of the enhancement."),
        _ref("applies_to_part_id", "parts", "part_id", "Part the enhancement changes."),
        _enum("stage", "Roadmap stage.", v.ENHANCEMENT_STAGES),
        _col(
            "target_release",
            "VARCHAR",
            "Release planned for it, 'YYYY.Q' (e.g. '2025.3' = third quarter of 2025); NULL while "
            "in ideation or deferred.",
            nullable=True,
        ),
        _col(
            "customer_votes", "INTEGER", "Number of customer votes on the public roadmap (a count)."
        ),
        _col("created_at", "TIMESTAMP", "When the enhancement was created."),
        _col(
            "released_at",
            "TIMESTAMP",
            "When it became generally available; NULL unless released.",
            nullable=True,
        ),
        _owned_by("the enhancement", v.ITEM_OWNER_ROLES),
        _tags("the enhancement"),
        _links(
            "the enhancement",
            "'parent_of' -> issue implementing it; 'relates_to' -> ticket asking for it",
        ),
    ),
)

ISSUES = Table(
    name="issues",
    comment="Engineering work items: bugs, tasks, tech debt and security items.",
    primary_key=("display_id",),
    columns=(
        _key("display_id", "issue", "ISS"),
        _col("title", "VARCHAR", "Short description of the issue."),
        _ref("applies_to_part_id", "parts", "part_id", "Part the issue is about."),
        _enum("issue_type", "Kind of work.", v.ISSUE_TYPES),
        _enum("priority", "Engineering priority.", v.PRIORITIES),
        _stage(v.ISSUE_STAGES, v.ISSUE_CLOSED_STAGES),
        _col("story_points", "INTEGER", "Estimated effort in story points (1, 2, 3, 5, 8 or 13)."),
        _col("created_at", "TIMESTAMP", "When the issue was created."),
        _col(
            "target_close_date",
            "DATE",
            "Date the team committed to close it; NULL if none.",
            nullable=True,
        ),
        _col(
            "closed_at",
            "TIMESTAMP",
            "When the issue reached 'completed' or 'wont_fix'; NULL while open.",
            nullable=True,
        ),
        _owned_by("the issue (engineers)", v.ITEM_OWNER_ROLES),
        _tags("the issue"),
        _links(
            "the issue",
            "'resolves' -> ticket, 'blocks' -> ticket or issue, 'is_blocked_by' -> issue, "
            "'duplicates' / 'is_duplicated_by' -> issue, 'child_of' -> enhancement, "
            "'relates_to' -> ticket or conversation",
        ),
    ),
)

TICKETS = Table(
    name="tickets",
    comment="Customer support tickets. The customer is the ticket's rev org "
    "(rev_orgs, then accounts).",
    primary_key=("display_id",),
    columns=(
        _key("display_id", "ticket", "TKT"),
        _col("title", "VARCHAR", "Subject line of the ticket."),
        _ref("rev_org_id", "rev_orgs", "rev_org_id", "Customer organisation that raised it."),
        _ref("applies_to_part_id", "parts", "part_id", "Part the ticket is about."),
        _enum("severity", "Impact on the customer.", v.SEVERITIES),
        _stage(v.TICKET_STAGES, v.TICKET_CLOSED_STAGES),
        _enum("channel", "Where the ticket came in.", v.TICKET_CHANNELS),
        _enum(
            "sentiment",
            "Customer sentiment detected on the ticket's latest messages.",
            v.SENTIMENTS,
        ),
        _flag("is_escalated", "the ticket was escalated to the escalation team"),
        _col(
            "reopen_count",
            "INTEGER",
            "Number of times the ticket was reopened after being resolved (a count, 0 if never).",
        ),
        _col("created_at", "TIMESTAMP", "When the ticket was created."),
        _col(
            "first_response_at",
            "TIMESTAMP",
            "When the support team first answered; NULL if nobody has yet.",
            nullable=True,
        ),
        _col(
            "closed_at",
            "TIMESTAMP",
            "When the ticket reached a closed stage; NULL while open.",
            nullable=True,
        ),
        _owned_by("the ticket (support engineers)", v.ITEM_OWNER_ROLES),
        _tags("the ticket"),
        _links(
            "the ticket",
            "'is_resolved_by' -> issue, 'is_blocked_by' -> issue, 'duplicates' / "
            "'is_duplicated_by' -> ticket, 'converted_from' -> conversation, 'relates_to' -> "
            "issue or enhancement",
        ),
        _col(
            "sla_tracker",
            SLA_TRACKER_TYPE,
            "SLA clocks of the ticket. status is one of: "
            f"{v.described(v.SLA_TRACKER_STATUSES)}. policy.name names the sla_policies row "
            "(with the ticket's severity) whose targets apply. policy.targets.first_response and "
            "policy.targets.resolution each hold target_minutes (minutes allowed), "
            "elapsed_minutes (minutes counted so far, or until the response / closing; NULL for "
            "a first response that has not happened) and breached (true if the elapsed time "
            "went past the target).",
        ),
        _surveys("the ticket"),
    ),
)

CONVERSATIONS = Table(
    name="conversations",
    comment="Customer conversations on chat, e-mail, Slack, the portal and WhatsApp; some are "
    "converted into tickets.",
    primary_key=("display_id",),
    columns=(
        _key("display_id", "conversation", "CONV"),
        _col("title", "VARCHAR", "Subject or first line of the conversation."),
        _ref("rev_org_id", "rev_orgs", "rev_org_id", "Customer organisation of the conversation."),
        _enum("channel", "Where the conversation happens.", v.CONVERSATION_CHANNELS),
        _stage(v.CONVERSATION_STAGES, v.CONVERSATION_CLOSED_STAGES),
        _enum("sentiment", "Customer sentiment over the conversation.", v.SENTIMENTS),
        _col("message_count", "INTEGER", "Number of messages exchanged (a count)."),
        _col(
            "first_response_minutes",
            "INTEGER",
            "Minutes until the first answer (by a person or the bot); NULL if none yet.",
            nullable=True,
        ),
        _flag("bot_resolved", "the AI agent answered it without a person"),
        _col("started_at", "TIMESTAMP", "When the customer's first message arrived."),
        _col("last_message_at", "TIMESTAMP", "When the latest message was sent."),
        _owned_by(
            "the conversation (support engineers; empty when the bot handled it)",
            v.ITEM_OWNER_ROLES,
        ),
        _tags("the conversation"),
        _links(
            "the conversation",
            "'converted_to' -> ticket opened from it, 'relates_to' -> issue",
        ),
        _surveys("the conversation"),
    ),
)

# In insertion order: every table comes after the tables it references.
TABLES: tuple[Table, ...] = (
    USERS,
    PARTS,
    ACCOUNTS,
    REV_ORGS,
    SLA_POLICIES,
    ENHANCEMENTS,
    ISSUES,
    TICKETS,
    CONVERSATIONS,
)
