"""The benchmark scripts' load guard (benchmarks/_load.py): no figure from a loaded machine."""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "_load.py"
_spec = importlib.util.spec_from_file_location("bench_load", _PATH)
assert _spec and _spec.loader
load = importlib.util.module_from_spec(_spec)
sys.modules["bench_load"] = load
_spec.loader.exec_module(load)


def guard(loadavg=(0.2, 0.2, 0.2), samples=(), **kw) -> load.LoadGuard:
    values = iter(samples)
    return load.LoadGuard(
        loadavg=lambda: loadavg, sample=lambda: next(values, None), interval_s=0.001, **kw
    )


def test_a_quiet_machine_passes(capsys: pytest.CaptureFixture[str]) -> None:
    g = guard(samples=[0.0, 1.0, 0.5])
    g.before()
    time.sleep(0.05)
    assert g.after() == pytest.approx(0.5)
    out = capsys.readouterr().out
    assert "load average before: 0.20" in out and "load average after: 0.20" in out
    assert "NOT A FIGURE" not in out and g.ok and g.banner == ""


def test_a_loaded_machine_is_refused_before_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    g = guard(loadavg=(2.3, 1.0, 0.5))
    with pytest.raises(SystemExit) as info:
        g.before()
    assert info.value.code == load.EXIT_LOADED != 0
    assert "NOT A FIGURE: load 2.30 > 1.5" in capsys.readouterr().out


def test_other_processes_during_the_run_are_refused_after_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the 1-minute load after includes the run itself; the other processes' samples decide
    g = guard(loadavg=(0.1, 0.1, 0.1), samples=[2.0, 2.0, 3.0])
    g.before()
    time.sleep(0.05)
    g._loadavg = lambda: (4.0, 2.0, 1.0)
    with pytest.raises(SystemExit) as info:
        g.after()
    assert info.value.code == load.EXIT_LOADED
    assert "NOT A FIGURE: load 2.33 > 1.5 from other processes" in capsys.readouterr().out


def test_ignore_load_carries_on_and_labels_the_output(capsys: pytest.CaptureFixture[str]) -> None:
    g = guard(loadavg=(3.0, 3.0, 3.0), samples=[2.0] * 3, ignore=True)
    g.before()
    time.sleep(0.05)
    g.after()
    out = capsys.readouterr().out
    assert out.count("NOT A FIGURE") == 2
    assert not g.ok and g.banner.startswith("NOT A FIGURE")


def test_without_proc_the_after_check_uses_the_load_average_less_the_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cpu = iter([10.0, 10.0])  # this run used no CPU
    monkeypatch.setattr(load, "_own_cpu_s", lambda: next(cpu))
    g = guard(loadavg=(0.5, 0.5, 0.5))  # sample() answers None at once: no /proc
    g.before()
    g._loadavg = lambda: (1.8, 1.0, 0.6)
    with pytest.raises(SystemExit):
        g.after()
    assert "NOT A FIGURE: load 1.80 > 1.5" in capsys.readouterr().out


def test_mark_gives_the_load_of_part_of_a_run() -> None:
    g = guard()
    g.samples = [3.0, 3.0, 0.0, 1.0]
    assert g.others_since(2) == pytest.approx(0.5)
    assert g.others_since(4) is None


def test_from_args_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    parser = argparse.ArgumentParser()
    load.add_load_arguments(parser)
    monkeypatch.delenv(load.IGNORE_ENV, raising=False)
    g = load.LoadGuard.from_args(parser.parse_args(["--max-load", "0.7"]))
    assert (g.max_load, g.ignore) == (0.7, False)
    assert load.LoadGuard.from_args(parser.parse_args(["--ignore-load"])).ignore
    monkeypatch.setenv(load.IGNORE_ENV, "1")
    assert load.LoadGuard.from_args(parser.parse_args([])).ignore


@pytest.mark.skipif(not Path("/proc/loadavg").exists(), reason="needs Linux /proc")
def test_own_running_threads_are_not_counted_as_others() -> None:
    # this thread is running while it samples: it counts as this process tree's, not another's
    assert load.tree_running(os.getpid()) >= 1
    assert load.others_running() is not None
