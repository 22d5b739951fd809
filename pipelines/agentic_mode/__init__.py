"""The agentic mode's deterministic layer: an error taxonomy, a classifier of what executed
candidates met, the checker chain candidates pass before they run, and the dynamic cheatsheet
of rules learned from findings (docs/agentic.md).

    taxonomy.yaml ──► Taxonomy ──► Classifier.classify_result(ExecutionResult) ──► Finding
                              └──► CheckerChain(schema view).check(sql) ──► CheckResult
    Finding ──► Cheatsheet(database).record ──► per-database file ──► render() ──► prompt

No LLM and no database write: the orchestrator that calls the generator, executes, and routes
findings by their action builds on these. The checker chain (``chain.CheckerChain``) is imported
from its module: its stages are repairs (``pipelines/repair/base.py``), which read this
package's schema index and taxonomy. The mode's two LLM checks, whose verdicts become
findings of the same taxonomy, are imported from their modules: ``verifier.PlanVerifier``
(before execution) and ``validator.SemanticValidator`` (after).
"""

from pipelines.agentic_mode.cheatsheet import Cheatsheet, CheatsheetRule
from pipelines.agentic_mode.classify import Classifier
from pipelines.agentic_mode.errors import CheatsheetError, TaxonomyError
from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.agentic_mode.taxonomy import FailureClass, Finding, Taxonomy, load_taxonomy

__all__ = [
    "Cheatsheet",
    "CheatsheetError",
    "CheatsheetRule",
    "Classifier",
    "FailureClass",
    "Finding",
    "SchemaIndex",
    "Taxonomy",
    "TaxonomyError",
    "load_taxonomy",
]
