"""Local model runtimes under the project's ModelClient: batching, prefix reuse, runtimes.

    python benchmarks/bench_models.py [--models qwen2.5-coder-0.5b qwen2.5-coder-1.5b]
                                      [--runtimes llama-server xllamacpp llama-cpp-python]
    python benchmarks/bench_models.py --settings [--model qwen2.5-coder-1.5b]   # runtime settings
    python benchmarks/bench_models.py --settings --quick [--ignore-load]        # 0.5B smoke run

Every phase starts a fresh server (no cache carried between phases) and prints, per
(model, runtime):
  (a) 16 questions on 16 different databases, one after another vs all at once:
      requests/s, generated tok/s and their ratio; plus 16 questions on one database at once
      (a shared schema prompt), with and without prefix-affinity slot routing
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
import json
import os
import platform
import sqlite3
import time
from dataclasses import dataclass, replace
from pathlib import Path

from _spider import concert_singer, reference_schema_of  # benchmarks/_spider.py

from _load import LoadGuard, parse_guarded  # benchmarks/_load.py
from core.config import load_config, section
from models import ChatMessage, ChatRequest, ChatResponse, ModelClient, build_client

SYSTEM = "You are a SQLite expert. Answer with one SQL query in a ```sql block."


def schema_prompt(db_file: Path) -> str:
    """CREATE TABLE statements plus 3 example rows per table (the baseline's prompt shape)."""
    con = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True)
    try:
        parts = []
        for name, ddl in con.execute(
            "SELECT name, sql FROM sqlite_master WHERE type='table' AND sql IS NOT NULL"
        ):
            rows = con.execute(f'SELECT * FROM "{name}" LIMIT 3').fetchall()
            parts.append(ddl + "\n/* 3 example rows:\n" + "\n".join(map(str, rows)) + "\n*/")
        return "\n\n".join(parts)
    finally:
        con.close()


@dataclass(frozen=True)
class Prompts:
    one_db: list[str]  # questions on one database (shared schema prefix)
    many_dbs: list[str]  # one question per database
    many_dbs_other: list[str]  # another question on the same databases as many_dbs


def load_prompts(spider: Path, count: int) -> Prompts:
    dev = json.loads((spider / "dev.json").read_text())
    db_file = {q["db_id"]: spider / "database" / q["db_id"] / f"{q['db_id']}.sqlite" for q in dev}
    by_db: dict[str, list[dict]] = {}
    for q in dev:
        if db_file[q["db_id"]].exists():
            by_db.setdefault(q["db_id"], []).append(q)
    schemas = {db: schema_prompt(db_file[db]) for db in by_db}
    # the smallest `count` databases: every phase then sees prompts of about 200-1000 tokens
    dbs = sorted(by_db, key=lambda db: len(schemas[db]))[:count]

    def render(q: dict) -> str:
        return f"{schemas[q['db_id']]}\n\nQuestion: {q['question']}"

    biggest = max(by_db, key=lambda db: len(by_db[db]) if db in dbs else -1)
    return Prompts(
        one_db=[render(q) for q in by_db[biggest][:count]],
        many_dbs=[render(by_db[db][0]) for db in dbs],
        many_dbs_other=[render(by_db[db][1]) for db in dbs],
    )


def request(prompt: str, **kw) -> ChatRequest:
    return ChatRequest(
        messages=(
            ChatMessage(role="system", content=SYSTEM),
            ChatMessage(role="user", content=prompt),
        ),
        **kw,
    )


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

    def client(self, **slot_overrides: object) -> ModelClient:
        overrides = {
            "runtime": self.runtime,
            "n_parallel": self.args.parallel,
            "threads": self.args.threads,
            "placement": "process",
            "ctx_per_slot": 4096,
            "timeout_s": 3600,
            **slot_overrides,
        }
        cfg = load_config(
            [f"model={self.model}"] + [f"model.slots.default.{k}={v}" for k, v in overrides.items()]
        )
        return build_client(cfg.model)

    async def phase(
        self, requests: list[ChatRequest], *, concurrent: bool, **slot_overrides: object
    ) -> Run:
        """Fresh server, warm-up, then the requests; the server is stopped afterwards."""
        client = self.client(**slot_overrides)
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
            f"   {len(requests)} requests {mode} {slot_overrides or ''}: {wall:.1f} s, "
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
        if self.runtime in ("llama-server", "xllamacpp"):
            out["same_conc_no_aff"] = await self.phase(
                greedy(prompts.one_db), concurrent=True, slot_affinity=False
            )
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
    print(
        f"{'model':<20}{'runtime':<18}{'sequential':>11}{'at once':>9}{'at once, no affinity':>22}"
    )
    for r in rows:
        no_aff = f"{r['same_conc_no_aff'].rps:>22.3f}" if "same_conc_no_aff" in r else f"{'-':>22}"
        print(
            f"{r['model']:<20}{r['runtime']:<18}{r['same_seq'].rps:>11.3f}{r['same_conc'].rps:>9.3f}{no_aff}"
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


# ---------------------------------------------------------------------------------------------
# --settings: runtime settings of one model's server, side by side on one fixed workload

WAIT_POLL = (("passive", 0), (None, 0), (None, 50), ("passive", 50))  # (OMP_WAIT_POLICY, poll)


@dataclass(frozen=True)
class Setting:
    omp_wait_policy: str | None  # None: the variable unset, OpenMP's own default
    poll: int
    n_batch: int
    n_parallel: int
    ctx_per_slot: int

    @property
    def wait(self) -> str:
        return self.omp_wait_policy.upper() if self.omp_wait_policy else "default"

    def overrides(self, slot: str) -> list[str]:
        wait = "null" if self.omp_wait_policy is None else self.omp_wait_policy
        return [
            f"++model.slots.{slot}.omp_wait_policy={wait}",
            f"++model.slots.{slot}.poll={self.poll}",
            f"++model.slots.{slot}.n_batch={self.n_batch}",
            f"++model.slots.{slot}.n_parallel={self.n_parallel}",
            f"++model.slots.{slot}.ctx_per_slot={self.ctx_per_slot}",
        ]


@dataclass
class SettingRun:
    setting: Setting
    start_s: float
    prompt_tokens: int
    prompt_tps: float
    decode_tps: float
    n8_s: float
    n8_tokens: int
    workload_s: float
    others: float | None  # other processes' load while it ran


def _fixed_length(backend: object) -> None:
    """Every request through this backend generates exactly max_tokens: llama.cpp's ignore_eos
    (so every setting decodes the same number of tokens whatever the samples say)."""
    payload = backend.payload  # type: ignore[attr-defined]
    backend.payload = lambda request, *, n, seed: {  # type: ignore[attr-defined]
        **payload(request, n=n, seed=seed),
        "ignore_eos": True,
    }


async def _raw(backend: object, req: ChatRequest) -> tuple[dict, float]:
    """One request, its raw response (with llama.cpp's ``timings``) and wall seconds."""
    start = time.perf_counter()
    body = await backend._post(backend.payload(req, n=1, seed=None), req)  # type: ignore[attr-defined]
    return body, time.perf_counter() - start


class SettingsBench:
    def __init__(
        self,
        model: str,
        args: argparse.Namespace,
        schema: str,
        questions: list[str],
        guard: LoadGuard,
    ) -> None:
        self.model, self.args, self.guard = model, args, guard
        from models.config import LocalSlot, ModelSettings

        config = section(load_config([f"model={model}"]), "model", ModelSettings)
        self.slot = config.roles["generator"]
        s = config.slots[self.slot]
        if not isinstance(s, LocalSlot):
            raise SystemExit(
                f"--settings needs a local model slot; {model}'s {self.slot} is {s.backend}"
            )
        # the model config's current settings: the baseline
        self.baseline = Setting(s.omp_wait_policy, s.poll, s.n_batch, s.n_parallel, s.ctx_per_slot)
        self.first = [
            ChatMessage(role="system", content=SYSTEM),
            ChatMessage(role="user", content=f"{schema}\n\nQuestion: {questions[0]}"),
        ]
        self.second = [
            self.first[0],
            ChatMessage(role="user", content=f"{schema}\n\nQuestion: {questions[1]}"),
        ]

    async def measure(self, setting: Setting) -> SettingRun:
        a = self.args
        cfg = load_config(
            [
                f"model={self.model}",
                f"++model.slots.{self.slot}.runtime=xllamacpp",
                f"++model.slots.{self.slot}.placement=process",
                f"++model.slots.{self.slot}.threads={a.threads}",
                f"++model.slots.{self.slot}.timeout_s=3600",
                "++model.response_cache=null",
                *setting.overrides(self.slot),
            ]
        )
        start = time.perf_counter()
        client = build_client(cfg.model)  # a fresh server (process placement), started here
        start_s = time.perf_counter() - start
        backend = client.slot_for("generator").backend
        _fixed_length(backend)
        mark = self.guard.mark()
        try:
            async with asyncio.timeout(a.setting_timeout):
                await backend.chat(request("SELECT 1", max_tokens=2))  # warm-up: threads, pages
                # the schema prompt from scratch; one token generated
                body, wall = await _raw(
                    backend, ChatRequest(messages=tuple(self.first), max_tokens=1)
                )
                prompt_tokens = int(body["usage"]["prompt_tokens"])
                timings = body.get("timings") or {}
                prompt_tps = float(timings.get("prompt_per_second") or prompt_tokens / wall)
                # greedy decode on the cached prompt, a fixed number of tokens
                decode_tokens, decode_s = 0, 0.0
                for _ in range(a.decode_reps):
                    req = ChatRequest(messages=tuple(self.first), max_tokens=a.decode_tokens)
                    body, wall = await _raw(backend, req)
                    timings = body.get("timings") or {}
                    n = int(timings.get("predicted_n") or body["usage"]["completion_tokens"])
                    decode_tokens += n
                    decode_s += (
                        float(timings["predicted_ms"]) / 1000
                        if timings.get("predicted_ms")
                        else wall
                    )
                decode_tps = decode_tokens / decode_s
                # n=8 samples of another question on the same schema, as the client sends them
                req = ChatRequest(
                    messages=tuple(self.second),
                    n=a.samples,
                    temperature=0.8,
                    max_tokens=a.n8_tokens,
                    seed=1234,
                )
                start = time.perf_counter()
                resp: ChatResponse = await backend.chat(req)
                n8_s = time.perf_counter() - start
        finally:
            await client.aclose()
        n8_tokens = (
            a.samples * a.n8_tokens
            if resp.finish_reasons and all(r == "length" for r in resp.finish_reasons)
            else resp.usage.completion_tokens
        )
        workload = prompt_tokens / prompt_tps + a.decode_tokens / decode_tps + n8_s
        run = SettingRun(
            setting,
            start_s,
            prompt_tokens,
            prompt_tps,
            decode_tps,
            n8_s,
            n8_tokens,
            workload,
            self.guard.others_since(mark),
        )
        others = "-" if run.others is None else f"{run.others:.2f}"
        print(
            f"   {_describe(setting)}: prompt {prompt_tps:.1f} t/s, decode {decode_tps:.1f} t/s, "
            f"n={a.samples} {n8_s:.1f} s ({n8_tokens} tokens), workload {workload:.1f} s, "
            f"others' load {others}",
            flush=True,
        )
        return run

    async def run(self) -> list[SettingRun]:
        """The grid, stage by stage; each stage varies the best setting so far."""
        a = self.args
        runs: list[SettingRun] = []
        done: dict[Setting, SettingRun] = {}

        async def measure(setting: Setting, *, again: bool = False) -> None:
            if setting in done and not again:
                return
            print(f"== [{len(runs) + 1}] {_describe(setting)}", flush=True)
            run = await self.measure(setting)
            runs.append(run)
            done.setdefault(setting, run)

        def best() -> Setting:
            return min(done.values(), key=lambda r: r.workload_s).setting

        base = self.baseline
        await measure(base)
        pairs = WAIT_POLL[2:3] if a.quick else WAIT_POLL
        for wait, poll in pairs:
            await measure(replace(base, omp_wait_policy=wait, poll=poll))
        for n_batch in (256,) if a.quick else (256, 128):
            await measure(replace(best(), n_batch=n_batch))
        top = best()
        await measure(replace(top, n_parallel=1))
        if not a.quick:
            total_ctx = top.n_parallel * top.ctx_per_slot
            await measure(replace(top, n_parallel=8, ctx_per_slot=max(2048, total_ctx // 8)))
            await measure(replace(top, ctx_per_slot=max(2048, top.ctx_per_slot // 2)))
            await measure(base, again=True)  # drift: the baseline once more, at the end
        return runs


def _describe(s: Setting) -> str:
    return (
        f"OMP_WAIT_POLICY={s.wait} poll={s.poll} n_batch={s.n_batch} "
        f"n_parallel={s.n_parallel} ctx_per_slot={s.ctx_per_slot}"
    )


def settings_report(bench: SettingsBench, runs: list[SettingRun], guard: LoadGuard) -> None:
    a = bench.args
    base = runs[0]
    print(
        f"\nruntime settings of {bench.model} on xllamacpp, {a.threads} threads, {os.cpu_count()} CPUs; "
        f"workload: concert_singer schema prompt ({base.prompt_tokens} tokens) from scratch, "
        f"greedy decode of {a.decode_tokens} tokens x{a.decode_reps} on it, one n={a.samples} request "
        f"at T=0.8 of {a.n8_tokens} tokens each on another question"
    )
    if guard.banner:
        print(guard.banner)
    print("x: speed relative to the current default (row 1): >1 is faster")
    print(
        f"{'#':>2} {'OMP wait':<8}{'poll':>5}{'batch':>6}{'par':>4}{'ctx':>6}{'start s':>8}"
        f"{'prompt t/s':>11}{'x':>6}{'decode t/s':>11}{'x':>6}{f'n={a.samples} s':>8}{'x':>6}"
        f"{'workload s':>11}{'x':>6}{'others':>7}"
    )
    for i, r in enumerate(runs, 1):
        s = r.setting
        others = "-" if r.others is None else f"{r.others:.2f}"
        print(
            f"{i:>2} {s.wait:<8}{s.poll:>5}{s.n_batch:>6}{s.n_parallel:>4}{s.ctx_per_slot:>6}"
            f"{r.start_s:>8.1f}{r.prompt_tps:>11.1f}{r.prompt_tps / base.prompt_tps:>6.2f}"
            f"{r.decode_tps:>11.1f}{r.decode_tps / base.decode_tps:>6.2f}"
            f"{r.n8_s:>8.1f}{base.n8_s / r.n8_s:>6.2f}"
            f"{r.workload_s:>11.1f}{base.workload_s / r.workload_s:>6.2f}{others:>7}"
        )
    repeats = [r for r in runs[1:] if r.setting == base.setting]
    if repeats:
        drift = repeats[-1].workload_s / base.workload_s - 1
        steady = "steady" if abs(drift) <= 0.1 else "NOT steady: compare rows with care"
        print(
            f"drift: the current default measured again at the end: workload {drift:+.0%} ({steady})"
        )
    top = min(runs, key=lambda r: r.workload_s)
    print(
        f"lowest workload: row {runs.index(top) + 1}, {_describe(top.setting)} "
        f"({base.workload_s / top.workload_s:.2f}x the current default)"
    )
    s = top.setting
    print(
        "as model config overrides: "
        + " ".join(o.removeprefix("++") for o in s.overrides(bench.slot))
    )


async def settings_main(args: argparse.Namespace, guard: LoadGuard) -> None:
    db, questions = concert_singer()
    schema = await reference_schema_of(db)
    if os.environ.pop("OMP_WAIT_POLICY", None) is not None:
        print("OMP_WAIT_POLICY unset for this run: 'default' rows get OpenMP's own default")
    bench = SettingsBench(args.model, args, schema, questions[:2], guard)
    runs = await bench.run()
    guard.after()  # refuses (exit 3) before any figure is printed when the machine was loaded
    settings_report(bench, runs, guard)


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
