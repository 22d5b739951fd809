"""Repair: candidates that failed or found nothing, rewritten and executed again.

Every repair (and every check of the agentic chain) follows one protocol (``base.py``) and is
registered by name (``registry.py``); a strategy lists the ones it runs (``scaling.repairs``),
``rounds.py`` runs them on a question's candidates. No LLM call, from the schema and the stored
values (registered as joins, columns, quotes, double_quoted_strings, values, sqlite_dates):
    "no such column" / "ambiguous column name" ──► ColumnRepair ──► the column the schema has
    syntax error from an apostrophe in a string ──► QuoteRepair  ──► the apostrophe doubled
    JOIN ... ON that joins no key               ──► JoinRepair   ──► the schema's one join key
    string filter that matches no stored value  ──► ValueRepair  ──► the column / value that holds it
    a server's refusal of SQLite's date calls   ──► SqliteDates  ──► the server's own date calls

With the LLM (Refiner):
    errored candidates ──► SQLFixer;  buckets ──► CritiqueAgent ──► SQLRevisor on ``edit``
"""

from pipelines.repair.columns import ColumnRepair
from pipelines.repair.joins import JoinRepair
from pipelines.repair.quotes import QuoteRepair
from pipelines.repair.refinement import UNFIXABLE_ERRORS, Refiner
from pipelines.repair.values import ValueRepair

__all__ = [
    "UNFIXABLE_ERRORS",
    "ColumnRepair",
    "JoinRepair",
    "QuoteRepair",
    "Refiner",
    "ValueRepair",
]
