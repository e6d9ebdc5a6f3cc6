"""`redisio.exchange`: the dispatcher's round trip without redis-py's Pipeline, on a real server."""

from __future__ import annotations

import time

import pytest
import redis

from workers.redisio.connection import RoundTrip, SharedRoundTrip, exchange, is_no_script, pack

pytestmark = pytest.mark.integration


def kill_client(redis_url: str, name: str) -> None:
    """Kill the server's connection named `name` (once the server shows it)."""
    killer = redis.Redis.from_url(redis_url)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not [c for c in killer.client_list() if c["name"] == name]:
        time.sleep(0.01)
    (doomed,) = [c for c in killer.client_list() if c["name"] == name]
    killer.client_kill_filter(_id=doomed["id"])


def test_replies_come_back_raw_and_in_order_with_error_replies_in_place(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    replies = exchange(client, [("SET", "x", "1"), ("INCR", "x"), ("HGET", "x", "f"),
                                ("EVALSHA", "0" * 40, 0), pack(("GET", "x"))])
    assert replies[0] == b"OK" and replies[1] == 2 and replies[4] == b"2"
    assert isinstance(replies[2], redis.ResponseError) and "WRONGTYPE" in str(replies[2])
    assert is_no_script(replies[3])  # the caller decides the entry again: nothing was written
    assert exchange(client, [("GET", "x")]) == [b"2"]  # the connection went back to the pool clean


def test_a_blocking_read_rides_behind_the_writes(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    client.xgroup_create("in", "g", id="0", mkstream=True)
    client.xadd("in", {"session": "s", "n": "1"})
    read = ("XREADGROUP", "GROUP", "g", "owner", "COUNT", 10, "BLOCK", 100, "STREAMS", "in", ">")
    replies = exchange(client, [("SET", "w", "1"), pack(read)])
    assert replies[0] == b"OK"
    reply = replies[1]
    [(stream, [[entry_id, fields]])] = reply.items() if isinstance(reply, dict) else reply  # RESP3 or RESP2
    assert stream == b"in" and fields == [b"session", b"s", b"n", b"1"]  # raw: a flat field, value list
    assert exchange(client, [read]) == [None]  # nothing new: the block timed out
    assert client.xpending("in", "g")["pending"] == 1
    assert entry_id


def test_a_round_trip_sends_in_parts_and_reads_every_reply_at_the_end(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    trip = RoundTrip(client)
    trip.send([("SET", "part", "1")])
    assert client.get("part") == b"1"  # already applied by Redis, its reply not read yet
    trip.send([("INCR", "part"), ("HGET", "part", "f")])
    trip.send([])
    assert trip.sent == 3
    replies = trip.finish()
    assert replies[:2] == [b"OK", 2] and isinstance(replies[2], redis.ResponseError)
    assert RoundTrip(client).finish() == []  # nothing sent: no connection taken, nothing read
    assert exchange(client, [("GET", "part")]) == [b"2"]  # the pooled connection came back clean


def test_a_round_trip_on_a_killed_connection_raises_at_finish_and_leaves_no_broken_connection(
        redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    trip = RoundTrip(client)
    trip.send([("CLIENT", "SETNAME", "doomed")])
    kill_client(redis_url, "doomed")
    trip.send([("SET", "after", "1")])  # the send may still succeed; the replies cannot be read
    with pytest.raises(redis.ConnectionError):
        trip.finish()
    assert exchange(client, [("SET", "next", "1"), ("GET", "next")]) == [b"OK", b"1"]  # a fresh connection


def test_a_round_trip_on_the_callers_connection_keeps_it_and_reconnects_after_a_kill(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    own = client.connection_pool.get_connection()
    trip = RoundTrip(client, own)
    trip.send([("CLIENT", "SETNAME", "kept"), ("SET", "own", "1")])
    assert trip.finish() == [b"OK", b"OK"]
    killer = redis.Redis.from_url(redis_url)
    (kept,) = [c for c in killer.client_list() if c["name"] == "kept"]  # still open after finish
    killer.client_kill_filter(_id=kept["id"])
    broken = RoundTrip(client, own)
    broken.send([("GET", "own")])
    with pytest.raises(redis.ConnectionError):
        broken.finish()
    again = RoundTrip(client, own)
    again.send([("GET", "own")])
    assert again.finish() == [b"1"]  # the same connection object connected again


def test_a_round_trip_reads_its_replies_in_parts(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    trip = RoundTrip(client)
    trip.send([("SET", "parts", "1"), ("INCR", "parts"), ("INCR", "parts")])
    assert trip.read(1) == [b"OK"] and trip.read(0) == []
    assert trip.finish() == [2, 3]  # what `read` did not take
    assert exchange(client, [("GET", "parts")]) == [b"3"]  # the connection went back clean


def test_a_shared_round_trip_hands_each_caller_its_own_replies_whatever_order_they_read(redis_url: str) -> None:
    """The dispatcher sends every partition's read-ahead on one connection; a partition that
    stopped before its turn never reads: the next one's replies are still its own."""
    client = redis.Redis.from_url(redis_url)
    shared = SharedRoundTrip(client)
    first = shared.send([("SET", "shared", "1"), ("INCR", "shared")])
    skipped = shared.send([("INCR", "shared"), ("HGET", "shared", "f")])
    third = shared.send([("GET", "shared")])
    assert first.replies() == [b"OK", 2]
    assert third.replies() == [b"3"]  # the skipped share's replies read and dropped on the way
    with pytest.raises(ValueError, match="read before"):
        skipped.replies()
    with pytest.raises(ValueError, match="read before"):
        third.replies()
    shared.close()
    assert exchange(client, [("GET", "shared")]) == [b"3"]


@pytest.mark.parametrize("unread", [True, False])
def test_a_shared_round_trip_closed_with_replies_unread_closes_its_connection(redis_url: str, unread: bool) -> None:
    client = redis.Redis.from_url(redis_url)
    shared = SharedRoundTrip(client)
    share = shared.send([("SET", "closed", "1")])
    (connection,) = client.connection_pool._in_use_connections
    socket = connection._sock
    if not unread:
        assert share.replies() == [b"OK"]
    shared.close()
    assert (socket.fileno() == -1) is unread  # returned to the pool open only when every reply was read
    assert client.ping() is True and exchange(client, [("GET", "closed")]) == [b"1"]


def test_a_shared_round_trip_whose_connection_died_raises_for_every_caller(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    shared = SharedRoundTrip(client)
    shared.send([("CLIENT", "SETNAME", "doomed-shared")])  # its reply, read or not, is never asked for
    kill_client(redis_url, "doomed-shared")
    second = shared.send([("SET", "after-kill", "1")])  # the sends may still succeed; no reply can be read
    third = shared.send([("GET", "after-kill")])
    with pytest.raises(redis.ConnectionError):
        second.replies()
    with pytest.raises(redis.ConnectionError):  # a later caller meets the same error, never another's reply
        third.replies()
    shared.close()
    assert exchange(client, [("SET", "next-shared", "1"), ("GET", "next-shared")]) == [b"OK", b"1"]
