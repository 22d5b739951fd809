"""Pull the SQL out of a model reply.

Tried in order, the last match of each kind wins (models often show a draft, then the answer):

    ```sql … ```  ──►  <sql> … </sql>  ──►  ``` … ``` holding a query
        ──►  a bare SELECT/WITH … up to ; or a blank line
        ──►  an upper-case SELECT … FROM … inside a line (small models put it in a bullet or `code`)

>>> extract_sql("Here you go:\\n```sql\\nSELECT name FROM singer;\\n```")
'SELECT name FROM singer'
"""

from __future__ import annotations

import re

from models.errors import InvalidModelOutput

_QUERY_START = r"(?:SELECT|WITH)\b"
_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"```[ \t]*sql[^\n]*\n(.*?)(?:```|\Z)", re.IGNORECASE | re.DOTALL),
    re.compile(r"<sql>(.*?)(?:</sql>|\Z)", re.IGNORECASE | re.DOTALL),
    re.compile(rf"```[^\n]*\n\s*({_QUERY_START}.*?)(?:```|\Z)", re.IGNORECASE | re.DOTALL),
    # A bare query ends at ";" or a blank line, so trailing prose is left out.
    re.compile(rf"(?:^|\n)[ \t]*({_QUERY_START}.*?)(?:;|\n[ \t]*\n|\Z)", re.IGNORECASE | re.DOTALL),
    # Upper case only: "select the name from ..." in prose is not a query.
    re.compile(r"\b((?:SELECT|WITH)\b[^`\n;]*?\bFROM\b[^`\n;]*)"),
)


def _clean(sql: str) -> str:
    return sql.strip().rstrip(";").strip()


def extract_sql(text: str) -> str:
    """The SQL query in ``text``; :class:`InvalidModelOutput` when there is none."""
    for pattern in _PATTERNS:
        matches = [_clean(m) for m in pattern.findall(text)]
        matches = [m for m in matches if m]
        if matches:
            return matches[-1]
    excerpt = " ".join(text.split())[:120] or "<empty reply>"
    raise InvalidModelOutput(f"the model reply contains no SQL: {excerpt!r}", text=text)
