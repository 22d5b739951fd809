"""The embedded demo benchmark: a synthetic healthcare-claims database and hand-written questions.

from eval.demo import build_demo, DEMO_DB_ID
paths = build_demo(cfg.paths.demo)     # BIRD layout: dev.json, dev_tables.json, dev_databases/claims/...
paths.examples_file                    # claims.examples.yml beside the database: solved examples
"""

from eval.demo.generator import (
    DEFAULT_SEED,
    DEMO_DB_ID,
    EXAMPLES_FILE,
    QUESTIONS_FILE,
    DemoBenchmarkError,
    DemoBenchmarkPaths,
    DemoExample,
    DemoQuestion,
    build_demo,
    load_examples,
    load_questions,
)

__all__ = [
    "DEFAULT_SEED",
    "DEMO_DB_ID",
    "EXAMPLES_FILE",
    "QUESTIONS_FILE",
    "DemoBenchmarkError",
    "DemoBenchmarkPaths",
    "DemoExample",
    "DemoQuestion",
    "build_demo",
    "load_examples",
    "load_questions",
]
