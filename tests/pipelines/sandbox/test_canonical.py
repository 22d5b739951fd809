import datetime as dt
import math
import random
import uuid
from decimal import Decimal

import pytest

from pipelines.sandbox import canonical_rows, canonical_value, error_hash, result_hash
from pipelines.sandbox.canonical import normalise_error

MIXED_ROWS = [
    (None, 1, "b"),
    ("a  ", 2.5, None),
    (3, None, b"\x00\xff"),
    (dt.date(2020, 1, 2), Decimal("1.2345678"), True),
    (dt.datetime(2021, 5, 1, 10, 30), dt.time(8, 15), [1, 2]),
    ({"k": 1.0}, float("nan"), uuid.UUID(int=7)),
    (float("inf"), -0.0, "z"),
]


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        (None, None),
        (True, 1),
        (7, 7),
        (0.1 + 0.2, 0.3),
        (2.0, 2),
        (-0.0, 0),
        (1e-9, 0),
        (1.23456789, 1.234568),
        (Decimal("3.1400000"), 3.14),
        (Decimal("10.000"), 10),
        ("Joe  \t\n", "Joe"),
        ("  Joe", "  Joe"),
        (b"\x01\xab", "x'01ab'"),
        (dt.datetime(2021, 5, 1, 10, 30, 5), "2021-05-01T10:30:05"),
        (dt.date(2020, 2, 29), "2020-02-29"),
        (dt.time(8, 15), "08:15:00"),
        ([1.0, " x "], [1, " x"]),
    ],
)
def test_canonical_value(raw, canonical):
    assert canonical_value(raw) == canonical
    assert type(canonical_value(raw)) is type(canonical)


def test_large_integral_float_stays_float():
    assert isinstance(canonical_value(2.0**60), float)


def test_row_order_does_not_change_the_hash():
    rows = [(i, f"name {i}", i * 0.5) for i in range(50)]
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    assert result_hash(rows) == result_hash(shuffled)


def test_float_noise_trailing_space_and_int_float_do_not_change_the_hash():
    assert result_hash([(0.1 + 0.2, "Joe ")]) == result_hash([(0.3, "Joe")])
    assert result_hash([(1.0000000001,)]) == result_hash([(1,)])
    assert result_hash([(Decimal("2.50"),)]) == result_hash([(2.5,)])


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ([(1,)], [(2,)]),
        ([(1,)], [("1",)]),
        ([(None,)], [("None",)]),
        ([(None,)], [("",)]),
        ([(1,), (1,)], [(1,)]),  # duplicates count: a bag, not a set
        ([(1, 2)], [(2, 1)]),  # column order matters
        ([(0.1,)], [(0.1001,)]),
        ([("a", "b")], [("a b",)]),
        ([(b"ab",)], [("ab",)]),
    ],
)
def test_different_results_hash_differently(left, right):
    assert result_hash(left) != result_hash(right)


def test_column_count_separates_empty_results():
    assert result_hash([], n_columns=1) != result_hash([], n_columns=2)
    assert result_hash([], n_columns=2) == result_hash([], n_columns=2)


def test_mixed_types_and_none_sort_without_error_in_any_order():
    expected = result_hash(MIXED_ROWS)
    rng = random.Random(11)
    for _ in range(20):
        shuffled = MIXED_ROWS[:]
        rng.shuffle(shuffled)
        assert result_hash(shuffled) == expected


def test_sort_puts_null_before_numbers_before_text():
    rows = canonical_rows([("b",), (2,), (None,), (float("nan"),), (1.5,), ("a",)])
    assert rows[0] == (None,)
    assert rows[1:3] == [(1.5,), (2,)]
    assert math.isnan(rows[3][0])
    assert rows[4:] == [("a",), ("b",)]


def test_keep_order_canonicalises_cells_but_keeps_rows_in_place():
    rows = canonical_rows([("z ", 2.0), ("a", 1.0)], keep_order=True)
    assert rows == [("z", 2), ("a", 1)]


def test_result_hash_is_idempotent_over_canonical_rows():
    assert result_hash(canonical_rows(MIXED_ROWS)) == result_hash(MIXED_ROWS)


def test_errors_and_results_never_collide():
    rng = random.Random(5)
    result_hashes = {
        result_hash([(rng.randint(0, 9), rng.choice(["a", "ERR:x", None]))], n_columns=2)
        for _ in range(300)
    }
    error_hashes = {error_hash(f"no such column: c{rng.randint(0, 99)}") for _ in range(300)}
    assert all(h.startswith("ERR:") for h in error_hashes)
    assert not any(h.startswith("ERR:") for h in result_hashes)
    assert result_hashes.isdisjoint(error_hashes)
    # A result whose only cell is an error hash's text still hashes as a result.
    text = next(iter(error_hashes))
    assert result_hash([(text,)]) != text


def test_equal_errors_collapse():
    first = error_hash("no such column: T1.nme", "/data/a/db.sqlite")
    assert first == error_hash("No such column:   t1.nme", "/data/a/db.sqlite")
    assert error_hash("unable to open /data/a/db.sqlite", "/data/a/db.sqlite") == error_hash(
        "unable to open /other/copy.sqlite", "/other/copy.sqlite"
    )
    # Carets and line numbers differ between runs of the same mistake.
    assert error_hash("LINE 1: SELECT x\n   ^") == error_hash("LINE 3: SELECT x\n        ^")


def test_different_errors_stay_apart():
    assert error_hash("no such column: name") != error_hash("no such column: title")
    assert error_hash("no such table: t1") != error_hash("no such table: t2")


def test_normalise_error_masks_paths_and_numbers():
    text = normalise_error("Cannot open /tmp/x/db.sqlite at offset 42", "/tmp/x/db.sqlite")
    assert text == "cannot open <db> at offset #"
