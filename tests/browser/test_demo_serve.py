"""`iui demo --serve` as a user runs it: one process on the embedded Redis, its printed viewer URL
opened in Chromium, the demo's stream, actions and answers in the page, then Ctrl-C."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import IO, Any

import pytest

from tests.browser.stack import Viewer
from workers.redisio.local_server import free_port

pytestmark = pytest.mark.browser

URL = re.compile(r"^  (http://127\.0\.0\.1:\d+/app/s/demo-[0-9a-f]{8}#token=[\w.-]+)$")


class Demo:
    """The `iui demo --serve` process and the lines it printed."""

    def __init__(self, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("IUI_")}  # the embedded Redis
        self.process = subprocess.Popen([sys.executable, "-m", "workers.cli", "demo", "--serve", *args], env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.printed: list[str] = []
        self.errors: list[str] = []
        assert self.process.stdout is not None and self.process.stderr is not None
        for stream, sink in ((self.process.stdout, self.lines.put), (self.process.stderr, self.errors.append)):
            threading.Thread(target=self._read, args=(stream, sink), daemon=True).start()

    @staticmethod
    def _read(stream: IO[str], sink: Any) -> None:
        for line in stream:
            sink(line.rstrip("\n"))

    def wait_for(self, pattern: str | re.Pattern[str], timeout: float = 30.0) -> re.Match[str]:
        """The first printed line (from now) matching `pattern`."""
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"not printed: {pattern}; printed {self.printed}, stderr {self.errors}") from None
            self.printed.append(line)
            match = re.search(pattern, line)
            if match:
                return match

    def interrupt(self) -> int:
        """Ctrl-C, and the exit status."""
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=20)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def demo() -> Iterator[Demo]:
    running = Demo("--port", str(free_port()), "--pause", "0.2")
    yield running
    running.kill()


def test_iui_demo_serve_shows_the_demo_in_the_browser_and_stops_on_ctrl_c(
        demo: Demo, browser: Any, viewers: list[Viewer]) -> None:
    url = demo.wait_for(URL).group(1)
    viewer = Viewer(browser, url)
    viewers.append(viewer)
    page = viewer.page
    demo.wait_for(r"^stream: seq=5 complete$")
    sales = page.locator("article.document").first
    sales.locator('[data-node="revenue-result"] output').filter(has_text="€31,360.00").wait_for()
    assert sales.locator('[data-node="summary-card"] .card-title').inner_text() == "Summary"
    demo.wait_for(r"^answer: msg-pressure-1 with 2 blocks$")
    page.locator('article.answer.final[data-message="msg-pressure-1"]').wait_for()
    assert page.locator("article.document header h2").all_inner_texts() == [
        "Quarterly sales report", "File line counter", "Save a note to a file", "Ask for an explanation"]
    demo.wait_for(r'^action: count_lines succeeded \{"totalLines": 4\}$')
    read = page.locator('.operation[data-status="succeeded"]')
    read.wait_for()
    assert "totalLines" in read.inner_text()
    assert "not requested from this page: its result is not applied here" in read.inner_text()  # the agent's
    write = page.locator('.operation[data-status="awaiting_confirmation"]')
    viewer.shot("demo-serve")
    write.get_by_role("button", name="Approve").click()
    demo.wait_for(r'^action: save_note succeeded \{"operation": "create"\}$')
    page.locator('.operation[data-status="succeeded"]').nth(1).wait_for()
    viewer.shot("demo-serve-approved")
    viewer.check()  # before Ctrl-C: after it the page rightly reports the lost connection
    viewers.remove(viewer)
    viewer.close()

    status = demo.interrupt()
    assert status in (0, 130), demo.errors
    assert not [line for line in demo.errors if "Traceback" in line], demo.errors
    token = url.split("#token=")[1]
    assert sum(token in line for line in demo.printed + demo.errors) == 1  # printed once, in the URL
