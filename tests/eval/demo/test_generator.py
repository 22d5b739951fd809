"""The demo generator: determinism, idempotence, atomicity, concurrency, BIRD layout, integrity."""

from __future__ import annotations

import csv
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from eval.demo import DEMO_DB_ID, DemoBenchmarkError, build_demo, generator, load_questions
from eval.demo.schema import TABLES

REPO = Path(__file__).resolve().parents[3]
BUILD_IN_SUBPROCESS = (
    "import json, sys; from pathlib import Path; from eval.demo import build_demo; "
    "print(json.dumps(build_demo(Path(sys.argv[1])).rebuilt))"
)


def _tables(con: sqlite3.Connection) -> list[str]:
    return [
        r[0]
        for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    ]


def test_layout_is_birds(demo):
    assert demo.database == demo.data_dir / "dev_databases" / DEMO_DB_ID / f"{DEMO_DB_ID}.sqlite"
    dev = json.loads(demo.dev_json.read_text())
    assert len(dev) == len(load_questions())
    assert all(
        set(q) == {"question_id", "db_id", "question", "evidence", "SQL", "difficulty"} for q in dev
    )
    assert [q["question_id"] for q in dev] == list(range(len(dev)))
    assert {q["db_id"] for q in dev} == {DEMO_DB_ID}
    tables = json.loads(demo.tables_json.read_text())
    assert [t["db_id"] for t in tables] == [DEMO_DB_ID]


def test_concurrent_builds_in_fresh_processes_build_once_and_match(
    tmp_path, demo_hash, hash_content
):
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
    assert hash_content(target / "dev_databases" / DEMO_DB_ID / f"{DEMO_DB_ID}.sqlite") == demo_hash
    assert not list(target.rglob("*.tmp"))

    # A different seed no longer matches the stored fingerprint: rebuilt, different rows.
    other = build_demo(target, seed=8)
    assert other.rebuilt
    assert hash_content(other.database) != demo_hash


def test_rebuild_is_skipped_when_up_to_date(demo):
    before = demo.database.stat()
    again = build_demo(demo.data_dir)
    assert not again.rebuilt
    after = demo.database.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_failed_rebuild_keeps_previous_database(demo, tmp_path, monkeypatch):
    copy = tmp_path / "copy"
    shutil.copytree(demo.data_dir, copy)
    database = copy / "dev_databases" / DEMO_DB_ID / f"{DEMO_DB_ID}.sqlite"
    original = database.read_bytes()
    stale = database.with_name(f".{database.name}.999999.tmp")  # left by a builder that crashed
    stale.write_bytes(b"half a database")

    def explode(seed: int):
        raise RuntimeError("generator crashed")

    monkeypatch.setattr(generator.synth, "generate", explode)
    with pytest.raises(RuntimeError, match="generator crashed"):
        build_demo(copy, force=True)
    assert database.read_bytes() == original
    assert not list(copy.rglob("*.tmp"))
    # The half-done build is not mistaken for a complete one.
    assert not (copy / generator.FINGERPRINT_NAME).exists()


def test_malformed_question_file_is_a_typed_error(tmp_path):
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("- question: [unclosed\n")
    with pytest.raises(DemoBenchmarkError):
        load_questions(bad_yaml)
    bad_label = tmp_path / "label.yaml"
    bad_label.write_text("- question: How many?\n  sql: SELECT 1\n  difficulty: extreme\n")
    with pytest.raises(DemoBenchmarkError, match="difficulty"):
        load_questions(bad_label)


def test_foreign_keys_are_declared_and_resolve(ro):
    assert ro.execute("PRAGMA foreign_key_check").fetchall() == []
    declared = {
        (table, row[3], row[2], row[4])
        for table in _tables(ro)
        for row in ro.execute(f"PRAGMA foreign_key_list({table})")
    }
    expected = {(t.name, c.name, *c.references) for t in TABLES for c in t.columns if c.references}
    assert declared == expected
    assert len(expected) >= 14


def test_every_table_has_a_primary_key(ro):
    for table in _tables(ro):
        pk = [row[1] for row in ro.execute(f"PRAGMA table_info({table})") if row[5]]
        assert pk, table


def test_every_column_is_described(demo, ro):
    for table in _tables(ro):
        columns = [row[1] for row in ro.execute(f"PRAGMA table_info({table})")]
        with open(demo.description_dir / f"{table}.csv", newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        assert list(rows[0]) == [
            "original_column_name",
            "column_name",
            "column_description",
            "data_format",
            "value_description",
        ]
        assert [r["original_column_name"] for r in rows] == columns
        for r in rows:
            assert len(r["column_description"].split()) >= 2, (table, r)
            assert r["data_format"] in {"integer", "real", "text", "date"}


def test_tables_json_matches_database(demo, ro):
    entry = json.loads(demo.tables_json.read_text())[0]
    assert sorted(entry["table_names_original"]) == _tables(ro)
    by_table: dict[str, list[str]] = {}
    for t_idx, name in entry["column_names_original"][1:]:
        by_table.setdefault(entry["table_names_original"][t_idx], []).append(name)
    for table, columns in by_table.items():
        assert columns == [row[1] for row in ro.execute(f"PRAGMA table_info({table})")]
    assert (
        len(entry["column_names"])
        == len(entry["column_names_original"])
        == len(entry["column_types"])
    )
    names = entry["column_names_original"]
    for t_idx, pk in enumerate(entry["primary_keys"]):
        pk_cols = [names[i][1] for i in (pk if isinstance(pk, list) else [pk])]
        assert all(names[i][0] == t_idx for i in (pk if isinstance(pk, list) else [pk]))
        table = entry["table_names_original"][t_idx]
        in_db = [
            r[1]
            for r in sorted(ro.execute(f"PRAGMA table_info({table})"), key=lambda r: r[5])
            if r[5]
        ]
        assert pk_cols == in_db
    fks = {
        (
            entry["table_names_original"][names[a][0]],
            names[a][1],
            entry["table_names_original"][names[b][0]],
            names[b][1],
        )
        for a, b in entry["foreign_keys"]
    }
    in_db = {
        (t, r[3], r[2], r[4])
        for t in _tables(ro)
        for r in ro.execute(f"PRAGMA foreign_key_list({t})")
    }
    assert fks == in_db


def _count(ro, sql: str) -> int:
    return ro.execute(sql).fetchone()[0]


def test_sizes_and_skew_look_like_claims_data(ro):
    assert 1900 <= _count(ro, "SELECT COUNT(*) FROM members") <= 2100
    assert 250 <= _count(ro, "SELECT COUNT(*) FROM providers") <= 350
    assert 15_000 <= _count(ro, "SELECT COUNT(*) FROM claims") <= 25_000
    assert _count(ro, "SELECT COUNT(*) FROM claim_lines") > _count(
        ro, "SELECT COUNT(*) FROM claims"
    )
    assert _count(ro, "SELECT COUNT(*) FROM pharmacy_fills") > 10_000
    # Zipf-ish: the busiest fifth of billing providers bill most of the claims.
    per_provider = [
        r[0]
        for r in ro.execute("SELECT COUNT(*) AS n FROM claims GROUP BY provider_id ORDER BY n DESC")
    ]
    top = per_provider[: len(per_provider) // 5]
    assert sum(top) > 0.5 * sum(per_provider)


@pytest.mark.parametrize(
    "table, column",
    [
        ("members", "middle_name"),
        ("members", "email"),
        ("members", "pcp_provider_id"),
        ("member_enrollments", "end_date"),
        ("member_enrollments", "termination_reason"),
        ("claims", "paid_date"),
        ("claims", "adjudicated_date"),
        ("claims", "denial_reason"),
        ("claims", "allowed_amount"),
        ("claim_lines", "modifier"),
        ("plans", "metal_tier"),
        ("providers", "credential"),
        ("pharmacy_fills", "prescriber_provider_id"),
    ],
)
def test_nullable_columns_hold_both_nulls_and_values(ro, table, column):
    nulls, values = ro.execute(
        f"SELECT SUM({column} IS NULL), SUM({column} IS NOT NULL) FROM {table}"
    ).fetchone()
    assert nulls > 0 and values > 0


def test_claim_status_rules(ro):
    # pending: nothing decided yet; denied: a reason, zero payment; paid: paid on or after receipt
    assert (
        _count(
            ro,
            """SELECT COUNT(*) FROM claims WHERE claim_status = 'Pending' AND
        (adjudicated_date IS NOT NULL OR paid_date IS NOT NULL OR paid_amount IS NOT NULL
         OR denial_reason IS NOT NULL)""",
        )
        == 0
    )
    assert (
        _count(
            ro,
            """SELECT COUNT(*) FROM claims WHERE claim_status = 'Denied' AND
        (denial_reason IS NULL OR paid_date IS NOT NULL OR paid_amount <> 0)""",
        )
        == 0
    )
    assert (
        _count(
            ro,
            """SELECT COUNT(*) FROM claims WHERE claim_status = 'Paid' AND
        NOT (service_end_date <= received_date AND received_date <= adjudicated_date
             AND adjudicated_date < paid_date AND paid_date <= '2025-03-31')""",
        )
        == 0
    )
    assert (
        _count(ro, "SELECT COUNT(*) FROM claims WHERE service_start_date > service_end_date") == 0
    )
    assert {r[0] for r in ro.execute("SELECT DISTINCT claim_status FROM claims")} == {
        "Paid",
        "Denied",
        "Pending",
    }


def test_claim_headers_add_up_their_lines(ro):
    mismatched = ro.execute("""
        SELECT COUNT(*) FROM claims AS c JOIN (
            SELECT claim_id, SUM(billed_amount) AS billed, SUM(allowed_amount) AS allowed, SUM(paid_amount) AS paid
            FROM claim_lines GROUP BY claim_id) AS l ON l.claim_id = c.claim_id
        WHERE ABS(c.billed_amount - l.billed) > 0.005
           OR ABS(COALESCE(c.allowed_amount, -1) - COALESCE(l.allowed, -1)) > 0.005
           OR ABS(COALESCE(c.paid_amount, -1) - COALESCE(l.paid, -1)) > 0.005""").fetchone()[0]
    assert mismatched == 0
    assert (
        _count(
            ro,
            """SELECT COUNT(*) FROM claims WHERE claim_status <> 'Pending'
        AND ABS(allowed_amount - paid_amount - member_cost_share) > 0.005""",
        )
        == 0
    )
    assert (
        _count(
            ro,
            "SELECT COUNT(*) FROM claims WHERE claim_id NOT IN (SELECT claim_id FROM claim_lines)",
        )
        == 0
    )


def test_each_claim_has_exactly_one_principal_diagnosis_first(ro):
    assert (
        _count(
            ro,
            """SELECT COUNT(*) FROM claims AS c WHERE
        (SELECT COUNT(*) FROM claim_diagnoses AS d WHERE d.claim_id = c.claim_id AND d.is_primary = 1) <> 1""",
        )
        == 0
    )
    assert (
        _count(
            ro,
            "SELECT COUNT(*) FROM claim_diagnoses WHERE (sequence_number = 1) <> (is_primary = 1)",
        )
        == 0
    )


def test_services_fall_inside_coverage_on_the_claims_plan(ro):
    # Services after coverage ended are denied as ineligible once decided (or still pending).
    outside = ro.execute("""
        SELECT COUNT(*) FROM claims AS c
        WHERE c.claim_status <> 'Pending'
          AND COALESCE(c.denial_reason, '') <> 'Member not eligible on date of service'
          AND NOT EXISTS (
            SELECT 1 FROM member_enrollments AS e
            WHERE e.member_id = c.member_id AND e.plan_id = c.plan_id
              AND e.start_date <= c.service_start_date
              AND (e.end_date IS NULL OR c.service_start_date <= e.end_date))""").fetchone()[0]
    assert outside == 0
    fills_outside = _count(
        ro,
        """SELECT COUNT(*) FROM pharmacy_fills AS f WHERE NOT EXISTS (
             SELECT 1 FROM member_months AS mm
             WHERE mm.member_id = f.member_id AND mm.month = substr(f.fill_date, 1, 7))""",
    )
    assert fills_outside == 0
    ineligible = _count(
        ro,
        "SELECT COUNT(*) FROM claims WHERE denial_reason = 'Member not eligible on date of service'",
    )
    assert ineligible > 0


def test_member_months_agree_with_enrollment_spans(ro):
    spans_months = ro.execute("""
        WITH RECURSIVE months(member_id, plan_id, month, last) AS (
          SELECT member_id, plan_id, MAX(substr(start_date, 1, 7), '2022-01'),
                 substr(COALESCE(end_date, '2025-03-31'), 1, 7)
          FROM member_enrollments WHERE COALESCE(end_date, '2025-03-31') >= '2022-01-01'
          UNION ALL
          SELECT member_id, plan_id, strftime('%Y-%m', month || '-01', '+1 month'), last FROM months WHERE month < last)
        SELECT COUNT(*) FROM months""").fetchone()[0]
    assert spans_months == _count(ro, "SELECT COUNT(*) FROM member_months")
