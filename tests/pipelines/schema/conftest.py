"""Small real databases for the schema-view tests (SQLite and DuckDB files in tmp_path)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pytest

from pipelines.contracts import DatabaseRef

SHOP_DDL = """
CREATE TABLE customer (customer_id INTEGER PRIMARY KEY, name TEXT, city VARCHAR(40), note TEXT);
CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer_id INTEGER REFERENCES customer(customer_id),
    status TEXT,
    total REAL
);
CREATE TABLE product (id INTEGER PRIMARY KEY, title TEXT, price REAL);
CREATE TABLE order_line (order_id INTEGER, product_id INTEGER, qty INTEGER, PRIMARY KEY (order_id, product_id));
"""
CUSTOMERS = [
    (1, "Ada Lovelace", "London", "pipe | in text"),
    (2, "Alan Turing", "Wilmslow", None),
    (3, "Grace Hopper", "New York", None),
]
ORDERS = [(10, 1, "shipped", 9.5), (11, 1, "open", 3.0), (12, 3, "shipped", 20.0)]
PRODUCTS = [(1, "Kettle", 25.0), (2, "Toaster", 30.0)]
LINES = [(10, 1, 2), (11, 2, 1)]


def make_shop(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(SHOP_DDL)
        conn.executemany("INSERT INTO customer VALUES (?, ?, ?, ?)", CUSTOMERS)
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", ORDERS)
        conn.executemany("INSERT INTO product VALUES (?, ?, ?)", PRODUCTS)
        conn.executemany("INSERT INTO order_line VALUES (?, ?, ?)", LINES)
    conn.close()
    return path


@pytest.fixture
def shop_rows() -> dict[str, list[tuple]]:
    return {"customer": CUSTOMERS, "orders": ORDERS, "product": PRODUCTS, "order_line": LINES}


@pytest.fixture
def shop_db(tmp_path: Path) -> DatabaseRef:
    return DatabaseRef(db_id="shop", path=str(make_shop(tmp_path / "shop.sqlite")))


TICKETS_DDL = """
CREATE TABLE users (id INTEGER PRIMARY KEY, handle VARCHAR);
CREATE TABLE tickets (
    id INTEGER PRIMARY KEY,
    title VARCHAR,
    owner_id INTEGER REFERENCES users(id),
    meta STRUCT(stage VARCHAR, score INTEGER, origin STRUCT(channel VARCHAR, region VARCHAR)),
    links STRUCT(type VARCHAR, display_id VARCHAR)[],
    labels VARCHAR[]
);
COMMENT ON COLUMN tickets.title IS 'one-line summary';
INSERT INTO users VALUES (1, 'ada'), (2, 'bob');
INSERT INTO tickets VALUES
  (1, 'Login fails', 1, {'stage': 'triage', 'score': 3, 'origin': {'channel': 'email', 'region': 'EU'}},
   [{'type': 'blocks', 'display_id': 'ISS-1'}, {'type': 'relates_to', 'display_id': 'ISS-2'}], ['auth', 'p1']),
  (2, 'Slow search', 2, {'stage': 'resolved', 'score': 1, 'origin': {'channel': 'web', 'region': 'US'}},
   [{'type': 'resolves', 'display_id': 'ISS-3'}], ['search']);
"""


def make_tickets(path: Path) -> Path:
    conn = duckdb.connect(str(path))
    conn.execute(TICKETS_DDL)
    conn.close()
    return path


@pytest.fixture
def tickets_db(tmp_path: Path) -> DatabaseRef:
    return DatabaseRef(
        db_id="tickets", path=str(make_tickets(tmp_path / "tickets.duckdb")), dialect="duckdb"
    )
