"""One answer per question: the alternatives shipped with the enterprise audit
(benchmarks/enterprise_alternatives.yaml) are graded as they say under column matching, every
right one accepted and every misreading rejected, and every gold SQL and example runs."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from eval.enterprise import QUESTIONS_FILE, load_questions

_SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "enterprise_audit.py"
_spec = importlib.util.spec_from_file_location("enterprise_audit", _SCRIPT)
assert _spec and _spec.loader
enterprise_audit = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = enterprise_audit  # pydantic resolves the script's annotations there
_spec.loader.exec_module(enterprise_audit)


def test_every_alternative_names_a_question_and_both_kinds_are_shipped():
    alternatives = enterprise_audit.load_alternatives(enterprise_audit.ALTERNATIVES_FILE)
    assert all(0 <= a.question < len(load_questions()) for a in alternatives)
    assert sum(a.answers for a in alternatives) >= 25
    assert sum(not a.answers for a in alternatives) >= 10


def test_the_audit_passes_on_the_built_database(enterprise, capsys):
    args = argparse.Namespace(
        questions=QUESTIONS_FILE, alternatives=enterprise_audit.ALTERNATIVES_FILE, all=False
    )
    status = enterprise_audit.audit(args, enterprise.database_ref())
    out = capsys.readouterr().out
    assert status == 0, out
    assert f"gold SQL that runs: {len(load_questions())} / {len(load_questions())}" in out


def test_a_misgraded_alternative_fails_the_audit(enterprise, tmp_path, capsys):
    wrong = tmp_path / "alternatives.yaml"
    wrong.write_text(
        "- question: 0\n  why: a count of every blocker\n  answers: true\n"
        "  sql: SELECT count(*) FROM tickets WHERE severity = 'blocker'\n"
    )
    args = argparse.Namespace(questions=QUESTIONS_FILE, alternatives=wrong, all=False)
    assert enterprise_audit.audit(args, enterprise.database_ref()) == 1
    assert "FAIL Q0 right alternative rejected" in capsys.readouterr().out
