"""The enterprise generator: layout, determinism, idempotence, atomicity, concurrency, and the
integrity of the nested, typed-link data (documented types, mirrored links, SLA clocks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eval.enterprise import (
    ENTERPRISE_DB_ID,
    EnterpriseBenchmarkError,
    build_enterprise,
    generator,
    load_questions,
)
from eval.enterprise.schema import TABLES
from eval.enterprise.vocabulary import (
    ACCOUNT_TIERS,
    ISSUE_STAGES,
    LINK_TYPES,
    SEVERITIES,
    TICKET_CLOSED_STAGES,
    TICKET_STAGES,
    labels,
)

REPO = Path(__file__).resolve().parents[3]
SMALL = 0.05  # 1,000 tickets: enough for the build's machinery, quick to repeat
BUILD_IN_SUBPROCESS = (
    "import json, sys; from pathlib import Path; from eval.enterprise import build_enterprise; "
    f"print(json.dumps(build_enterprise(Path(sys.argv[1]), scale={SMALL}).rebuilt))"
)


def _one(ro, sql: str):
    return ro.execute(sql).fetchone()[0]


def test_layout(enterprise):
    assert enterprise.database == (
        enterprise.data_dir / "dev_databases" / ENTERPRISE_DB_ID / f"{ENTERPRISE_DB_ID}.duckdb"
    )
    dev = json.loads(enterprise.dev_json.read_text())
    assert len(dev) == len(load_questions())
    assert [q["question_id"] for q in dev] == list(range(len(dev)))
    assert {q["db_id"] for q in dev} == {ENTERPRISE_DB_ID}
    assert all("\n" not in q["SQL"] for q in dev)  # one line, as BIRD's predict files need
    assert all(q["sds_total"] == sum(q["sds"].values()) for q in dev)
    assert not list(enterprise.data_dir.rglob("*.tmp*"))


def test_concurrent_builds_in_fresh_processes_build_once_and_match(tmp_path, hash_content):
    """Two processes with different string-hash seeds race on one folder: one builds, the other
    waits and reuses, and the content equals this process's build of the same seed."""
    target = tmp_path / "race"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", BUILD_IN_SUBPROCESS, str(target)],
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)},
            stdout=subprocess.PIPE,
            text=True,
        )
        for seed in ("1", "2")
    ]
    outcomes = []
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0
        outcomes.append(json.loads(out.strip().splitlines()[-1]))
    assert sorted(outcomes) == [False, True]
    here = build_enterprise(tmp_path / "here", scale=SMALL)
    database = target / "dev_databases" / ENTERPRISE_DB_ID / f"{ENTERPRISE_DB_ID}.duckdb"
    assert hash_content(database) == hash_content(here.database)
    assert not list(target.rglob("*.tmp*"))

    # Another seed no longer matches the stored fingerprint: rebuilt, with other rows.
    other = build_enterprise(target, scale=SMALL, seed=12)
    assert other.rebuilt
    assert hash_content(other.database) != hash_content(here.database)


def test_rebuild_is_skipped_when_up_to_date(enterprise):
    before = enterprise.database.stat()
    again = build_enterprise(enterprise.data_dir)
    assert not again.rebuilt
    after = enterprise.database.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_failed_rebuild_keeps_previous_database(tmp_path, monkeypatch):
    paths = build_enterprise(tmp_path / "copy", scale=SMALL)
    original = paths.database.read_bytes()
    stale = paths.database.with_name(f".{paths.database.name}.999999.tmp")  # a crashed builder's
    stale.write_bytes(b"half a database")

    def explode(seed: int, scale: float, step):
        raise RuntimeError("generator crashed")

    monkeypatch.setattr(generator.synth, "generate", explode)
    with pytest.raises(RuntimeError, match="generator crashed"):
        build_enterprise(paths.data_dir, scale=SMALL, force=True)
    assert paths.database.read_bytes() == original
    assert not list(paths.data_dir.rglob("*.tmp*"))
    # The half-done build is not mistaken for a complete one.
    assert not (paths.data_dir / generator.FINGERPRINT_NAME).exists()


def test_malformed_question_file_is_a_typed_error(tmp_path):
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("- question: [unclosed\n")
    with pytest.raises(EnterpriseBenchmarkError):
        load_questions(bad_yaml)
    wrong_total = tmp_path / "total.yaml"
    wrong_total.write_text(
        "- persona: executive\n  question: How many?\n  sql: SELECT 1\n  difficulty: simple\n"
        "  sds: {D1: 1, D2: 0, D3: 0, D4: 0, D5: 1, D6: 0, D7: 0}\n  sds_total: 3\n"
        "  constructs: []\n"
    )
    with pytest.raises(EnterpriseBenchmarkError, match="sds_total"):
        load_questions(wrong_total)


def test_every_table_and_column_is_documented(ro):
    tables = dict(ro.execute("SELECT table_name, comment FROM duckdb_tables()").fetchall())
    assert sorted(tables) == sorted(t.name for t in TABLES)
    assert all(len((comment or "").split()) >= 5 for comment in tables.values())
    for table in TABLES:
        columns = ro.execute(
            "SELECT column_name, comment FROM duckdb_columns() WHERE table_name = ? "
            "ORDER BY column_index",
            [table.name],
        ).fetchall()
        assert [c for c, _ in columns] == [c.name for c in table.columns]
        for column, comment in columns:
            assert comment and len(comment.split()) >= 3, (table.name, column)


def test_enum_columns_list_their_vocabulary(ro):
    """The comment of an enum-like column names every label the column holds."""
    for table, column in [
        ("tickets", "stage"),
        ("tickets", "severity"),
        ("tickets", "channel"),
        ("issues", "stage"),
        ("accounts", "tier"),
        ("conversations", "stage"),
    ]:
        comment = _one(
            ro,
            f"SELECT comment FROM duckdb_columns() WHERE table_name = '{table}' "
            f"AND column_name = '{column}'",
        )
        values = [r[0] for r in ro.execute(f"SELECT DISTINCT {column} FROM {table}").fetchall()]
        assert all(f"'{value}'" in comment for value in values), (table, column)
    links = _one(
        ro,
        "SELECT comment FROM duckdb_columns() WHERE table_name = 'tickets' AND column_name = 'links'",
    )
    assert all(f"'{label}'" in links for label in labels(LINK_TYPES))


def test_sizes_and_nested_types(ro):
    counts = {t.name: _one(ro, f"SELECT count(*) FROM {t.name}") for t in TABLES}
    assert counts["tickets"] == 20_000 and counts["conversations"] == 40_000
    assert counts["issues"] == 8_000 and counts["enhancements"] == 1_500
    assert sum(counts.values()) > 70_000
    types = dict(
        ro.execute(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'tickets'"
        ).fetchall()
    )
    assert types["links"].startswith("STRUCT(") and types["links"].endswith("[]")
    assert types["owned_by"].endswith("[]") and types["tags"].endswith("[]")
    # Four levels of objects: sla_tracker.policy.targets.first_response, then the leaf.
    assert _one(ro, "SELECT count(sla_tracker.policy.targets.first_response.breached) FROM tickets")


def test_every_link_is_mirrored_on_its_target(ro):
    """A link stored on one end has the inverse type on the other, pointing back, at the same time."""
    unmatched = _one(
        ro,
        """
        WITH all_links AS (
            SELECT 'ticket' AS kind, display_id, UNNEST(links) AS link FROM tickets
            UNION ALL SELECT 'issue', display_id, UNNEST(links) FROM issues
            UNION ALL SELECT 'enhancement', display_id, UNNEST(links) FROM enhancements
            UNION ALL SELECT 'conversation', display_id, UNNEST(links) FROM conversations
        ), inverse(type, back) AS (VALUES
            ('is_resolved_by', 'resolves'), ('resolves', 'is_resolved_by'),
            ('is_blocked_by', 'blocks'), ('blocks', 'is_blocked_by'),
            ('duplicates', 'is_duplicated_by'), ('is_duplicated_by', 'duplicates'),
            ('parent_of', 'child_of'), ('child_of', 'parent_of'),
            ('converted_to', 'converted_from'), ('converted_from', 'converted_to'),
            ('relates_to', 'relates_to')
        )
        SELECT count(*) FROM all_links AS a JOIN inverse AS i ON i.type = a.link.type
        WHERE NOT EXISTS (
            SELECT 1 FROM all_links AS b
            WHERE b.display_id = a.link.display_id AND b.kind = a.link.target_type
              AND b.link.display_id = a.display_id AND b.link.target_type = a.kind
              AND b.link.type = i.back AND b.link.linked_at = a.link.linked_at
        )
        """,
    )
    assert unmatched == 0
    targets = _one(
        ro,
        """SELECT count(*) FROM tickets, UNNEST(links) AS u(link)
           WHERE link.display_id NOT IN (SELECT display_id FROM issues UNION ALL
               SELECT display_id FROM enhancements UNION ALL SELECT display_id FROM tickets
               UNION ALL SELECT display_id FROM conversations)""",
    )
    assert targets == 0


def test_one_target_table_is_reached_by_several_link_types(ro):
    """Tickets reach issues through three link types: a traversal that forgets to filter on the
    type answers differently, which the typed-link questions rely on."""
    kinds = dict(
        ro.execute(
            "SELECT link.type, count(*) FROM tickets, UNNEST(links) AS u(link) "
            "WHERE link.target_type = 'issue' GROUP BY ALL"
        ).fetchall()
    )
    assert set(kinds) == {"is_resolved_by", "relates_to", "is_blocked_by"}
    assert min(kinds.values()) > 300
    both = _one(
        ro,
        """SELECT count(*) FROM tickets WHERE
           len(list_filter(links, lambda l: l.type = 'is_resolved_by')) > 0 AND
           len(list_filter(links, lambda l: l.type = 'relates_to' AND l.target_type = 'issue')) > 0""",
    )
    assert both > 50


def test_owners_tags_and_vocabularies(ro):
    assert (
        _one(
            ro,
            """SELECT count(*) FROM tickets
           WHERE len(list_filter(owned_by, lambda o: o.role = 'primary')) <> 1""",
        )
        == 0
    )
    assert (
        _one(
            ro,
            """SELECT count(*) FROM tickets, UNNEST(owned_by) AS u(o)
           WHERE o.user_id NOT IN (SELECT user_id FROM users)""",
        )
        == 0
    )
    assert (
        _one(
            ro,
            "SELECT count(*) FROM tickets "
            "WHERE len(tags) <> len(list_distinct(list_transform(tags, lambda g: g.name)))",
        )
        == 0
    )
    for table, column, vocabulary in [
        ("tickets", "stage", TICKET_STAGES),
        ("tickets", "severity", SEVERITIES),
        ("issues", "stage", ISSUE_STAGES),
        ("accounts", "tier", ACCOUNT_TIERS),
    ]:
        found = {r[0] for r in ro.execute(f"SELECT DISTINCT {column} FROM {table}").fetchall()}
        assert found == set(labels(vocabulary)), (table, column)


def test_sla_clocks_agree_with_the_policies_and_the_ticket(ro):
    mismatched = _one(
        ro,
        """SELECT count(*) FROM tickets AS t
           JOIN rev_orgs AS r ON r.rev_org_id = t.rev_org_id
           JOIN accounts AS a ON a.account_id = r.account_id
           LEFT JOIN sla_policies AS s ON s.policy_name = t.sla_tracker.policy.name
                AND s.severity = t.severity AND s.account_tier = a.tier
           WHERE s.policy_name IS NULL
              OR t.sla_tracker.policy.targets.first_response.target_minutes <> s.first_response_target_minutes
              OR t.sla_tracker.policy.targets.resolution.target_minutes <> s.resolution_target_minutes""",
    )
    assert mismatched == 0
    closed = ", ".join(f"'{s}'" for s in TICKET_CLOSED_STAGES)
    assert (
        _one(
            ro,
            f"""SELECT count(*) FROM tickets WHERE (stage IN ({closed})) <> (closed_at IS NOT NULL)
            OR (sla_tracker.status = 'completed') <> (closed_at IS NOT NULL)
            OR closed_at < created_at OR first_response_at < created_at
            OR sla_tracker.policy.targets.first_response.breached <>
               (COALESCE(sla_tracker.policy.targets.first_response.elapsed_minutes,
                         date_diff('second', created_at, TIMESTAMP '2025-07-01') // 60)
                > sla_tracker.policy.targets.first_response.target_minutes)""",
        )
        == 0
    )
    assert _one(ro, "SELECT count(*) FROM tickets WHERE created_at >= TIMESTAMP '2025-07-01'") == 0
    assert (
        0.1
        < _one(ro, "SELECT avg(sla_tracker.policy.targets.resolution.breached::INT) FROM tickets")
        < 0.5
    )


def test_surveys_add_up(ro):
    assert (
        _one(
            ro,
            """SELECT count(*) FROM tickets WHERE surveys_aggregation IS NOT NULL AND (
               surveys_aggregation.responses > surveys_aggregation.surveys_sent
            OR surveys_aggregation.satisfied + surveys_aggregation.dissatisfied > surveys_aggregation.responses
            OR (surveys_aggregation.responses = 0) <> (surveys_aggregation.csat_average IS NULL)
            OR abs(surveys_aggregation.csat_average * surveys_aggregation.responses
                   - surveys_aggregation.csat_sum) > 1e-9)""",
        )
        == 0
    )
    assert (
        _one(
            ro,
            "SELECT count(*) FROM tickets WHERE surveys_aggregation IS NOT NULL AND stage <> 'resolved'",
        )
        == 0
    )
