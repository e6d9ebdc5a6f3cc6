"""`capped_log.lua`, the capped append of the frame log and the answer log, against a model.

After each append the log must hold exactly the longest run of the newest values within both caps
(never less than the newest one), and the hash field the byte sum of what it holds; a cap lowered
between two appends (a configuration change) drops everything beyond it at once.  Run on a real
redis-server and on the embedded demo's fakeredis (whose Lua runs the same text).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import fakeredis
import pytest
import redis

from workers.redisio.scripts import with_includes

SCRIPT = with_includes("""-- include: capped_log
capped_append(KEYS[1], 'frame', ARGV[1], KEYS[2], 'log_bytes', tonumber(ARGV[2]), tonumber(ARGV[3]))
return 'ok'
""")
LOG, HASH = "t:{p0}:log", "t:{p0}:session"


@pytest.fixture(params=["redis-server", "fakeredis"])
def client(request: pytest.FixtureRequest) -> Iterator[redis.Redis]:
    if request.param == "fakeredis":
        yield fakeredis.FakeRedis()
    else:
        real = redis.Redis.from_url(request.getfixturevalue("redis_url"))
        yield real
        real.close()


def kept(values: list[bytes], max_count: int, max_bytes: int) -> list[bytes]:
    """The model: the newest values within both caps, the newest one always."""
    held: list[bytes] = []
    for value in reversed(values):
        if held and (len(held) + 1 > max_count or sum(map(len, held)) + len(value) > max_bytes):
            break
        held.insert(0, value)
    return held


def append(client: redis.Redis, value: bytes, max_count: int, max_bytes: int) -> None:
    assert client.eval(SCRIPT, 2, LOG, HASH, value, max_count, max_bytes) == b"ok"


def logged(client: redis.Redis) -> tuple[list[bytes], int]:
    values = [fields[b"frame"] for _, fields in client.xrange(LOG)]
    return values, int(client.hget(HASH, "log_bytes") or 0)


@pytest.mark.parametrize("seed", range(6))
def test_the_log_holds_the_newest_values_within_both_caps_after_every_append(client: redis.Redis, seed: int) -> None:
    rng = random.Random(seed)
    max_count, max_bytes = rng.choice([1, 2, 5, 16]), rng.choice([50, 400, 3_000, 1 << 20])
    values: list[bytes] = []
    for number in range(160):
        value = f"{number}:".encode() + b"x" * rng.choice([0, 1, 10, 90, 250, 900])
        values.append(value)
        append(client, value, max_count, max_bytes)
        expected = kept(values, max_count, max_bytes)
        assert logged(client) == (expected, sum(map(len, expected))), (number, max_count, max_bytes)


def test_a_lowered_cap_drops_every_value_beyond_it_at_once(client: redis.Redis) -> None:
    values = [f"v{n}".encode() * 20 for n in range(160)]
    for value in values[:150]:
        append(client, value, 200, 1 << 20)
    assert len(logged(client)[0]) == 150
    append(client, values[150], 16, 1 << 20)  # count cap 200 -> 16: 135 dropped by one append (3 pages)
    assert logged(client) == (values[135:151], sum(map(len, values[135:151])))
    big = b"B" * 1_000
    append(client, big, 16, 1_200)  # the byte cap: the big one and what fits beside it
    expected = kept([*values[:151], big], 16, 1_200)
    assert logged(client) == (expected, sum(map(len, expected)))


def test_a_value_beyond_the_byte_cap_stays_alone_and_the_next_append_drops_it(client: redis.Redis) -> None:
    append(client, b"a" * 10, 16, 100)
    append(client, b"b" * 500, 16, 100)
    assert logged(client) == ([b"b" * 500], 500)
    append(client, b"c" * 10, 16, 100)
    assert logged(client) == ([b"c" * 10], 10)


def test_a_drifted_byte_sum_heals_and_never_empties_the_log(client: redis.Redis) -> None:
    for n in range(5):
        append(client, f"v{n}".encode(), 16, 100)
    client.hset(HASH, "log_bytes", 10_000_000)  # not the log's sum (say, a field written by hand)
    append(client, b"new", 16, 100)
    assert logged(client) == ([b"new"], 3)  # every older value dropped: the newest stays, its size is the sum
    append(client, b"next", 16, 100)
    assert logged(client) == ([b"new", b"next"], 7)


def test_an_emptied_log_starts_its_sum_afresh(client: redis.Redis) -> None:
    append(client, b"x" * 30, 16, 100)
    client.delete(LOG)  # the log gone, its sum left behind
    append(client, b"y" * 7, 16, 100)
    assert logged(client) == ([b"y" * 7], 7)
