"""RFC 8785 canonical JSON: the RFC's own examples, escaping, ordering, errors, and the
orjson fast path compared with the pure-Python reference serializer."""

from __future__ import annotations

import enum
import hashlib
import json
import math
import re
import shutil
import struct
import subprocess

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import UISchemaError
from core.json._frozen import freeze
from core.json.canonical import (
    _is_orjson_canonical,
    _write,
    canonical_json_measured,
    canonical_json_string,
    hash_canonical_json,
)
from core.json.safe import SafeJson, measure_safe_json
from core.limits import UI_LIMITS


def reference(value: object) -> str:
    """The pure-Python serializer, bypassing the orjson fast path."""
    return "".join(_write(value, None, None, 1, [1], []))


def double(bits: str) -> float:
    return struct.unpack(">d", bytes.fromhex(bits))[0]


# RFC 8785 appendix B (every finite row), as Node's JSON.stringify prints them too.
RFC_NUMBERS = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "text"), RFC_NUMBERS)
def test_numbers_print_as_the_rfc_8785_table(bits: str, text: str) -> None:
    value = double(bits)
    assert canonical_json_string(value) == text
    assert canonical_json_string([value]) == f"[{text}]"
    assert canonical_json_string({"n": value}) == f'{{"n":{text}}}'


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (1e-7, "1e-7"),
        (3e-6, "0.000003"),
        (1e21, "1e+21"),
        (1e16, "10000000000000000"),
        (0.1 + 0.2, "0.30000000000000004"),
        (2**53 + 1, "9007199254740992"),  # an int JS can only hold as the nearest double
        (10**21, "1e+21"),
        (-(10**22), "-1e+22"),
        (True, "true"),
        (None, "null"),
    ],
)
def test_numbers_and_literals_print_as_javascript_string_does(value: object, text: str) -> None:
    assert canonical_json_string(value) == text
    assert canonical_json_string([value]) == f"[{text}]"


def test_the_rfc_8785_main_example_canonicalizes_exactly() -> None:
    source = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert canonical_json_string(json.loads(source)) == expected


def test_keys_sort_by_utf16_code_units_as_in_rfc_8785_section_3_2_3() -> None:
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    keys = list(json.loads(canonical_json_string(value)))
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


def test_an_astral_key_sorts_before_a_private_use_key_unlike_code_point_order() -> None:
    text = canonical_json_string({"\ue000": 1, "\U0001f600": 2, "a": 3})
    assert text == '{"a":3,"\U0001f600":2,"\ue000":1}'


def test_nested_objects_are_sorted_at_every_level() -> None:
    value = {"b": {"z": 1, "a": [{"y": 2, "x": 3}]}, "a": 0}
    assert canonical_json_string(value) == '{"a":0,"b":{"a":[{"x":3,"y":2}],"z":1}}'


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ('"', '\\"'),
        ("\\", "\\\\"),
        ("\b\f\n\r\t", "\\b\\f\\n\\r\\t"),
        ("\x00\x01\x0b\x1f", "\\u0000\\u0001\\u000b\\u001f"),
        ("/", "/"),
        ("\x7f", "\x7f"),
        ("\u2028\u2029", "\u2028\u2029"),
        ("caf\u00e9 \u20ac \U0001f600", "caf\u00e9 \u20ac \U0001f600"),
    ],
)
def test_strings_are_escaped_exactly_as_json_stringify_escapes_them(text: str, escaped: str) -> None:
    assert canonical_json_string(text) == f'"{escaped}"'
    assert canonical_json_string({text: text}) == f'{{"{escaped}":"{escaped}"}}'
    assert reference(text) == f'"{escaped}"'


def test_frozen_containers_canonicalize_like_plain_ones() -> None:
    value = {"b": [1, 2.5, {"d": None, "c": "x"}], "a": True}
    assert canonical_json_string(freeze(value)) == canonical_json_string(value)


def test_hash_is_lowercase_hex_sha256_of_the_canonical_utf8() -> None:
    digest = hash_canonical_json({"b": 1, "a": "\u20ac"})
    assert re.fullmatch("[0-9a-f]{64}", digest)
    assert digest == hashlib.sha256('{"a":"\u20ac","b":1}'.encode()).hexdigest()
    assert hash_canonical_json({}) == "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"


def test_hash_ignores_key_insertion_order_and_number_spelling() -> None:
    assert hash_canonical_json({"a": 1, "b": [2.0]}) == hash_canonical_json({"b": [2], "a": 1.0})
    assert hash_canonical_json({"a": 1}) != hash_canonical_json({"a": 2})


class Colour(enum.IntEnum):
    RED = 1


class Key(str):
    pass


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"value": [1, math.nan]}, "/value/1"),
        ({"value": math.inf}, "/value"),
        ([-math.inf], "/0"),
        ({"value": (1, 2)}, "/value"),
        ({"value": {1, 2}}, "/value"),
        ({"value": b"x"}, "/value"),
        ({"value": object()}, "/value"),
        ({"props": {1: "one"}}, "/props"),
        ({"props": {Key("k"): 1}}, "/props"),
        ({"a/b": [2**1024]}, ""),  # a key the protocol does not define is never echoed
        ({"props": {"secret key": [math.nan]}}, "/props"),
        ({"text": "\ud800"}, "/text"),
        ({"text": ["ok", "\udfff tail"]}, "/text/1"),
        ({"\udc00": 1}, ""),
        (math.nan, ""),
    ],
)
def test_unsafe_values_raise_schema_errors_located_by_json_pointer(value: object, path: str) -> None:
    with pytest.raises(UISchemaError) as caught:
        canonical_json_string(value)
    assert caught.value.issues[0].path == path
    with pytest.raises(UISchemaError):
        hash_canonical_json(value)


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_nesting_up_to_the_json_depth_limit_is_accepted_and_deeper_is_refused() -> None:
    assert canonical_json_string(nested(128)) == "[" * 128 + "]" * 128
    with pytest.raises(UISchemaError):
        canonical_json_string(nested(129))
    with pytest.raises(UISchemaError):
        canonical_json_string(nested(5000))


def test_a_self_containing_list_is_refused_not_looped_over() -> None:
    loop: list = []
    loop.append(loop)
    with pytest.raises(UISchemaError):
        canonical_json_string(loop)


def test_more_than_the_json_value_limit_is_refused() -> None:
    limit = UI_LIMITS["maxJsonValues"]
    assert canonical_json_string([0] * (limit - 1)).startswith("[0,0")
    with pytest.raises(UISchemaError):
        canonical_json_string([0] * limit)


@pytest.mark.parametrize("value", [
    {"c": Colour.RED}, Colour.RED, {"t": Key("x")}, {"d": type("Sub", (dict,), {})(a=1)}, [type("L", (list,), {})()],
])
def test_subclasses_of_json_types_are_refused_as_the_safe_walk_refuses_them(value: object) -> None:
    # Issue 20: a subclass's own methods could answer anything; an IntEnum no longer prints
    # its number (it is refused, by type, before any of its methods runs).
    for serialize in (canonical_json_string, canonical_json_measured, hash_canonical_json):
        with pytest.raises(UISchemaError) as caught:
            serialize(value)
        assert caught.value.issues[0].code == "unsafe_json"


# ---------------------------------------------------------------------------------------
# The fast path must be taken for ordinary documents and must equal the reference.


def test_the_fast_path_serves_ordinary_documents() -> None:
    document = freeze({"id": "n1", "props": {"label": "Caf\u00e9 \U0001f600", "n": 3, "r": 0.25}, "ok": None})
    assert _is_orjson_canonical(document)


@pytest.mark.parametrize(
    "value",
    [
        {"n": 1.0},
        {"n": 3e-6},
        {"n": 2**53 + 1},
        {"n": math.nan},
        {"\ue000": 1, "\U0001f600": 2},
        {1: 2},
        [(1,)],
        Colour.RED,
    ],
)
def test_values_orjson_would_print_differently_take_the_reference_path(value: object) -> None:
    assert not _is_orjson_canonical(value)


ODD_CHARS = ["a", "Z", "1", "\x00", "\x1f", "\x7f", '"', "\\", "/", "\u2028", "\u00e9", "\ue000", "\ufb33",
             "\uffff", "\U0001f600", "\U00010000", "\r", "\n", "\t"]
texts = st.text(st.sampled_from(ODD_CHARS) | st.characters(blacklist_categories=("Cs",)), max_size=6)
numbers = (
    st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1.0, -0.0, 3e-6, 1e-6, 1e-5, 9.999999999999999e-6, 1e16, 1e21, 5e-324])
)
scalars = st.none() | st.booleans() | numbers | texts
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(texts, inner, max_size=5),
    max_leaves=40,
)


@settings(max_examples=400)
@given(json_values)
def test_fast_path_and_reference_serializer_agree(value: object) -> None:
    text = reference(value)
    assert canonical_json_string(value) == text
    assert canonical_json_string(freeze(value)) == text
    if _is_orjson_canonical(value):
        assert orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode() == text


@settings(max_examples=200)
@given(json_values)
def test_canonical_text_parses_back_to_an_equal_value(value: object) -> None:
    def as_doubles(item: object) -> object:  # JSON numbers are doubles on both sides
        if isinstance(item, dict):
            return {key: as_doubles(val) for key, val in item.items()}
        if isinstance(item, list):
            return [as_doubles(val) for val in item]
        if isinstance(item, (int, float)) and not isinstance(item, bool):
            return float(item)
        return item

    assert as_doubles(json.loads(canonical_json_string(value))) == as_doubles(value)


hostile = st.recursive(
    scalars | st.sampled_from([math.nan, math.inf, b"x", (), frozenset(), "\ud800", 2**1100, object()]),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(texts | st.integers() | st.none(), inner, max_size=4)
    | st.tuples(inner),
    max_leaves=20,
)


@settings(max_examples=300)
@given(hostile)
def test_any_input_yields_text_or_a_schema_error(value: object) -> None:
    try:
        text = canonical_json_string(value)
    except UISchemaError:
        return
    assert isinstance(text, str)


def _measured_agrees(value: object) -> None:
    """`canonical_json_measured` is the canonical text, and any measure it vouches for is
    exactly what `measure_safe_json` returns for the same value."""
    try:
        expected = canonical_json_string(value)
    except UISchemaError:
        with pytest.raises(UISchemaError):
            canonical_json_measured(value)
        return
    text, measured = canonical_json_measured(value)
    assert text == expected
    if measured is not None:
        assert measured.value is value
        assert (measured.size, measured.depth) == measure_safe_json(value)


@settings(max_examples=400)
@given(json_values)
def test_the_measure_from_the_canonical_walk_is_the_safe_json_measure(value: object) -> None:
    _measured_agrees(value)
    _measured_agrees(freeze(value))
    _measured_agrees({"document": value})


@settings(max_examples=300)
@given(hostile)
def test_hostile_values_get_no_measure_the_safe_walk_would_refuse(value: object) -> None:
    _measured_agrees(value)


def test_an_ordinary_document_is_measured_by_its_canonical_walk() -> None:
    document = {"id": "n1", "props": {"label": "Caf\u00e9 \U0001f600", "n": 3, "r": 0.25}, "list": [[1], []]}
    assert canonical_json_measured(document) == (canonical_json_string(document),
                                                  SafeJson(document, *measure_safe_json(document)))
    assert canonical_json_measured(document)[1] == SafeJson(document, len(canonical_json_string(
        document).encode()), 3)


@pytest.mark.parametrize(
    "value",
    [
        {"n": 10**15 + 1},  # canonical (within 2**53) but beyond the protocol's magnitude
        {"n": -1e15 - 0.5},
        {"n": 1e300},  # the reference serializer prints it; the safe walk refuses it
        {"n": 2**53 + 1},
    ],
)
def test_values_the_safe_walk_would_refuse_or_locate_get_no_measure(value: object) -> None:
    text, measured = canonical_json_measured(value)
    assert text == canonical_json_string(value)
    assert measured is None


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js as the JavaScript oracle")
def test_output_equals_a_javascript_jcs_implementation_run_by_node() -> None:
    values = [
        {"\ue000": [1.0, -0.0, 3e-6], "\U0001f600": {"b": "\x1f\u2028\x7f", "a": 2**60}},
        [1e21, 1e-7, 333333333.3333333, 0.1 + 0.2, 5e-324, 1.7976931348623157e308, 2**53 + 1],
        {"\r": 1, "1": 2, "\u0080": 3, "\u00f6": 4, "\u20ac": 5, "\ufb33": 6, "\U00010000": 7},
        ["\x00\b\t\n\f\r\"\\/ caf\u00e9"],
    ]
    script = (
        "const vs = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const c = v => v === null || typeof v !== 'object' ? JSON.stringify(v)"
        " : Array.isArray(v) ? '[' + v.map(c).join(',') + ']'"
        " : '{' + Object.keys(v).sort().map(k => JSON.stringify(k) + ':' + c(v[k])).join(',') + '}';"
        "process.stdout.write(JSON.stringify(vs.map(c)));"
    )
    # Python's json prints 1.0 as "1.0" and big ints exactly; JS parses both to its doubles.
    run = subprocess.run(["node", "-e", script], input=json.dumps(values), capture_output=True, text=True, timeout=60)
    assert json.loads(run.stdout) == [canonical_json_string(value) for value in values]
