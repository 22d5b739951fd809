"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``).

A test waits in real time for what the page renders, instead of Chromium's virtual time
(``--virtual-time-budget``), which runs on while a streamed response body is still being read and
can dump the page before the answer arrives. No client library: the protocol is JSON messages
separated by NUL bytes, read by Chromium from fd 3 and written to fd 4.

    with HeadlessChromium(binary, tmp_path) as browser:
        browser.open("http://127.0.0.1:8000/?ask=1")
        browser.wait_for("document.querySelector('#sql').textContent", timeout_s=60)
        png = browser.screenshot()
"""

from __future__ import annotations

import base64
import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any


class ChromiumError(RuntimeError):
    """Chromium answered a command with an error, exited, or did not answer in time."""


class HeadlessChromium:
    def __init__(self, binary: str, profile_dir: Path, width: int = 1100, height: int = 900):
        commands_read, self._commands = os.pipe()
        self._replies, replies_write = os.pipe()

        def wire_fds() -> None:  # in the child, before exec: fd 3 = commands, fd 4 = replies
            commands, replies = os.dup(commands_read), os.dup(replies_write)
            os.dup2(commands, 3)
            os.dup2(replies, 4)

        self.process = subprocess.Popen(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile_dir}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire_fds,
            pass_fds=(3, 4),
        )
        os.close(commands_read)
        os.close(replies_write)
        self._buffer, self._next_id = b"", 0
        target = self._call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self._call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self._call(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def open(self, url: str) -> None:
        self._call("Page.navigate", session=True, url=url)

    def evaluate(self, expression: str) -> Any:
        reply = self._call(
            "Runtime.evaluate", session=True, expression=expression, returnByValue=True
        )
        return reply["result"].get("value")

    def wait_for(self, expression: str, timeout_s: float, every_s: float = 0.25) -> Any:
        """The first truthy value of ``expression`` in the page, polled in real time."""
        deadline = time.monotonic() + timeout_s
        while True:
            value = self.evaluate(expression)
            if value or time.monotonic() > deadline:
                return value
            time.sleep(every_s)

    def screenshot(self) -> bytes:
        return base64.b64decode(self._call("Page.captureScreenshot", session=True)["data"])

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self._call("Browser.close", timeout_s=10)
            except ChromiumError:
                pass
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for fd in (self._commands, self._replies):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> HeadlessChromium:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _call(
        self, method: str, *, session: bool = False, timeout_s: float = 60, **params: Any
    ) -> dict:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout_s
        while True:  # events and replies to other sessions are skipped
            reply = self._read(deadline)
            if reply.get("id") != self._next_id:
                continue
            if "error" in reply:
                raise ChromiumError(f"{method}: {reply['error']}")
            return reply.get("result", {})

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._replies], [], [], left)[0]:
                raise ChromiumError("Chromium did not answer in time")
            chunk = os.read(self._replies, 1 << 16)
            if not chunk:
                raise ChromiumError(f"Chromium exited ({self.process.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)
