"""Predictions files in and out: JSONL, Spider's one-SQL-per-line file, BIRD's predict_dev.json.

Reading (``read_predictions``) returns ``{question index: sql}``; the index is the question's
position in the benchmark's question file, as in task ids ``<prefix>:<index>``.

=========  ================================================================================
format     file
=========  ================================================================================
``jsonl``  one ``{"task_id": "spider_dev:3", "sql": ...}`` or ``{"index": 3, "sql": ...}``
           per line, optionally with ``"db_id"``
``spider`` line i is the SQL for question i, optionally followed by ``<TAB>db_id``
``bird``   ``{"0": "SQL\\t----- bird -----\\tdb_id", ...}``, keys are question positions
=========  ================================================================================

The Spider and BIRD files are positional over the whole question file, as the official dev
files are; use JSONL for subsets. A ``db_id`` given in the file must match the question's,
which catches misaligned files. ``check_complete`` refuses a file that does not answer every
question scored (a Spider file whose line count is not the question file's, a JSONL or BIRD
file missing some): a short or shifted file would otherwise score quietly wrong.

Writing (``export_official``) produces what the official scripts take for the loaded tasks:
predictions plus a gold file aligned line by line (and BIRD's difficulty file), so a subset
can be checked with ``evaluation.py`` / ``evaluation_ex.py`` too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from eval.errors import PredictionsFormatError
from eval.loaders import LoadedBenchmark, task_index

PredictionsFormat = Literal["jsonl", "spider", "bird"]
BIRD_SEPARATOR = "\t----- bird -----\t"
_LINE_BREAKS = re.compile(r"[\r\n\t]+")


def read_predictions(
    path: Path, fmt: PredictionsFormat, benchmark: LoadedBenchmark
) -> dict[int, str]:
    """``{question index: sql}`` from a predictions file, checked against the benchmark."""
    if not path.is_file():
        raise PredictionsFormatError(
            f"predictions file not found: {path}" if not path.exists() else f"{path} is not a file"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise PredictionsFormatError(
            f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})"
        ) from None
    db_ids = _db_ids_by_index(benchmark)
    if fmt == "jsonl":
        return _read_jsonl(text, path, benchmark, db_ids)
    if fmt == "spider":
        return _read_spider(text, path, benchmark, db_ids)
    if fmt == "bird":
        return _read_bird(text, path, benchmark, db_ids)
    raise PredictionsFormatError(f"unknown predictions format {fmt!r}")


def resolve_key(key: str | int, benchmark: LoadedBenchmark) -> int:
    """A prediction's question index from an int index, a digit string, or a task id."""
    if isinstance(key, bool):
        raise PredictionsFormatError(f"not a question index or task id: {key!r}")
    if isinstance(key, int):
        index = key
    elif key.isdigit():
        index = int(key)
    else:
        if key.rsplit(":", 1)[0] != benchmark.id_prefix:
            raise PredictionsFormatError(
                f"task id {key!r} is not from benchmark {benchmark.id_prefix!r}"
            )
        try:
            index = task_index(key)
        except ValueError as exc:
            raise PredictionsFormatError(str(exc)) from None
    if not 0 <= index < benchmark.total_questions:
        raise PredictionsFormatError(
            f"question {key!r} is outside {benchmark.name} (0..{benchmark.total_questions - 1})"
        )
    return index


def _db_ids_by_index(benchmark: LoadedBenchmark) -> dict[int, str]:
    ids = {task_index(t.task_id): t.db.db_id for t in benchmark.tasks}
    ids.update({task_index(s.task_id): s.db_id for s in benchmark.skipped})
    return ids


def _put(out: dict[int, str], index: int, sql: str, where: str) -> None:
    if index in out:
        raise PredictionsFormatError(f"{where}: a second prediction for question {index}")
    out[index] = sql


def check_complete(
    path: Path, fmt: PredictionsFormat, predictions: Mapping[int, str], benchmark: LoadedBenchmark
) -> None:
    """Refuse a predictions file that does not cover ``benchmark``'s questions.

    Spider files are positional: one line per question of the question file, so a missing or
    extra line (a shifted file) shows in the count. JSONL and BIRD files must name every loaded
    task. ``score --partial`` skips this check and scores only the questions a file answers.
    """
    if fmt == "spider":
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines != benchmark.total_questions:
            raise PredictionsFormatError(
                f"{path}: {lines} lines for the {benchmark.total_questions} questions of "
                f"{benchmark.questions_file} (one line per question; is a line missing?); "
                "--partial scores it anyway"
            )
        return
    missing = [t.task_id for t in benchmark.tasks if task_index(t.task_id) not in predictions]
    if missing:
        shown = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
        raise PredictionsFormatError(
            f"{path}: no prediction for {len(missing)} of the {len(benchmark.tasks)} questions "
            f"({shown}); --partial scores only the questions it answers"
        )


def _read_jsonl(
    text: str, path: Path, benchmark: LoadedBenchmark, db_ids: dict[int, str]
) -> dict[int, str]:
    out: dict[int, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PredictionsFormatError(f"{where}: not JSON: {exc}") from None
        if not isinstance(record, dict) or not isinstance(record.get("sql"), str):
            raise PredictionsFormatError(f"{where}: want an object with a string 'sql'")
        key = record.get("task_id", record.get("index"))
        if key is None:
            raise PredictionsFormatError(f"{where}: needs 'task_id' or 'index'")
        index = resolve_key(key, benchmark)
        db_id = record.get("db_id")
        if db_id is not None and not isinstance(db_id, str):
            raise PredictionsFormatError(f"{where}: 'db_id' is not a string")
        _check_db(db_id, index, db_ids, where)
        _put(out, index, record["sql"], where)
    return out


def _check_db(db_id: str | None, index: int, db_ids: dict[int, str], where: str) -> None:
    if db_id is not None and db_ids.get(index) != db_id:
        raise PredictionsFormatError(
            f"{where}: names database {db_id!r} but question {index} is on {db_ids.get(index)!r}"
            " (is the file aligned with the question file?)"
        )


def _read_spider(
    text: str, path: Path, benchmark: LoadedBenchmark, db_ids: dict[int, str]
) -> dict[int, str]:
    lines = text.splitlines()
    if len(lines) > benchmark.total_questions:
        raise PredictionsFormatError(
            f"{path}: {len(lines)} lines for {benchmark.total_questions} questions"
        )
    out: dict[int, str] = {}
    for index, line in enumerate(lines):
        sql, _, db_id = line.partition("\t")
        if not sql.strip():
            continue  # no prediction for this question
        _check_db(db_id.strip() or None, index, db_ids, f"{path}:{index + 1}")
        out[index] = sql.strip()
    return out


def _read_bird(
    text: str, path: Path, benchmark: LoadedBenchmark, db_ids: dict[int, str]
) -> dict[int, str]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PredictionsFormatError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PredictionsFormatError(
            f"{path}: want a JSON object {{position: 'SQL\\t----- bird -----\\tdb_id'}}"
        )
    out: dict[int, str] = {}
    for key, value in data.items():
        if not isinstance(value, str):
            raise PredictionsFormatError(f"{path}: value for {key!r} is not a string")
        index = resolve_key(key, benchmark)
        sql, separator, db_id = value.partition(BIRD_SEPARATOR)
        _check_db(db_id.strip() if separator else None, index, db_ids, f"{path}[{key!r}]")
        _put(out, index, sql.strip(), f"{path}[{key!r}]")
    return out


def write_jsonl(path: Path, predictions: Mapping[str, str]) -> None:
    """``{task_id: sql}`` as JSONL, one ``{"task_id", "sql"}`` per line."""
    lines = [
        json.dumps({"task_id": tid, "sql": sql}, ensure_ascii=False)
        for tid, sql in predictions.items()
    ]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def _one_line(sql: str) -> str:
    """Official files hold one query per line, tab-separated from its db_id."""
    return _LINE_BREAKS.sub(" ", sql).strip()


def export_official(
    benchmark: LoadedBenchmark, predictions: Mapping[str, str], out_dir: Path
) -> list[Path]:
    """Files for the official scripts over the loaded tasks, in task order.

    Spider: ``pred.txt`` (one SQL per line) and ``gold.txt`` (``SQL<TAB>db_id``) for
    test-suite ``evaluation.py --gold gold.txt --pred pred.txt``. BIRD and demo:
    ``predict_<split>.json``, ``gold.sql`` (``SQL<TAB>db_id``) and ``difficulty.jsonl`` for
    ``evaluation_ex.py --ground_truth_path gold.sql --diff_json_path difficulty.jsonl``.
    A task without a prediction gets ``SELECT NULL`` so lines stay aligned (and it is wrong).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    preds = [_one_line(predictions.get(t.task_id, "SELECT NULL")) for t in benchmark.tasks]
    gold = [f"{_one_line(t.gold_sql or '')}\t{t.db.db_id}" for t in benchmark.tasks]
    if benchmark.kind == "spider":
        written = [out_dir / "pred.txt", out_dir / "gold.txt"]
        written[0].write_text("".join(p + "\n" for p in preds), encoding="utf-8")
    else:
        bird = {
            str(i): f"{p}{BIRD_SEPARATOR}{t.db.db_id}"
            for i, (p, t) in enumerate(zip(preds, benchmark.tasks))
        }
        written = [
            out_dir / f"predict_{benchmark.split}.json",
            out_dir / "gold.sql",
            out_dir / "difficulty.jsonl",
        ]
        written[0].write_text(json.dumps(bird, indent=2, ensure_ascii=False), encoding="utf-8")
        written[2].write_text(
            "".join(json.dumps({"difficulty": t.difficulty}) + "\n" for t in benchmark.tasks),
            encoding="utf-8",
        )
    written[1].write_text("".join(g + "\n" for g in gold), encoding="utf-8")
    return written
