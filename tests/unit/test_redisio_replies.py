"""The conversion of raw Redis replies at the edge (`workers.redisio.connection`)."""

from __future__ import annotations

import pytest

from workers.redisio.connection import (
    UnexpectedReply,
    array,
    bulk,
    field_map,
    integer,
    mapping,
    stream_entries,
    stream_range,
    text,
)


def test_an_integer_reply_or_a_counter_sent_as_text_becomes_an_int() -> None:
    assert [integer(7), integer(b"12"), integer("-3"), integer(True)] == [7, 12, -3, 1]


@pytest.mark.parametrize(("convert", "value", "expected"), [
    (integer, [1], "expected an integer reply, got list"),
    (integer, None, "expected an integer reply, got NoneType"),
    (integer, b"s3cret", "expected an integer reply, got text that is not one"),
    (array, b"s3cret", "expected an array reply, got bytes"),
    (mapping, [b"s3cret"], "expected a map reply, got list"),
    (bulk, 42, "expected a bulk string reply, got int"),
])
def test_a_reply_of_another_shape_is_refused_naming_its_type_never_its_value(convert, value, expected) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UnexpectedReply) as raised:
        convert(value)
    assert str(raised.value) == expected
    assert "s3cret" not in str(raised.value)


def test_an_array_reply_is_a_list_and_a_row_redis_py_made_a_tuple_is_one_too() -> None:
    assert array([b"a", 1]) == [b"a", 1]
    assert array((b"1-0", {b"f": b"v"})) == [b"1-0", {b"f": b"v"}]


def test_a_flat_field_array_becomes_a_map_and_nil_an_empty_one() -> None:
    assert field_map([b"a", b"1", b"b", b"2", b"a", b"3"]) == {b"a": b"3", b"b": b"2"}  # the last value wins
    assert field_map(None) == {} and field_map({b"k": b"v"}) == {b"k": b"v"}


def test_the_entries_of_a_read_are_the_same_from_resp2_resp3_and_nil() -> None:
    resp2 = [[b"s", [[b"1-0", [b"f", b"v"]], [b"2-0", None]]]]
    resp3 = {b"s": [[b"1-0", [b"f", b"v"]], [b"2-0", None]]}
    expected = [("s", [(b"1-0", {b"f": b"v"}), (b"2-0", {})])]  # an entry deleted while pending: no fields
    assert stream_entries(resp2) == expected and stream_entries(resp3) == expected
    assert stream_entries(None) == []


def test_an_xrange_reply_parsed_by_redis_py_gives_the_same_entries() -> None:
    assert stream_range([(b"1-0", {b"frame": b"{}"})]) == [(b"1-0", {b"frame": b"{}"})]
    assert stream_range(None) == [] and text(None) == "" and text(b"\xff") == "\ufffd"
