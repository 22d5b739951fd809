"""How often the pairwise selector picks the right one of two answers, per prompt.

    python benchmarks/bench_selector.py RUN_DIR [RUN_DIR ...] [--prompt reasoning_selector ...]
        [--prompt-dir DIR] [--limit N] [--model qwen2.5-coder-1.5b] [--response-cache FILE]

A finished ``eval`` run holds, per question, its candidates with their correctness and (in the
traces) their results. Every question whose pool holds a right and a wrong answer gives one
decisive pair, from the first run directory that has one: the largest right bucket's SQL against
the largest wrong bucket's. Each prompt judges every pair in both orders with the real model,
through the project's ReasoningSelector, with the schema as the system message and the result
previews the tournament shows:

    predictions.parquet + traces ──► pairs (right, wrong) ──► selector(A=right, B=wrong)
                                                         └──► selector(A=wrong, B=right)
    ──► verdicts right, pairs won in both orders (the tournament's win), lost in both, split,
        share of "A" verdicts (position bias), seconds per pair, completion tokens per verdict

Prompt names are files of pipelines/prompts (the project's) or of ``--prompt-dir``
(benchmarks/prompts: variants tried). The pairs come from the run's own questions: a prompt
chosen by this script is tuned on them.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from _load import parse_guarded  # benchmarks/_load.py
from eval.sweep.store import read_predictions
from pipelines.contracts import Task
from pipelines.database_rules import settle_for
from pipelines.strategies.full_width_settings import FullWidthScaling
from pipelines.trace import ReasoningTrace, read_traces


@dataclass(frozen=True)
class Pair:
    task: Task
    right: dict  # {"sql": ..., "result": ExecutionResult}
    wrong: dict


def decisive_pairs(run_dirs: list[Path], tasks: dict[str, Task]) -> list[Pair]:
    traces: dict[str, dict[str, ReasoningTrace]] = {}  # traces.jsonl path -> task_id -> trace
    pairs, seen = [], set()
    for run_dir in run_dirs:
        for row in read_predictions(run_dir).iter_rows(named=True):
            sizes: Counter[str] = Counter()
            first: dict[str, dict] = {}
            for c in row["candidates"]:
                if not c["error"]:
                    sizes[c["hash"]] += 1
                    first.setdefault(c["hash"], c)
            right = [h for h, _ in sizes.most_common() if first[h]["correct_bird"]]
            wrong = [h for h, _ in sizes.most_common() if not first[h]["correct_bird"]]
            if not right or not wrong or not row["trace_path"]:
                continue
            a, b = first[right[0]], first[wrong[0]]
            if row["task_id"] in seen or row["task_id"] not in tasks:
                continue
            path, _, task_id = row["trace_path"].partition("#")
            if path not in traces:
                traces[path] = {t.task_id: t for t in read_traces(path)}
            trace = traces[path].get(task_id)
            results = {c.sql: c.exec_result for c in trace.candidates} if trace else {}
            if not (results.get(a["sql"]) and results.get(b["sql"])):
                continue
            seen.add(row["task_id"])
            pairs.append(
                Pair(
                    tasks[row["task_id"]],
                    {"sql": a["sql"], "result": results[a["sql"]]},
                    {"sql": b["sql"], "result": results[b["sql"]]},
                )
            )
    return pairs


async def judge(pairs, prompts, client, executor, settings):
    """Per prompt: (verdicts per pair as (right-first, wrong-first), seconds per pair, tokens).

    Prompts take turns pair by pair, so each finds the database's schema in the server's cache
    as often as the others; a pair's two orders are judged concurrently, as in the tournament.
    """
    from pipelines.agents.reasoning_selector import ReasoningSelector, SelectionInput
    from pipelines.agents.render import preview
    from pipelines.agents.runtime import AgentRuntime
    from pipelines.schema.reference import reference_schema
    from pipelines.trace import TraceRecorder

    selectors = {
        name: ReasoningSelector(settings=settings.agents.selector, prompt=template)
        for name, template in prompts.items()
    }
    rows = {name: ([], [], []) for name in prompts}
    schemas: dict[str, str] = {}
    rows_shown = settings.tournament.preview_rows

    async def verdict(selector, task, a, b, schema):
        runtime = AgentRuntime(
            client=client,
            executor=executor,
            recorder=TraceRecorder(task.task_id, task.question, task.db.db_id),
        )
        inp = SelectionInput(
            question=task.question,
            evidence=task.evidence,
            schema_text=schema,
            sql_a=a["sql"],
            preview_a=preview(a["result"], rows_shown),
            sql_b=b["sql"],
            preview_b=preview(b["result"], rows_shown),
        )
        try:
            choice = await selector.choose(inp, runtime)
        except Exception as exc:  # noqa: BLE001 - a failed verdict is counted as failed
            print(f"  {task.task_id}: {type(exc).__name__}: {exc}")
            choice = None
        return choice, runtime.usage.completion_tokens

    for pair in pairs:
        task = pair.task
        if task.db.db_id not in schemas:
            chosen, _, _ = await settle_for(executor, task.db, settings, FullWidthScaling())
            schemas[task.db.db_id] = await reference_schema(
                executor, task.db, sample_rows=chosen.single_pass.sample_rows
            )
        for name, selector in selectors.items():
            t0 = time.perf_counter()
            (first, t1), (second, t2) = await asyncio.gather(
                verdict(selector, task, pair.right, pair.wrong, schemas[task.db.db_id]),
                verdict(selector, task, pair.wrong, pair.right, schemas[task.db.db_id]),
            )
            verdicts, seconds, tokens = rows[name]
            verdicts.append((first, second))
            seconds.append(time.perf_counter() - t0)
            tokens.append((t1 + t2) / 2)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dirs", nargs="+", type=Path)
    parser.add_argument("--prompt", action="append", help="prompt file name (repeatable)")
    parser.add_argument(
        "--prompt-dir",
        default=str(Path(__file__).resolve().parent / "prompts"),
        help="directory of prompt variants (default: benchmarks/prompts)",
    )
    parser.add_argument("--limit", type=int, default=0, help="first N pairs only")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument(
        "--response-cache", default="null", help="JSONL response cache, so a rerun is free"
    )
    args, guard = parse_guarded(parser)

    import models
    from core.config import load_config, section
    from eval.loaders import load_benchmark
    from pipelines.prompts import PROMPT_DIR, load_prompt
    from pipelines.sandbox.pool import LocalSandboxPool
    from pipelines.settings import PipelineSettings

    cfg = load_config(
        [
            f"model={args.model}",
            f"model.response_cache={args.response_cache}",
            "scaling=adaptive",
            "benchmark=spider_dev_sub9",
        ]
    )
    tasks = {t.task_id: t for t in load_benchmark(cfg.benchmark).tasks}
    pairs = decisive_pairs(args.run_dirs, tasks)[: args.limit or None]
    names = args.prompt or ["reasoning_selector"]
    prompts = {
        n: load_prompt(n, args.prompt_dir if not (PROMPT_DIR / f"{n}.md").exists() else None)
        for n in names
    }
    settings = section(cfg, "pipeline", PipelineSettings)
    print(f"{len(pairs)} decisive pairs from {len(args.run_dirs)} run(s); prompts: {names}")
    client = models.build_client(cfg.model)
    executor = LocalSandboxPool(size=2)

    async def measure():
        try:
            return await judge(pairs, prompts, client, executor, settings)
        finally:
            await client.aclose()
            executor.close()

    guard.before()
    results = asyncio.run(measure())
    guard.after()
    print(
        "prompt                      right verdicts  pairs won  lost  split  failed  A-share  s/pair  tokens/verdict"
    )
    for name, (verdicts, seconds, tokens) in results.items():
        flat = [v for pair in verdicts for v in pair]
        # right-first order: "A" is right; wrong-first: "B" is
        right = sum(v == want for pair in verdicts for v, want in zip(pair, ("A", "B")))
        won = sum(pair == ("A", "B") for pair in verdicts)
        lost = sum(pair == ("B", "A") for pair in verdicts)
        failed = sum(None in pair for pair in verdicts)
        split = len(verdicts) - won - lost - failed
        a_share = sum(v == "A" for v in flat) / max(1, sum(v is not None for v in flat))
        print(
            f"{name:<27} {right:>5}/{len(flat):<3} {right / max(1, len(flat)):.2f}"
            f"  {won:>4}/{len(verdicts):<4} {lost:>4} {split:>6} {failed:>7}  {a_share:7.2f}"
            f"  {statistics.mean(seconds):6.1f}  {statistics.mean(tokens):14.0f}"
        )


if __name__ == "__main__":
    main()
