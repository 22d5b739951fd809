import pytest

from models.errors import InvalidModelOutput
from models.sql_extract import extract_sql


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            "Sure:\n```sql\nSELECT name FROM singer;\n```\nThis lists names.",
            "SELECT name FROM singer",
        ),
        ("```SQL\nSELECT 1\n```", "SELECT 1"),
        ("<sql>SELECT count(*) FROM t</sql>", "SELECT count(*) FROM t"),
        ("```\nSELECT a FROM b\n```", "SELECT a FROM b"),
        ("select a from b;\nThis query returns a.", "select a from b"),
        ("WITH x AS (SELECT 1) SELECT * FROM x", "WITH x AS (SELECT 1) SELECT * FROM x"),
        # an unterminated fence (reply cut by max_tokens) still yields the query
        ("```sql\nSELECT a FROM b WHERE c = 1", "SELECT a FROM b WHERE c = 1"),
        # a small model's bullet with the query in inline code (seen from the 0.5B)
        (
            "- `- SELECT T2.name FROM park AS T2 WHERE T2.year = 2008`",
            "SELECT T2.name FROM park AS T2 WHERE T2.year = 2008",
        ),
        ("- the answer is SELECT count(*) FROM singer; done", "SELECT count(*) FROM singer"),
    ],
)
def test_extracts_the_query(reply: str, expected: str) -> None:
    assert extract_sql(reply) == expected


def test_last_fenced_block_wins_over_a_draft() -> None:
    reply = "Draft:\n```sql\nSELECT a FROM t\n```\nFixed:\n```sql\nSELECT b FROM t\n```"
    assert extract_sql(reply) == "SELECT b FROM t"


def test_fenced_sql_preferred_over_bare_select_in_prose() -> None:
    reply = "SELECT is the keyword we need.\n```sql\nSELECT id FROM users\n```"
    assert extract_sql(reply) == "SELECT id FROM users"


def test_multiline_bare_query_kept_until_blank_line() -> None:
    reply = "SELECT a,\n  b\nFROM t\nWHERE c > 1\n\nExplanation follows."
    assert extract_sql(reply) == "SELECT a,\n  b\nFROM t\nWHERE c > 1"


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "I cannot answer that.",
        "```python\nprint(1)\n```",
        "<sql>  </sql>",
        "- we select the names from the singer table",
    ],
)
def test_reply_without_sql_is_a_typed_error(reply: str) -> None:
    with pytest.raises(InvalidModelOutput, match="contains no SQL") as info:
        extract_sql(reply)
    assert info.value.text == reply
