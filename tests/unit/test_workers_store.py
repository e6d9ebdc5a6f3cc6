"""The Store's memory of which uiId each sourceCallId opened: bounded, and forgotten per session.

fakeredis stands in for Redis here: these tests claim nothing of Redis, only of what the Store
remembers and when it reads again (the integration tests run the Store on a real server)."""

from __future__ import annotations

import fakeredis

from workers.redisio.keys import Keys, source_field
from workers.sessions.store import CACHE_SIZE, Store


def _store() -> tuple[Store, fakeredis.FakeRedis, Keys]:
    redis = fakeredis.FakeRedis()
    keys = Keys("iui-test")
    return Store(redis=redis, keys=keys, partition=0), redis, keys


def _open(redis: fakeredis.FakeRedis, keys: Keys, session: str, source: str, ui_id: str) -> None:
    redis.hset(keys.session(0, session), source_field(source), ui_id)


def test_forgetting_a_session_reads_its_sources_again_and_keeps_the_others() -> None:
    store, redis, keys = _store()
    for session in ("a", "b"):
        for n in range(3):
            _open(redis, keys, session, f"call-{n}", f"{session}-ui-{n}")
            assert store.ui_of_source(session, f"call-{n}") == f"{session}-ui-{n}"
    for session in ("a", "b"):  # Redis changes behind the cache (an expiry and a new session, say)
        for n in range(3):
            _open(redis, keys, session, f"call-{n}", f"{session}-new-{n}")
    store.forget("a")
    assert [store.ui_of_source("a", f"call-{n}") for n in range(3)] == [f"a-new-{n}" for n in range(3)]
    assert [store.ui_of_source("b", f"call-{n}") for n in range(3)] == [f"b-ui-{n}" for n in range(3)]


def test_the_remembered_sources_stay_bounded_and_forget_drops_only_what_is_still_held() -> None:
    store, redis, keys = _store()
    sessions = CACHE_SIZE // 2 + 100  # two sources each: the earliest are evicted
    for n in range(sessions):
        for call in ("open", "again"):
            _open(redis, keys, f"s{n}", call, f"ui-{n}-{call}")
            assert store.ui_of_source(f"s{n}", call) == f"ui-{n}-{call}"
    assert len(store._sources) == CACHE_SIZE
    held = {(session, source) for session, sources in store._sources_of.items() for source in sources}
    assert held == set(store._sources)  # the index names exactly what is held: nothing evicted lingers
    _open(redis, keys, "s0", "open", "evicted-then-read")  # s0's sources were evicted: read again
    assert store.ui_of_source("s0", "open") == "evicted-then-read"
    store.forget(f"s{sessions - 1}")
    assert (f"s{sessions - 1}", "open") not in store._sources and f"s{sessions - 1}" not in store._sources_of


def test_a_session_s_remembered_ui_ids_are_pruned_to_the_cached_ones() -> None:
    # An audit: every uiId an open named (refused opens too) stayed in the session's set while it was
    # used: 80,000 opens held 13 MB beyond the cache's budget.  The cache holds 512 here.
    from workers.sessions.store import PRUNE_UI_IDS, SharedCache, record_estimate

    redis = fakeredis.FakeRedis()
    store = Store(redis=redis, keys=Keys("iui-test"), partition=0,
                  cache=SharedCache(max_bytes=512 * record_estimate(None)))
    for n in range(20_000):
        store._keep("s1", f"ui-{n}", None)
    remembered = store._touched["s1"][1]
    assert len(remembered) < 2 * PRUNE_UI_IDS
    assert f"ui-{19_999}" in remembered and store.holds("s1")
    store.forget("s1")  # what it remembers is still enough to drop every cached entry of the session
    assert not store.holds("s1") and len(store._cache) == 0
