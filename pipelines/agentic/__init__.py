"""The agentic mode's deterministic layer: an error taxonomy and a classifier of what executed
candidates met.

    taxonomy.yaml ──► Taxonomy ──► Classifier.classify_result(ExecutionResult) ──► Finding

No LLM and no database write: the orchestrator that calls the generator, executes, and routes
findings by their action builds on these.
"""

from pipelines.agentic.classify import Classifier
from pipelines.agentic.errors import TaxonomyError
from pipelines.agentic.taxonomy import FailureClass, Finding, Taxonomy, load_taxonomy

__all__ = [
    "Classifier",
    "FailureClass",
    "Finding",
    "Taxonomy",
    "TaxonomyError",
    "load_taxonomy",
]
