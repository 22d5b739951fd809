"""Load guard for the benchmark scripts: a figure taken while other work shares the CPUs is not
a figure (docs/benchmarks.md has runs at load 7-15 that were 2-4x slower than the machine).

    from _load import LoadGuard, add_load_arguments   # scripts run as python benchmarks/<name>.py

    add_load_arguments(parser)                # --ignore-load, --max-load (default 1.5)
    guard = LoadGuard.from_args(parser.parse_args())
    guard.before()    # prints the load average; 1-minute load > 1.5: "NOT A FIGURE", exit 3
    ...               # the measured work
    guard.after()     # prints it again; other processes' load during the run > 1.5: the same
    ...               # only now print the figures

The 1-minute load average after a run includes the run itself (two llama.cpp threads keep it
near 2 on a 2-core machine), so ``after`` judges the load of *other* processes: a background
thread samples, once a second, the system's running tasks (``/proc/loadavg``) less the running
threads of this process and its descendants (model servers, Ray, CLI children); the mean over
the run is the other processes' load. ``mark()`` / ``others_since(mark)`` give it for one part
of a run. Without ``/proc`` (not Linux) ``after`` uses the 1-minute load less this process
tree's mean busy cores.

``--ignore-load`` (or ``BENCH_IGNORE_LOAD=1``) still prints the NOT A FIGURE line but carries
on, for smoke runs. Shell scripts run under the guard as a command:

    python benchmarks/_load.py [--ignore-load] [--max-load 1.5] -- bash benchmarks/x.sh ...
"""

from __future__ import annotations

import argparse
import os
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

MAX_LOAD = 1.5
EXIT_LOADED = 3  # exit status of a run refused for load
IGNORE_ENV = "BENCH_IGNORE_LOAD"
_GUARDED_ENV = "BENCH_LOAD_GUARDED"  # set for a command run under the guard's CLI


def add_load_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ignore-load",
        action="store_true",
        help=f"run and print even when the machine is loaded (smoke runs; also {IGNORE_ENV}=1)",
    )
    parser.add_argument(
        "--max-load",
        type=float,
        default=MAX_LOAD,
        help="highest 1-minute load before, and load of other processes during, the run "
        "(default %(default)s)",
    )


def _stat_fields(path: str) -> list[str]:
    """The fields of a /proc stat file after ``pid (comm)``: state, ppid, ..."""
    return Path(path).read_text().rpartition(")")[2].split()


def tree_running(root: int) -> int:
    """Running threads (state R) of ``root`` and its descendants."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                children.setdefault(int(_stat_fields(f"/proc/{entry.name}/stat")[1]), []).append(
                    int(entry.name)
                )
            except (OSError, IndexError, ValueError):
                continue  # the process ended meanwhile
    running, stack = 0, [root]
    while stack:
        pid = stack.pop()
        stack += children.get(pid, ())
        try:
            tasks = list(os.scandir(f"/proc/{pid}/task"))
        except OSError:
            continue
        for task in tasks:
            try:
                running += _stat_fields(f"{task.path}/stat")[0] == "R"
            except (OSError, IndexError):
                continue
    return running


def others_running(root: int | None = None) -> float | None:
    """Running tasks on the machine that are not ``root``'s (this process) or its descendants'
    at this instant; None without Linux's /proc."""
    try:
        total = int(Path("/proc/loadavg").read_text().split()[3].split("/")[0])
        own = tree_running(os.getpid() if root is None else root)
    except (OSError, IndexError, ValueError):
        return None
    return float(total - own)


def _own_cpu_s() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def parse_guarded(
    parser: argparse.ArgumentParser, argv: list[str] | None = None
) -> tuple[argparse.Namespace, LoadGuard]:
    """``parser``'s arguments, with the load options added, and the guard those configure
    (its ``before()`` is the caller's to call, once what the run needs is loaded)."""
    add_load_arguments(parser)
    args = parser.parse_args(argv)
    return args, LoadGuard.from_args(args)


class LoadGuard:
    """Refuses a benchmark's figures when the CPUs were shared; see the module docstring."""

    def __init__(
        self,
        *,
        max_load: float = MAX_LOAD,
        ignore: bool = False,
        interval_s: float = 1.0,
        loadavg: Callable[[], tuple[float, float, float]] = os.getloadavg,
        sample: Callable[[], float | None] = others_running,
    ) -> None:
        self.max_load = max_load
        self.ignore = ignore
        self.interval_s = interval_s
        self._loadavg = loadavg
        self._sample = sample
        self.samples: list[float] = []
        self.refused: list[str] = []  # the reasons, when refused (and ignored)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = (0.0, 0.0)  # (wall, own CPU seconds) at before()

    @classmethod
    def from_args(cls, args: argparse.Namespace, **kw: object) -> LoadGuard:
        ignore = bool(getattr(args, "ignore_load", False)) or os.environ.get(
            IGNORE_ENV, ""
        ) not in (
            "",
            "0",
        )
        return cls(max_load=getattr(args, "max_load", MAX_LOAD), ignore=ignore, **kw)  # type: ignore[arg-type]

    @property
    def ok(self) -> bool:
        """True while no check has failed: the figures count."""
        return not self.refused

    @property
    def banner(self) -> str:
        """A line to print above figures: empty, or why they are not figures."""
        return "" if self.ok else f"NOT A FIGURE ({'; '.join(self.refused)}; --ignore-load)"

    def _refuse(self, reason: str) -> None:
        print(f"NOT A FIGURE: {reason}", flush=True)
        self.refused.append(reason)
        if not self.ignore:
            self._halt()
            raise SystemExit(EXIT_LOADED)
        print("--ignore-load: carrying on; nothing this run prints is a figure", flush=True)

    def before(self) -> None:
        load = self._loadavg()
        print(
            f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
            f"(1/5/15 min; {os.cpu_count()} CPUs; limit {self.max_load:g})",
            flush=True,
        )
        if load[0] > self.max_load:
            self._refuse(f"load {load[0]:.2f} > {self.max_load:g} before the run")
        self._started = (time.monotonic(), _own_cpu_s())
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="load-guard", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            value = self._sample()
            if value is None:
                return  # no /proc: after() falls back to the load average
            self.samples.append(value)

    def _halt(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def mark(self) -> int:
        return len(self.samples)

    def others_since(self, mark: int = 0) -> float | None:
        """Mean load of other processes since ``mark`` (None: no sample yet)."""
        window = self.samples[mark:]
        return max(0.0, sum(window) / len(window)) if window else None

    def after(self) -> float:
        """The other processes' load during the run; refuses above the limit."""
        self._halt()
        load = self._loadavg()
        others = self.others_since(0)
        if others is None:  # no samples: the 1-minute load less this run's own busy cores
            wall = max(time.monotonic() - self._started[0], 1e-9)
            own = (_own_cpu_s() - self._started[1]) / wall
            others = max(0.0, load[0] - own)
            how = f"1-minute load less this run's {own:.2f} busy cores"
        else:
            how = f"mean of {len(self.samples)} samples of running tasks not this run's"
        print(
            f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (includes this run); "
            f"other processes during the run: {others:.2f} ({how})",
            flush=True,
        )
        if others > self.max_load:
            self._refuse(
                f"load {others:.2f} > {self.max_load:g} from other processes during the run"
            )
        return others


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command under the guard: ``python benchmarks/_load.py [options] -- CMD ...``."""
    parser = argparse.ArgumentParser(prog="python benchmarks/_load.py", description=main.__doc__)
    add_load_arguments(parser)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    guard = LoadGuard.from_args(args)
    guard.before()
    if not command:
        guard.after()
        return 0
    env = {**os.environ, _GUARDED_ENV: "1"}
    if guard.ignore:
        env[IGNORE_ENV] = "1"
    rc = subprocess.call(command, env=env)
    guard.after()
    if guard.banner:
        print(guard.banner)
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
