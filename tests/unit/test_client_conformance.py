"""The Client checks every document again (seed 000 §1, §10): its schema interpreter
(gateway/web/src/conformance.js) gives Ajv's verdict on every case, and repeated ids are refused.

An audit found the page rendered documents core refuses (a prop no component takes, an unknown
component, a 1.0 document with an invoke Button, an Input in a structured_ui document, two
components with one id). The interpreter is compared with Ajv (strict, Draft 2020-12) on the
examples, the schema tests' accepted and refused cases, and seeded mutations of the examples.
"""

from __future__ import annotations

import copy
import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gateway.client_schema import MODULE, client_schema_module
from tests.external_tools import require
from tests.unit.test_json_schema import ACCEPTED, DOCUMENTS, INVALID

ROOT = Path(__file__).resolve().parents[2]
AJV = ROOT / ".ci" / "node" / "node_modules" / "ajv"
SOURCE = ROOT / "gateway" / "web" / "src"

VERDICTS = r"""
const fs = require("fs");
const { pathToFileURL } = require("url");
const [ajvPath, source] = process.argv.slice(1);
(async () => {
  const { conforms, matches } = await import(pathToFileURL(source + "/conformance.js").href);
  const { UI_SCHEMA } = await import(pathToFileURL(source + "/ui-schema.js").href);
  const Ajv2020 = require(ajvPath + "/dist/2020");
  const ajv = new Ajv2020({ strict: true });
  const schema = JSON.parse(fs.readFileSync(source + "/../../../schema/ui.schema.json", "utf8"));
  const validate = ajv.compile(schema);
  const documents = JSON.parse(fs.readFileSync(0, "utf8"));
  const each = (check) => {
    try {
      return check();
    } catch (error) {
      return "crash " + error.name;
    }
  };
  const out = documents.map((document) => [each(() => matches(UI_SCHEMA, document)), each(() => validate(document)),
                                           each(() => conforms(document))]);
  process.stdout.write(JSON.stringify(out));
})();
"""


@pytest.fixture(autouse=True)
def _node_and_ajv() -> None:
    require(shutil.which("node") is not None and AJV.is_dir(),
            "needs Node.js and Ajv (npm install --prefix .ci/node ajv@8.17.1)")


def verdicts(documents: list[Any], *, text: str | None = None) -> list[list[Any]]:
    """For each document (or each of the JSON array `text`): [the page's schema verdict, Ajv's, the
    page's whole verdict (ids too)]."""
    run = subprocess.run(["node", "-e", VERDICTS, str(AJV), str(SOURCE)], input=text or json.dumps(documents),
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)  # type: ignore[no-any-return]


def test_the_clients_schema_is_the_one_core_generates() -> None:
    assert MODULE.read_text(encoding="utf-8") == client_schema_module(), (
        "gateway/web/src/ui-schema.js is stale: regenerate it with `python -m gateway.client_schema`")


def test_the_page_gives_ajvs_verdict_on_the_schema_tests_cases() -> None:
    cases = {**{f"example {k}": v for k, v in DOCUMENTS.items()}, **{f"accepted {k}": f() for k, f in ACCEPTED.items()},
             **{f"invalid {k}": f() for k, f in INVALID.items()}}
    got = dict(zip(cases, verdicts(list(cases.values())), strict=True))
    assert {name: verdict[0] for name, verdict in got.items()} == {name: verdict[1] for name, verdict in got.items()}
    assert all(got[name] == [True, True, True] for name in cases if not name.startswith("invalid"))
    assert all(got[name][0] is False for name in cases if name.startswith("invalid"))


def _audit_document() -> dict[str, Any]:
    return {"version": "1.1", "id": "notes", "mode": "interactive_ui", "title": "Notes",
            "state": {"note": {"type": "string", "initial": "", "maxLength": 200}}, "derived": {},
            "actions": {"go": {"kind": "agent", "prompt": "hi"}},
            "root": {"id": "card", "type": "Card", "props": {"title": "Draft"}, "children": [
                {"id": "note-input", "type": "Input", "props": {"label": "Note", "bind": "note"}},
                {"id": "go", "type": "Button",
                 "props": {"label": "Ask", "action": {"type": "invoke", "actionId": "go"}}}]}}


def _audit_case(change: str) -> dict[str, Any]:
    document = _audit_document()
    children = document["root"]["children"]
    if change == "an unknown prop":
        document["root"]["props"]["onclick"] = "alert(1)"
    elif change == "an unknown component":
        children.append({"id": "x", "type": "Iframe", "props": {"src": "https://example.test"}})
    elif change == "an Input in a structured_ui document":
        document["mode"] = "structured_ui"
    elif change == "a 1.0 document with an invoke Button":
        document["version"] = "1.0"
        del document["actions"]
    elif change == "a component type in the wrong case":
        children[0]["type"] = "input"
    elif change == "a __proto__ prop":
        document["root"]["props"] = json.loads('{"title": "Draft", "__proto__": {"x": 1}}')
    elif change == "a constructor state key":
        document["state"]["constructor"] = {"type": "string", "initial": ""}
    return document


@pytest.mark.parametrize("change", ["an unknown prop", "an unknown component", "an Input in a structured_ui document",
                                    "a 1.0 document with an invoke Button", "a component type in the wrong case",
                                    "a __proto__ prop"])
def test_what_the_audit_saw_rendered_is_refused(change: str) -> None:
    assert verdicts([_audit_document(), _audit_case(change)]) == [[True, True, True], [False, False, False]]


def test_two_components_with_one_id_are_refused_though_the_schema_allows_them() -> None:
    document = _audit_document()
    document["root"]["children"].append({"id": "go", "type": "Text", "props": {"text": "again"}})
    assert verdicts([document]) == [[True, True, False]]


def test_a_document_nested_past_the_stack_is_refused_without_a_crash() -> None:
    levels = 100_000  # written as text: Python's encoder stops at its recursion limit
    leaf = '{"id":"t","type":"Text","props":{"text":"x"}}'
    deep = '{"id":"c","type":"Column","props":{},"children":[' * levels + leaf + "]}" * levels
    whole = json.dumps(_audit_document()).replace(json.dumps(_audit_document()["root"]), deep)
    assert verdicts([], text=f"[{whole}]")[0][2] is False


def _mutations(rng: random.Random, document: Any) -> Any:
    """One random change somewhere in a copy of `document`: a key removed, added or renamed, a value
    replaced by one of another type or an edge value."""
    copied = copy.deepcopy(document)
    places: list[tuple[Any, Any]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key in value:
                places.append((value, key))
                walk(value[key])
        elif isinstance(value, list):
            for at in range(len(value)):
                places.append((value, at))
                walk(value[at])

    walk(copied)
    container, key = rng.choice(places)
    replacements = [None, True, 0, -1, 1.5, 10**16, "", "x" * 5000, "Text", "text", [], {}, [1], {"a": 1},
                    "interactive_ui", "1.0", "primary", {"expr": {"op": "add", "args": [1, 2]}}]
    action = rng.randrange(4)
    if action == 0 and isinstance(container, dict):
        del container[key]
    elif action == 1 and isinstance(container, dict):
        key = rng.choice(["extra", "Type", "children", "props", "id", "hidden", "__proto__"])
        container[key] = rng.choice(replacements)
    elif action == 2 and isinstance(container, list):
        container.append(copy.deepcopy(container[key]))
    else:
        container[key] = rng.choice(replacements)
    return copied


def test_the_page_gives_ajvs_verdict_on_seeded_mutations_of_the_examples() -> None:
    rng = random.Random(24)
    examples = list(DOCUMENTS.values())
    documents = [_mutations(rng, rng.choice(examples)) for _ in range(3000)]
    got = verdicts(documents)
    differ = [(n, verdict) for n, verdict in enumerate(got) if verdict[0] != verdict[1]]
    assert differ == [], f"{len(differ)} verdicts differ from Ajv's, e.g. {json.dumps(documents[differ[0][0]])[:2000]}"
    assert 300 < sum(verdict[1] for verdict in got) < 2700  # the corpus holds both kinds


MOVED = r"""
const fs = require("fs");
const { pathToFileURL } = require("url");
(async () => {
  const { conforms } = await import(pathToFileURL(process.argv[1] + "/conformance.js").href);
  const outside = JSON.parse(fs.readFileSync(0, "utf8"));
  const wrapper = outside.root.children.at(-1);
  const find = (node) => node.id === "booking-form" ? node : (node.children || []).map(find).find(Boolean);
  const form = find(outside.root);
  // the same wrapper object, moved into the form (as a frame's shared subtree would be)
  const inside = { ...outside, root: { ...outside.root, children: outside.root.children.slice(0, -1).map(
    (child) => child === form || (child.children || []).includes(form) ? replace(child) : child) } };
  function replace(node) {
    if (node === form) return { ...form, children: [...form.children, wrapper] };
    return { ...node, children: node.children.map(replace) };
  }
  process.stdout.write(JSON.stringify([conforms(outside), conforms(inside), conforms(outside)]));
})();
"""


def test_a_remembered_verdict_is_never_used_in_another_context() -> None:
    # The memo keys a verdict by node and schema: the same Column holding a Form is valid at the
    # root and invalid inside a Form (a Form in a Form), whatever was checked first.
    document = copy.deepcopy(DOCUMENTS["form-controls.json"])
    inner = {"id": "inner-form", "type": "Form", "props": {"submitLabel": "Go", "action": {"type": "reset"}},
             "children": []}
    document["root"]["children"].append({"id": "wrapper", "type": "Column", "props": {}, "children": [inner]})
    run = subprocess.run(["node", "-e", MOVED, str(SOURCE)], input=json.dumps(document), capture_output=True,
                         text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout) == [True, False, True]
