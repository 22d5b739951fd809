"""The native llama-server runtime: what counts as usable, how auto decides, how it is started."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import httpx
import pytest

from models.errors import ModelUnavailable
from models.local import native
from models.local.server import LocalServer, LocalServerSettings
from tests.models.conftest import leave_native_build


def test_the_cpu_fingerprint_is_a_short_stable_hash():
    first = native.cpu_fingerprint()
    assert first == native.cpu_fingerprint()
    assert len(first) == 12 and int(first, 16) >= 0


def test_a_binary_is_usable_only_when_built_here_and_runnable(tmp_path):
    assert (
        native.usable_binary(leave_native_build(tmp_path / "ok"))
        == tmp_path / "ok" / "llama-server"
    )
    assert native.usable_binary(leave_native_build(tmp_path / "other", cpu="0" * 12)) is None
    assert native.usable_binary(leave_native_build(tmp_path / "noexec", executable=False)) is None
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "llama-server").write_text("")
    assert native.usable_binary(bare / "llama-server") is None  # no build.json
    (tmp_path / "ok" / native.BUILD_INFO).write_text("{not json")
    assert native.usable_binary(tmp_path / "ok" / "llama-server") is None
    assert native.usable_binary(None) is None


def test_auto_picks_the_native_server_when_usable_and_the_wheel_otherwise(tmp_path):
    binary = leave_native_build(tmp_path / "b")
    assert LocalServerSettings(server_binary=str(binary)).resolved().runtime == "llama-server"
    assert LocalServerSettings().resolved().runtime == "xllamacpp"
    elsewhere = leave_native_build(tmp_path / "c", cpu="f" * 12)
    assert LocalServerSettings(server_binary=str(elsewhere)).resolved().runtime == "xllamacpp"
    explicit = LocalServerSettings(runtime="xllamacpp", server_binary=str(binary))
    assert explicit.resolved() is explicit


def test_the_model_config_points_auto_at_the_runtimes_folder(tmp_path, monkeypatch):
    import models.build as build
    from models.config import ModelSettings

    binary = leave_native_build(native.default_dir(tmp_path / "runtimes"))
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    seen = []

    def fake_shared_server(path, config, *, alias):
        seen.append(config)
        raise ModelUnavailable("stop here")

    monkeypatch.setattr(build, "shared_server", fake_shared_server)
    settings = ModelSettings(
        name="t",
        models_dir=str(tmp_path),
        runtimes_dir=str(tmp_path / "runtimes"),
        slots={"default": {"backend": "local", "model": str(model), "placement": "process"}},
    )
    with pytest.raises(ModelUnavailable, match="stop here"):
        build.build_client(settings)
    assert seen[0].runtime == "llama-server" and seen[0].server_binary == str(binary)


def test_runtime_llama_server_without_a_build_says_how_to_build_one(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    settings = LocalServerSettings(runtime="llama-server", server_binary=str(tmp_path / "none"))
    with pytest.raises(ModelUnavailable, match="models build-runtime"):
        LocalServer(model, settings).start()


FAKE_SERVER = textwrap.dedent(
    """\
    #!{python}
    # Stands in for llama-server: records its arguments and serves /v1/models to its key.
    import http.server, json, os, sys
    args = sys.argv[1:]
    with open(os.environ["FAKE_RECORD"], "w") as f:
        json.dump({{"argv": args, "key": os.environ.get("LLAMA_API_KEY")}}, f)
    key = os.environ["LLAMA_API_KEY"]
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            ok = self.headers.get("Authorization") == "Bearer " + key
            self.send_response(200 if ok else 401)
            self.end_headers()
            self.wfile.write(b'{{"data": []}}')
        def log_message(self, *a):
            pass
    port = int(args[args.index("--port") + 1])
    http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
    """
)


def test_the_server_binary_gets_the_slot_settings_and_the_key_in_its_environment(
    tmp_path, monkeypatch
):
    binary = leave_native_build(tmp_path / "b")
    binary.write_text(FAKE_SERVER.format(python=sys.executable))
    record = tmp_path / "record.json"
    monkeypatch.setenv("FAKE_RECORD", str(record))
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    settings = LocalServerSettings(
        server_binary=str(binary),
        n_parallel=3,
        ctx_per_slot=1024,
        threads=2,
        n_batch=256,
        kv_unified=True,
    )
    server = LocalServer(model, settings, alias="m")
    with server:
        url = server.base_url + "/models"
        assert httpx.get(url, headers=server.auth_headers).status_code == 200
        assert httpx.get(url).status_code == 401
        seen = __import__("json").loads(record.read_text())
        argv = seen["argv"]
        assert seen["key"] == server.api_key and server.api_key not in " ".join(argv)
        assert argv[argv.index("--parallel") + 1] == "3"
        assert argv[argv.index("--ctx-size") + 1] == "3072"  # slots × context per slot
        assert argv[argv.index("--batch-size") + 1] == "256"
        assert argv[argv.index("--alias") + 1] == "m"
        assert argv[argv.index("--host") + 1] == "127.0.0.1"
        assert "--kv-unified" in argv  # off unless set: the server's own default then
        proc = server._proc
    assert proc.poll() is not None  # stopping the wrapper stops the binary with it
    with pytest.raises(httpx.HTTPError):
        httpx.get(url, timeout=1.0)


def test_a_shared_server_says_when_it_starts_and_when_it_is_ready(tmp_path, monkeypatch, capsys):
    from models.local.server import shared_server

    binary = leave_native_build(tmp_path / "b")
    binary.write_text(FAKE_SERVER.format(python=sys.executable))
    monkeypatch.setenv("FAKE_RECORD", str(tmp_path / "record.json"))
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    settings = LocalServerSettings(server_binary=str(binary))
    server, release = shared_server(model, settings, alias="m")
    again, release_again = shared_server(model, settings, alias="m")
    release_again()
    release()
    lines = capsys.readouterr().err.splitlines()
    assert again is server and len(lines) == 2  # said once: the second user attached
    assert lines[0] == "model m: starting its server (llama-server, 4 slots, 2 threads) …"
    assert lines[1].startswith("model m: ready after ") and lines[1].endswith(" s")


def test_build_refuses_without_the_tools(tmp_path, monkeypatch):
    monkeypatch.setattr(native.shutil, "which", lambda tool: None)
    with pytest.raises(native.RuntimeBuildError, match="cmake"):
        native.build(tmp_path)


def test_a_failed_build_step_reports_its_log_and_leaves_nothing_usable(tmp_path, monkeypatch):
    class FailingStep:
        def __init__(self, cmd, **kwargs):
            self.stdout = iter([b"compiler says no\n"])

        def wait(self):
            return 2

    monkeypatch.setattr(native.subprocess, "Popen", FailingStep)
    monkeypatch.setattr(native.tempfile, "tempdir", str(tmp_path))
    dest = tmp_path / "dest"
    with pytest.raises(native.RuntimeBuildError, match="compiler says no"):
        native.build(dest)
    assert native.usable_binary(dest / native.BINARY_NAME) is None
    assert not list(dest.iterdir())
    (work,) = tmp_path.glob("scale-analytics-llama-build-*")  # kept for a look at its log
    assert "compiler says no" in (work / "build.log").read_text()


def test_a_step_logs_its_output_and_reports_cmakes_percentages(tmp_path):
    lines = "[  5%] Building a\\nnoise\\n[ 12%] Building b\\n[100%] Linking llama-server"
    seen = []
    native._run([sys.executable, "-c", f"print('{lines}')"], tmp_path / "log", seen.append)
    assert seen == [5, 12, 100]
    assert "noise" in (tmp_path / "log").read_text()


def test_the_build_is_suggested_only_on_avx512_without_a_usable_one(tmp_path, monkeypatch):
    flags = {"flags": "sse4_2 avx2 fma"}
    monkeypatch.setattr(native, "_cpuinfo", lambda: flags)
    assert not native.build_pays() and native.suggestion(tmp_path) is None
    flags["flags"] += " avx512f avx512_vnni"
    assert native.build_pays()
    assert "make install-native" in native.suggestion(tmp_path)
    leave_native_build(native.default_dir(tmp_path))
    assert native.suggestion(tmp_path) is None


def test_the_built_binary_runs_on_this_cpu():
    from core.config import load_config

    binary = native.default_binary(load_config([]).paths.runtimes)
    if native.usable_binary(binary) is None:
        pytest.skip("no llama-server built for this CPU (scale-analytics models build-runtime)")
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "version" in out.stdout + out.stderr


CRASHING_SERVER = (
    "#!/bin/sh\nkill -SEGV $$\n"  # dies at start, as a build can at its first thread pool
)


def test_a_native_build_that_dies_while_starting_is_set_aside_and_auto_falls_back(tmp_path, caplog):
    binary = leave_native_build(native.default_dir(tmp_path))  # where make install-native puts it
    binary.write_text(CRASHING_SERVER)
    corrupt = tmp_path / "m.gguf"  # the wheel then refuses the file: its own error is raised
    corrupt.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + b"\xff" * 4096)
    server = LocalServer(
        corrupt, LocalServerSettings(server_binary=str(binary), startup_timeout_s=60)
    )
    assert server.config.runtime == "llama-server"
    with caplog.at_level("WARNING"), pytest.raises(ModelUnavailable, match="xllamacpp server"):
        server.start()
    assert (
        "died while starting" in caplog.text and "serving with the xllamacpp wheel" in caplog.text
    )
    assert server.config.runtime == "xllamacpp"
    failed = native.failure(binary)
    assert failed is not None and "exited with code" in failed.reason
    assert native.usable_binary(binary) is None  # every later start takes the wheel
    assert LocalServerSettings(server_binary=str(binary)).resolved().runtime == "xllamacpp"
    assert native.suggestion(tmp_path) is None  # building it again would not help
    (binary.parent / native.FAILED_INFO).unlink()
    assert native.usable_binary(binary) == binary  # removed: tried again


def test_an_explicit_native_runtime_that_dies_is_an_error_not_a_fallback(tmp_path):
    binary = leave_native_build(tmp_path / "b")
    binary.write_text(CRASHING_SERVER)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    settings = LocalServerSettings(runtime="llama-server", server_binary=str(binary))
    with pytest.raises(ModelUnavailable, match="llama-server server for m.gguf exited"):
        LocalServer(model, settings).start()
    assert native.failure(binary) is None
