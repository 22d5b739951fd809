from __future__ import annotations

import numpy as np

from pipelines.agents.runtime import as_executor
from pipelines.sandbox import Sandbox
from pipelines.schema.focus import SchemaFocuser
from pipelines.schema.reference import reference_schema
from pipelines.settings import FocusSettings


def bag_of_words(texts):
    """A stand-in embedder: 'order'-ish texts point one way, everything else another."""
    rows = [
        [1.0, 0.0] if "order" in t.lower() or "purchase" in t.lower() else [0.0, 1.0] for t in texts
    ]
    return np.asarray(rows, dtype=np.float32)


async def _reference(db):
    return await reference_schema(as_executor(Sandbox()), db, sample_rows=1)


async def test_a_large_schema_is_cut_to_the_question_and_a_small_one_shown_whole(shop_db):
    reference = await _reference(shop_db)
    whole = reference.text()
    small = SchemaFocuser(FocusSettings(above_tokens=10_000), embed=None)
    await small.prepare(shop_db, reference)
    shown = small.focus(shop_db, reference, "What is the average price?")
    assert shown.text == whole and not shown.focused

    large = SchemaFocuser(FocusSettings(above_tokens=50, similarity=False), embed=None)
    await large.prepare(shop_db, reference)
    shown = large.focus(shop_db, reference, "What is the average price?")
    assert shown.focused and shown.tables == ("product",)
    assert shown.text == reference.text(["product"]) and "CREATE TABLE customer" not in shown.text
    assert shown.tokens < shown.whole_tokens


async def test_similarity_points_at_tables_the_words_miss_and_its_failure_is_not_fatal(shop_db):
    reference = await _reference(shop_db)
    settings = FocusSettings(above_tokens=50, budget_ratio=0.0)
    with_similarity = SchemaFocuser(settings, embed=bag_of_words)
    await with_similarity.prepare(shop_db, reference)
    shown = with_similarity.focus(shop_db, reference, "Tell me about purchases")
    assert "orders" in shown.tables

    def broken(texts):
        raise OSError("model files missing")

    without = SchemaFocuser(settings, embed=broken)
    await without.prepare(shop_db, reference)  # logs, links on words alone
    assert not without.focus(shop_db, reference, "Tell me about purchases").focused


async def test_shown_tables_come_hubs_first_so_questions_share_a_prefix(shop_db):
    reference = await _reference(shop_db)
    question = "Which customers bought which product titles in their orders?"
    shown = {}
    for order in ("hubs_first", "catalog"):
        focuser = SchemaFocuser(
            FocusSettings(above_tokens=50, similarity=False, order=order), embed=None
        )
        await focuser.prepare(shop_db, reference)
        shown[order] = focuser.focus(shop_db, reference, question)
    hubs, catalog = shown["hubs_first"], shown["catalog"]
    assert set(hubs.tables) == set(catalog.tables) >= {"customer", "orders", "product"}
    catalog_order = [b.name for b in reference.tables]
    assert list(catalog.tables) == sorted(catalog.tables, key=catalog_order.index)
    # orders and order_line join two tables each; customer and product one
    assert hubs.tables[0] in {"orders", "order_line"} and hubs.tables[-1] in {"customer", "product"}
    assert hubs.text.startswith(reference.text([hubs.tables[0]]))
    assert hubs.text == reference.text(hubs.tables) and hubs.tokens == catalog.tokens
