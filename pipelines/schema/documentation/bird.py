"""Source: BIRD's ``database_description/<table>.csv`` files beside the database.

Each CSV has the columns ``original_column_name, column_name, column_description,
data_format, value_description``; the files come in mixed encodings (UTF-8 with or without BOM,
cp1252, latin-1), so each file is decoded with the first encoding that fits.

    >>> descs = load_descriptions(db.description_dir)   # .../concert_singer/database_description
    >>> descs["singer"]["country"]   # singer.csv: Country,nationality,country of citizenship,text,
    'country of citizenship (nationality)'

Keys are lower-cased table and column names; a missing folder yields ``{}``. ``read`` gives the
same files as ``SchemaDocs`` (description, readable name and value description apart).
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pipelines.contracts import DatabaseRef
from pipelines.schema.documentation.files import readable
from pipelines.schema.documentation.model import ColumnDoc, SchemaDocs, TableDoc, one_line, words

NAME = "bird_csv"
log = logging.getLogger(__name__)

# latin-1 decodes every byte, so it is the last resort and never fails.
ENCODINGS = ("utf-8-sig", "cp1252", "latin-1")

TableDescriptions = dict[str, str]  # lower-cased column name -> description
D = TypeVar("D")  # what one CSV row becomes: a line of text, or a ColumnDoc

DESCRIPTION_DIR = "database_description"  # BIRD: beside each database file


def descriptions_beside(database: Path) -> str | None:
    """The ``database_description`` folder next to a database file (BIRD's layout), if any."""
    folder = database.parent / DESCRIPTION_DIR
    return str(folder) if folder.is_dir() else None


def _decode(raw: bytes) -> str:
    for encoding in ENCODINGS:
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes any byte string")


def _describe(row: dict[str, str]) -> str:
    """One line: the description, the readable name when it adds something, the value notes."""
    original = one_line(row.get("original_column_name"))
    label = one_line(row.get("column_name"))
    description = one_line(row.get("column_description"))
    values = one_line(row.get("value_description"))
    text = description
    redundant = {original.lower(), original.lower().replace("_", " ")}
    if label and label.lower() not in redundant and label.lower() not in description.lower():
        text = f"{text} ({label})" if text else label
    if values:
        text = f"{text}; values: {values}" if text else f"values: {values}"
    return text


def read_description_csv(
    path: Path, describe: Callable[[dict[str, str]], D] = _describe
) -> dict[str, D]:
    """The descriptions of one table's CSV; rows without a column name or text are ignored."""
    reader = csv.DictReader(io.StringIO(_decode(path.read_bytes())))
    if reader.fieldnames is None:
        return {}
    reader.fieldnames = [(name or "").strip().lower() for name in reader.fieldnames]
    if "original_column_name" not in reader.fieldnames:
        log.warning("skipping %s: no original_column_name header", path)
        return {}
    out: dict[str, D] = {}
    for row in reader:
        column = one_line(row.get("original_column_name"))
        text = describe(row)
        if column and text:
            out[column.lower()] = text
    return out


def load_descriptions(
    description_dir: str | Path | None, describe: Callable[[dict[str, str]], D] = _describe
) -> dict[str, dict[str, D]]:
    """All tables' column descriptions in a folder, keyed by lower-cased table name."""
    if description_dir is None:
        return {}
    folder = Path(description_dir)
    if not folder.is_dir():
        log.warning("description folder not found, continuing without: %s", folder)
        return {}
    files = readable(
        (path for path in sorted(folder.iterdir()) if path.suffix.lower() == ".csv"),
        lambda path: read_description_csv(path, describe),
        (OSError, csv.Error),
        "description file",
    )
    return {path.stem.strip().lower(): columns for path, columns in files}


def _column_doc(row: dict[str, str]) -> ColumnDoc:
    original = one_line(row.get("original_column_name"))
    label = one_line(row.get("column_name"))
    if "".join(words(label)) == "".join(words(original)):
        label = ""  # BIRD often repeats the name with spaces: no readable name
    return ColumnDoc(
        description=one_line(row.get("column_description")),
        values=one_line(row.get("value_description")),
        label=label,
    )


def read(db: DatabaseRef) -> SchemaDocs:
    """The description folder of ``db`` (``db.description_dir``) as documentation."""
    tables = load_descriptions(db.description_dir, _column_doc)
    docs = {table: TableDoc(columns=columns) for table, columns in tables.items() if columns}
    return SchemaDocs(tables=docs, sources=(NAME,) if docs else ())
