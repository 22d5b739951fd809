"""``bench_models.py --settings``: the runtime settings of one model's server (xllamacpp), side
by side on one fixed workload (the module docstring of ``bench_models.py`` says which).

from _model_settings import settings_main   # scripts run as python benchmarks/<name>.py

asyncio.run(settings_main(args, guard))     # args: bench_models.py's; prints the grid's table
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from dataclasses import dataclass, replace

from _model_prompts import SYSTEM, request  # benchmarks/_model_prompts.py
from _spider import concert_singer, reference_schema_of  # benchmarks/_spider.py

from _load import LoadGuard  # benchmarks/_load.py
from core.config import load_config, section
from models import ChatMessage, ChatRequest, ChatResponse, build_client

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
