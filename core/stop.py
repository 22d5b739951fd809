"""Ctrl-C and SIGTERM end a command within seconds: one line, nothing left running.

    install(prog)                       the CLI, before a subcommand runs
      first SIGINT / SIGTERM ──► on_stop callbacks (quiet Ray's log relay, …)
                             ──► KeyboardInterrupt in the main thread: the command's own cleanup
                                 runs (a sweep keeps its finished questions, model servers and
                                 Ray stop) and it ends with its one line, exit 128 + signal
                             └─► after GRACE_S still running ──► hard stop
      second signal, or the grace ends ──► hard stop: SIGKILL to every process this one started
                                 (model servers, Ray's daemons and workers), the line, exit
      a repeat within SAME_STOP_S ──► the same stop: ``timeout -s INT`` signals the command and
                                 then its whole process group, so the command gets it twice

A hard stop kills with SIGKILL because a SIGTERM makes Ray's C++ processes print a stack trace
("logging.cc … SIGTERM received"), and a model server evaluating a prompt on a slow CPU takes
tens of seconds to finish the batch in hand. ``ray.init`` installs its own SIGTERM handler (a
C++ one that prints that stack trace), so whoever calls it calls :func:`reclaim` after it.

Nothing is installed unless :func:`install` ran (a test or a notebook keeps its own handlers).

>>> exit_code()
130
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

GRACE_S = 10.0  # a clean stop takes 2-4 s (the sweep's Ray, a model server); the rest is slack
SAME_STOP_S = 0.5  # a person's second Ctrl-C comes later than this; a process group's copy sooner
SIGNALS = (signal.SIGINT, signal.SIGTERM)

_prog: str | None = None
_received: int | None = None
_received_at = 0.0
_said = threading.Event()
_callbacks: list[Callable[[], None]] = []


def install(prog: str) -> None:
    """Take SIGINT and SIGTERM for ``prog`` (main thread only; elsewhere a no-op)."""
    global _prog
    if threading.current_thread() is not threading.main_thread():
        return
    _prog = prog
    for signum in SIGNALS:
        signal.signal(signum, _on_signal)


def reclaim() -> None:
    """Take the signals back after a library replaced the handlers (``ray.init``)."""
    if _prog is not None:
        install(_prog)


def on_stop(callback: Callable[[], None]) -> Callable[[], None]:
    """Run ``callback`` (quick, never raising) at the first signal; returns its remover."""
    _callbacks.append(callback)
    return lambda: _callbacks.remove(callback) if callback in _callbacks else None


def received() -> int | None:
    """The signal that started the stop, if one did."""
    return _received


def exit_code() -> int:
    """128 + the signal received (130, Ctrl-C's, when none was)."""
    return 128 + (_received or signal.SIGINT)


def say(line: str) -> None:
    """Print the stop's one line on stderr; under :func:`install`, once (later calls, a hard
    stop's among them, print nothing)."""
    if _prog is None or not _said.is_set():
        _said.set()
        print(line, file=sys.stderr, flush=True)


def _on_signal(signum: int, frame: object) -> None:
    global _received, _received_at
    if _received is not None:
        if time.monotonic() - _received_at < SAME_STOP_S:
            return  # one stop delivered twice: the cleanup (a sweep's flush among it) goes on
        hard_stop()
    _received, _received_at = signum, time.monotonic()
    for callback in list(_callbacks):
        callback()
    threading.Thread(target=_deadline, name="stop-deadline", daemon=True).start()
    raise KeyboardInterrupt


def _deadline() -> None:
    threading.Event().wait(GRACE_S)
    hard_stop()


def hard_stop() -> None:
    """Kill every descendant process, print the line, exit now."""
    for pid in descendants(os.getpid()):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass  # gone already
    say(f"{_prog or 'scale-analytics'}: stopped")
    os._exit(exit_code())


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (from /proc; [] where there is none), parents first."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            # "pid (comm) state ppid …": comm may hold spaces and parentheses
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if stat[0] != "Z":
            children.setdefault(int(stat[1]), []).append(int(entry.name))
    found, queue = [], list(children.get(root, []))
    while queue:
        pid = queue.pop(0)
        found.append(pid)
        queue += children.get(pid, [])
    return found
