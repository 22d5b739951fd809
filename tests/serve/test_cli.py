"""``scale-analytics serve``: what it refuses before starting anything, and its argument split."""

from __future__ import annotations

import re
import socket

from core.cli import _usage, main
from serve.cli import port_in_use, profile_configs, split_named


def test_database_and_example_overrides_are_split_from_hydra():
    named, rest = split_named(
        [
            "serve.databases.demo=/d/claims.sqlite",
            "model=replay",
            "serve.databases.b=postgresql://reader@db/b",
            "serve.examples.b=/d/b.examples.yml",
        ]
    )
    assert named == {
        "databases": {"demo": "/d/claims.sqlite", "b": "postgresql://reader@db/b"},
        "examples": {"b": "/d/b.examples.yml"},
    }
    assert rest == ["model=replay"]


def test_examples_for_a_database_not_served_are_refused(capsys, tmp_path):
    code = main(["serve", f"serve.state_dir={tmp_path}", "serve.examples.sales=/d/x.yml"])
    err = capsys.readouterr().err
    assert code == 2 and "serve.examples.sales: no serve.databases.sales" in err


def test_a_public_address_without_a_key_is_refused(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("SCALE_ANALYTICS_API_KEY", raising=False)
    assert main(["serve", "serve.host=0.0.0.0", f"serve.state_dir={tmp_path}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refusing to listen on 0.0.0.0 without an API key" in err


def test_a_busy_port_is_one_line(capsys, tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert port_in_use("127.0.0.1", port)
        assert main(["serve", f"serve.port={port}", f"serve.state_dir={tmp_path}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"port {port} on 127.0.0.1 is already in use" in err


def test_a_missing_database_is_refused_without_starting(capsys, tmp_path):
    code = main(
        ["serve", f"serve.databases.x={tmp_path}/none.sqlite", f"serve.state_dir={tmp_path}"]
    )
    assert code == 2 and "serve.databases.x: no database file" in capsys.readouterr().err


def test_profiles_replace_the_scaling_group_of_the_command_line():
    cfgs = profile_configs(
        ["scaling=cpu_small", "model=replay"],
        {"fast": ("scaling=single_pass",), "balanced": ()},
    )
    assert cfgs["fast"]["scaling"]["strategy"] == "single_pass"
    assert cfgs["balanced"]["scaling"]["strategy"] != "single_pass"
    assert cfgs["fast"]["model"]["name"] == cfgs["balanced"]["model"]["name"] == "replay"


def test_the_help_names_the_endpoint():
    assert re.search(r"\n  serve +the online endpoint \(Ray Serve\)", _usage())


def test_serve_demo_registers_the_demo_database(tmp_path):
    from serve.cli import _register
    from serve.settings import ServeSettings
    from serve.store import StateStore

    settings = ServeSettings(state_dir=str(tmp_path / "state"), demo=True)
    [claims] = _register(settings, str(tmp_path / "demo"))
    assert claims.name == "claims" and claims.engine == "sqlite"
    assert claims.description_dir and claims.path.endswith("claims.sqlite")
    assert StateStore(settings.state_dir).database("claims") == claims


def test_gpu_slots_off_the_serve_port_or_at_its_route_are_refused(capsys, tmp_path):
    from serve.process import free_port

    port = free_port()
    gpu = ["serve", "model=qwen2.5-coder-32b", f"serve.state_dir={tmp_path}", f"serve.port={port}"]
    assert main(gpu) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"base_url http://127.0.0.1:8000/v1 is not on serve.port={port}" in err
    assert main([*gpu, f"model.slots.default.base_url=http://127.0.0.1:{port}/v1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "e.g. serve.route_prefix=/analytics" in err
