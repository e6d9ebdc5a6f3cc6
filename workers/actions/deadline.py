"""A capability's own timeout: `CapabilityTimeout` raised in its frame when its declared time is up.

RQ bounds a whole job (`job_timeout`), which also covers the job's bookkeeping: reporting
`running`, waiting up to `IUI_JOB_START_TIMEOUT_S` for that report to be committed, and
reporting the outcome.  The capability itself must get exactly its declared `timeout`, so
`deadline()` arms the interval timer (`SIGALRM`, sub-second) for the call alone.

RQ's work horse uses the same timer for its job timeout (`UnixSignalDeathPenalty`): the
remaining job time is paused while the capability runs and re-armed, minus the time spent,
with RQ's handler, afterwards.  Where no signal timer can be used (not the main thread, no
`SIGALRM`), `deadline()` arms nothing and RQ's job timeout is the only limit.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_MIN_REARM_S = 0.001  # a nearly spent job timeout still fires (0 would disarm the timer)


class CapabilityTimeout(BaseException):
    """The capability ran past its declared timeout and was stopped.

    A `BaseException`, as RQ's own timeout is in spirit: a capability's `except Exception`
    must not swallow it.
    """


def available() -> bool:
    """True where a capability can be cut at its deadline (the main thread, a Unix timer)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def deadline(seconds: float) -> Iterator[bool]:
    """Raise `CapabilityTimeout` in the body after `seconds`; yields False when it cannot."""
    if not available():
        yield False
        return
    armed = [True]

    def expire(signum: int, frame: FrameType | None) -> None:
        if armed[0]:  # a signal delivered after the body ended is ignored
            raise CapabilityTimeout(f"the capability did not finish within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire) or signal.SIG_DFL  # None: a handler set outside Python
    job_left, _ = signal.setitimer(signal.ITIMER_REAL, 0)  # RQ's job timeout, paused (0: none)
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, min(seconds, job_left) if job_left else seconds)
    try:
        yield True
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if job_left:
            signal.setitimer(signal.ITIMER_REAL, max(job_left - (time.monotonic() - started), _MIN_REARM_S))
