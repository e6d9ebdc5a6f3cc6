"""DocumentCache.revalidate must agree exactly with a from-scratch parse_document."""

from __future__ import annotations

from typing import Any
from unittest import mock

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from core.document import _revalidation
from core.document._revalidation import DocumentCache, restore_document
from core.document.model import parse_document
from core.errors import UISchemaError

from .documents import base_document

NEW_NODES = [
    {"id": "fresh", "type": "Text", "props": {"text": "hi"}},
    {"id": "fresh-card", "type": "Card", "props": {}, "children": [
        {"id": "inner", "type": "Badge", "props": {"text": {"expr": {"derived": "label"}}}}]},
    {"id": "heading", "type": "Text", "props": {"text": "duplicate id"}},
    {"id": "bad-prop", "type": "Text", "props": {"text": {"state": "amount"}}},
    {"id": "nested-form", "type": "Form", "props": {"submitLabel": "x", "action": {"type": "reset"}}, "children": []},
    {"id": "plan-again", "type": "Select", "props": {"label": "Plan", "bind": "plan", "options": [
        {"label": "P", "value": "pro"}, {"label": "B", "value": "basic"}]}},
    {"id": "plan-narrow", "type": "Select", "props": {"label": "Plan", "bind": "plan", "options": [
        {"label": "B", "value": "basic"}]}},
    {"id": "deep", "type": "Text", "props": {"text": {"expr": {"op": "div", "args": [1, 0]}}}},
    {"id": "big", "type": "Markdown", "props": {"text": "x" * 16000}},
]
NEW_PROPS = [{"text": "changed"}, {"text": 5}, {"text": {"expr": {"state": "ghost"}}}, {"gap": "lg"},
             {"title": "New title"}, {}, {"label": "x", "bind": "amount"}, {"bogus": 1}]


def _nodes(node: Any, trail: tuple = ()) -> list[tuple]:
    found = [(trail, node)]
    for i, child in enumerate(node.get("children", ())):
        found += _nodes(child, (*trail, i))
    return found


def _rebuild(root: Any, trail: tuple, change) -> Any:
    if not trail:
        return change(root)
    copy = dict(root)
    children = list(root["children"])
    children[trail[0]] = _rebuild(root["children"][trail[0]], trail[1:], change)
    copy["children"] = children
    return copy


def _mutate(root: Any, data) -> Any:
    trail, node = data.draw(st.sampled_from(_nodes(root)))
    kind = data.draw(st.sampled_from(["update", "add", "remove"]))
    if kind == "update":
        props = data.draw(st.sampled_from(NEW_PROPS))
        return _rebuild(root, trail, lambda n: {**n, "props": props})
    if kind == "add" and "children" in node:
        index = data.draw(st.integers(0, len(node["children"])))
        new = data.draw(st.sampled_from(NEW_NODES))
        return _rebuild(root, trail, lambda n: {**n, "children": [*n["children"][:index], new, *n["children"][index:]]})
    if trail:
        parent, last = trail[:-1], trail[-1]
        return _rebuild(root, parent, lambda n: {**n, "children": [c for i, c in enumerate(n["children"]) if i != last]})
    return root


def _outcome(call):
    try:
        document = call()
    except UISchemaError as error:
        return ("error", [(i.path, i.message) for i in error.issues])
    model = document.model
    return ("ok", document, model.byte_size, model.components, dict(model.node_types),
            model.select_domains, model.expression_nodes)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_revalidate_agrees_with_a_full_parse_after_random_patches(data):
    if data.draw(st.booleans()):  # the facts of a validating walk of a parsed document
        document = parse_document(base_document())
        cache = DocumentCache(document)
    else:  # the facts the parse itself kept (byte counts measured on first need)
        cache = DocumentCache.parsed(base_document())
        document = cache.document
    for _ in range(data.draw(st.integers(1, 4))):
        candidate = _mutate(document["root"], data)
        header = {k: v for k, v in document.items() if k != "root"}
        incremental = _outcome(lambda: cache.revalidate(candidate, base=document)[0])  # noqa: B023 - called at once
        scratch = _outcome(lambda: parse_document({**header, "root": candidate}))  # noqa: B023 - called at once
        assert incremental == scratch
        if incremental[0] == "ok":
            document = incremental[1]


def _restored(document: Any) -> DocumentCache:
    """The cache `DocumentCache.of_restored` rebuilds from a document's JSON and restore facts."""
    facts = DocumentCache(document).restore_facts(document)
    assert facts is not None
    byte_size, json_depth, expression_nodes = facts
    return DocumentCache.of_restored(restore_document(orjson.loads(orjson.dumps(document)), byte_size=byte_size,
                                                      json_depth=json_depth, expression_nodes=expression_nodes))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_restored_cache_judges_every_patch_as_a_full_parse_does(data):
    """Restored without a walk of its tree, the cache finds each node's facts when a patch first
    needs them (relative to the restored node for a layout): every outcome, the model's facts
    included, must be the full parse's, over several patches of the same lineage."""
    cache = _restored(parse_document(base_document()))
    document = cache.document
    assert document == parse_document(base_document()) and document.model == parse_document(base_document()).model
    header = {k: v for k, v in document.items() if k != "root"}
    for _ in range(data.draw(st.integers(1, 5))):
        candidate = _mutate(document["root"], data)
        incremental = _outcome(lambda: cache.revalidate(candidate, base=document)[0])  # noqa: B023 - called at once
        assert incremental == _outcome(lambda: parse_document({**header, "root": candidate}))  # noqa: B023
        if incremental[0] == "ok":
            document = incremental[1]
            facts = cache.restore_facts(document)  # None when the full parse decided (a Select domain changed)
            exact = DocumentCache(document).restore_facts(document)
            assert exact is not None
            # bytes and expression nodes exact, the depth an upper bound (as a parse's own cache keeps it)
            assert facts is None or ((facts[0], facts[2]) == (exact[0], exact[2]) and facts[1] >= exact[1])


def test_unchanged_subtrees_keep_their_identity():
    document = parse_document(base_document())
    root = document["root"]
    children = list(root["children"])
    children[0] = {**children[0], "props": {"text": "Changed", "level": 2}}
    new, _ = DocumentCache(document).revalidate({**root, "children": children}, base=document)
    assert new["root"]["children"][0]["props"]["text"] == "Changed"
    assert all(new["root"]["children"][i] is root["children"][i] for i in range(1, len(children)))


def test_a_cache_kept_from_the_parse_is_the_cache_of_a_second_walk():
    kept, walked = DocumentCache.parsed(base_document()), DocumentCache(parse_document(base_document()))
    assert kept.document == walked.document and kept.info == walked.info
    root = kept.document["root"]
    candidate = {**root, "children": list(root["children"][:-1])}
    assert _outcome(lambda: kept.revalidate(candidate, base=kept.document)[0]) == _outcome(
        lambda: walked.revalidate(candidate, base=walked.document)[0])


def test_without_a_base_the_generic_walk_gives_the_same_document():
    document = parse_document(base_document())
    root = document["root"]
    candidate = {**root, "children": list(root["children"][:-1])}
    cache = DocumentCache(document)
    assert cache.revalidate(candidate)[0] == cache.revalidate(candidate, base=document)[0]


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_revalidate_agrees_with_a_full_parse_when_the_memo_is_swept_at_every_patch(data):
    """Sweeps keep only the candidate's and its base's facts: a later patch of an earlier
    document (whose facts were swept) must still be judged exactly as a full parse judges it."""
    cache = DocumentCache.parsed(base_document())
    accepted = [cache.document]
    header = {k: v for k, v in cache.document.items() if k != "root"}
    with mock.patch.object(_revalidation, "SWEEP_SLACK", 0):  # a sweep after (almost) every accepted patch
        for _ in range(data.draw(st.integers(2, 10))):
            base = data.draw(st.sampled_from(accepted))  # the latest, or a state already swept away
            candidate = _mutate(base["root"], data)
            incremental = _outcome(lambda: cache.revalidate(candidate, base=base)[0])  # noqa: B023 - called at once
            assert incremental == _outcome(lambda: parse_document({**header, "root": candidate}))  # noqa: B023
            if incremental[0] == "ok":
                accepted.append(incremental[1])


def test_the_memo_of_a_long_generation_holds_its_current_document_not_its_history():
    cache = DocumentCache.parsed(base_document())
    document = cache.document
    components = document.model.components
    slack = max(_revalidation.SWEEP_SLACK, components // 8)
    for i in range(300):
        root = document["root"]
        first = {**root["children"][0], "props": {"text": f"Heading {i}", "level": 2}}
        document, _ = cache.revalidate({**root, "children": [first, *root["children"][1:]]}, base=document)
        assert len(cache._memo) <= components + slack + 2
    assert document["root"]["children"][0]["props"]["text"] == "Heading 299"
    stale = [facts for facts in cache._memo.values() if facts.node is not _node_by_id(document["root"],
                                                                                        facts.node["id"])]
    assert len(stale) <= slack + 2  # earlier versions of the heading and the root


def _node_by_id(root: Any, node_id: str) -> Any:
    return next(node for _, node in _nodes(root) if node["id"] == node_id)
