"""Local model runtimes under the project's ModelClient: batching, prefix reuse, runtimes.

    python benchmarks/bench_models.py [--models qwen2.5-coder-0.5b qwen2.5-coder-1.5b]
                                      [--runtimes llama-server xllamacpp llama-cpp-python]
    python benchmarks/bench_models.py --settings [--model qwen2.5-coder-1.5b]   # runtime settings
    python benchmarks/bench_models.py --settings --quick [--ignore-load]        # 0.5B smoke run

Every phase starts a fresh server (no cache carried between phases) and prints, per
(model, runtime):
  (a) 16 questions on 16 different databases, one after another vs all at once:
      requests/s, generated tok/s and their ratio; plus 16 questions on one database at once
      (a shared schema prompt)
  (b) 8 samples of one prompt (one request, n=8: the prompt is evaluated once) vs 8 different
      prompts (n=1 each), all at once, T=0.8
  (c) the runtimes side by side: single-request prompt tok/s and decode tok/s
Prompts: a Spider database's CREATE TABLE statements with 3 example rows per table, plus the
question. Needs the models pulled and Spider under paths.benchmarks.

``--settings``: the server's runtime settings side by side for one model (xllamacpp), each on a
fresh server, on one fixed workload — the reference schema prompt of Spider's concert_singer
(pipelines/schema/reference.py, about 660 tokens) with a question:
  prompt t/s   the schema prompt evaluated from scratch (llama.cpp's timings)
  decode t/s   the same prompt again (cached), greedy, exactly --decode-tokens tokens, twice
  n=8 s        another question on the same schema, n=8 samples at T=0.8 of --n8-tokens tokens
               each, as the client sends it (split into requests of at most n_parallel)
  workload s   prompt + decode + n=8 seconds: one of each; the grid keeps the lowest
Grid: the model config's current settings first (the baseline every ratio is relative to), then
OMP_WAIT_POLICY passive/OpenMP default x poll 0/50, then n_batch 256/128 at the best so far,
then n_parallel 1 and 8 and a halved ctx_per_slot at the best, then the baseline again (drift).
Every generated sequence runs to its full length (llama.cpp's ignore_eos), so every setting
generates the same tokens. About 5-6 min for the 1.5B on 2 quiet cores; ``--quick``: the 0.5B,
4 settings, about 1 min.

Every run prints the load average before and after and prints no figures when the machine was
loaded (benchmarks/_load.py; ``--ignore-load`` for smoke runs).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path

from _model_prompts import Prompts, load_prompts, request  # benchmarks/_model_prompts.py
from _model_settings import settings_main  # benchmarks/_model_settings.py

from _load import parse_guarded  # benchmarks/_load.py
from core.config import load_config
from models import ChatRequest, ModelClient, build_client


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


class Bench:
    def __init__(self, model: str, runtime: str, args: argparse.Namespace) -> None:
        self.model, self.runtime, self.args = model, runtime, args

    def client(self) -> ModelClient:
        overrides = {
            "runtime": self.runtime,
            "n_parallel": self.args.parallel,
            "threads": self.args.threads,
            "placement": "process",
            "ctx_per_slot": 4096,
            "timeout_s": 3600,
        }
        cfg = load_config(
            [f"model={self.model}"] + [f"model.slots.default.{k}={v}" for k, v in overrides.items()]
        )
        return build_client(cfg.model)

    async def phase(self, requests: list[ChatRequest], *, concurrent: bool) -> Run:
        """Fresh server, warm-up, then the requests; the server is stopped afterwards."""
        client = self.client()
        try:
            await client.chat(request("SELECT 1", max_tokens=2), role="generator")
            start = time.perf_counter()
            if concurrent:
                responses = await asyncio.gather(
                    *(client.chat(r, role="generator") for r in requests)
                )
            else:
                responses = [await client.chat(r, role="generator") for r in requests]
            wall = time.perf_counter() - start
        finally:
            await client.aclose()
        run = Run(
            wall,
            len(requests),
            sum(r.usage.completion_tokens for r in responses),
            sum(r.usage.prompt_tokens for r in responses),
        )
        mode = "at once" if concurrent else "one by one"
        print(
            f"   {len(requests)} requests {mode}: {wall:.1f} s, "
            f"{run.prompt_tokens} prompt + {run.completion_tokens} generated tokens",
            flush=True,
        )
        return run

    async def run(self, prompts: Prompts) -> dict:
        a = self.args
        out: dict = {"model": self.model, "runtime": self.runtime}
        start = time.perf_counter()
        self.client().close()
        out["load_s"] = time.perf_counter() - start
        longest = max(prompts.many_dbs, key=len)
        prompt_run = await self.phase([request(longest, max_tokens=1)], concurrent=False)
        out["prompt_tps"] = prompt_run.prompt_tokens / prompt_run.wall_s
        decode = await self.phase(
            [request("Write 60 different SQL keywords, one per line.", max_tokens=a.decode_tokens)],
            concurrent=False,
        )
        out["decode_tps"] = decode.completion_tokens / decode.wall_s

        def greedy(ps):
            return [request(p, max_tokens=a.max_tokens) for p in ps]

        out["seq"] = await self.phase(greedy(prompts.many_dbs), concurrent=False)
        out["conc"] = await self.phase(greedy(prompts.many_dbs_other), concurrent=True)
        out["same_seq"] = await self.phase(greedy(prompts.one_db), concurrent=False)
        out["same_conc"] = await self.phase(greedy(prompts.one_db), concurrent=True)
        sampled = {"temperature": 0.8, "max_tokens": a.max_tokens}
        out["shared"] = await self.phase(
            [request(prompts.many_dbs[0], n=a.samples, **sampled)], concurrent=True
        )
        out["indep"] = await self.phase(
            [request(p, **sampled) for p in prompts.many_dbs[1 : 1 + a.samples]], concurrent=True
        )
        return out


def report(rows: list[dict], args: argparse.Namespace) -> None:
    print(
        f"\nmachine: {platform.machine()}, {os.cpu_count()} cpus, load avg {os.getloadavg()[0]:.1f}; "
        f"n_parallel={args.parallel}, threads={args.threads}, max_tokens={args.max_tokens}, greedy"
    )
    print(
        f"\n(a) {args.requests} questions on {args.requests} databases: one after another vs all at once"
    )
    print(
        f"{'model':<20}{'runtime':<18}{'seq req/s':>10}{'conc req/s':>11}"
        f"{'seq gen t/s':>12}{'conc gen t/s':>13}{'ratio':>7}"
    )
    for r in rows:
        print(
            f"{r['model']:<20}{r['runtime']:<18}{r['seq'].rps:>10.3f}{r['conc'].rps:>11.3f}"
            f"{r['seq'].gen_tps:>12.1f}{r['conc'].gen_tps:>13.1f}{r['conc'].rps / r['seq'].rps:>7.2f}"
        )
    print(f"\n(a') {args.requests} questions on one database (shared schema prompt): requests/s")
    print(f"{'model':<20}{'runtime':<18}{'sequential':>11}{'at once':>9}")
    for r in rows:
        print(
            f"{r['model']:<20}{r['runtime']:<18}{r['same_seq'].rps:>11.3f}{r['same_conc'].rps:>9.3f}"
        )
    print(
        f"\n(b) {args.samples} samples of one prompt (n={args.samples}) "
        f"vs {args.samples} different prompts, all at once"
    )
    k = args.samples
    print(
        f"{'model':<20}{'runtime':<18}{f'n={k} s':>7}{f'{k} prompts s':>12}{f'n={k} gen t/s':>12}"
        f"{f'{k} prompts gen t/s':>18}{'speedup':>8}"
    )
    for r in rows:
        print(
            f"{r['model']:<20}{r['runtime']:<18}{r['shared'].wall_s:>7.1f}{r['indep'].wall_s:>12.1f}"
            f"{r['shared'].gen_tps:>12.1f}{r['indep'].gen_tps:>18.1f}{r['indep'].wall_s / r['shared'].wall_s:>8.2f}"
        )
    print("\n(c) runtimes side by side: one request at a time")
    print(f"{'model':<20}{'runtime':<18}{'load s':>7}{'prompt t/s':>11}{'decode t/s':>11}")
    for r in rows:
        print(
            f"{r['model']:<20}{r['runtime']:<18}{r['load_s']:>7.1f}{r['prompt_tps']:>11.1f}{r['decode_tps']:>11.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
    parser.add_argument("--runtimes", nargs="+", default=["xllamacpp", "llama-cpp-python"])
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument(
        "--decode-tokens",
        type=int,
        default=None,
        help="tokens per decode measurement (default 96; --settings: 64)",
    )
    settings = parser.add_argument_group("runtime settings (--settings)")
    settings.add_argument(
        "--settings",
        action="store_true",
        help="compare the server's runtime settings for one model",
    )
    settings.add_argument(
        "--model",
        default=None,
        help="model config (default qwen2.5-coder-1.5b; --quick: qwen2.5-coder-0.5b)",
    )
    settings.add_argument("--quick", action="store_true", help="smoke run: the 0.5B, 4 settings")
    settings.add_argument(
        "--n8-tokens", type=int, default=64, help="tokens per sample of the n=8 request"
    )
    settings.add_argument(
        "--decode-reps", type=int, default=None, help="decode measurements (2; --quick: 1)"
    )
    settings.add_argument(
        "--setting-timeout", type=float, default=300.0, help="seconds per setting"
    )
    args, guard = parse_guarded(parser)
    if args.settings or args.quick:
        args.model = args.model or ("qwen2.5-coder-0.5b" if args.quick else "qwen2.5-coder-1.5b")
        args.decode_tokens = args.decode_tokens or 64
        args.decode_reps = args.decode_reps or (1 if args.quick else 2)
        guard.before()
        asyncio.run(settings_main(args, guard))
        return
    args.decode_tokens = args.decode_tokens or 96
    spider = Path(load_config().paths.benchmarks) / "spider"
    if not (spider / "dev.json").exists():
        raise SystemExit(f"Spider not found at {spider}")
    prompts = load_prompts(spider, max(args.requests, args.samples + 1))
    guard.before()
    rows = []
    for model in args.models:
        for runtime in args.runtimes:
            print(f"== {model} on {runtime} (load avg {os.getloadavg()[0]:.1f})", flush=True)
            rows.append(asyncio.run(Bench(model, runtime, args).run(prompts)))
    guard.after()  # refuses (exit 3) before any figure is printed when the machine was loaded
    if guard.banner:
        print(guard.banner)
    report(rows, args)


if __name__ == "__main__":
    main()
