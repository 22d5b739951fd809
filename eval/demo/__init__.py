"""The embedded demo benchmark: a synthetic healthcare-claims database and hand-written questions.

from eval.demo import build_demo, DEMO_DB_ID
paths = build_demo(cfg.paths.demo)     # BIRD layout: dev.json, dev_tables.json, dev_databases/claims/...
"""

from eval.demo.generator import (
    DEFAULT_SEED,
    DEMO_DB_ID,
    QUESTIONS_FILE,
    DemoBenchmarkError,
    DemoBenchmarkPaths,
    DemoQuestion,
    build_demo,
    load_questions,
)

__all__ = [
    "DEFAULT_SEED",
    "DEMO_DB_ID",
    "QUESTIONS_FILE",
    "DemoBenchmarkError",
    "DemoBenchmarkPaths",
    "DemoQuestion",
    "build_demo",
    "load_questions",
]
