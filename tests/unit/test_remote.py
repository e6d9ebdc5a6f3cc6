"""The strict Remote-protocol parsers (seed 000 sections 11 and 13)."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import UNKNOWN_PROPERTY, UISchemaError
from core.json._frozen import FrozenDict, FrozenList
from core.remote import records as remote
from core.remote.records import (
    parse_ui_action_query,
    parse_ui_action_receipt,
    parse_ui_action_receipt_list,
    parse_ui_action_reserve_request,
    parse_ui_action_result,
    parse_ui_capability_catalog,
    parse_ui_capability_descriptor,
    parse_ui_document_ref,
)

CASES = Path(__file__).resolve().parents[1] / "cases" / "remote"
PARSERS = {
    name: getattr(remote, name)
    for name in (
        "parse_ui_document_ref",
        "parse_ui_action_reserve_request",
        "parse_ui_action_query",
        "parse_ui_action_receipt",
        "parse_ui_action_receipt_list",
        "parse_ui_capability_descriptor",
        "parse_ui_capability_catalog",
        "parse_ui_action_result",
    )
}


def ref(**changes):
    value = {"sourceCallId": "call_1", "uiId": "reader", "generation": 2, "revision": 3}
    value.update(changes)
    return value


def request(**changes):
    value = {
        "documentRef": ref(),
        "requestId": "req-1",
        "actionId": "read_info",
        "values": {"path": "README.md", "lines": 0, "ok": True},
    }
    value.update(changes)
    return value


def receipt(**changes):
    value = {
        "operationId": "op-1",
        "requestId": "req-1",
        "documentRef": ref(),
        "actionId": "read_info",
        "status": "succeeded",
        "parameterHash": "0123456789abcdef" * 4,
        "createdAt": 1_700_000_000_000,
        "updatedAt": 1_700_000_000_500,
        "message": "done",
        "result": {"totalLines": 42},
    }
    value.update(changes)
    return value


def capability(**changes):
    value = {
        "id": "read_file",
        "title": "Read a file",
        "description": "Reads a text file and reports its line count.",
        "risk": "read",
        "requiresConfirmation": False,
        "parameters": {
            "type": "object",
            "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
            "required": ["file_path"],
        },
        "resultFields": ["totalLines"],
    }
    value.update(changes)
    return value


def without(value, key):
    return {k: v for k, v in value.items() if k != key}


def rejection_paths(parse, value):
    with pytest.raises(UISchemaError) as caught:
        parse(value)
    return [issue.path for issue in caught.value.issues]


# --- data-driven cases -------------------------------------------------------------


def _load_cases():
    for file in sorted(CASES.glob("*.json")):
        for case in json.loads(file.read_text(encoding="utf-8")):
            yield pytest.param(case, id=f"{file.stem}: {case['description']}")


@pytest.mark.parametrize("case", list(_load_cases()))
def test_conformance_case(case):
    parse = PARSERS[case["parser"]]
    if case["valid"]:
        assert parse(case["input"]) == case["input"]
    else:
        assert rejection_paths(parse, case["input"]) == case["paths"]


# --- UIDocumentRef -------------------------------------------------------------------


def test_a_reference_round_trips_with_integer_fields_as_int():
    parsed = parse_ui_document_ref(ref(generation=3.0, revision=1.0))
    assert parsed == ref(generation=3, revision=1)
    assert type(parsed["generation"]) is int and type(parsed["revision"]) is int


def test_a_256_character_source_call_id_is_accepted_and_257_rejected():
    assert parse_ui_document_ref(ref(sourceCallId="c" * 256))["sourceCallId"] == "c" * 256
    assert rejection_paths(parse_ui_document_ref, ref(sourceCallId="c" * 257)) == ["/sourceCallId"]


def test_a_64_character_ui_id_is_accepted():
    assert parse_ui_document_ref(ref(uiId="u" * 64))["uiId"] == "u" * 64


def test_a_reference_over_1024_bytes_is_rejected_before_its_structure():
    oversize = ref(padding="x" * 1_100)
    with pytest.raises(UISchemaError) as caught:
        parse_ui_document_ref(oversize)
    assert [issue.path for issue in caught.value.issues] == [""]
    assert caught.value.issues[0].code == "too_large"


def test_an_unknown_property_is_reported_at_its_holder_without_echo():
    with pytest.raises(UISchemaError) as caught:
        parse_ui_document_ref(ref(secretToken="hunter2-value"))
    (issue,) = caught.value.issues
    assert issue.path == "" and issue.message == UNKNOWN_PROPERTY
    assert "secretToken" not in str(caught.value) and "hunter2" not in str(caught.value)


def test_a_boolean_is_never_a_number():
    assert rejection_paths(parse_ui_document_ref, ref(generation=False)) == ["/generation"]
    assert rejection_paths(parse_ui_document_ref, ref(revision=True)) == ["/revision"]


def test_several_problems_are_all_located():
    paths = rejection_paths(parse_ui_document_ref, {"sourceCallId": "", "uiId": 5, "generation": -1})
    assert paths == ["/sourceCallId", "/uiId", "/generation", "/revision"]


# --- UIActionReserveRequest ------------------------------------------------------------


def test_a_reserve_request_is_accepted_and_its_ref_normalized():
    parsed = parse_ui_action_reserve_request(request(documentRef=ref(generation=4.0)))
    assert parsed["documentRef"]["generation"] == 4 and type(parsed["documentRef"]["generation"]) is int
    assert parsed["values"] == {"path": "README.md", "lines": 0, "ok": True}


def test_a_non_ascii_request_id_is_rejected():
    assert rejection_paths(parse_ui_action_reserve_request, request(requestId="请求-1")) == ["/requestId"]


def test_a_128_character_request_id_is_accepted_and_129_rejected():
    assert parse_ui_action_reserve_request(request(requestId="r" * 128))["requestId"] == "r" * 128
    assert rejection_paths(parse_ui_action_reserve_request, request(requestId="r" * 129)) == ["/requestId"]


def test_a_reserved_action_id_is_rejected():
    assert rejection_paths(parse_ui_action_reserve_request, request(actionId="__proto__")) == ["/actionId"]


def test_request_values_reject_null_objects_and_arrays():
    values = {"a": None, "b": {"c": 1}, "d": [1], "e": "fine"}
    paths = rejection_paths(parse_ui_action_reserve_request, request(values=values))
    assert paths == ["/values/a", "/values/b", "/values/d"]


def test_a_request_value_key_that_is_not_an_identifier_is_not_echoed():
    with pytest.raises(UISchemaError) as caught:
        parse_ui_action_reserve_request(request(values={"bad key!": 1}))
    assert [issue.path for issue in caught.value.issues] == ["/values"]
    assert "bad key" not in str(caught.value)


def test_request_values_hold_a_full_state_snapshot_of_64_fields_but_not_65():
    full = {f"field{i}": i for i in range(64)}
    assert len(parse_ui_action_reserve_request(request(values=full))["values"]) == 64
    assert rejection_paths(parse_ui_action_reserve_request, request(values={**full, "extra": 1})) == ["/values"]


def test_request_strings_are_measured_in_utf16_units():
    at_limit = "😀" * 2_048  # 4,096 UTF-16 code units
    assert parse_ui_action_reserve_request(request(values={"s": at_limit}))["values"]["s"] == at_limit
    paths = rejection_paths(parse_ui_action_reserve_request, request(values={"s": at_limit + "x"}))
    assert paths == ["/values/s"]


def test_a_request_over_32_kib_is_rejected_as_a_whole():
    values = {f"s{i}": "x" * 4_000 for i in range(9)}
    with pytest.raises(UISchemaError) as caught:
        parse_ui_action_reserve_request(request(values=values))
    assert [(issue.path, issue.code) for issue in caught.value.issues] == [("", "too_large")]


def test_the_embedded_reference_has_its_own_1024_byte_budget():
    oversize = ref(sourceCallId="c" * 256, padding="p" * 900)
    paths = rejection_paths(parse_ui_action_reserve_request, request(documentRef=oversize))
    assert paths == ["/documentRef"]


def test_embedded_reference_issues_are_located_under_document_ref():
    paths = rejection_paths(parse_ui_action_reserve_request, request(documentRef=ref(generation=0)))
    assert paths == ["/documentRef/revision"]


def test_a_request_with_a_document_instead_of_a_reference_is_rejected():
    paths = rejection_paths(parse_ui_action_reserve_request, request(document={"version": "1.1"}))
    assert paths == [""]


# --- UIActionQuery -----------------------------------------------------------------------


def test_an_oversize_query_is_rejected_by_budget_before_structure():
    with pytest.raises(UISchemaError) as caught:
        parse_ui_action_query({"operationId": "op", "x": "y" * 1_100})
    assert [(issue.path, issue.code) for issue in caught.value.issues] == [("", "too_large")]


# --- UIActionReceipt --------------------------------------------------------------------


def test_a_succeeded_receipt_with_result_is_accepted():
    parsed = parse_ui_action_receipt(receipt(updatedAt=1_700_000_000_500.0))
    assert parsed == receipt()
    assert type(parsed["updatedAt"]) is int


@pytest.mark.parametrize("status", remote.RECEIPT_STATUSES)
def test_every_status_is_accepted_without_a_result(status):
    assert parse_ui_action_receipt(without(receipt(status=status), "result"))["status"] == status


@pytest.mark.parametrize("status", [s for s in remote.RECEIPT_STATUSES if s != "succeeded"])
def test_a_result_on_a_receipt_that_did_not_succeed_is_rejected(status):
    assert rejection_paths(parse_ui_action_receipt, receipt(status=status)) == ["/result"]


def test_an_unknown_status_is_rejected():
    assert rejection_paths(parse_ui_action_receipt, receipt(status="done")) == ["/status"]


def test_updated_before_created_is_rejected_at_updated_at():
    assert rejection_paths(parse_ui_action_receipt, receipt(updatedAt=1_699_999_999_999)) == ["/updatedAt"]


def test_equal_timestamps_are_accepted():
    assert parse_ui_action_receipt(receipt(createdAt=5, updatedAt=5))["updatedAt"] == 5


def test_an_uppercase_parameter_hash_is_rejected():
    assert rejection_paths(parse_ui_action_receipt, receipt(parameterHash="ABCDEF01" * 8)) == ["/parameterHash"]


def test_a_63_digit_parameter_hash_is_rejected():
    assert rejection_paths(parse_ui_action_receipt, receipt(parameterHash="a" * 63)) == ["/parameterHash"]


def test_negative_and_fractional_timestamps_are_rejected():
    paths = rejection_paths(parse_ui_action_receipt, receipt(createdAt=-1, updatedAt=1.5))
    assert paths == ["/createdAt", "/updatedAt"]


def test_a_message_of_512_units_is_accepted_and_513_rejected():
    assert len(parse_ui_action_receipt(receipt(message="m" * 512))["message"]) == 512
    assert rejection_paths(parse_ui_action_receipt, receipt(message="m" * 513)) == ["/message"]


def test_receipt_result_issues_are_located_under_result():
    paths = rejection_paths(parse_ui_action_receipt, receipt(result={"user": {"secret": 1}}))
    assert paths == ["/result/user"]


def test_a_receipt_result_has_its_own_32_kib_budget():
    result = {f"f{i}": "x" * 3_300 for i in range(10)}  # ~33 KB: under the receipt's 36 KiB
    paths = rejection_paths(parse_ui_action_receipt, receipt(result=result))
    assert paths == ["/result"]


def test_a_receipt_over_36_kib_is_rejected_as_a_whole():
    with pytest.raises(UISchemaError) as caught:
        parse_ui_action_receipt(receipt(message="m" * 40_000))
    assert [(issue.path, issue.code) for issue in caught.value.issues] == [("", "too_large")]


def test_a_receipt_embedded_reference_is_strict():
    assert rejection_paths(parse_ui_action_receipt, receipt(documentRef=ref(uiId="prototype"))) == [
        "/documentRef/uiId"
    ]


# --- UIActionResult --------------------------------------------------------------------


def test_a_result_of_32_fields_is_accepted_and_33_rejected():
    fields = {f"f{i}": i for i in range(32)}
    assert parse_ui_action_result(fields) == fields
    assert rejection_paths(parse_ui_action_result, {**fields, "g": 1}) == [""]


def test_a_result_over_32_kib_is_rejected():
    with pytest.raises(UISchemaError) as caught:
        parse_ui_action_result({f"f{i}": "x" * 4_000 for i in range(9)})
    assert caught.value.issues[0].code == "too_large"


def test_a_non_finite_result_number_is_rejected_at_the_result_without_its_key():
    assert rejection_paths(parse_ui_action_result, {"n": math.nan}) == [""]
    assert rejection_paths(parse_ui_action_result, {"n": math.inf}) == [""]


def test_a_result_string_over_4096_units_is_rejected():
    assert rejection_paths(parse_ui_action_result, {"s": "x" * 4_097}) == ["/s"]


# --- UICapabilityDescriptor ------------------------------------------------------------


def test_a_capability_descriptor_is_accepted():
    assert parse_ui_capability_descriptor(capability()) == capability()
    assert parse_ui_capability_descriptor(without(capability(), "description"))["id"] == "read_file"


@pytest.mark.parametrize(
    "changes, path",
    [
        ({"id": "read file"}, "/id"),
        ({"title": ""}, "/title"),
        ({"title": "t" * 257}, "/title"),
        ({"description": "d" * 4_097}, "/description"),
        ({"risk": "delete"}, "/risk"),
        ({"requiresConfirmation": "yes"}, "/requiresConfirmation"),
        ({"parameters": ["file_path"]}, "/parameters"),
        ({"resultFields": "totalLines"}, "/resultFields"),
        ({"resultFields": ["totalLines", "totalLines"]}, "/resultFields/1"),
        ({"resultFields": ["result.user"]}, "/resultFields/0"),
        ({"resultFields": [f"f{i}" for i in range(33)]}, "/resultFields"),
        ({"toolName": "read"}, ""),
    ],
)
def test_a_capability_descriptor_rule_is_enforced(changes, path):
    assert rejection_paths(parse_ui_capability_descriptor, capability(**changes)) == [path]


def test_capability_limits_are_inclusive():
    edge = capability(
        title="t" * 256,
        description="d" * 4_096,
        resultFields=[f"f{i}" for i in range(32)],
        risk="external",
        requiresConfirmation=True,
    )
    assert parse_ui_capability_descriptor(edge) == edge


def test_a_missing_risk_is_reported_at_its_path():
    assert rejection_paths(parse_ui_capability_descriptor, without(capability(), "risk")) == ["/risk"]


def test_capability_parameters_keep_the_general_json_depth_limit():
    deep: dict = {}
    node = deep
    for _ in range(128):  # the parameters object plus 128 nested levels: 129 > 128
        node["p"] = {}
        node = node["p"]
    paths = rejection_paths(parse_ui_capability_descriptor, capability(parameters=deep))
    assert paths == ["/parameters"]  # the safe-JSON pass never goes through a foreign key


def test_a_descriptor_over_64_kib_is_rejected():
    big = capability(parameters={"description": "x" * 66_000})
    with pytest.raises(UISchemaError) as caught:
        parse_ui_capability_descriptor(big)
    assert caught.value.issues[0].code == "too_large"


# --- collections ---------------------------------------------------------------------


def test_a_catalog_of_exactly_64_capabilities_is_accepted_and_65_rejected():
    catalog = [capability(id=f"cap{i}") for i in range(64)]
    parsed = parse_ui_capability_catalog(catalog)
    assert isinstance(parsed, FrozenList) and len(parsed) == 64
    assert rejection_paths(parse_ui_capability_catalog, [*catalog, capability(id="one_more")]) == [""]


def test_an_empty_catalog_is_accepted():
    assert parse_ui_capability_catalog([]) == []


def test_a_catalog_is_not_one_document_each_descriptor_has_its_own_budget():
    # Together far beyond 64 KiB, each under it: accepted.
    catalog = [capability(id=f"cap{i}", parameters={"doc": "x" * 60_000}) for i in range(3)]
    assert len(parse_ui_capability_catalog(catalog)) == 3


def test_an_oversize_descriptor_in_a_catalog_is_located_at_its_index():
    catalog = [capability(id="a"), capability(id="b", parameters={"doc": "x" * 70_000})]
    assert rejection_paths(parse_ui_capability_catalog, catalog) == ["/1"]


def test_catalog_element_issues_carry_the_index():
    catalog = [capability(id=f"cap{i}") for i in range(5)]
    catalog[3] = capability(id="cap3", title="")
    assert rejection_paths(parse_ui_capability_catalog, catalog) == ["/3/title"]


def test_duplicate_capability_ids_are_rejected():
    assert rejection_paths(parse_ui_capability_catalog, [capability(), capability()]) == ["/1/id"]


def test_a_catalog_must_be_an_array():
    assert rejection_paths(parse_ui_capability_catalog, {"capabilities": []}) == [""]
    assert rejection_paths(parse_ui_capability_catalog, (capability(),)) == [""]


def test_a_receipt_list_locates_element_issues():
    receipts = [receipt(operationId=f"op{i}") for i in range(5)]
    receipts[3]["status"] = "finished"
    assert rejection_paths(parse_ui_action_receipt_list, receipts) == ["/3/status"]


def test_a_receipt_list_of_256_is_accepted_and_257_rejected():
    receipts = [receipt(operationId=f"op{i}") for i in range(256)]
    assert len(parse_ui_action_receipt_list(receipts)) == 256
    assert rejection_paths(parse_ui_action_receipt_list, [*receipts, receipt(operationId="x")]) == [""]


def test_duplicate_operation_ids_in_a_list_are_rejected():
    assert rejection_paths(parse_ui_action_receipt_list, [receipt(), receipt()]) == ["/1/operationId"]


def test_list_issues_stop_at_twenty():
    receipts = [receipt(operationId=f"op{i}", status="bad") for i in range(50)]
    with pytest.raises(UISchemaError) as caught:
        parse_ui_action_receipt_list(receipts)
    assert len(caught.value.issues) == 20


# --- immutability and order ----------------------------------------------------------


def test_parsed_values_are_deeply_frozen():
    parsed = parse_ui_action_receipt(receipt())
    assert isinstance(parsed, FrozenDict) and isinstance(parsed["documentRef"], FrozenDict)
    with pytest.raises(TypeError):
        parsed["status"] = "failed"
    with pytest.raises(TypeError):
        parsed["documentRef"]["revision"] = 9
    with pytest.raises(TypeError):
        parsed["result"].update({"x": 1})
    catalog = parse_ui_capability_catalog([capability()])
    with pytest.raises(TypeError):
        catalog.append(capability(id="other"))
    with pytest.raises(TypeError):
        catalog[0]["resultFields"].append("x")
    with pytest.raises(TypeError):
        catalog[0]["parameters"]["properties"]["limit"]["minimum"] = 0


def test_parsing_does_not_touch_the_input_and_keeps_key_order():
    original = receipt()
    original = {key: original[key] for key in reversed(list(original))}
    snapshot = copy.deepcopy(original)
    parsed = parse_ui_action_receipt(original)
    assert original == snapshot
    assert list(parsed) == list(original)
    assert orjson.dumps(parsed) == orjson.dumps(original)


# --- never anything but UISchemaError -------------------------------------------------

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)
_junk = st.recursive(
    _json
    | st.binary(max_size=5)
    | st.sets(st.integers(), max_size=3)
    | st.just(object())
    | st.just(float("nan"))
    | st.just("\ud800")
    | st.complex_numbers(max_magnitude=10),
    lambda children: st.lists(children, max_size=4)
    | st.tuples(children)
    | st.dictionaries(st.one_of(st.text(max_size=5), st.integers(), st.none()), children, max_size=4),
    max_leaves=20,
)
_near_valid = st.sampled_from([ref(), request(), receipt(), capability(), {"operationId": "op"}]).flatmap(
    lambda base: st.dictionaries(st.sampled_from([*sorted(base), "extra"]), _junk, max_size=3).map(
        lambda changes: {**base, **changes}
    )
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.one_of(_json, _junk, _near_valid, st.lists(_near_valid, max_size=3)))
def test_any_input_is_returned_frozen_or_rejected_with_a_schema_error(value):
    for parse in PARSERS.values():
        try:
            parsed = parse(value)
        except UISchemaError as error:
            assert 1 <= len(error.issues) <= 20
            assert all(issue.path == "" or issue.path.startswith("/") for issue in error.issues)
        else:
            assert isinstance(parsed, (FrozenDict, FrozenList))
            assert parse(parsed) == parsed  # a parsed value is its own fixed point
