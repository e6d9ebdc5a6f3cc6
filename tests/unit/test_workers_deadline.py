"""A capability's own timeout (`workers.deadline`): cut at its deadline, RQ's job timer kept."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType

import pytest

from workers.actions.deadline import CapabilityTimeout, deadline


@pytest.fixture()
def job_timer() -> Iterator[list[int]]:
    """A SIGALRM handler and timer as RQ's work horse arms them for the whole job; removed after."""
    fired: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        fired.append(signum)

    previous = signal.signal(signal.SIGALRM, handler)
    yield fired
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def test_a_body_past_its_deadline_is_stopped_at_the_deadline(job_timer: list[int]) -> None:
    started = time.monotonic()
    with pytest.raises(CapabilityTimeout, match=r"within 0\.2 s"), deadline(0.2) as armed:
        assert armed
        time.sleep(5)
    assert 0.2 <= time.monotonic() - started < 1.0
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # no job timer was armed before


def test_the_job_timer_is_paused_during_the_body_and_rearmed_after_with_its_handler(job_timer: list[int]) -> None:
    signal.setitimer(signal.ITIMER_REAL, 3.0)
    with deadline(1.0):
        time.sleep(0.2)
    left, _ = signal.getitimer(signal.ITIMER_REAL)
    assert 2.5 < left <= 2.8  # 3 s minus the 0.2 s the body took
    assert signal.getsignal(signal.SIGALRM).__name__ == "handler" and job_timer == []


def test_a_body_that_ends_in_time_raises_nothing_later(job_timer: list[int]) -> None:
    with deadline(0.1):
        pass
    time.sleep(0.3)
    assert job_timer == [] and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_outside_the_main_thread_nothing_is_armed() -> None:
    seen: list[bool] = []

    def body() -> None:
        with deadline(0.01) as armed:
            time.sleep(0.05)
            seen.append(armed)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert seen == [False]
