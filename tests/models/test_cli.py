from pathlib import Path

import pytest

from models.cli import main
from tests.models.conftest import leave_native_build


def test_list_shows_every_model_and_its_state(tmp_path: Path, capsys) -> None:
    assert main(["list", f"paths.models={tmp_path}"]) == 0
    out = capsys.readouterr().out
    assert "qwen2.5-coder-1.5b" in out and "qwen2.5-coder-0.5b" in out
    assert out.count("not pulled") == 2


def test_verify_of_a_missing_model_fails_cleanly(tmp_path: Path, capsys) -> None:
    assert main(["verify", "qwen2.5-coder-0.5b", f"paths.models={tmp_path}"]) == 1
    assert "models pull qwen2.5-coder-0.5b" in capsys.readouterr().err


def test_verify_detects_a_corrupt_file(tmp_path: Path, capsys) -> None:
    (tmp_path / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf").write_bytes(b"GGUF" + b"\0" * 64)
    assert main(["verify", "qwen2.5-coder-0.5b", f"paths.models={tmp_path}"]) == 1
    assert "bytes, expected 491,400,064" in capsys.readouterr().err


def test_unknown_model_name_is_rejected(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["pull", "gpt-9"])
    assert info.value.code == 2
    assert "invalid choice: 'gpt-9'" in capsys.readouterr().err


def test_build_runtime_builds_once_per_cpu_and_reports_failures(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    from models.local import native

    built = []

    def fake_build(dest, *, jobs=None, progress):
        built.append((dest, jobs))
        raise native.RuntimeBuildError("cmake exited with 1")

    monkeypatch.setattr(native, "build", fake_build)
    monkeypatch.setattr(native, "build_pays", lambda: True)
    assert main(["build-runtime", "--jobs", "1", f"paths.runtimes={tmp_path}"]) == 1
    assert built == [(native.default_dir(tmp_path), 1)]
    assert "cmake exited with 1" in capsys.readouterr().err

    leave_native_build(native.default_dir(tmp_path))
    assert main(["build-runtime", f"paths.runtimes={tmp_path}"]) == 0
    assert "already built for this CPU" in capsys.readouterr().out and len(built) == 1
    assert main(["build-runtime", "--force", f"paths.runtimes={tmp_path}"]) == 1
    assert len(built) == 2


def test_build_runtime_builds_nothing_where_it_does_not_pay_unless_forced(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    from models.local import native

    built = []

    def fake_build(dest, **kwargs):
        built.append(dest)
        raise native.RuntimeBuildError("stop here")

    monkeypatch.setattr(native, "build", fake_build)
    monkeypatch.setattr(native, "build_pays", lambda: False)
    assert main(["build-runtime", "--force", f"paths.runtimes={tmp_path}"]) == 1
    assert len(built) == 1
    capsys.readouterr()
    assert main(["build-runtime", f"paths.runtimes={tmp_path}"]) == 0
    assert "not built: this CPU has no AVX-512" in capsys.readouterr().out and len(built) == 1
