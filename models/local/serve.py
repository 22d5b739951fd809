"""Child-process entry point: run one llama.cpp server until told to stop.

    python -m models.local.serve --runtime xllamacpp --model M.gguf --port 8123 \
        --n-parallel 4 --ctx-per-slot 8192 --threads 2

Runtimes (see docs/models.md for the measurements that chose the default):

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
import threading


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m models.local.serve")
    parser.add_argument("--runtime", choices=["xllamacpp", "llama-cpp-python"], required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--alias", default="local")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n-parallel", type=int, default=4)
    parser.add_argument("--ctx-per-slot", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--poll", type=int, default=0)
    parser.add_argument("--n-batch", type=int, default=512)
    parser.add_argument("--cache-reuse", type=int, default=0)
    return parser.parse_args(argv)


API_KEY_ENV = "SCALE_ANALYTICS_LLM_API_KEY"  # set by models.local.server.LocalServer


def _take_api_key() -> str:
    key = os.environ.pop(API_KEY_ENV, "")
    if not key:
        raise SystemExit(f"{API_KEY_ENV} is not set: the server takes no request without a key")
    return key


def _exit_with_parent(stop: threading.Event) -> None:
    parent = os.getppid()
    while not stop.wait(1.0):
        if os.getppid() != parent:  # re-parented: the owner is gone
            os._exit(0)


def _run_xllamacpp(args: argparse.Namespace, api_key: str, stop: threading.Event) -> None:
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.api_keys = [api_key]  # llama.cpp's server answers 401 to any other request
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.n_parallel = args.n_parallel
    params.n_ctx = args.n_parallel * args.ctx_per_slot
    params.n_batch = args.n_batch
    params.n_cache_reuse = args.cache_reuse
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.cpuparams.poll = args.poll
    params.cpuparams_batch.poll = args.poll
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.verbosity = int(os.environ.get("SCALE_ANALYTICS_LLAMA_VERBOSITY", "1"))
    server = xlc.Server(params)
    stop.wait()
    del server


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
    _run_xllamacpp(args, api_key, stop)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
