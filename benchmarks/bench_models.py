"""Local model runtimes under the project's ModelClient: throughput, batching and prefix reuse.

    python benchmarks/bench_models.py [--models qwen2.5-coder-0.5b qwen2.5-coder-1.5b]
                                      [--runtimes xllamacpp llama-cpp-python]

For each (model, runtime) it prints:
  (a) 16 Spider questions issued concurrently vs one after another: requests/s, generated tok/s, ratio
  (b) 8 samples of one schema prompt (n=8, prefix shared) vs 8 different schema prompts (n=1 each)
  (c) both runtimes side by side: single-request prompt tok/s and decode tok/s, plus (a) and (b)
Prompts are a Spider database's CREATE TABLE statements with 3 example rows per table plus a question, greedy for (a),
T=0.8 for (b). Needs the models pulled and /work/shared/benchmarks/spider (paths.benchmarks).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from models import ChatMessage, ChatRequest, ModelClient, build_client
from pipelines.config import load_config

SYSTEM = "You are a SQLite expert. Answer with one SQL query in a ```sql block."


def schema_prompt(db_file: Path) -> str:
    """CREATE TABLE statements plus 3 example rows per table (the baseline's prompt shape)."""
    con = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True)
    try:
        parts = []
        for name, ddl in con.execute("SELECT name, sql FROM sqlite_master WHERE type='table' AND sql IS NOT NULL"):
            rows = con.execute(f'SELECT * FROM "{name}" LIMIT 3').fetchall()
            parts.append(ddl + "\n/* 3 example rows:\n" + "\n".join(map(str, rows)) + "\n*/")
        return "\n\n".join(parts)
    finally:
        con.close()


def load_prompts(spider: Path, count: int) -> tuple[list[str], list[str]]:
    """``count`` questions on one database, and ``count`` questions on distinct databases."""
    dev = json.loads((spider / "dev.json").read_text())
    db_file = {q["db_id"]: spider / "database" / q["db_id"] / f"{q['db_id']}.sqlite" for q in dev}
    same_db = [q for q in dev if q["db_id"] == "concert_singer"][:count]
    seen: dict[str, dict] = {}
    for q in dev:
        if q["db_id"] not in seen and db_file[q["db_id"]].exists():
            seen[q["db_id"]] = q
    distinct = list(seen.values())[:count]

    def render(q: dict) -> str:
        return f"{schema_prompt(db_file[q['db_id']])}\n\nQuestion: {q['question']}"

    return [render(q) for q in same_db], [render(q) for q in distinct]


def request(prompt: str, **kw) -> ChatRequest:
    return ChatRequest(messages=(ChatMessage(role="system", content=SYSTEM), ChatMessage(role="user", content=prompt)), **kw)


@dataclass
class Run:
    wall_s: float
    requests: int
    completion_tokens: int
    prompt_tokens: int

    @property
    def rps(self) -> float:
        return self.requests / self.wall_s

    @property
    def gen_tps(self) -> float:
        return self.completion_tokens / self.wall_s


async def timed(client: ModelClient, requests: list[ChatRequest], *, concurrent: bool) -> Run:
    start = time.perf_counter()
    if concurrent:
        responses = await asyncio.gather(*(client.chat(r, role="generator") for r in requests))
    else:
        responses = [await client.chat(r, role="generator") for r in requests]
    wall = time.perf_counter() - start
    return Run(wall, len(requests), sum(r.usage.completion_tokens for r in responses),
               sum(r.usage.prompt_tokens for r in responses))


async def bench_one(model: str, runtime: str, args: argparse.Namespace, same_db: list[str], distinct: list[str]) -> dict:
    cfg = load_config([f"model={model}", f"model.slots.default.runtime={runtime}",
                       f"model.slots.default.n_parallel={args.parallel}", "model.slots.default.placement=process",
                       "model.slots.default.ctx_per_slot=4096", "model.slots.default.timeout_s=3600"]).model
    start = time.perf_counter()
    client = build_client(cfg)
    load_s = time.perf_counter() - start
    try:
        await client.chat(request("SELECT 1", max_tokens=4), role="generator")  # warm-up
        # (c) single-request speeds: a long prompt with 1 output token; a short prompt with a long answer
        t0 = time.perf_counter()
        r = await client.chat(request(max(distinct, key=len), max_tokens=1), role="generator")
        prompt_tps = r.usage.prompt_tokens / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        r = await client.chat(request("Write 40 different SQL keywords, one per line.", max_tokens=args.decode_tokens,
                                      stop=()), role="generator")
        decode_tps = r.usage.completion_tokens / (time.perf_counter() - t0)
        # (a) the same 16 greedy requests, one after another, then all at once
        reqs = [request(p, max_tokens=args.max_tokens) for p in same_db[: args.requests]]
        await client.chat(request(same_db[-1], max_tokens=1), role="generator")  # schema prefix cached for both
        sequential = await timed(client, reqs, concurrent=False)
        concurrent = await timed(client, reqs, concurrent=True)
        # (b) 8 samples of one new prompt (n=8) vs 8 different prompts, all sampled at T=0.8
        shared = await timed(client, [request(distinct[0], n=args.samples, temperature=0.8, max_tokens=args.max_tokens)],
                             concurrent=True)
        independent = await timed(
            client, [request(p, temperature=0.8, max_tokens=args.max_tokens) for p in distinct[1 : 1 + args.samples]],
            concurrent=True,
        )
    finally:
        await client.aclose()
    return {"model": model, "runtime": runtime, "load_s": load_s, "prompt_tps": prompt_tps, "decode_tps": decode_tps,
            "seq": sequential, "conc": concurrent, "shared": shared, "indep": independent}


def report(rows: list[dict], args: argparse.Namespace) -> None:
    print(f"\nmachine: {platform.machine()} {os.cpu_count()} cpus, load avg {os.getloadavg()[0]:.1f}; "
          f"n_parallel={args.parallel}, threads=2, max_tokens={args.max_tokens}")
    print("\n(a) 16 requests: sequential vs concurrent")
    print(f"{'model':<20}{'runtime':<18}{'seq req/s':>10}{'conc req/s':>11}{'seq gen t/s':>12}{'conc gen t/s':>13}{'ratio':>7}")
    for r in rows:
        print(f"{r['model']:<20}{r['runtime']:<18}{r['seq'].rps:>10.3f}{r['conc'].rps:>11.3f}"
              f"{r['seq'].gen_tps:>12.1f}{r['conc'].gen_tps:>13.1f}{r['conc'].rps / r['seq'].rps:>7.2f}")
    print(f"\n(b) {args.samples} samples of one prompt (n={args.samples}) vs {args.samples} different prompts")
    print(f"{'model':<20}{'runtime':<18}{'shared s':>9}{'indep s':>9}{'shared prompt tok':>18}{'indep prompt tok':>17}{'speedup':>8}")
    for r in rows:
        print(f"{r['model']:<20}{r['runtime']:<18}{r['shared'].wall_s:>9.1f}{r['indep'].wall_s:>9.1f}"
              f"{r['shared'].prompt_tokens:>18}{r['indep'].prompt_tokens:>17}{r['indep'].wall_s / r['shared'].wall_s:>8.2f}")
    print("\n(c) runtimes side by side: single request")
    print(f"{'model':<20}{'runtime':<18}{'load s':>7}{'prompt t/s':>11}{'decode t/s':>11}")
    for r in rows:
        print(f"{r['model']:<20}{r['runtime']:<18}{r['load_s']:>7.1f}{r['prompt_tps']:>11.1f}{r['decode_tps']:>11.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
    parser.add_argument("--runtimes", nargs="+", default=["xllamacpp", "llama-cpp-python"])
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--decode-tokens", type=int, default=96)
    args = parser.parse_args()
    spider = Path(load_config().paths.benchmarks) / "spider"
    if not (spider / "tables.json").exists():
        raise SystemExit(f"Spider not found at {spider}")
    same_db, distinct = load_prompts(spider, max(args.requests, args.samples + 1))
    rows = []
    for model in args.models:
        for runtime in args.runtimes:
            print(f"== {model} on {runtime}", flush=True)
            rows.append(asyncio.run(bench_one(model, runtime, args, same_db, distinct)))
    report(rows, args)


if __name__ == "__main__":
    main()
