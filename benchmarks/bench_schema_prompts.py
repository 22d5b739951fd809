"""Schema prompt sizes and the schema focus: what the agents' shared system prefix costs.

    python benchmarks/bench_schema_prompts.py [--model qwen2.5-coder-1.5b] [--spider 8] [--no-tokenizer]

Prints, in one run:
  1. real tokens (the model's own tokenizer, through a llama.cpp server's /tokenize) of the
     light and DDL views of the demo claims database and of N Spider databases drawn with a
     fixed seed, at 3/1/0 sample values, beside the ``len / 4`` and the digit-aware estimates;
  2. ``Understander.focus`` on the 70 claims questions at several sample counts and budgets:
     mean estimated tokens of the focused view and how often every table of the gold SQL is
     kept (question and evidence only: no extractor keywords, no cell hits — a lower bound).
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path
from types import SimpleNamespace

import sqlglot
from sqlglot import exp

from _load import parse_guarded  # benchmarks/_load.py
from core.config import load_config
from pipelines.contracts import DatabaseRef
from pipelines.schema import introspect, render_ddl, render_light, token_size
from pipelines.settings import UnderstandingSettings
from pipelines.understanding import Understander, prompt_view_tokens


def claims_ref(cfg) -> DatabaseRef:
    path = Path(cfg.paths.demo) / "dev_databases" / "claims" / "claims.sqlite"
    if not path.exists():
        raise SystemExit(
            f"no demo database at {path}: run `scale-analytics demo` or the demo build first"
        )
    return DatabaseRef(db_id="claims", dialect="sqlite", path=str(path))


def spider_refs(cfg, n: int) -> list[DatabaseRef]:
    paths = sorted(Path(cfg.paths.benchmarks, "spider", "database").glob("*/*.sqlite"))
    return [
        DatabaseRef(db_id=p.parent.name, dialect="sqlite", path=str(p))
        for p in random.Random(0).sample(paths, min(n, len(paths)))
    ]


def token_table(dbs: list[DatabaseRef], tokenize) -> None:
    print("database        view  samples  chars  digits  len/4  digit-aware  real")
    for db in dbs:
        for samples in (3, 1, 0):
            view = introspect(db, samples)
            for style, text in (("light", render_light(view)), ("ddl", render_ddl(view))):
                digits = sum(c.isdigit() for c in text)
                real = tokenize(text) if tokenize else "-"
                print(
                    f"{db.db_id:<15} {style:<5} {samples:>7} {len(text):>6} {digits:>7} "
                    f"{math.ceil(len(text) / 4):>6} {token_size(text):>12} {real:>5}"
                )


def focus_table(cfg, db: DatabaseRef) -> None:
    questions = json.loads(Path(cfg.paths.demo, "dev.json").read_text())
    print(f"\nfocus on {len(questions)} claims questions (no keywords, no cell hits)")
    print("samples  budget  mean tokens  gold tables kept")
    for samples in (3, 2, 1):
        view = introspect(db, samples)
        print(
            f"{samples:>7} {'whole':>7} {prompt_view_tokens(view):>12} {len(questions):>10}/{len(questions)}"
        )
        for budget in (1000, 1500, 2000):
            focus = Understander(
                extractor=None, settings=UnderstandingSettings(max_schema_tokens=budget)
            ).focus
            kept, sizes = 0, []
            for q in questions:
                run = SimpleNamespace(
                    task=SimpleNamespace(question=q["question"], evidence=q.get("evidence", "")),
                    context=SimpleNamespace(
                        understanding=SimpleNamespace(keywords=()), cell_hits=()
                    ),
                    recorder=SimpleNamespace(decide=lambda *a, **k: None),
                )
                focused = focus(view, run)
                gold = {
                    t.name.lower()
                    for t in sqlglot.parse_one(q["SQL"], read="sqlite").find_all(exp.Table)
                }
                kept += gold <= {t.name.lower() for t in focused.tables}
                sizes.append(prompt_view_tokens(focused))
            print(
                f"{samples:>7} {budget:>7} {sum(sizes) / len(sizes):>12.0f} {kept:>10}/{len(questions)}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--spider", type=int, default=8, help="Spider databases drawn (seed 0)")
    parser.add_argument("--no-tokenizer", action="store_true", help="skip the real token counts")
    args, guard = parse_guarded(parser)
    guard.before()
    cfg = load_config([])
    claims = claims_ref(cfg)
    dbs = [claims, *spider_refs(cfg, args.spider)]
    if args.no_tokenizer:
        token_table(dbs, None)
    else:
        import httpx

        from models.local.server import LocalServer, LocalServerSettings
        from models.registry import get_spec
        from models.store import ModelStore

        path = ModelStore(cfg.paths.models).path_for(get_spec(args.model))
        with LocalServer(
            path, LocalServerSettings(n_parallel=1, ctx_per_slot=4096), alias=args.model
        ) as server:
            url = server.base_url.removesuffix("/v1") + "/tokenize"
            token_table(
                dbs,
                lambda text: len(
                    httpx.post(url, json={"content": text}, headers=server.auth_headers).json()[
                        "tokens"
                    ]
                ),
            )
    focus_table(cfg, claims)
    guard.after()  # exit 3 when other processes loaded the machine
    print(guard.banner or "load ok")


if __name__ == "__main__":
    main()
