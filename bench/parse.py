"""Document validation speed: `parse_document` next to jsonschema and fastjsonschema.

For each example document and the generated maximal document, reports the median time
per call of each validator, measured in the same run (validators built once), and the
ratios parse/fastjsonschema and jsonschema/parse.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import fastjsonschema
import jsonschema

from core.document.model import parse_document
from core.document.schema import document_json_schema
from core.json.safe import assert_safe_json

from .documents import count_components, count_expression_nodes, example_documents, maximal_document
from .timing import median_seconds


def _validators() -> dict[str, Callable[[Any], Any]]:
    schema = document_json_schema()
    validators: dict[str, Callable[[Any], Any]] = {}
    validators["parse_document"] = parse_document
    validators["jsonschema"] = jsonschema.Draft202012Validator(schema).validate
    validators["fastjsonschema"] = fastjsonschema.compile(schema)
    return validators


def _row(name: str, document: dict, validators: dict, repeat: int, min_time: float) -> list[str]:
    for validate in validators.values():
        validate(document)  # every validator must accept it before it is timed
    times = {key: median_seconds(lambda v=v: v(document), repeat=repeat, min_time=min_time) * 1e6
             for key, v in validators.items()}
    parse = times.get("parse_document")
    ratios = [f"{parse / times['fastjsonschema']:.2f}", f"{times['jsonschema'] / parse:.2f}"] if parse else ["-", "-"]
    return [name, str(assert_safe_json(document)), *(f"{t:.1f}" for t in times.values()), *ratios]


def _print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for line in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths, strict=False))))


def main(argv: list[str]) -> int:
    """Run the benchmark and print one table row per document."""
    parser = argparse.ArgumentParser(prog="python -m bench parse", description=__doc__)
    parser.add_argument("--repeat", type=int, default=7, help="timed rounds per measurement (median taken)")
    parser.add_argument("--min-time", type=float, default=0.1, help="seconds per round, at least")
    args = parser.parse_args(argv)
    validators = _validators()
    documents = {**example_documents(), "maximal (generated)": maximal_document()}
    maximal = documents["maximal (generated)"]
    print(f"maximal document: {count_components(maximal)} components, {len(maximal['state'])} state, "
          f"{len(maximal['derived'])} derived, {count_expression_nodes(maximal)} expression nodes, "
          f"{assert_safe_json(maximal)} bytes")
    rows = [_row(name, doc, validators, args.repeat, args.min_time) for name, doc in documents.items()]
    header = ["document", "bytes", *(f"{k} µs" for k in validators), "parse/fastjsonschema", "jsonschema/parse"]
    _print_table(header, rows)
    print(f"median µs per call; {args.repeat} rounds of >= {args.min_time}s each")
    return 0
