"""The RQ worker class of `iui rq-worker`: RQ's worker, whose stop waits at most a second for its
pub/sub thread.

RQ's worker listens for its commands (`rq.command.send_shutdown_command`, ...) on a pub/sub
thread that waits up to 60 s for each message.  Its teardown unsubscribes, then stops the thread,
and redis-py 8 (`PubSubWorkerThread.stop`) joins it: when the thread read the UNSUBSCRIBE's answer
before the stop, it was already waiting its next 60 s, and the worker's exit after a SIGTERM (or
the end of a `--burst` run) took a minute: 2 of 10 SIGTERMs on a busy machine.  Here the thread
waits a second at a time.
"""

from __future__ import annotations

from rq import Worker

PUBSUB_WAIT_S = 1.0  # the pub/sub thread's longest wait for a message: the longest a stop waits for it
WORKER_CLASS = "workers.actions.rq_worker.RQWorker"  # what `iui rq-worker` passes to `rq worker --worker-class`


class RQWorker(Worker):
    """RQ's `Worker` with a pub/sub thread that notices a stop within `PUBSUB_WAIT_S`."""

    def subscribe(self) -> None:
        """Subscribe to the worker's command channel, as RQ does, with a short wait per message."""
        self.log.info("Worker %s: subscribing to channel %s", self.name, self.pubsub_channel_name)
        self.pubsub = self.connection.pubsub()
        self.pubsub.subscribe(**{self.pubsub_channel_name: self.handle_payload})
        self.pubsub_thread = self.pubsub.run_in_thread(  # type: ignore[assignment]  # RQ types it by its None
            sleep_time=PUBSUB_WAIT_S, daemon=True, exception_handler=self._pubsub_exception_handler)
