"""The ``pipeline`` config group (``conf/pipeline``) as one model, and its defaults.

Widths, depths and caps are *not* here: they are the strategies' scaling settings
(``conf/scaling``, ``pipelines/strategies``). Here are the per-agent knobs (temperatures,
max_tokens), retrieval sizes, the sandbox's bounds and the L0 index settings.

    >>> PipelineSettings().agents.extractor.temperature
    0.2
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, Field

from core.types import Frozen
from pipelines.indexing.settings import IndexSettings
from pipelines.sandbox.limits import SandboxSettings

M = TypeVar("M", bound=BaseModel)


class AgentCall(Frozen):
    """Sampling settings of one agent. ``temperature=None``: the orchestrator assigns one."""

    temperature: float | None = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=512, ge=1)


class AgentSettings(Frozen):
    extractor: AgentCall = AgentCall(temperature=0.2, max_tokens=256)
    reasoning: AgentCall = AgentCall(temperature=None, max_tokens=1024)
    icl: AgentCall = AgentCall(temperature=None, max_tokens=768)
    fixer: AgentCall = AgentCall(temperature=0.0, max_tokens=512)
    critic: AgentCall = AgentCall(temperature=0.2, max_tokens=384)
    revisor: AgentCall = AgentCall(temperature=0.0, max_tokens=512)
    selector: AgentCall = AgentCall(temperature=0.0, max_tokens=256)
    # The agentic mode's checks (pipelines/agentic_mode/verifier.py, validator.py): one short JSON
    # verdict each, its string bounded by the reply's schema.
    verifier: AgentCall = AgentCall(temperature=0.0, max_tokens=160)
    validator: AgentCall = AgentCall(temperature=0.0, max_tokens=128)


class SinglePassSettings(Frozen):
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=512, ge=1)
    # Example rows per table in the CREATE TABLE prompt. auto: 1 on a large schema (the notes say
    # how values are stored, and a wide table's rows cost more than they show), else 3
    # (pipelines/database_rules.py).
    sample_rows: Annotated[int, Field(ge=0)] | Literal["auto"] = "auto"
    # Under each CREATE TABLE, notes from the database's own documentation
    # (pipelines/schema/documentation): "values" says how values are stored (codes, units,
    # formats: ``state: Two-letter US state code``, so the model writes 'OH', not 'Ohio');
    # "auto" adds a column's description where its name does not spell it (``c14``); "all"
    # every description and readable name; "off" none.
    column_notes: Literal["off", "values", "auto", "all"] = "auto"
    seed: int | None = 0


class FocusSettings(Frozen):
    """Schema focus for the generators' prompt (pipelines/schema/linking.py): a schema whose
    reference prompt is estimated above ``above_tokens`` is cut to the tables a question needs
    (scored without an LLM, joined up over the join graph); a smaller one is shown whole."""

    # Spider's largest dev schema is ~2,100 estimated tokens with 3 example rows; the claims
    # schema's ~6,400 with 1, the enterprise work-item schema's ~12,000 (docs/benchmarks.md#schema-focus).
    above_tokens: int | None = Field(default=3000, ge=0)  # None: never focus
    min_gain: float = Field(default=1.0, gt=0.0)  # a table must explain this much more to join
    max_tables: int = Field(default=6, ge=1)  # picked by the cover, before the joining tables
    budget_ratio: float = Field(default=0.4, ge=0.0, le=1.0)  # then fill up to this share
    similarity: bool = True  # embedding similarity of question and documented columns
    sample_values: int = Field(default=3, ge=0)  # per column, for matching named values
    # The order of the shown tables. "hubs_first": most joined-to tables first (then larger
    # first), so consecutive questions' prompts share their longest prefix and the model
    # server's KV cache serves it; "catalog": the database's own order.
    order: Literal["hubs_first", "catalog"] = "hubs_first"


class CatalogSettings(Frozen):
    """The schema catalog an orchestrator browses through tools (pipelines/schema/catalog):
    ``catalog`` lists the entities with their most informative columns, ``entity_schema`` gives
    the entities asked for in full."""

    top_columns: int = Field(default=10, ge=1)  # per entity in the catalog, best scored first
    catalog_values: int = Field(default=4, ge=0)  # of an enum-like column, shown in the catalog
    sample_values: int = Field(default=3, ge=0)  # per column and sub-field in entity_schema
    # A text column (or sub-field) with at most this many distinct values is enum-like: its
    # values are its vocabulary; one with more is free text, names or keys.
    max_vocabulary: int = Field(default=30, ge=1)


class UnderstandingSettings(Frozen):
    """L1: the extractor and the two retrievers (k and thresholds from the source design)."""

    extractor_enabled: bool = True
    cell_k: int = Field(default=5, ge=0)
    cell_threshold: float = 0.8
    cell_mode: Literal["vector", "bm25", "hybrid"] = "hybrid"
    example_k: int = Field(default=15, ge=0)
    # Examples from other databases farther than this (squared L2 between unit skeleton vectors,
    # 2 - 2*cosine) are dropped. auto: 0.1 (cosine >= 0.95) where the database has solved
    # examples of its own — on the claims questions Spider-train examples lent the 1.5B tables
    # the schema lacks — else 1.5 (cosine >= 0.25, nearly every retrieved one): fixed Spider 108
    # 0.778 at 1.5 against 0.741 at 0.1, 108 other dev questions 0.806 at both, 0.8x the seconds
    # (docs/benchmarks.md#spider-native-defaults; pipelines/database_rules.py).
    example_threshold: float | Literal["auto"] = "auto"
    examples_in_prompt: int = Field(default=5, ge=0)  # of the k retrieved, shown to ICL prompts
    # The asking database's own solved examples (a file beside it, the endpoint's accepted
    # answers; pipelines/indexing/examples/own_examples.py) shown before any from another database.
    own_example_k: int = Field(default=3, ge=0)
    sample_rows: int = Field(default=3, ge=0)  # example rows per table in the DDL view
    max_schema_tokens: int = Field(default=6000, ge=100)  # restrict the schema beyond this


class TournamentSettings(Frozen):
    max_finalists: int = Field(default=6, ge=2)  # O(n²) selector calls: keep the largest buckets
    drop_empty: bool = True  # empty results leave the final when a non-empty one exists
    preview_rows: int = Field(default=5, ge=1)
    # Judge each pair in both orders and count a win only when the two verdicts agree. A small
    # selector favours one position (the local 1.5B answers "B" almost always; with the larger
    # bucket shown as "A" the majority would lose every match); a position-only verdict becomes
    # a tie, which bucket size breaks. Doubles the selector calls.
    both_orders: bool = True
    # A bucket holding at least this share of the executed (non-error) candidates, and more
    # than any other, wins without selector calls. A weak selector overturns clear majorities
    # (the local 1.5B does, in both orders); null plays every tournament (the source design).
    majority_share: float | None = Field(default=None, gt=0.0, le=1.0)


class RouterSettings(Frozen):
    """Difficulty router of the full-width orchestrator (on with ``scaling.router_enabled``):
    cheap features pick a profile; agreement of a probe wave may stop early.

    ``probe_k`` is the probe wave's samples per generator family (at most the profile's ``k``).
    ``profiles`` maps a tier to overrides of the configured scaling settings (``FullWidthScaling``);
    a mapping (``k``) merges into the configured one.

        >>> from pipelines.strategies.full_width_settings import FullWidthScaling
        >>> RouterSettings().scaling_for("narrow", FullWidthScaling()).k
        {'reasoning': 2, 'icl/direct': 1, 'icl/cot': 1, 'icl/decompose': 1}
    """

    probe_k: dict[str, Annotated[int, Field(ge=0)]] = Field(
        default_factory=lambda: {"reasoning": 1, "icl/direct": 1}
    )
    agree_share: float = Field(default=1.0, gt=0.0, le=1.0)  # share of the probe in one bucket
    wide_score: float = 3.0  # difficulty score at or above which a question gets the "wide" tier
    narrow_score: float = 1.0  # at or below: "narrow"
    profiles: dict[str, dict[str, Any]] = Field(
        default_factory=lambda: {
            "narrow": {
                "k": {"icl/direct": 1, "icl/cot": 1, "icl/decompose": 1},
                "tournament_enabled": False,
            },
            "standard": {},
            "wide": {
                "k": {"icl/direct": 3, "icl/cot": 3, "icl/decompose": 3},
                "refinement_max_passes": 2,
            },
        }
    )

    def scaling_for(self, tier: str, base: M) -> M:
        return type(base).model_validate(_merged(base.model_dump(), self.profiles.get(tier, {})))


def _merged(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


class CheatsheetSettings(Frozen):
    """The agentic mode's dynamic cheatsheet (pipelines/agentic_mode/cheatsheet.py): rules learned
    from classified errors, one file per database under ``root``, the best ``top_k`` shown to
    the generator before each generation."""

    root: str | None = None  # directory of the per-database files; None: no cheatsheet
    top_k: int = Field(default=5, ge=0)
    # False: the sheet is read, never written, so a held-out run is measured on what the tuning
    # run learned without learning from the questions it is measured on.
    learn: bool = True
    max_rules: int = Field(default=200, ge=1)  # per database; the least useful dropped beyond


class TraceSettings(Frozen):
    directory: str | None = None  # JSONL sink directory; None: no JSONL sink


class PipelineSettings(Frozen):
    single_pass: SinglePassSettings = SinglePassSettings()
    focus: FocusSettings = FocusSettings()
    catalog: CatalogSettings = CatalogSettings()
    agents: AgentSettings = AgentSettings()
    understanding: UnderstandingSettings = UnderstandingSettings()
    tournament: TournamentSettings = TournamentSettings()
    router: RouterSettings = RouterSettings()
    trace: TraceSettings = TraceSettings()
    sandbox: SandboxSettings = SandboxSettings()
    cheatsheet: CheatsheetSettings = CheatsheetSettings()
    # None outside a composed config: the index root has no default.
    index: IndexSettings | None = None
