"""``core.stop``: a second Ctrl-C during a cleanup that hangs ends the process at once, killing
what it started, with one line."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from core import stop

REPO = Path(__file__).resolve().parents[2]

HANGS = textwrap.dedent(
    """
    import subprocess, time
    from core import stop
    stop.install("probe")
    child = subprocess.Popen(["sleep", "60"])
    try:  # entered before the pid is printed: the test signals as soon as it reads it
        print(child.pid, flush=True)
        time.sleep(60)
    except KeyboardInterrupt:
        time.sleep(60)  # a cleanup that never ends
    """
)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def start_hanging() -> tuple[subprocess.Popen, int]:
    """The HANGS probe started, and the pid of the child it started."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HANGS],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, int(proc.stdout.readline())


def test_a_second_signal_kills_what_the_process_started_and_exits_with_one_line():
    proc, child = start_hanging()
    assert child in stop.descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    time.sleep(1.0)  # past stop.SAME_STOP_S: a second stop, not the first delivered twice
    assert proc.poll() is None  # the first signal starts the command's own cleanup
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(5) == 128 + signal.SIGINT  # the signal that started the stop
    assert proc.stderr.read() == "probe: stopped\n"
    time.sleep(0.2)
    assert not alive(child)


def test_a_signal_delivered_twice_at_once_is_one_stop():
    """``timeout -s INT`` signals the command, then its process group: the copy must not cut
    the cleanup short (a sweep flushes its finished answers there)."""
    proc, child = start_hanging()
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)  # the first is handled: the copy arrives during the cleanup
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    assert proc.poll() is None and alive(child)  # still in its cleanup
    proc.send_signal(signal.SIGTERM)  # a later signal is a second stop
    assert proc.wait(5) == 128 + signal.SIGINT
    time.sleep(0.2)
    assert not alive(child)


def test_nothing_is_taken_without_install():
    assert signal.getsignal(signal.SIGINT) is not stop._on_signal
    stop.reclaim()
    assert signal.getsignal(signal.SIGINT) is not stop._on_signal
