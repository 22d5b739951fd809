"""Static reference data of the work-item generator: the product tree, SLA targets, and the
word lists names and titles are made of."""

from __future__ import annotations

# product -> (topic tags of its work, {capability: features})
PRODUCTS: dict[str, tuple[tuple[str, ...], dict[str, tuple[str, ...]]]] = {
    "Unified Inbox": (
        ("email", "chat", "routing", "portal", "notifications"),
        {
            "Email Channel": ("Shared Mailboxes", "Email Templates", "Auto Replies", "Attachments"),
            "Live Chat": ("Chat Widget", "Canned Responses", "Chat Routing", "Typing Indicators"),
            "Routing Rules": (
                "Skills Routing",
                "Round Robin",
                "Escalation Rules",
                "Business Hours",
            ),
            "Customer Portal": (
                "Portal Search",
                "Ticket Forms",
                "Portal Branding",
                "Knowledge Articles",
            ),
        },
    ),
    "Analytics Studio": (
        ("reporting", "dashboards", "data-export", "performance", "integrations"),
        {
            "Dashboards": (
                "Widget Library",
                "Dashboard Sharing",
                "Scheduled Snapshots",
                "Drilldowns",
            ),
            "Reports": ("Report Builder", "CSV Export", "PDF Export", "Report Scheduling"),
            "Data Connectors": (
                "Snowflake Connector",
                "Salesforce Sync",
                "Webhook Ingest",
                "S3 Import",
            ),
            "Alerts": ("Threshold Alerts", "Anomaly Detection", "Alert Digests", "Slack Alerts"),
        },
    ),
    "Workflow Engine": (
        ("automation", "approvals", "integrations", "forms", "performance"),
        {
            "Automations": ("Trigger Editor", "Scheduled Jobs", "Action Library", "Run History"),
            "Approvals": ("Approval Chains", "Delegation", "Approval Reminders", "Audit Trail"),
            "Forms": ("Form Builder", "Conditional Fields", "File Uploads", "Form Validation"),
            "Integrations": ("Jira Sync", "GitHub App", "Zapier Connector", "REST Actions"),
        },
    ),
    "Identity & Access": (
        ("login", "sso", "permissions", "security", "audit"),
        {
            "Single Sign-On": ("SAML SSO", "OIDC Login", "SCIM Provisioning", "Session Policies"),
            "Permissions": (
                "Role Editor",
                "Field-Level Security",
                "Sharing Rules",
                "Permission Audit",
            ),
            "Authentication": (
                "Password Policies",
                "Multi-Factor Auth",
                "Magic Links",
                "Login Throttling",
            ),
            "Audit Logs": ("Log Explorer", "Log Export", "Retention Settings", "Anomaly Flags"),
        },
    ),
    "Developer Platform": (
        ("api", "webhooks", "sdk", "rate-limits", "integrations"),
        {
            "Public API": ("REST Endpoints", "Rate Limits", "API Keys", "Pagination"),
            "Webhooks": (
                "Webhook Delivery",
                "Retry Policies",
                "Signature Verification",
                "Event Catalog",
            ),
            "SDKs": ("JavaScript SDK", "Python SDK", "Mobile SDK", "SDK Auth"),
            "Sandbox": ("Sandbox Orgs", "Data Seeding", "Sandbox Refresh", "Test Mode"),
        },
    ),
}
GENERIC_TOPICS = ("billing", "onboarding", "mobile")

# tier -> (policy name, {severity: (first response minutes, resolution minutes)})
SLA_POLICIES: dict[str, tuple[str, dict[str, tuple[int, int]]]] = {
    "strategic": (
        "Premier",
        {"blocker": (15, 480), "high": (60, 1440), "medium": (240, 4320), "low": (480, 10080)},
    ),
    "enterprise": (
        "Enterprise Plus",
        {"blocker": (30, 1440), "high": (120, 2880), "medium": (480, 7200), "low": (1440, 14400)},
    ),
    "growth": (
        "Growth Standard",
        {"blocker": (60, 2880), "high": (240, 5760), "medium": (1440, 14400), "low": (2880, 28800)},
    ),
    "starter": (
        "Starter Basic",
        {
            "blocker": (240, 4320),
            "high": (480, 10080),
            "medium": (2880, 20160),
            "low": (4320, 43200),
        },
    ),
}

FIRST_NAMES = (
    "Aarav Abigail Adaeze Ahmed Aiko Alejandro Amara Ana Anders Anika Arjun Ava Bao Beatriz Ben "
    "Carlos Chen Chloe Chidi Daniel Dara Diego Elena Emeka Emma Erik Fatima Felix Freya Gabriel "
    "Grace Hana Hassan Ines Isaac Ivan Jamal Javier Jin Jonas Julia Kai Kavya Kenji Laila Leo "
    "Lucia Malik Maria Mateo Maya Mei Mohammed Nadia Naomi Nia Noah Olga Omar Priya Rafael Ravi "
    "Rosa Ruth Sakura Samuel Sara Sofia Tariq Tomas Valentina Wei Yara Yusuf Zara Zoe"
).split()
LAST_NAMES = (
    "Adeyemi Alvarez Andersen Bauer Becker Brown Castillo Chen Costa Das Dubois Eriksen Fischer "
    "Garcia Gupta Haddad Hansen Hoffmann Ibrahim Ito Jensen Johnson Kang Kim Kowalski Kumar Larsen "
    "Lee Lopez Martin Meyer Mohamed Moreau Murphy Nakamura Nguyen Novak Okafor Olsen Park Patel "
    "Petrov Popescu Rahman Reyes Rossi Santos Schmidt Shah Silva Singh Smith Sokolov Suzuki Tanaka "
    "Torres Wagner Walker Wang Weber Williams Wong Yamamoto Young Zhang"
).split()

COMPANY_PREFIXES = (
    "Acme Apex Bluewater Brightline Cedar Cobalt Crestview Delta Evergreen Falcon Granite Harbor "
    "Ironwood Juniper Keystone Lumen Maple Nimbus Northwind Orbit Pioneer Quantum Redwood Silverline "
    "Summit Terra Unity Vertex Willow Zenith"
).split()
COMPANY_SUFFIXES = (
    "Analytics Bank Health Labs Logistics Media Retail Systems Works Capital Foods Energy Learning "
    "Motors Networks Partners Pharma Robotics Software Telecom Travel Insurance Markets Studios"
).split()
COMPANY_FORMS = ("", " Group", " Holdings")
REV_ORG_UNITS = (
    "Headquarters",
    "Finance",
    "IT",
    "Operations",
    "Customer Care",
    "Marketing",
    "R&D",
    "EMEA Operations",
    "APAC Operations",
    "Sales",
    "Legal",
    "HR",
    "Procurement",
    "Data Team",
)

TICKET_TITLES = (
    "{part} not working",
    "Cannot access {part}",
    "Question about {part}",
    "{part} is slow",
    "Error when using {part}",
    "How do I configure {part}?",
    "{part} shows wrong data",
    "{part} stopped working after the update",
    "Unexpected behaviour in {part}",
    "Need help setting up {part}",
)
BUG_SYMPTOMS = (
    "fails to load",
    "times out",
    "returns 500",
    "shows wrong totals",
    "drops attachments",
    "ignores time zone",
    "crashes on save",
    "duplicates records",
    "slow for large accounts",
    "loses settings after upgrade",
    "applies wrong permissions",
    "missing translations",
)
SECURITY_FINDINGS = (
    "token leaks in logs",
    "missing rate limit",
    "stored XSS in name field",
    "session not revoked",
    "weak default permissions",
    "outdated TLS configuration",
)
ENHANCEMENT_TITLES = (
    "Bulk edit in {part}",
    "Custom fields for {part}",
    "Faster {part}",
    "Export {part} to Excel",
    "Mobile support for {part}",
    "Change history for {part}",
    "API parity for {part}",
    "Granular permissions for {part}",
    "Localisation of {part}",
    "Templates for {part}",
)
CONVERSATION_TITLES = (
    "Question about {part}",
    "Help with {part}",
    "{part} issue",
    "Feedback on {part}",
    "Billing question",
    "Trouble signing in",
    "Where do I find {part}?",
)
