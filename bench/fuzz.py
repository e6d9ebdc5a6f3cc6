"""Hostile-input fuzzing: `python -m bench fuzz --seconds N [--seed S] [--target core]`.

Feeds generated and mutated hostile inputs to a target and counts five kinds of failure:

- crashes: any exception that is not a documented error (for core: not a `UIError`);
- echoes: the secret marker `QXJZ` (planted in unknown keys and values) appearing in an
  error's path or message;
- invalid paths: a path that is not an RFC 6901 pointer, is over 512 characters, or
  cannot be UTF-8;
- hangs: one call taking more than a second;
- hostile calls: a method of a hostile subclass (`bench.hostile`: dict, list, str, int and
  float subclasses, also as keys, whose every method is a trap) running at all during the
  call.  Its traps raise on every other input and answer nonsense on the others (a length
  of 0, `__eq__` always true, NaN for `__float__`), so a call must refuse them by exact
  type before touching them, never merely survive them.

It prints inputs/s and the counts (with the first few examples of each) and exits 1 when
any count is above zero.  A target is a factory in `TARGETS` returning an endless
iterator of probes: `(label, call)`, where `call()` returns the `(path, message)` texts of
a documented rejection (empty when the input is accepted) and raises on a crash.  Inputs
come from `random.Random(seed)` only, so a run is reproducible and needs no hypothesis.
With `--inputs N` the run stops after exactly N inputs and prints a digest of their
outcomes: `.ci/run` compares the pure and the compiled core's digests of one seed.

Keys planted into a dictionary whose keys are names the sender declares (state, derived,
actions, arguments; reserve `values`, `result` fields and an action result itself) are
never identifiers: a valid identifier there is a declared name, which the host may use in
a path (an invalid key is reported at the dictionary, and that is what is checked).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

import core
from bench.hostile import (
    TRAPS,
    HostileDict,
    HostileFloat,
    HostileInt,
    HostileList,
    HostileObject,
    HostileStr,
    armed,
)
from core.errors import MAX_PATH_LENGTH
from core.json.canonical import canonical_json_measured
from core.json.safe import DECLARING_KEYS

SECRET = "QXJZ"
HANG_SECONDS = 1.0
ROOT = Path(__file__).resolve().parents[1]

Texts = Iterable[tuple[str, str]]
Probe = tuple[str, Callable[[], Texts]]


# ------------------------------------------------------------------ judging

def valid_pointer(path: str) -> bool:
    """RFC 6901: empty or `/`-led, every `~` escaped as `~0`/`~1`; ≤ 512 chars; UTF-8-encodable."""
    if len(path) > MAX_PATH_LENGTH or (path and path[0] != "/"):
        return False
    try:
        path.encode()
    except UnicodeEncodeError:
        return False
    return all(path[i + 1:i + 2] in ("0", "1") for i, char in enumerate(path) if char == "~")


@dataclass
class Tally:
    """Counts of inputs and of each failure kind, with the first examples of each."""

    inputs: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("crashes", "echoes", "invalid_paths", "hangs", "hostile_calls"), 0))
    examples: dict[str, list[str]] = field(default_factory=dict)
    # SHA-256 of every input's outcome (its label and the issues' paths and messages, the typed
    # shape of an accepted call's result, or the crash's type), in order: equal digests mean two
    # builds of core answered alike.
    outcomes: Any = field(default_factory=hashlib.sha256)

    def record(self, label: str, outcome: str) -> None:
        self.outcomes.update(f"{label}\0{outcome}\1".encode("utf-8", "surrogatepass"))

    @property
    def digest(self) -> str:
        return str(self.outcomes.hexdigest())

    def add(self, kind: str, label: str, detail: str) -> None:
        self.counts[kind] += 1
        seen = self.examples.setdefault(kind, [])
        if len(seen) < 5:
            seen.append(f"{label}: {detail[:300]}")

    def judge(self, label: str, texts: Texts) -> None:
        for path, message in texts:
            if SECRET in path or SECRET in message:
                self.add("echoes", label, f"{path!r} {message!r}")
            if not valid_pointer(path):
                self.add("invalid_paths", label, repr(path[:200]))

    @property
    def failures(self) -> int:
        return sum(self.counts.values())


def run(target: str, *, seconds: float, seed: int, max_inputs: int | None = None,
        only: frozenset[str] | None = None) -> tuple[Tally, float]:
    """Feed probes (those labelled in `only`, if given) until the time or input budget runs out."""
    tally = Tally()
    probes = TARGETS[target](random.Random(seed), only)
    start = time.perf_counter()
    deadline = start + seconds
    clock = time.perf_counter
    while (max_inputs is None or tally.inputs < max_inputs) and (tally.inputs % 64 or clock() < deadline):
        label, call = next(probes)
        began = clock()
        TRAPS.calls.clear()
        TRAPS.mode = "nonsense" if tally.inputs % 2 else "raise"
        try:
            ACCEPTED.clear()
            texts = list(call())
            tally.judge(label, texts)
            # the results' shapes only where the digest is printed (`--inputs`): they cost a third
            shapes = "".join(shape(result) for result in ACCEPTED) if max_inputs is not None else ""
            tally.record(label, repr(texts) + shapes)
        except Exception as error:  # any foreign exception is a finding
            tally.add("crashes", label, f"{type(error).__name__}: {_text(error)}")
            tally.record(label, f"crash {type(error).__name__}")
        if TRAPS.calls:
            tally.add("hostile_calls", label, f"{TRAPS.mode} traps called: {', '.join(TRAPS.calls[:4])}")
        if clock() - began > HANG_SECONDS:
            tally.add("hangs", label, f"{clock() - began:.2f} s")
        tally.inputs += 1
    return tally, clock() - start


def _text(error: Exception) -> str:
    try:  # an error built from a hostile value may itself be hostile to print
        return str(error)
    except Exception:
        return "(unprintable)"


# ------------------------------------------------------------------ hostile values

def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def _nest(inner: Any, levels: int) -> Any:
    for _ in range(levels):
        inner = {"op": "min", "args": [inner]}
    return inner


_ATOMS: list[Callable[[], Any]] = [
    lambda: 5e-324, lambda: -5e-324, lambda: 1e308, lambda: 10**400, lambda: -(10**16), lambda: 2**53 + 1,
    lambda: 1e15, lambda: 1.0000000000000002e15, lambda: math.nan, lambda: math.inf, lambda: -0.0,
    lambda: 0.1, lambda: 0, lambda: True, lambda: False, lambda: None, lambda: "", lambda: "\ud800",
    lambda: "a\udfffb", lambda: SECRET + " secret", lambda: "x" * 5_000, lambda: "~0/~1", list,
    dict, lambda: [SECRET + " secret"], lambda: _deep(140), lambda: _deep(40),
    lambda: {"op": "div", "args": [1, 0]}, lambda: {"expr": {"derived": SECRET + "secret"}},
    lambda: {"expr": {"state": SECRET + " secret"}}, lambda: {"expr": _nest(1, 40)},
    lambda: {"op": "pow", "args": [10, 400]}, lambda: {"state": SECRET + "secret"},
    lambda: HostileStr(SECRET), lambda: HostileInt(1), lambda: HostileFloat(1.5), lambda: HostileDict(a=1),
    lambda: HostileList([1]), lambda: HostileObject(), lambda: {HostileStr("type"): "add"},
    lambda: {"expr": HostileDict(state="amount")}, lambda: {SECRET + " secret": 1},
    lambda: {"\ud800": 1}, lambda: ["x"], lambda: 1.5, lambda: "reader",
    # Markdown-ish text nesting thousands of list items over blank and lazy lines: the final
    # answer's marker scan was quadratic in such nesting (seconds at this size; linear now).
    lambda: "+ " * 3000 + "x" + "\n" * 6000, lambda: "* " * 3000 + "x" + "\ny" * 3000,
]


def hostile(rng: random.Random) -> Any:
    """One hostile JSON-ish value."""
    return rng.choice(_ATOMS)()


NAMED_MAPS = DECLARING_KEYS | {"values", "result", "elements"}  # elements: answer-ui@1 element ids


def _secret_key(rng: random.Random, parent_key: Any) -> str:
    if parent_key in NAMED_MAPS or parent_key is None or rng.random() < 0.5:
        return rng.choice((SECRET + " secret", SECRET + " secret!", "~" + SECRET + "/x", SECRET + "\ud800"))
    return SECRET + "secret"


def mutate(value: Any, rng: random.Random, edits: int, *, named_root: bool = False) -> Any:
    """A copy of plain JSON `value` with `edits` random hostile changes."""
    root_key = None if named_root else "root value"  # the parent key `_secret_key` sees at the root
    holder = {root_key: orjson.loads(orjson.dumps(value))}
    for _ in range(edits):
        parent: Any = holder
        key: Any = root_key
        for _ in range(rng.randrange(1, 12)):  # a random walk down from the root
            node = parent[key]
            if type(node) is dict and node:
                parent, key = node, rng.choice(list(node))
            elif type(node) is list and node:
                parent, key = node, rng.randrange(len(node))
            else:
                break
        _edit(parent, key, rng)
    return holder[root_key]


def _edit(parent: Any, key: Any, rng: random.Random) -> None:
    node = parent[key]
    roll = rng.random()
    if roll < 0.45:
        parent[key] = hostile(rng)
    elif roll < 0.65 and type(node) is dict:
        node[_secret_key(rng, key)] = hostile(rng)
    elif roll < 0.75 and type(parent) is dict and len(parent) > 1:
        del parent[key]
    elif roll < 0.8 and type(node) is dict:
        parent[key] = HostileDict(node)
    elif roll < 0.83 and type(node) is dict and node:
        name = rng.choice(list(node))  # the same key, as a str subclass: lookups find it
        node[HostileStr(name)] = node.pop(name)
    elif roll < 0.86 and type(node) in (int, float, list):
        parent[key] = {int: HostileInt, float: HostileFloat, list: HostileList}[type(node)](node)
    elif roll < 0.9 and type(node) is str:
        parent[key] = [node] if rng.random() < 0.5 else HostileStr(node)
    elif type(node) is list and node:
        node.append(node[0] if rng.random() < 0.5 else hostile(rng))
    else:
        parent[key] = hostile(rng)


# ------------------------------------------------------------------ the core target

def _texts(error: core.UIError) -> list[tuple[str, str]]:
    texts = [(issue.path, issue.message) for issue in getattr(error, "issues", ())]
    return [*texts, ("", error.message)]


HOST_FUNCTIONS = ("canonical_json_measured",)  # core functions the workers call beyond `core.__all__`


# The last accepted core call's result, whose typed shape (`shape`) goes into the outcome digest
# only: a result may hold the input's own text, which `judge` would read as an echo.
ACCEPTED: list[Any] = []
SHAPE_ITEMS = 2_000  # a result's first values in the digest (a parsed document holds ~10^4)


def shape(value: Any) -> str:
    """Each value of a result with its exact type, depth first (`40` and `40.0` differ: a build
    that stored one as the other answered alike in every rejection and differently here)."""
    parts: list[str] = []
    stack: list[Any] = [value]
    while stack and len(parts) < SHAPE_ITEMS:
        item = stack.pop()
        kind = type(item)
        if kind is int and not -(2**63) < item < 2**63:
            parts.append(f"int:{item.bit_length()} bits")  # repr refuses past 4,300 digits
        elif kind in (str, int, float, bool) or item is None:
            parts.append(f"{kind.__name__}:{item!r}")
        elif isinstance(item, Mapping):
            parts.append(f"{kind.__name__}{{{len(item)}")
            stack.extend(reversed([part for key, entry in item.items() for part in (key, entry)]))
        elif isinstance(item, (list, tuple, frozenset, set)):
            items = sorted(item, key=repr) if isinstance(item, (frozenset, set)) else list(item)
            parts.append(f"{kind.__name__}[{len(items)}")
            stack.extend(reversed(items))
        else:  # a parsed document, a stream state: its type (its values reach later probes' results)
            parts.append(kind.__name__)
    return ",".join(parts)


def _core_probe(name: str, make_args: Callable[[], tuple], kwargs: Callable[[], dict] | None = None,
                function: Callable[..., Any] | None = None) -> Probe:
    function = function or getattr(core, name)

    def call() -> Texts:
        try:  # building the arguments may call core too (a parse): its rejection counts alike
            args, keywords = make_args(), kwargs() if kwargs else {}
            with armed(TRAPS.mode):  # only the call itself: building the inputs may use them
                result = function(*args, **keywords)
        except core.UIError as error:
            return _texts(error)
        ACCEPTED.append(result)
        return ()
    return name, call


def _load(name: str) -> Any:
    return json.loads((ROOT / "examples" / name).read_text())


def _derived_chain(rng: random.Random) -> dict:
    from tests.unit.documents import base_document

    document = base_document()
    derived: dict[str, Any] = {}
    previous: Any = rng.choice((1, {"state": "amount"}))
    for i in range(rng.randrange(2, 12)):
        derived[f"d{i}"] = _nest(previous, rng.randrange(1, 33))
        previous = {"derived": f"d{i}"}
    document["derived"] = {"double": 1, "label": "x", "big": False, **dict(reversed(derived.items()))}
    return document


class CoreCorpus:
    """Valid seeds (documents, states, actions, frames, remote messages) to mutate."""

    def __init__(self) -> None:
        from tests.unit.documents import base_document

        documents = [base_document()] + [_load(p.name) for p in sorted((ROOT / "examples").glob("*.json"))]
        self.documents = [d for d in documents if isinstance(d, dict) and "root" in d]
        self.parsed = [core.parse_document(d) for d in self.documents]
        self.events = [*_load("stream-mutations.json"), {"type": "complete"}, {"type": "error", "message": "m"}]
        self.streams = [core.start_ui_stream(d, "call-1", 1) for d in self.documents]
        self.streams.append(core.advance_ui_stream(self.streams[-1], self.events[-2]))
        # The same producers as a host restores them from their stored checkpoints (no walk of the tree):
        # their facts are found as each hostile event needs them.
        self.streams += [core.restore_ui_stream(orjson.loads(orjson.dumps(s.checkpoint)), frame_count=s.frame_count,
                                                byte_count=s.byte_count, facts=s.restore_facts) for s in self.streams]
        self.frames = [orjson.loads(orjson.dumps(s.checkpoint)) for s in self.streams]
        # Each producer's snapshot restored apart, as a host shares it between sessions (`restore_envelope`).
        self.snapshots = [core.restore_snapshot(frame["snapshot"], facts=s.restore_facts)
                          for frame, s in zip(self.frames, self.streams, strict=True)]
        self.remote = _remote_seeds()

    def document(self, rng: random.Random) -> Any:
        roll = rng.random()
        if roll < 0.6:
            return rng.choice(self.parsed)
        if roll < 0.75:
            return _derived_chain(rng)
        return mutate(rng.choice(self.documents), rng, rng.randrange(1, 4))

    def pair(self, rng: random.Random) -> tuple[Any, Any]:
        """A parsed document and a state for it (valid, mutated or junk)."""
        document = rng.choice(self.parsed)
        state = dict(core.initial_state(document))
        roll = rng.random()
        if roll < 0.4:
            return document, state
        if roll < 0.9:
            return document, mutate(state, rng, rng.randrange(1, 3))
        return document, hostile(rng)

    def any_value(self, rng: random.Random) -> Any:
        pool = rng.choice((self.documents, self.frames, list(self.remote.values()), self.events))
        return mutate(rng.choice(pool), rng, rng.randrange(0, 4))


def _remote_seeds() -> dict[str, Any]:
    ref = {"sourceCallId": "call_1", "uiId": "reader", "generation": 2, "revision": 3}
    capability = {"id": "read_file", "title": "Read a file", "description": "Reads a file.", "risk": "read",
                  "requiresConfirmation": False,
                  "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}},
                  "resultFields": ["totalLines"]}
    receipt = {"operationId": "op-1", "requestId": "req-1", "documentRef": ref, "actionId": "read_info",
               "status": "succeeded", "parameterHash": "0123456789abcdef" * 4, "createdAt": 1_700_000_000_000,
               "updatedAt": 1_700_000_000_500, "message": "done", "result": {"totalLines": 42}}
    return {
        "parse_ui_document_ref": ref,
        "parse_ui_action_reserve_request": {"documentRef": ref, "requestId": "req-1", "actionId": "read_info",
                                            "values": {"path": "README.md", "lines": 0, "ok": True}},
        "parse_ui_action_query": {"operationId": "op-1"},
        "parse_ui_action_receipt": receipt,
        "parse_ui_action_receipt_list": [receipt, receipt],
        "parse_ui_capability_descriptor": capability,
        "parse_ui_capability_catalog": [capability],
        "parse_ui_action_result": {"totalLines": 42, "note": "x"},
    }


def _declared_actions(document: Any) -> list[Any]:
    found, stack = [], [document["root"]]
    while stack:
        node = stack.pop()
        if "action" in node["props"]:
            found.append(orjson.loads(orjson.dumps(node["props"]["action"])))
        stack.extend(node.get("children", ()))
    return found or [{"type": "reset"}]


def core_probes(rng: random.Random, only: frozenset[str] | None = None) -> Iterator[Probe]:
    """Every public core function, with hostile arguments of the right arity."""
    c = CoreCorpus()
    r = rng

    def chance(p: float, good: Callable[[], Any], bad: Callable[[], Any] | None = None) -> Any:
        return good() if r.random() < p else (bad or (lambda: hostile(r)))()

    def action_id(document: Any) -> Any:
        return chance(0.7, lambda: r.choice(list(document.model.actions) or ["x"]))

    def state_key(document: Any) -> Any:
        return chance(0.7, lambda: r.choice(list(document.model.fields) or ["x"]),
                      lambda: r.choice((SECRET + "secret", hostile(r))))

    def expr() -> Any:
        return mutate(r.choice(({"op": "add", "args": [{"state": "amount"}, {"derived": "double"}]},
                                {"op": "if", "args": [{"derived": "big"}, "a", {"derived": "label"}]},
                                {"op": "concat", "args": [{"state": "name"}, 1.5, None]},
                                {"op": "round", "args": [{"op": "div", "args": [1, 3]}, 2]})), r, r.randrange(0, 3))

    def derived_values() -> Any:
        return mutate({"double": 20, "label": "Total: 20", "big": False}, r, r.randrange(0, 3))

    def frame(stream: Any) -> Any:
        return mutate(orjson.loads(orjson.dumps(stream.checkpoint)), r, r.randrange(0, 3))

    picked: list[Any] = []  # the stream `restore_frame` took its frame from, for the facts beside it

    def restore_frame() -> tuple:
        picked[:] = [r.choice(c.streams)]
        return (frame(picked[-1]),)

    def restore_facts(stream: Any) -> Any:
        """The stream's restore facts, sometimes with a number off or of another type."""
        facts = list(stream.restore_facts)
        if r.random() < 0.3:
            at = r.randrange(3)
            facts[at] = r.choice([facts[at] + r.choice([-1, 1]), 0, -5, 10**9, float(facts[at]), True, None])
        return tuple(facts) if r.random() < 0.9 else facts

    def snapshot_value() -> tuple:
        picked[:] = [r.choice(c.streams)]
        return (mutate(orjson.loads(orjson.dumps(picked[-1].checkpoint["snapshot"])), r, r.randrange(0, 3)),)

    def envelope_pair() -> tuple:
        """A producer's envelope (mutated at times) and mostly its own restored snapshot."""
        at = r.randrange(len(c.streams))
        envelope = orjson.loads(orjson.dumps(c.streams[at].checkpoint))
        del envelope["snapshot"]
        return (mutate(envelope, r, r.randrange(0, 3)),
                chance(0.9, lambda: c.snapshots[at],
                       lambda: r.choice(c.snapshots) if r.random() < 0.5 else hostile(r)))

    def counters() -> dict[str, Any]:
        """Budget counters (off at times) and, at times, retired types (some no producer has)."""
        return {"frame_count": chance(0.8, lambda: r.randrange(0, 300)),
                "byte_count": chance(0.8, lambda: r.randrange(0, 20_000_000)),
                "retired_types": chance(0.6, lambda: None, lambda: mutate({"gone": "Text"}, r, r.randrange(0, 3)))}

    def chain_pair() -> tuple:
        document = core.parse_document(_derived_chain(r))
        return document, core.initial_state(document)

    def checkpoint_pair() -> tuple:
        stream = r.choice(c.streams)
        return chance(0.9, lambda: stream), frame(stream)

    def with_pair(build: Callable[[Any, Any], tuple]) -> Callable[[], tuple]:
        return lambda: build(*c.pair(r))

    view = _load("answer-ui/view-state.json")
    view_block, view_nodes = view["published_blocks"][1], view["view_state"]["nodes"]
    view_basis = orjson.loads(orjson.dumps(core.view_state_basis(view_block)))

    def block() -> Any:
        return chance(0.7, lambda: view_block, lambda: mutate(view_block, r, r.randrange(1, 3)))

    def nodes() -> Any:
        return mutate(view_nodes, r, r.randrange(0, 4))

    probes: list[Probe] = [
        _core_probe("parse_document", lambda: (c.document(r),)),
        _core_probe("document_json_schema", lambda: ()),
        _core_probe("assert_safe_json", lambda: (c.any_value(r),)),
        _core_probe("canonical_json_string", lambda: (c.any_value(r),)),
        _core_probe("hash_canonical_json", lambda: (c.any_value(r),)),
        _core_probe("canonical_json_measured", lambda: (c.any_value(r),), function=canonical_json_measured),
        _core_probe("initial_state", lambda: (c.document(r),)),
        _core_probe("update_state", with_pair(lambda d, s: (d, s, state_key(d), hostile(r)))),
        _core_probe("restore_state", with_pair(lambda d, s: (chance(0.8, lambda: d, lambda: c.document(r)), s))),
        _core_probe("assert_valid_state", with_pair(lambda d, s: (d, s))),
        _core_probe("evaluate_derived", lambda: chain_pair() if r.random() < 0.2 else c.pair(r)),
        _core_probe("resolve_value", with_pair(lambda d, s: ({"expr": expr()}, s, derived_values()))),
        _core_probe("resolve_document_value", with_pair(lambda d, s: (d, s, chance(0.8, lambda: {"expr": expr()})))),
        _core_probe("evaluate_expression", with_pair(lambda d, s: (expr(), s, derived_values()))),
        _core_probe("dispatch_local_action", with_pair(lambda d, s: (
            chance(0.85, lambda: d, lambda: c.document(r)), s,
            mutate(r.choice(_declared_actions(d)), r, r.randrange(0, 2))))),
        _core_probe("resolve_ui_action", with_pair(lambda d, s: (d, s, action_id(d)))),
        _core_probe("apply_action_result", with_pair(lambda d, s: (
            d, s, action_id(d), mutate({"lines": 3, "count": 2, "totalLines": 1}, r, r.randrange(0, 3))))),
        _core_probe("start_ui_stream", lambda: (c.document(r), chance(0.8, lambda: "call-1"),
                                                chance(0.8, lambda: r.randrange(0, 5)))),
        _core_probe("advance_ui_stream", lambda: (chance(0.95, lambda: r.choice(c.streams)),
                                                  mutate(r.choice(c.events), r, r.randrange(0, 4)))),
        _core_probe("accept_checkpoint", checkpoint_pair),
        _core_probe("resume_ui_stream", lambda: (frame(r.choice(c.streams)),),
                    lambda: {"frame_count": chance(0.8, lambda: r.randrange(0, 300)),
                             "byte_count": chance(0.8, lambda: r.randrange(0, 20_000_000))}),
        _core_probe("restore_ui_stream", restore_frame,
                    lambda: {"frame_count": chance(0.8, lambda: r.randrange(0, 300)),
                             "byte_count": chance(0.8, lambda: r.randrange(0, 20_000_000)),
                             "facts": chance(0.7, lambda: restore_facts(picked[-1]))}),
        _core_probe("restore_snapshot", snapshot_value,
                    lambda: {"facts": chance(0.7, lambda: restore_facts(picked[-1]))}),
        _core_probe("restore_envelope", envelope_pair, counters),
    ]
    probes += [
        _core_probe("parse_view_state", lambda: (nodes(), block())),
        _core_probe("migrate_view_state", lambda: (nodes(), mutate(view_basis, r, r.randrange(0, 3)), block())),
        _core_probe("view_state_basis", lambda: (block(),)),
        _core_probe("view_state_schema_digest", lambda: (block(),)),
    ]
    probes += _answer_probes(r, chance)
    probes += [_remote_probe(name, seed, r) for name, seed in c.remote.items()]
    # sorted: a set's order follows the string hash seed, and a seed must give the same inputs everywhere
    probes += [_generic_probe(name, c, r) for name in sorted(_public_functions() - {name for name, _ in probes})]
    probes = [probe for probe in probes if only is None or probe[0] in only]
    while True:
        yield r.choice(probes)


def _answer_probes(r: random.Random, chance: Callable[..., Any]) -> list[Probe]:
    """answer-ui@1: the examples' blocks, final answers and report blocks, mutated (a generic probe's
    random values rarely get past the first check of a block)."""
    final, report, view = _load("answer-ui/final-answer.json"), _load("answer-ui/report.json"), \
        _load("answer-ui/view-state.json")
    blocks = [_load("answer-ui/response-block.json"), *final["published_blocks"], *view["published_blocks"]]
    turns = [final, view]

    def edits(low: int = 0) -> int:
        return r.randrange(low, 4)

    def turn() -> tuple:
        """A final answer (mutated at times) and its turn's published blocks (at times mutated or hostile)."""
        picked = r.choice(turns)
        published = chance(0.8, lambda: picked["published_blocks"],
                           lambda: mutate(picked["published_blocks"], r, edits(1)) if r.random() < 0.7 else hostile(r))
        return mutate(picked["final_answer"], r, edits()), published

    def evidence() -> Any:
        return chance(0.8, lambda: report["evidence_ids"], lambda: mutate(report["evidence_ids"], r, edits(1)))

    return [
        _core_probe("parse_answer_block", lambda: (mutate(r.choice(blocks), r, edits()),)),
        _core_probe("parse_final_answer", turn),
        _core_probe("answer_parts", turn),
        _core_probe("parse_report_ui_blocks", lambda: (mutate(report["ui_blocks"], r, edits()), evidence())),
        _core_probe("answer_json_schema", lambda: ()),
    ]


def _remote_probe(name: str, seed: Any, rng: random.Random) -> Probe:
    named = name == "parse_ui_action_result"  # its top-level keys are result field names
    return _core_probe(name, lambda: (mutate(seed, rng, rng.randrange(0, 4), named_root=named),))


def _public_functions() -> set[str]:
    return {name for name in core.__all__ if name[0].islower() and callable(getattr(core, name))}


def _required_parameters(name: str) -> tuple[int, list[str]]:
    """How many positional arguments `core.<name>` requires, and its required keywords."""
    import inspect

    parameters = inspect.signature(getattr(core, name)).parameters.values()
    required = [p for p in parameters if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    keywords = [p.name for p in required if p.kind is p.KEYWORD_ONLY]
    return len(required) - len(keywords), keywords


# Read once, at import: a compiled core's functions carry text signatures, which `inspect`
# parses with a class made per call, cyclic garbage a run would otherwise count as core's.
def _readable_signatures() -> dict[str, tuple[int, list[str]]]:
    readable = {}
    for name in _public_functions():
        try:
            readable[name] = _required_parameters(name)
        except ValueError:  # mypyc gives a few functions no text signature; each has a probe of its own
            continue
    return readable


_REQUIRED = _readable_signatures()


def _generic_probe(name: str, corpus: CoreCorpus, rng: random.Random) -> Probe:
    """A public function with no dedicated probe yet: hostile values for each required argument."""
    count, keywords = _REQUIRED[name]
    positional = range(count)

    def value() -> Any:
        return corpus.any_value(rng) if rng.random() < 0.7 else hostile(rng)
    return _core_probe(name, lambda: tuple(value() for _ in positional),
                       (lambda: {key: value() for key in keywords}) if keywords else None)


# name -> factory(rng, only labels or None) of an endless probe iterator; a live worker
# target plugs in here with the same shape.
TARGETS: dict[str, Callable[[random.Random, frozenset[str] | None], Iterator[Probe]]] = {
    "core": core_probes,
}


def main(argv: list[str]) -> int:
    """Run the fuzzer and print inputs/s and the four counts; exit 1 on any finding."""
    parser = argparse.ArgumentParser(prog="python -m bench fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to run")
    parser.add_argument("--seed", type=int, default=0, help="seed of the input generator")
    parser.add_argument("--target", choices=[*sorted(TARGETS), "wire"], default="core",
                        help="what to fuzz (wire: a live worker pool, as `python -m bench fuzz-wire`)")
    parser.add_argument("--only", action="append", help="fuzz only this function (repeatable)")
    parser.add_argument("--inputs", type=int, help="stop after exactly this many inputs (no time limit) and print "
                        "the digest of their outcomes: the same seed gives the same digest on every build of core")
    args = parser.parse_args(argv)
    if args.target == "wire":
        from bench import fuzz_wire

        return fuzz_wire.main(["--seconds", str(args.seconds), "--seed", str(args.seed)])
    only = frozenset(args.only) if args.only else None
    seconds = math.inf if args.inputs is not None else args.seconds
    tally, elapsed = run(args.target, seconds=seconds, seed=args.seed, max_inputs=args.inputs, only=only)
    print(f"target {args.target}, seed {args.seed}: {tally.inputs:,} inputs in {elapsed:.1f} s "
          f"({tally.inputs / elapsed:,.0f} inputs/s)")
    if args.inputs is not None:
        print(f"outcome digest {tally.digest} ({'compiled' if core.COMPILED else 'pure'} core)")
    print("  ".join(f"{kind} {count}" for kind, count in tally.counts.items()))
    for kind, examples in tally.examples.items():
        for example in examples:
            print(f"  {kind}: {example}")
    return 1 if tally.failures else 0
