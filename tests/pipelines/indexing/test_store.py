from __future__ import annotations

import pytest

from pipelines.indexing.store import Manifest, VersionedStore


def _publish(store: VersionedStore, tag: str) -> str:
    version = store.new_version(tag * 12)
    (version / "data.txt").write_text(tag)
    store.publish(version, Manifest(name=store.name, version=version.name, fingerprint=tag))
    return version.name


def test_reader_sees_nothing_until_publish(tmp_path):
    store = VersionedStore(tmp_path, "databases", "db1")
    version = store.new_version("f" * 12)
    (version / "half.txt").write_text("partial")
    assert (
        store.current() is None and store.current_dir() is None
    )  # a built-but-unpublished version is invisible
    store.publish(version, Manifest(name="db1", version=version.name, fingerprint="f"))
    assert store.current().fingerprint == "f"
    assert (store.current_dir() / "half.txt").read_text() == "partial"


def test_publish_keeps_the_previous_version_and_prunes_older_and_abandoned(tmp_path):
    store = VersionedStore(tmp_path, "databases", "db1")
    first = _publish(store, "a")
    abandoned = store.new_version("z" * 12).name  # e.g. a crashed build
    second = _publish(store, "b")
    assert {p.name for p in store.base.iterdir() if p.is_dir()} == {first, second}
    third = _publish(store, "c")
    assert {p.name for p in store.base.iterdir() if p.is_dir()} == {second, third}
    assert abandoned not in {p.name for p in store.base.iterdir()}
    assert (store.current_dir() / "data.txt").read_text() == "c"


def test_retract_removes_the_live_version(tmp_path):
    store = VersionedStore(tmp_path, "databases", "db1")
    _publish(store, "a")
    store.retract()
    assert store.current() is None and not any(p.is_dir() for p in store.base.iterdir())


def test_pointer_to_a_missing_version_is_no_index(tmp_path):
    store = VersionedStore(tmp_path, "databases", "db1")
    version = _publish(store, "a")
    store.discard(store.base / version)
    assert store.current() is None


@pytest.mark.parametrize("name", ["../escape", ".hidden", "a/b", ""])
def test_unsafe_names_are_refused(tmp_path, name):
    with pytest.raises(ValueError):
        VersionedStore(tmp_path, "databases", name)
