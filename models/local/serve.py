"""Child-process entry point: run one llama.cpp server until told to stop.

    python -m models.local.serve --runtime xllamacpp --model M.gguf --port 8123 \
        --n-parallel 4 --ctx-per-slot 8192 --threads 2

Runtimes (see docs/models.md for the measurements that chose the default):

    llama-server       llama.cpp's own server binary built for this CPU (models/local/native.py),
                       run as this process's child: the same server as xllamacpp's, compiled
                       for every instruction set the CPU has instead of AVX2
    xllamacpp          llama.cpp's C++ server (continuous batching over parallel slots,
                       per-slot prompt cache, native ``n``) embedded in this process
    llama-cpp-python   llama_cpp.server (FastAPI over one in-process ``Llama``): one request
                       at a time, reuses the KV cache of the previous prompt's common prefix

The process exits when its parent dies, so a crashed owner never leaves a model in memory.
It serves only requests with ``Authorization: Bearer <key>``, the key taken (and removed) from
``SCALE_ANALYTICS_LLM_API_KEY``; ``LocalServer`` generates one per start.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
from typing import NoReturn

# The variable lives in server.py so that importing the models package never imports this
# module: `python -m models.local.serve` warns when it finds itself imported already.
from models.local.server import API_KEY_ENV


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m models.local.serve")
    parser.add_argument(
        "--runtime", choices=["llama-server", "xllamacpp", "llama-cpp-python"], required=True
    )
    parser.add_argument("--model", required=True)
    parser.add_argument("--alias", default="local")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n-parallel", type=int, default=4)
    parser.add_argument("--ctx-per-slot", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--poll", type=int, default=0)
    parser.add_argument("--n-batch", type=int, default=512)
    parser.add_argument("--cache-reuse", type=int, default=0)
    parser.add_argument("--kv-unified", action="store_true")
    parser.add_argument("--server-binary", help="llama-server's path (runtime llama-server)")
    return parser.parse_args(argv)


def _take_api_key() -> str:
    key = os.environ.pop(API_KEY_ENV, "")
    if not key:
        raise SystemExit(f"{API_KEY_ENV} is not set: the server takes no request without a key")
    return key


_children: list[subprocess.Popen[bytes]] = []  # a llama-server this process started


def _exit_with_parent(stop: threading.Event) -> None:
    parent = os.getppid()
    while not stop.wait(1.0):
        if os.getppid() != parent:  # re-parented: the owner is gone
            for child in _children:
                child.kill()
            os._exit(0)


def _run_llama_server(args: argparse.Namespace, api_key: str, stop: threading.Event) -> int:
    """The binary with the xllamacpp runtime's settings; it takes the key from LLAMA_API_KEY
    (its environment, not its command line). Returns its exit code."""
    if not args.server_binary:
        raise SystemExit("--server-binary is required for runtime llama-server")
    cmd = [
        args.server_binary,
        "--model", args.model,
        "--alias", args.alias,
        "--host", "127.0.0.1",
        "--port", str(args.port),
        "--parallel", str(args.n_parallel),
        "--ctx-size", str(args.n_parallel * args.ctx_per_slot),
        "--batch-size", str(args.n_batch),
        "--threads", str(args.threads),
        "--threads-batch", str(args.threads),
        "--poll", str(args.poll),
        "--cache-reuse", str(args.cache_reuse),
        *(["--kv-unified"] if args.kv_unified else []),
        "--no-webui",
        "--verbosity", os.environ.get("SCALE_ANALYTICS_LLAMA_VERBOSITY", "1"),
    ]  # fmt: skip
    env = {**os.environ, "LLAMA_API_KEY": api_key}
    child = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL)
    _children.append(child)

    def stop_when_child_exits() -> None:
        child.wait()
        stop.set()

    threading.Thread(target=stop_when_child_exits, daemon=True).start()
    stop.wait()
    if child.poll() is None:
        child.terminate()
        try:
            child.wait(2)
        except subprocess.TimeoutExpired:
            child.kill()  # mid-way through a prompt batch, which takes tens of seconds on a slow CPU
    return child.wait()


def _run_xllamacpp(args: argparse.Namespace, api_key: str, stop: threading.Event) -> NoReturn:
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.api_keys = [api_key]  # llama.cpp's server answers 401 to any other request
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.n_parallel = args.n_parallel
    params.n_ctx = args.n_parallel * args.ctx_per_slot
    params.n_batch = args.n_batch
    params.n_cache_reuse = args.cache_reuse
    params.kv_unified = args.kv_unified
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.cpuparams.poll = args.poll
    params.cpuparams_batch.poll = args.poll
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.verbosity = int(os.environ.get("SCALE_ANALYTICS_LLAMA_VERBOSITY", "1"))
    _server = xlc.Server(params)  # serves from its own threads while referenced
    stop.wait()
    # Exit without the server's destructor: it joins the serving thread, which returns only
    # after the decode in hand (a prompt batch takes tens of seconds on a slow CPU); the process
    # holds nothing else.
    sys.stdout.flush()
    os._exit(0)


def _run_llama_cpp_python(args: argparse.Namespace, api_key: str, stop: threading.Event) -> None:
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    model = ModelSettings(
        model=args.model,
        model_alias=args.alias,
        n_ctx=args.ctx_per_slot,
        n_batch=args.n_batch,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        verbose=False,
    )
    app = create_app(
        server_settings=ServerSettings(host="127.0.0.1", port=args.port, api_key=api_key),
        model_settings=[model],
    )
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    api_key = _take_api_key()
    stop = threading.Event()
    threading.Thread(target=_exit_with_parent, args=(stop,), daemon=True).start()
    if args.runtime == "llama-cpp-python":
        _run_llama_cpp_python(args, api_key, stop)  # uvicorn handles SIGTERM itself
        return 0
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    if args.runtime == "llama-server":
        code = _run_llama_server(args, api_key, stop)
        return 0 if code in (0, -signal.SIGTERM) else code
    _run_xllamacpp(args, api_key, stop)


if __name__ == "__main__":
    raise SystemExit(main())
