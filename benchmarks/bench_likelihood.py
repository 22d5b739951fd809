"""The model's own likelihood of each candidate as a selection signal, against the plain vote.

    python benchmarks/bench_likelihood.py RUN_DIR [--out scores.json] [--scores earlier.json]
        [--model qwen2.5-coder-1.5b]

RUN_DIR is a finished ``eval`` run on the fixed Spider subset. On the questions whose pool holds
a right and a wrong bucket (the only ones a selection rule can change), every distinct
non-error candidate SQL is scored teacher-forced by the local model under the plain single-pass
prompt (schema with example rows, question): a GBNF grammar that admits only that SQL and the
closing fence, ``n_probs`` with the pre-sampling log-probabilities of llama.cpp's
``/completion``. Then each rule picks a bucket per question and the script prints how many
picks are right:

    predictions.parquet ──► contested questions ──► /completion(prompt + "```sql\\n",
        grammar = the SQL) ──► sum and mean token log-probability per SQL
    ──► vote | max sum | max mean | votes + mean | ... ──► right picks

``--scores`` reuses the scores of an earlier ``--out`` (same question and SQL), so a second
run directory costs only its new SQLs. Many rules on a few dozen questions: a rule chosen here
is tuned on them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from _load import parse_guarded  # benchmarks/_load.py
from eval.sweep.store import read_predictions

Scores = dict[str, tuple[float, int]]  # SQL -> (sum of token log-probabilities, tokens)


def contested(frame: pl.DataFrame) -> list[dict]:
    """Questions whose executed candidates hold a right and a wrong result."""
    out = []
    for row in frame.iter_rows(named=True):
        verdicts = {bool(c["correct_bird"]) for c in row["candidates"] or () if not c["error"]}
        if verdicts == {True, False}:
            out.append(row)
    return out


def buckets(candidates: Sequence[dict], scores: Scores) -> list[dict]:
    """Per result hash: votes, whether it is right, holds the greedy candidate, best scores."""
    by_hash: dict[str, dict] = defaultdict(lambda: {"votes": 0, "sqls": set(), "greedy": False})
    for c in candidates:
        if c["error"]:
            continue
        b = by_hash[c["hash"]]
        b["votes"] += 1
        b["sqls"].add(c["sql"])
        b["right"] = bool(c["correct_bird"])
        b["greedy"] |= c["producer"].endswith("/greedy")
    for b in by_hash.values():
        scored = [scores[s] for s in b["sqls"] if s in scores and scores[s][1] > 0]
        b["sum"] = max((s for s, _ in scored), default=-math.inf)
        b["mean"] = max((s / n for s, n in scored), default=-math.inf)
    return list(by_hash.values())


RULES: dict[str, Callable[[dict], object]] = {
    "vote (ties: greedy)": lambda b: (b["votes"], b["greedy"]),
    "max sum log-prob": lambda b: b["sum"],
    "max mean log-prob": lambda b: b["mean"],
    "votes + mean log-prob": lambda b: b["votes"] + b["mean"],
    "votes x exp(mean log-prob)": lambda b: b["votes"] * math.exp(b["mean"]),
}


def right_picks(questions: Sequence[tuple[Sequence[dict], Scores]]) -> dict[str, int]:
    """For each rule, the questions whose picked bucket is right."""
    out = dict.fromkeys(RULES, 0)
    for candidates, scores in questions:
        pool = buckets(candidates, scores)
        for name, key in RULES.items():
            out[name] += max(pool, key=key)["right"]
    return out


async def score_all(rows: list[dict], tasks: dict, cfg, known: dict) -> dict[str, Scores]:
    import httpx

    from models.local.server import LocalServer, LocalServerSettings
    from models.registry import get_spec
    from models.scoring import gbnf_literal
    from models.store import ModelStore
    from pipelines.agents.render import DIALECT_NAME
    from pipelines.prompts import load_prompt
    from pipelines.sandbox.pool import LocalSandboxPool
    from pipelines.schema.reference import reference_schema

    server = LocalServer(
        ModelStore(cfg.paths.models).path_for(get_spec(cfg.model.name)), LocalServerSettings()
    )
    base = server.start().removesuffix("/v1")
    prompt, executor, schemas = load_prompt("single_pass"), LocalSandboxPool(size=1), {}
    out: dict[str, Scores] = {}
    started = time.monotonic()
    try:
        async with httpx.AsyncClient(timeout=600, headers=server.auth_headers) as http:
            for row in rows:
                task = tasks[row["task_id"]]
                if task.db.db_id not in schemas:
                    schemas[task.db.db_id] = await reference_schema(executor, task.db)
                messages = prompt.render(
                    dialect=DIALECT_NAME[task.db.dialect],
                    schema=schemas[task.db.db_id],
                    cells="",
                    examples="",
                    question=task.question.strip(),
                    evidence="",
                )
                reply = await http.post(
                    f"{base}/apply-template", json={"messages": [m.model_dump() for m in messages]}
                )
                text = reply.json()["prompt"] + "```sql\n"
                scores: Scores = {}
                for c in row["candidates"]:
                    sql = c["sql"]
                    if c["error"] or sql in scores:
                        continue
                    if (row["task_id"], sql) in known:
                        scores[sql] = known[(row["task_id"], sql)]
                        continue
                    body = {
                        "prompt": text,
                        "grammar": "root ::= " + gbnf_literal(sql.strip() + "\n```"),
                        "n_predict": 512,
                        "temperature": 0,
                        "n_probs": 1,
                        "post_sampling_probs": False,
                        "cache_prompt": True,
                    }
                    tokens = (await http.post(f"{base}/completion", json=body)).json()
                    logprobs = [t["logprob"] for t in tokens.get("completion_probabilities") or ()]
                    scores[sql] = (sum(logprobs), len(logprobs))
                out[row["task_id"]] = scores
                print(
                    f"  {row['task_id']}: {len(scores)} SQLs, {time.monotonic() - started:.0f} s",
                    flush=True,
                )
    finally:
        server.stop()
        executor.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, help="write the scores here (JSON)")
    parser.add_argument("--scores", type=Path, help="reuse the scores of an earlier --out")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    args, guard = parse_guarded(parser)

    from core.config import load_config
    from eval.loaders import load_benchmark

    cfg = load_config([f"model={args.model}", "benchmark=spider_dev_sub9"])
    tasks = {t.task_id: t for t in load_benchmark(cfg.benchmark).tasks}
    rows = contested(read_predictions(args.run_dir))
    known = {}
    if args.scores:
        for task_id, scores in json.loads(args.scores.read_text()).items():
            known.update({(task_id, sql): tuple(v) for sql, v in scores.items()})
    print(f"{args.run_dir.name}: {len(rows)} questions with a right and a wrong bucket")
    guard.before()
    scored = asyncio.run(score_all(rows, tasks, cfg, known))
    guard.after()
    if args.out:
        args.out.write_text(json.dumps(scored))
    picks = right_picks([(row["candidates"], scored[row["task_id"]]) for row in rows])
    print(f"{'rule':<28} right picks of {len(rows)}")
    for name, right in picks.items():
        print(f"{name:<28} {right}")


if __name__ == "__main__":
    main()
