"""The exported JSON Schemas as a JavaScript consumer reads them: Ajv (strict, Draft 2020-12).

Where the TypeScript side validates with Ajv, the schema must compile in strict mode and give
the verdicts the Python validators give: its `pattern`s are ECMA-262 regular expressions (`$`
does not match before a final newline there, as it does in Python's `re`).  `.ci/run` installs
Ajv with `npm install --prefix .ci/node ajv@8.17.1`; without Node.js or that folder the tests skip.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core.document.model import parse_document
from core.errors import UIError
from tests.external_tools import require
from tests.unit.answer_documents import every_component
from tests.unit.test_answer_schema import EXAMPLES as ANSWER_EXAMPLES
from tests.unit.test_answer_schema import _blocks
from tests.unit.test_json_schema import ACCEPTED, DOCUMENTS, INVALID

ROOT = Path(__file__).resolve().parents[2]
AJV = ROOT / ".ci" / "node" / "node_modules" / "ajv"


@pytest.fixture(autouse=True)
def _ajv_installed() -> None:
    require(shutil.which("node") is not None and AJV.is_dir(),
            "needs Node.js and Ajv (npm install --prefix .ci/node ajv@8.17.1)")

VALIDATE = r"""
const Ajv2020 = require(process.argv[1] + "/dist/2020");
const fs = require("fs");
const { schema, definition, documents } = JSON.parse(fs.readFileSync(0, "utf8"));
const ajv = new Ajv2020({ strict: true });
ajv.addSchema(schema);
const validate = ajv.getSchema(definition ? schema.$id + "#/$defs/" + definition : schema.$id);
process.stdout.write(JSON.stringify(documents.map(document => validate(document))));
"""


def _ajv(schema_file: str, documents: list[Any], definition: str = "") -> list[bool]:
    schema = json.loads((ROOT / "schema" / schema_file).read_text("utf-8"))
    payload = json.dumps({"schema": schema, "definition": definition, "documents": documents})
    run = subprocess.run(["node", "-e", VALIDATE, str(AJV)], input=payload, capture_output=True, text=True,
                         timeout=120, check=True)
    return json.loads(run.stdout)  # type: ignore[no-any-return]


def test_both_schemas_compile_in_strict_mode() -> None:
    assert _ajv("ui.schema.json", []) == []
    assert _ajv("answer-ui.schema.json", []) == []


# Ajv compiles a schema lazily: a `$defs` entry nothing at the root refers to (`final_answer`,
# `report_ui_blocks`) is compiled, and strict-checked, only when a client asks for it.
COMPILE_DEFS = r"""
const Ajv2020 = require(process.argv[1] + "/dist/2020");
const fs = require("fs");
const schema = JSON.parse(fs.readFileSync(0, "utf8"));
const verdicts = {};
for (const name of Object.keys(schema.$defs)) {
  const ajv = new Ajv2020({ strict: true });
  ajv.addSchema(schema);
  try { ajv.getSchema(schema.$id + "#/$defs/" + name); verdicts[name] = "ok"; }
  catch (error) { verdicts[name] = String(error.message); }
}
process.stdout.write(JSON.stringify(verdicts));
"""


@pytest.mark.parametrize("schema_file", ["ui.schema.json", "answer-ui.schema.json"])
def test_every_def_compiles_on_its_own_in_strict_mode(schema_file: str) -> None:
    text = (ROOT / "schema" / schema_file).read_text("utf-8")
    run = subprocess.run(["node", "-e", COMPILE_DEFS, str(AJV)], input=text, capture_output=True, text=True,
                         timeout=120, check=True)
    verdicts = json.loads(run.stdout)
    assert list(verdicts) == list(json.loads(text)["$defs"])
    assert {name: verdict for name, verdict in verdicts.items() if verdict != "ok"} == {}


def test_ajv_gives_the_verdicts_the_python_validators_give() -> None:
    cases = {**{f"example {k}": v for k, v in DOCUMENTS.items()}, **{f"accepted {k}": f() for k, f in ACCEPTED.items()}}
    rejected = {f"invalid {k}": f() for k, f in INVALID.items()}
    verdicts = _ajv("ui.schema.json", [*cases.values(), *rejected.values()])
    assert dict(zip([*cases, *rejected], verdicts, strict=True)) == {**dict.fromkeys(cases, True),
                                                                     **dict.fromkeys(rejected, False)}


@pytest.mark.parametrize("node_id", ["abc\n", "ab c", "é", "a" * 65, "a\u00a0", "9a"])
def test_an_id_parse_document_refuses_is_refused_by_the_schema_too(node_id: str) -> None:
    document = copy.deepcopy(DOCUMENTS["form-controls.json"])
    document["root"]["id"] = node_id
    with pytest.raises(UIError):
        parse_document(document)
    assert _ajv("ui.schema.json", [document]) == [False]


def test_ajv_accepts_every_answer_block_of_the_examples_and_refuses_what_the_catalog_closes() -> None:
    blocks = [block for path in ANSWER_EXAMPLES for block in _blocks(json.loads(path.read_text("utf-8")))]
    foreign_prop, foreign_type = every_component(), every_component()
    foreign_prop["spec"]["elements"]["text"]["props"]["onClick"] = "x"
    foreign_type["spec"]["elements"]["text"]["type"] = "Script"
    verdicts = _ajv("answer-ui.schema.json", [*blocks, every_component(), foreign_prop, foreign_type])
    assert len(blocks) >= 4 and verdicts == [True] * (len(blocks) + 1) + [False, False]


def test_ajv_gives_the_parsers_verdicts_on_final_answers_and_report_blocks() -> None:
    examples = {path.name: json.loads(path.read_text("utf-8")) for path in ANSWER_EXAMPLES}
    final, report = examples["final-answer.json"]["final_answer"], examples["report.json"]["ui_blocks"]
    process = [{"block": every_component() | {"phase": "process"}, "evidence_refs": ["e"]}]
    assert _ajv("answer-ui.schema.json", [final, final | {"extra": 1}], "final_answer") == [True, False]
    assert _ajv("answer-ui.schema.json", [report, process], "report_ui_blocks") == [True, False]
