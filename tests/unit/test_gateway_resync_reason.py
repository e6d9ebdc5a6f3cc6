"""Why a cursor is resynced rather than resumed from the logs (`gateway.events.resync_reason`): the
event stream and the AG-UI route ask the same function, the route with the bounds its opening read
(so an AG-UI run that must resync opens with the resync, one snapshot: tests/gateway/test_agui.py)."""

from __future__ import annotations

from gateway.backend import LogBounds, SessionInfo
from gateway.cursor import ZERO, Cursor
from gateway.events import AHEAD, EPOCH, EXPIRED, SLOW_READER, is_earlier_life, resync_reason, resynced_cursor
from gateway.metrics import RESYNC_REASONS

INFO = SessionInfo("alice demo", 7)
EMPTY = LogBounds(None, None, False)


def bounds(frame: LogBounds = EMPTY, receipt: LogBounds = EMPTY, answer: LogBounds = EMPTY) -> dict[str, LogBounds]:
    return {"frame": frame, "receipt": receipt, "answer": answer}


def test_a_cursor_the_logs_hold_is_resumed() -> None:
    held = LogBounds((1, 0), (9, 0), False)
    assert resync_reason(Cursor(), INFO, bounds()) is None  # fresh, nothing logged
    assert resync_reason(Cursor(), INFO, bounds(held, held, held)) is None  # fresh: every entry is sent
    assert resync_reason(Cursor(7, (9, 0), (1, 0), ZERO), INFO, bounds(held, held)) is None  # at the end, at one
    trimmed = LogBounds((5, 0), (9, 0), True)
    assert resync_reason(Cursor(7, (5, 0), (6, 1), ZERO), INFO, bounds(trimmed, trimmed)) is None  # kept still


def test_an_earlier_life_a_trimmed_position_and_one_past_the_end_are_resynced() -> None:
    trimmed = LogBounds((5, 0), (9, 0), True)
    assert resync_reason(Cursor(6, (1, 0)), INFO, bounds()) == EPOCH  # whatever the logs hold
    assert resync_reason(Cursor(8, ZERO, (1, 0)), INFO, bounds(receipt=trimmed)) == EPOCH
    assert resync_reason(Cursor(), INFO, bounds(receipt=trimmed)) == EXPIRED  # fresh, but the oldest are gone
    assert resync_reason(Cursor(7, (4, 9)), INFO, bounds(frame=trimmed)) == EXPIRED
    assert resync_reason(Cursor(7, ZERO, ZERO, (1, 0)), INFO, bounds()) == AHEAD  # an empty log holds nothing
    assert resync_reason(Cursor(7, (9, 1)), INFO, bounds(frame=trimmed)) == AHEAD
    # expired is told before ahead: the state replaces both
    assert resync_reason(Cursor(7, (1, 0), (99, 0)), INFO, bounds(trimmed, trimmed)) == EXPIRED


def test_a_fresh_cursor_is_of_no_earlier_life_and_a_resync_ends_at_every_log_s_last() -> None:
    assert not is_earlier_life(Cursor(0), INFO) and not is_earlier_life(Cursor(3), INFO)  # a fresh one's epoch is moot
    assert is_earlier_life(Cursor(3, ZERO, ZERO, (1, 1)), INFO) and not is_earlier_life(Cursor(7, (1, 1)), INFO)
    found = resynced_cursor(INFO, bounds(LogBounds((1, 0), (9, 2), True), EMPTY, LogBounds((3, 0), (3, 0), False)))
    assert found == Cursor(7, (9, 2), ZERO, (3, 0))


def test_every_reason_a_stream_can_give_is_a_label_the_metric_is_registered_with() -> None:
    assert set(RESYNC_REASONS) == {EPOCH, EXPIRED, AHEAD, SLOW_READER}
