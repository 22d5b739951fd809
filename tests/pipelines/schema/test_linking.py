from __future__ import annotations

from pipelines.contracts import CellHit, ForeignKey
from pipelines.schema import introspect
from pipelines.schema.joins import JoinGraph
from pipelines.schema.linking import link_schema


def test_named_tables_are_kept_with_every_table_between_them(shop_db):
    view = introspect(shop_db, 3)
    focus = link_schema(view, "Which products did each customer buy?")
    # order_line and orders connect product to customer; neither is named
    assert set(focus.tables) == {"customer", "orders", "product", "order_line"}
    assert set(focus.bridges) == {"orders", "order_line"}
    assert not focus.whole


def test_a_column_name_or_a_stored_value_points_at_its_table(shop_db):
    view = introspect(shop_db, 3)
    assert link_schema(view, "What is the average price?").tables == ("product",)
    # 'Kettle' is a sample value of product.title
    assert link_schema(view, "How often was the Kettle sold?").tables[0] == "product"
    hit = CellHit(table="orders", column="status", value="shipped", score=1.0, source="bm25")
    assert "orders" in link_schema(view, "How many are shipped?", cell_hits=[hit]).tables


def test_ten_columns_of_one_word_do_not_outvote_the_named_table(shop_db):
    view = introspect(shop_db, 0)
    focus = link_schema(view, "List the customer names")
    assert focus.tables == ("customer",)  # orders.customer_id explains "customer" less


def test_nothing_pointed_at_keeps_the_whole_schema(shop_db):
    view = introspect(shop_db, 0)
    focus = link_schema(view, "How are you?")
    assert focus.whole and len(focus.tables) == len(view.tables)


def test_a_budget_buys_the_next_best_tables(shop_db):
    view = introspect(shop_db, 0)
    sizes = {t.name: 100 for t in view.tables}
    # "price" (product) explains less than the cover asks for (min_gain), so only a budget adds it
    question = "What is the total price and order status?"
    assert link_schema(view, question, min_gain=2.5).tables == ("orders",)
    wide = link_schema(view, question, min_gain=2.5, sizes=sizes, budget=300)
    assert wide.tables == ("orders", "product", "order_line")  # with the table joining them
    assert wide.bridges == ("order_line",)
    # product and its bridge do not fit in 200; order_line (it names "order") does
    tight = link_schema(view, question, min_gain=2.5, sizes=sizes, budget=200)
    assert tight.tables == ("orders", "order_line")
    # most wanted first: the cover's table, then the budget's with the table joining it
    assert wide.ranked == ("orders", "order_line", "product")


def test_the_whole_schema_is_ranked_by_score(shop_db):
    view = introspect(shop_db, 0)
    focus = link_schema(view, "How are you?", similarity={"orders": 0.25, "product": 0.28})
    assert focus.whole and sorted(focus.ranked) == sorted(focus.tables)
    assert focus.ranked == tuple(sorted(focus.tables, key=lambda t: -focus.scores[t]))


def test_similarity_above_the_floor_explains_a_table(shop_db):
    view = introspect(shop_db, 0)
    assert link_schema(view, "Tell me about purchases", similarity={"orders": 0.8}).tables == (
        "orders",
    )
    assert link_schema(view, "Tell me about purchases", similarity={"orders": 0.2}).whole


def test_tables_that_no_join_reaches_stay_apart(shop_db):
    view = introspect(shop_db, 0)
    graph = JoinGraph(
        edges=(
            ForeignKey(
                table="orders", column="customer_id", ref_table="customer", ref_column="customer_id"
            ),
        )
    )
    focus = link_schema(view, "Show every customer and product", graph=graph)
    assert set(focus.tables) == {"customer", "product"} and focus.bridges == ()
