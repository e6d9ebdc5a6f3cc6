"""The parsed plain documents of host actions: one process-wide cache, bounded by estimated bytes."""

from __future__ import annotations

import json
from pathlib import Path

from workers.actions.plain import PlainDocuments
from workers.sessions.cache import estimate

EXAMPLE = (Path(__file__).resolve().parents[2] / "examples" / "compound-interest.json").read_text()


def _text(n: int) -> str:
    return json.dumps({**json.loads(EXAMPLE), "id": f"doc-{n}"})


def test_a_document_is_parsed_once_while_it_stays_cached() -> None:
    plain = PlainDocuments(max_bytes=10 * estimate(_text(0)))
    first = plain.parsed("d0", _text(0))
    assert first["id"] == "doc-0" and plain.parsed("d0", _text(0)) is first


def test_the_documents_kept_stay_within_the_budget_and_the_oldest_go_first() -> None:
    # An audit: each partition kept 256 parsed documents whatever their size (~1.3 MB each at the
    # document limit: ~330 MB a partition, ~21 GB for 64 partitions).
    each = estimate(_text(0))
    plain = PlainDocuments(max_bytes=3 * each)
    documents = [plain.parsed(f"d{n}", _text(n)) for n in range(10)]
    assert len(plain) == 3 and plain.bytes <= 3 * each
    assert plain.parsed("d9", _text(9)) is documents[9]
    assert plain.parsed("d0", _text(0)) is not documents[0]  # evicted: parsed again
    assert plain.parsed("d0", _text(0)) == documents[0]
