"""Waking the dispatcher's loop at once when the pool attaches a partition.

When idle, the loop blocks in its read for up to `BLOCK_MS` (250 ms), or sleeps as long when
no partition is readable yet.  A partition leased meanwhile (a start, a fail-over, a
scale-in) waited for that before its replay even began: up to a quarter of a second more on
every take-over, all of it spent before the first entry of a cold session was looked at.  So
`attach` wakes the loop: an idle sleep waits on an event `wake` sets, and a blocking read is
ended with `CLIENT UNBLOCK` sent on another connection (Redis answers the read as if it had
timed out).  The loop registers its connection's client id (`CLIENT ID`, asked on that
connection before each long blocking read: idle only, one round trip per block time) and
does not block when a partition was attached since it looked at the attached ones.
"""

from __future__ import annotations

import logging
import threading
import time

from ..redisio.client import RedisClient
from ..redisio.connection import TRANSIENT_ERRORS, integer

log = logging.getLogger(__name__)
UNBLOCK_TRIES_S = 0.05  # a read sent but not yet blocked in Redis: CLIENT UNBLOCK is tried again this long


class Waker:
    """The loop's wake-up: attaches counted, the blocking read's client, the idle sleep's event."""

    def __init__(self, *, redis: RedisClient) -> None:
        self._redis = redis  # the pool's client: another connection than the loop's
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._attaches = 0
        self._blocked: int | None = None  # the client id of the loop's connection while its read may block
        self._refused = False  # CLIENT UNBLOCK was refused once (an ACL without it): not tried again

    def epoch(self) -> int:
        """How many wake-ups so far (taken before the loop looks at the attached partitions)."""
        with self._lock:
            return self._attaches

    def sleep(self, seconds: float) -> None:
        """An idle pause of the loop, ended early by `wake`."""
        self._event.wait(seconds)
        self._event.clear()

    def blocking(self, client: int, epoch: int) -> bool:
        """Register the loop's coming blocking read on connection `client`; False (read without
        blocking) when the loop was woken since `epoch`."""
        with self._lock:
            if self._attaches != epoch:
                return False
            self._blocked = client
            return True

    def unblocked(self) -> None:
        """The loop's read returned."""
        with self._lock:
            self._blocked = None

    def wake(self) -> None:
        """End the loop's idle sleep or blocking read now (called by `attach` and `stop`)."""
        with self._lock:
            self._attaches += 1
            client = self._blocked
        self._event.set()
        if client is not None and not self._refused:
            self._unblock(client)

    def _unblock(self, client: int) -> None:
        deadline = time.monotonic() + UNBLOCK_TRIES_S
        while True:
            try:
                if integer(self._redis.execute_command("CLIENT", "UNBLOCK", client)):
                    return
            except TRANSIENT_ERRORS:
                return  # Redis is away: the read fails or returns by itself
            except Exception as error:  # an ACL without CLIENT UNBLOCK: the read ends after its block time
                self._refused = True
                log.warning("dispatcher: cannot wake the loop's blocking read (%s); newly leased partitions "
                            "may wait up to one block time", error)
                return
            with self._lock:
                waiting = self._blocked == client
            if not waiting or time.monotonic() > deadline:
                return  # the read returned already, or never blocked long enough to matter
            time.sleep(0.001)  # sent, not yet blocked in Redis: try again
