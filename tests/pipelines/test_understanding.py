"""L1: extractor + retrievers in parallel, per-literal cell search, never-indexed databases, and
the schema focus for schemas too large for the prompt."""

from __future__ import annotations

import json

from pipelines.agents.keyword_extractor import KeywordSkeletonExtractor
from pipelines.agents.runtime import AgentRuntime
from pipelines.agents.types import Context, Understanding
from pipelines.contracts import (
    CellHit,
    ColumnInfo,
    DatabaseRef,
    ExampleHit,
    ForeignKey,
    SchemaView,
    TableInfo,
    Task,
)
from pipelines.indexing.errors import IndexNotBuilt
from pipelines.schema import restrict
from pipelines.settings import AgentCall, UnderstandingSettings
from pipelines.strategies.full_width_settings import FullWidthScaling
from pipelines.task_run import TaskRun
from pipelines.trace import TraceRecorder
from pipelines.understanding import Understander, prompt_view_tokens

DB = DatabaseRef(db_id="shop", path="/nonexistent.sqlite")


def run_for(client, question="Which customers from Paris or Lyon ordered tea?"):
    recorder = TraceRecorder("t", question, "shop")
    task = Task(task_id="t", question=question, db=DB)
    return TaskRun(
        task=task,
        recorder=recorder,
        scaling=FullWidthScaling(),
        runtime=AgentRuntime(client=client, executor=None, recorder=recorder),
    )


def extractor_client(scripted, literals):
    return scripted(
        {
            "extractor": lambda r: json.dumps(
                {
                    "literals": literals,
                    "skeleton": "Which [COL] from _ or _?",
                    "keywords": ["customers", "orders"],
                }
            )
        }
    )


class Cells:
    def __init__(self):
        self.queries = []

    def search(self, db_id, query, k=5, mode="hybrid", threshold=None):
        self.queries.append((db_id, query, k, mode, threshold))
        return [
            CellHit(table="customer", column="city", value=query, score=0.9, source="hybrid"),
            CellHit(table="customer", column="city", value="Paris", score=0.5, source="hybrid"),
        ]


class Examples:
    def __init__(self):
        self.calls = []

    async def search(self, skeleton, k=15, exclude_db=None):  # no threshold parameter: not passed
        self.calls.append((skeleton, k, exclude_db))
        return [
            ExampleHit(question="q", skeleton=skeleton, sql="SELECT 1", db_id="other", score=0.9)
        ]


async def test_each_literal_is_searched_and_hits_are_deduplicated(scripted):
    cells, examples = Cells(), Examples()
    l1 = Understander(
        extractor=KeywordSkeletonExtractor(settings=AgentCall()),
        cell_retriever=cells,
        example_retriever=examples,
        settings=UnderstandingSettings(cell_k=5, cell_threshold=0.8),
    )
    context = await l1.understand(run_for(extractor_client(scripted, ["Paris", "Lyon"])))
    assert [q[1] for q in cells.queries] == ["Paris", "Lyon"] and cells.queries[0][2:] == (
        5,
        "hybrid",
        0.8,
    )
    assert sorted(h.value for h in context.cell_hits) == [
        "Lyon",
        "Paris",
    ]  # Paris once, best score kept
    assert max(h.score for h in context.cell_hits if h.value == "Paris") == 0.9
    assert examples.calls == [("Which [COL] from _ or _?", 15, "shop")]


async def test_without_literals_the_question_is_the_query(scripted):
    cells = Cells()
    l1 = Understander(
        extractor=KeywordSkeletonExtractor(settings=AgentCall()),
        cell_retriever=cells,
        settings=UnderstandingSettings(),
    )
    await l1.understand(run_for(extractor_client(scripted, [])))
    assert [q[1] for q in cells.queries] == ["Which customers from Paris or Lyon ordered tea?"]


async def test_a_database_never_indexed_is_noted_not_degraded(scripted):
    class NotBuilt:
        def search(self, *a, **k):
            raise IndexNotBuilt("database 'shop'", "/idx")

    run = run_for(extractor_client(scripted, ["Paris"]))
    l1 = Understander(
        extractor=KeywordSkeletonExtractor(settings=AgentCall()),
        cell_retriever=NotBuilt(),
        settings=UnderstandingSettings(),
    )
    context = await l1.understand(run)
    assert context.cell_hits == ()
    assert [(d.label, d.degradation) for d in run.recorder.decisions] == [
        ("cell_retriever_unavailable", False)
    ]


def _shop() -> SchemaView:
    """Seven tables, 13 padded columns each; orders -> customers, order_items -> orders/products."""
    pad = tuple(ColumnInfo(name=f"col_{i}", type="TEXT", samples=("x" * 40,)) for i in range(12))
    keys = {"orders": ("customer_id",), "order_items": ("order_id", "product_id")}
    names = ["customers", "orders", "order_items", "products", "suppliers", "invoices", "shipments"]
    tables = tuple(
        TableInfo(
            name=n,
            columns=(ColumnInfo(name=f"{n}_key", type="INT", primary_key=True),)
            + tuple(ColumnInfo(name=k, type="INT") for k in keys.get(n, ()))
            + pad,
        )
        for n in names
    )
    fks = (
        ForeignKey(
            table="orders", column="customer_id", ref_table="customers", ref_column="customers_key"
        ),
        ForeignKey(
            table="order_items", column="order_id", ref_table="orders", ref_column="orders_key"
        ),
        ForeignKey(
            table="order_items",
            column="product_id",
            ref_table="products",
            ref_column="products_key",
        ),
    )
    return SchemaView(db_id="shop", dialect="sqlite", tables=tables, foreign_keys=fks)


def _focus(view: SchemaView, budget: int, run: TaskRun) -> SchemaView:
    return Understander(
        extractor=None, settings=UnderstandingSettings(max_schema_tokens=budget)
    ).focus(view, run)


def _tea_run() -> TaskRun:
    run = run_for(None, question="Which customers bought tea?")
    run.context = Context(
        understanding=Understanding(keywords=("orders",)),
        cell_hits=(CellHit(table="products", column="col_1", value="tea", score=1, source="bm25"),),
    )
    return run


def test_focus_keeps_the_pointed_at_tables_and_the_join_path_between_them():
    view, run = _shop(), _tea_run()
    whole = prompt_view_tokens(view)
    focused = _focus(view, whole - 1, run)
    # the question names customers, the extractor named orders, the cell value lives in products;
    # order_items is how products join orders
    assert [t.name for t in focused.tables] == ["customers", "orders", "order_items", "products"]
    assert len(focused.foreign_keys) == 3
    [decision] = run.recorder.decisions
    assert decision.label == "schema.focused" and decision.features["tokens"] <= whole - 1
    assert _focus(view, whole, _tea_run()) is view  # fits: untouched


def test_focus_drops_the_lowest_ranked_tables_to_fit_the_budget():
    view = _shop()
    two = prompt_view_tokens(restrict(view, tables=["customers", "orders"]))
    focused = _focus(view, two, _tea_run())
    # products (a cell hit) would need order_items as well: over the budget, so left out
    assert [t.name for t in focused.tables] == ["customers", "orders"]
    assert prompt_view_tokens(focused) <= two
    nothing = run_for(None, question="Hello?")
    assert _focus(view, two, nothing) is view  # nothing points anywhere: the whole schema
