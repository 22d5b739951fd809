from pathlib import Path

import pytest

from models.cli import main


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
