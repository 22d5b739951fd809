"""``scale-analytics demo`` says in one line when building llama.cpp's server would pay here."""

from core.config import load_config
from eval.cli.demo_cli import native_hint
from models.local import native
from tests.models.conftest import leave_native_build


def test_the_native_build_is_suggested_where_it_pays_and_a_slot_would_use_it(tmp_path, monkeypatch):
    def model(*overrides):
        return load_config(["experiment=demo", f"paths.runtimes={tmp_path}", *overrides]).model

    monkeypatch.setattr(native, "build_pays", lambda: True)
    assert "make install-native" in native_hint(model())
    assert native_hint(model("model=replay")) is None  # no local slot
    assert native_hint(model("model.slots.default.runtime=xllamacpp")) is None
    leave_native_build(native.default_dir(tmp_path))
    assert native_hint(model()) is None  # built already
    monkeypatch.setattr(native, "build_pays", lambda: False)
    assert native_hint(model("paths.runtimes=/nowhere")) is None  # AVX2 only: no gain to offer
