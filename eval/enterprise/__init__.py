"""The embedded enterprise benchmark: a synthetic work-item platform on DuckDB (tickets, issues,
enhancements, conversations, parts, users, accounts) with nested, typed-link columns, and
questions in business roles' voices rated on the SDS rubric (eval/sds.py). docs/enterprise.md.

from eval.enterprise import build_enterprise, ENTERPRISE_DB_ID
paths = build_enterprise(cfg.paths.enterprise)   # dev.json, dev_databases/workitems/workitems.duckdb
paths.examples_file                              # workitems.examples.yml beside the database
"""

from eval.enterprise.generator import (
    DEFAULT_SEED,
    ENTERPRISE_DB_ID,
    EnterprisePaths,
    build_enterprise,
)
from eval.enterprise.questions import (
    EXAMPLES_FILE,
    QUESTIONS_FILE,
    EnterpriseBenchmarkError,
    EnterpriseExample,
    EnterpriseQuestion,
    load_examples,
    load_questions,
)

__all__ = [
    "DEFAULT_SEED",
    "ENTERPRISE_DB_ID",
    "EXAMPLES_FILE",
    "QUESTIONS_FILE",
    "EnterpriseBenchmarkError",
    "EnterpriseExample",
    "EnterprisePaths",
    "EnterpriseQuestion",
    "build_enterprise",
    "load_examples",
    "load_questions",
]
