"""Hostile HTTP requests for the gateway fuzzer (`bench/fuzz_http.py`), generated from a seed.

A `Probe` is one request: a method, a target (sent as is, percent-encoding and dot segments
included), headers, a body (bytes, or chunks sent with `Transfer-Encoding: chunked`), or a
`raw` request sent byte for byte on a socket (what an HTTP client library refuses to send:
content-length lies, malformed request lines, bytes no header may hold).  The secret marker
goes into every place a client controls: ids, tokens, headers, query strings, bodies.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gateway.identity import mint

ROOT = Path(__file__).resolve().parent.parent
OPEN, PATCH = "intelligent_ui_open", "intelligent_ui_patch"
ROLES = ("viewer", "user", "agent", "admin")
ROUTES = (
    ("GET", "/v1/sessions/{s}/events"), ("GET", "/v1/sessions/{s}/ag-ui"), ("POST", "/v1/sessions/{s}/ag-ui"),
    ("POST", "/v1/sessions/{s}/tickets"), ("POST", "/v1/sessions/{s}/calls"), ("DELETE", "/v1/sessions/{s}"),
    ("POST", "/v1/sessions/{s}/operations"), ("GET", "/v1/sessions/{s}/operations"),
    ("GET", "/v1/sessions/{s}/operations/{o}"), ("POST", "/v1/sessions/{s}/operations/{o}/confirm"),
    ("POST", "/v1/sessions/{s}/operations/{o}/cancel"), ("GET", "/v1/catalog"),
    ("GET", "/v1/sessions/{s}/messages/{m}/blocks/{b}/state"),
    ("PUT", "/v1/sessions/{s}/messages/{m}/blocks/{b}/state"),
    ("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/metrics"), ("GET", "/app/"), ("GET", "/app/s/{s}"),
    ("GET", "/app/static/styles.css"), ("GET", "/app/static/{s}"),
)
ORIGIN = "https://app.example"  # the one origin the fuzzed gateway allows (IUI_GATEWAY_ORIGINS)
METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "get", "PROPFIND", "BREW")


@dataclass
class Probe:
    """One hostile request and where its marker went."""

    kind: str
    method: str = "GET"
    target: str = "/"
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes | list[bytes] | None = None
    raw: bytes | None = None


@dataclass
class Target:
    """The fuzzer's own session (opened before the storm) and the secret its tokens are signed with."""

    session: str
    secret: bytes
    principal: str = "fuzz"
    project: str = "fuzz"
    epoch: int = 0
    tickets: list[str] = field(default_factory=list)  # issued, some already used


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signed(secret: bytes, header: str, payload: str) -> str:
    """A JWT of any header and payload text, HS256-signed with `secret` (hostile claims with a valid signature)."""
    head = f"{_b64(header.encode())}.{_b64(payload.encode())}"
    return f"{head}.{_b64(hmac.new(secret, head.encode(), hashlib.sha256).digest())}"


class ProbeGenerator:
    """Generates probes from a seeded random source."""

    def __init__(self, rng: random.Random, marker: str, target: Target) -> None:
        self.rng = rng
        self.marker = marker
        self.target = target
        self._document = json.loads((ROOT / "examples" / "stream-initial.json").read_text("utf-8"))
        self._kinds: list[tuple[str, Callable[[], Probe]]] = [
            ("route", self._route), ("route", self._route), ("route", self._route), ("route", self._route),
            ("path", self._odd_path), ("token", self._token_probe), ("body", self._body_probe),
            ("body", self._body_probe), ("stream", self._stream_probe), ("ticket", self._ticket_probe),
            ("query", self._query_probe), ("raw", self._raw_probe), ("cors", self._cors_probe),
        ]

    def probe(self) -> Probe:
        """The next probe."""
        _, make = self.rng.choice(self._kinds)
        return make()

    # -- ids, tokens, headers ------------------------------------------------------------------

    def hostile_id(self) -> str:
        """A path segment (percent-encoded where needed): valid, foreign, huge, unicode, traversal, marker."""
        m, r = self.marker, self.rng
        choices = (
            self.target.session, self.target.session, "other-session", f"id-{m}", m * r.choice((20, 200)),
            "x" * r.choice((128, 129, 4_000, 20_000)), "%C3%A9t%C3%A9-" + m, "%F0%9F%98%80" + m, "%E2%80%AE" + m,
            f"a%2F{m}", f"..%2F..%2F{m}", "%2e%2e", ".", "..", f"%00{m}", f"%ff%fe{m}", f"a%3Ab{m}",
            f"%7B{m}%7D", f"{m}%20x", f"{m}%0d%0aSet-Cookie:%20x", "%", f"%zz{m}", f"{m};x=1",
        )
        return r.choice(choices)

    def token(self) -> str:
        """A bearer token: valid of any role (owner or stranger), or forged, expired, alg none, oversized."""
        r, secret, now = self.rng, self.target.secret, int(time.time())
        role = r.choice(ROLES)
        owner = (self.target.principal, self.target.project)
        claims = ('{"sub":"fuzz","project":"fuzz","role":"admin","aud":"iui","exp":%s}')
        makers: list[Callable[[], str]] = [
            lambda: mint(secret=secret, principal=owner[0], project=owner[1], role=role, ttl_s=600),
            lambda: mint(secret=secret, principal=owner[0], project=owner[1], role=role, ttl_s=600),
            lambda: mint(secret=secret, principal="stranger", project=owner[1], role=role, ttl_s=600),
            lambda: mint(secret=secret, principal=owner[0], project=owner[1], role=role, ttl_s=-60),
            lambda: mint(secret=b"another-secret-of-32-bytes-or-more!!", principal=owner[0], project=owner[1],
                         role=role, ttl_s=600),
            lambda: signed(secret, '{"alg":"none"}', claims % (now + 600)).rsplit(".", 1)[0] + ".",
            lambda: signed(secret, '{"alg":"RS256","kid":"' + self.marker + '"}', claims % (now + 600)),
            lambda: signed(secret, '{"alg":"HS256","kid":"../../' + self.marker + '"}', claims % (now + 600)),
            lambda: signed(secret, '{"alg":"HS256"}', claims % r.choice(("1e400", "-1e400", "NaN", "Infinity",
                                                                        "18446744073709551616", '"soon"', "[]"))),
            lambda: signed(secret, '{"alg":"HS256"}', '{"sub":"' + self.marker + '","project":{},"role":"root",'
                           f'"aud":["iui"],"exp":{now + 600}}}'),
            lambda: signed(secret, '{"alg":"HS256","crit":["' + self.marker + '"]}', claims % (now + 600)),
            lambda: signed(secret, '{"alg":"HS256"}', "[" * 5000 + "]" * 5000),
            # nested deep enough for json.loads's recursion yet within the 8 KiB token bound
            lambda: signed(secret, "[" * 1500 + "]" * 1500, claims % (now + 600)),
            lambda: signed(secret, '{"alg":"HS256"}', "[" * 1500 + "]" * 1500),
            lambda: signed(secret, '{"alg":"HS256"}', claims % ("1" + "0" * 400)),  # an exp no float holds
            lambda: "e30." + _b64(b"\xff\xfe" + self.marker.encode()) + ".e30",
            lambda: self.marker + "." + self.marker + "." + self.marker,
            lambda: "a" * r.choice((8_193, 60_000)) + self.marker,
        ]
        return r.choice(makers)()

    def authorization(self) -> list[tuple[bytes, bytes]]:
        """An Authorization header (or none, or two)."""
        r = self.rng
        pick = r.random()
        if pick < 0.08:
            return []
        if pick < 0.16:
            value = r.choice((b"Bearer", b"Bearer ", b"Basic " + base64.b64encode(self.marker.encode() + b":x"),
                              b"Bearer \xff\xfe" + self.marker.encode(), b"bEaReR    " + self.token().encode(),
                              b"Bearer " + self.marker.encode() + b"\t" + self.marker.encode()))
            return [(b"authorization", value)]
        if pick < 0.2:
            return [(b"authorization", b"Bearer " + self.token().encode()),
                    (b"authorization", b"Bearer " + self.marker.encode())]
        return [(b"authorization", b"Bearer " + self.token().encode())]

    def extra_headers(self) -> list[tuple[bytes, bytes]]:
        """Zero to three hostile optional headers."""
        m, r = self.marker.encode(), self.rng
        choices = (
            (b"content-type", r.choice((b"application/json", b"application/json; charset=utf-16", b"text/plain",
                                        b"application/x-www-form-urlencoded", b"multipart/form-data; boundary=" + m,
                                        b"application/" + m, b"APPLICATION/JSON ; x=" + m, b""))),
            (b"idempotency-key", r.choice((b"key-" + m, b"", b"k" * 129, b"\xe9t\xe9" + m, b"a\tb" + m))),
            (b"if-match", r.choice((b'"0"', b'W/"1"', b'"999999999999999"', b'"' + m + b'"', b"*", b'"' + b"9" * 40))),
            (b"last-event-id", r.choice((m, self.cursor().encode(), b"v1." + m, b"v1." * 200))),
            (b"range", r.choice((b"bytes=abc", b"bytes=999999-", b"bytes=5-1", m + b"=1-2", b"bytes=0-1,2-3",
                                 b"bytes=-" + b"9" * 30, b"bytes=0-0," * 200 + m))),
            (b"if-none-match", m), (b"if-modified-since", b"garbage " + m),
            (b"origin", r.choice((b"https://" + m, ORIGIN.encode(), b"null"))),
            (b"accept", r.choice((b"text/event-stream", b"application/" + m, b"*/*;q=" + m))),
            (b"accept-encoding", r.choice((b"gzip, br, " + m, b"identity;q=0"))),
            (b"host", r.choice((m + b".example", b"", b"[::1]:99999"))), (b"x-forwarded-for", m),
            (b"cookie", b"session=" + m), (b"expect", r.choice((b"100-continue", m))),
            (b"connection", b"upgrade"), (b"upgrade", r.choice((b"websocket", b"h2c", m))),
            (b"sec-websocket-version", b"13"), (b"sec-websocket-key", b"dGhlIHNhbXBsZSBub25jZQ=="),
            (b"x-" + m, b"x" * r.choice((10, 10_000))),
        )
        return [r.choice(choices) for _ in range(r.randint(0, 3))]

    def cursor(self) -> str:
        """A `Last-Event-ID`: of this session's epoch or not, with ids up to and past 64 bits."""
        r = self.rng
        epoch = r.choice((self.target.epoch, self.target.epoch, 0, 1, 10**19))
        ids = ("0-0", "1-0", f"{2**64 - 1}-{2**64 - 1}", f"{2**64 - 2}-0", f"{2**64}-0", "9" * 20 + "-1",
               "9999999999999-0", f"{int(time.time() * 1000)}-0")
        return f"v1.{epoch}." + ".".join(r.choice(ids) for _ in range(3))

    # -- probe kinds ---------------------------------------------------------------------------

    def _path(self, template: str) -> str:
        ids = {"{s}": self.hostile_id, "{o}": self.hostile_id, "{m}": self.hostile_id, "{b}": self.hostile_id}
        for name, make in ids.items():
            while name in template:
                template = template.replace(name, make() if self.rng.random() < 0.5 else self.target.session
                                            if name == "{s}" else "x1", 1)
        return template

    def _route(self) -> Probe:
        method, template = self.rng.choice(ROUTES)
        if self.rng.random() < 0.15:
            method = self.rng.choice(METHODS)
        headers = [*self.authorization(), *self.extra_headers()]
        body = self._body(template) if method in ("POST", "PUT", "PATCH") else None
        return Probe("route", method, self._path(template), headers, body)

    def _odd_path(self) -> Probe:
        m, r = self.marker, self.rng
        path = r.choice((
            f"/v1/sessions/{self.target.session}/events/", "/v1/catalog/", f"/v1/sessions/{m}/tickets/", f"/{m}/",
            f"/app/static/%2e%2e/%2e%2e/gateway/app.py?{m}", f"/app/static/..%2F..%2F{m}", "/app/static/",
            f"/app/static/src/{m}.mjs", "/app/static/%00", "//v1//catalog", f"/v1/sessions//{m}",
            f"/V1/CATALOG/{m}", f"/healthz/{m}", f"/metrics?{m}", "/" + "a/" * 2_000 + m, f"/app/s/{m}/x",
            f"/v1/sessions/{self.hostile_id()}/{self.hostile_id()}/{m}", "/.env", "/app/static/index.html",
        ))
        return Probe("path", r.choice(METHODS), path, [*self.authorization(), *self.extra_headers()])

    def _token_probe(self) -> Probe:
        method, template = self.rng.choice(ROUTES[:14])
        headers = [(b"authorization", b"Bearer " + self.token().encode()), *self.extra_headers()]
        body = self._valid_body(template) if method in ("POST", "PUT") else None
        return Probe("token", method, self._path(template), headers, body)

    def _body_probe(self) -> Probe:
        method, template = self.rng.choice([route for route in ROUTES if route[0] in ("POST", "PUT")])
        role = {"calls": "agent"}.get(template.rsplit("/", 1)[-1], "user")
        token = mint(secret=self.target.secret, principal=self.target.principal, project=self.target.project,
                     role=self.rng.choice((role, "admin")), ttl_s=600)
        headers = [(b"authorization", f"Bearer {token}".encode()), (b"content-type", b"application/json"),
                   *self.extra_headers()]
        body = self._body(template)
        return Probe("body", method, self._path(template) if self.rng.random() < 0.2 else
                     template.format(s=self.target.session, o="op-x", m="m1", b="b1"),
                     headers, body)

    def _stream_probe(self) -> Probe:
        path = f"/v1/sessions/{self.target.session}/" + self.rng.choice(("events", "ag-ui"))
        headers = [(b"authorization", b"Bearer " + self._owner_token("viewer").encode())]
        if self.rng.random() < 0.7:
            headers.append((b"last-event-id", self.cursor().encode()))
        else:
            path += "?last_event_id=" + self.rng.choice((self.cursor(), self.marker, "%ff" + self.marker))
        return Probe("stream", "GET", path, headers + self.extra_headers()[:1])

    def _ticket_probe(self) -> Probe:
        r, tickets = self.rng, self.target.tickets
        ticket = r.choice(tickets) if tickets and r.random() < 0.6 else r.choice((
            self.marker, "A" * 43, self.marker * 10, "%ff" * 43, "x" * 10_000, ""))
        session = self.target.session if r.random() < 0.8 else "other-session"
        path = f"/v1/sessions/{session}/" + r.choice(("events", "events", "ag-ui"))
        query = r.choice((f"ticket={ticket}", f"ticket={ticket}&ticket={self.marker}",
                          f"ticket={ticket}&last_event_id={self.cursor()}"))
        return Probe("ticket", "GET", f"{path}?{query}", self.extra_headers()[:1])

    def _query_probe(self) -> Probe:
        m, r = self.marker, self.rng
        ref = r.choice(('{"sourceCallId":"c1","uiId":"sales-report","generation":1,"revision":0}', m, "{",
                        '{"a":' * 3000 + "1" + "}" * 3000, '{"x":NaN}', '{"x":1e999}', '{"' + m + '":1}',
                        "%ff%fe", "[" + m + "]", "x" * 40_000, '{"sourceCallId":"' + m + '"}'))
        query = r.choice((f"documentRef={ref}", f"documentRef={ref}&documentRef={m}", f"%zz={m}&&=&{m}",
                          f"documentRef=%ff{m}", m * 300, "a=" + "b" * r.choice((70_000, 1_000_000)) + m,
                          "&".join(f"k{i}={m}" for i in range(r.choice((1_000, 20_000))))))
        path = f"/v1/sessions/{self._session_or_id()}/operations?{query}"
        return Probe("query", "GET", path, [(b"authorization", b"Bearer " + self._owner_token("viewer").encode())])

    def _cors_probe(self) -> Probe:
        """A preflight: allowed or foreign origin, any method, allowed or foreign headers."""
        m, r = self.marker.encode(), self.rng
        headers = [(b"origin", r.choice((ORIGIN.encode(), b"https://" + m, b"null", ORIGIN.encode() + b"." + m))),
                   (b"access-control-request-method", r.choice((b"GET", b"POST", b"PATCH", m)))]
        if r.random() < 0.6:
            headers.append((b"access-control-request-headers",
                            r.choice((b"authorization, content-type", b"authorization, x-" + m, m))))
        if r.random() < 0.2:
            headers.append((b"access-control-request-private-network", b"true"))
        _, template = r.choice(ROUTES)
        return Probe("cors", "OPTIONS", self._path(template), headers)

    def _raw_probe(self) -> Probe:
        m, s, r = self.marker.encode(), self.target.session.encode(), self.rng
        auth = b"authorization: Bearer " + self._owner_token("admin").encode() + b"\r\n"
        call = b"/v1/sessions/" + s + b"/calls"
        requests = (
            b"GET /app/static/../../gateway/app.py HTTP/1.1\r\nhost: x\r\n\r\n",
            b"GET /v1/sessions/" + s + b"/../../v1/catalog/" + m + b" HTTP/1.1\r\nhost: x\r\n" + auth + b"\r\n",
            b"GET http://" + m + b".example/v1/catalog HTTP/1.1\r\nhost: x\r\n" + auth + b"\r\n",
            b"OPTIONS * HTTP/1.1\r\nhost: x\r\n\r\n",
            b"BREW /" + m + b" HTTP/1.1\r\nhost: x\r\n\r\n",
            b"GET /v1/catalog HTTP/9.9\r\nhost: x\r\n\r\n",
            b"GET /" + m + b"\r\n\r\n",
            b"GET /v1/\xff\xfe" + m + b" HTTP/1.1\r\nhost: x\r\n\r\n",
            b"GET /v1/catalog HTTP/1.1\r\nhost: x\r\nx-a: b\x00" + m + b"\r\n\r\n",
            b"GET /v1/catalog HTTP/1.1\r\nhost: x\r\nbad header" + m + b": y\r\n\r\n",
            b"GET /v1/catalog HTTP/1.1\r\nhost: x\r\nx-fold: a\r\n " + m + b"\r\n\r\n",
            b"GET /v1/catalog HTTP/1.1\r\nhost: x\r\nx-big: " + b"a" * 200_000 + m + b"\r\n\r\n",
            b"GET /v1/catalog HTTP/1.1\r\nhost: x\r\n" + b"".join(b"x-%d: 1\r\n" % i for i in range(2_000)) + b"\r\n",
            b"POST " + call + b" HTTP/1.1\r\nhost: x\r\n" + auth + b"content-length: 5\r\n\r\n{}" + m * 4,
            b"POST " + call + b" HTTP/1.1\r\nhost: x\r\n" + auth + b"content-length: -1\r\n\r\n{}",
            b"POST " + call + b" HTTP/1.1\r\nhost: x\r\n" + auth + b"content-length: 2\r\ncontent-length: 3\r\n\r\n{}",
            b"POST " + call + b" HTTP/1.1\r\nhost: x\r\n" + auth
            + b"transfer-encoding: chunked\r\ncontent-length: 2\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
            b"POST " + call + b" HTTP/1.1\r\nhost: x\r\n" + auth + b"transfer-encoding: chunked\r\n\r\nzz\r\n" + m,
            b"POST " + call + b" HTTP/1.1\r\nhost: x\r\n" + auth
            + b"transfer-encoding: chunked\r\n\r\nffffffffffffffffff\r\n" + m + b"\r\n0\r\n\r\n",
            b"POST " + call + b" HTTP/1.1\r\nhost: x\r\n" + auth + b"transfer-encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
        )
        return Probe("raw", raw=r.choice(requests))

    # -- bodies --------------------------------------------------------------------------------

    def _owner_token(self, role: str) -> str:
        return mint(secret=self.target.secret, principal=self.target.principal, project=self.target.project,
                    role=role, ttl_s=600)

    def _session_or_id(self) -> str:
        return self.target.session if self.rng.random() < 0.7 else self.hostile_id()

    def _valid_body(self, template: str) -> bytes:
        if template.endswith("/calls"):
            return json.dumps({"tool": OPEN, "arguments": {"document": self._document}}).encode()
        if template.endswith("/confirm"):
            return b'{"approve": true}'
        return b"{}"

    def _body(self, template: str) -> bytes | list[bytes]:
        """A body for the route: a near-valid one with the marker in it, or a hostile one."""
        m, r = self.marker, self.rng
        makers: list[Callable[[], bytes | list[bytes]]] = [
            lambda: self._near_valid(template), lambda: self._near_valid(template),
            lambda: b"[" * 100_000 + b"]" * 100_000, lambda: b'{"a":' * 2_000 + b"1" + b"}" * 2_000,
            lambda: b'{"tool":"x","tool":"' + m.encode() + b'","arguments":{},"arguments":{"a":1}}',
            lambda: b'{"tool":"' + OPEN.encode() + b'","arguments":{"x":NaN,"y":Infinity,"z":-Infinity}}',
            lambda: b'{"tool":"' + OPEN.encode() + b'","arguments":{"n":' + b"9" * r.choice((20, 400, 5_000)) + b"}}",
            lambda: b'{"tool":"' + OPEN.encode() + b'","arguments":{"n":1e999,"m":-0.0,"k":1E-400}}',
            lambda: b'{"tool":"\xff\xfe' + m.encode() + b'","arguments":{}}',
            lambda: b'{"tool":"' + OPEN.encode() + b'","arguments":{"a":"\\ud800' + m.encode() + b'"}}',
            lambda: b"\xef\xbb\xbf{}", lambda: b"", lambda: b"null", lambda: b'"' + m.encode() + b'"',
            lambda: b"{}" + m.encode(), lambda: m.encode() + b"=1&x=2",
            lambda: b'{"' + m.encode() * 1000 + b'":1}', lambda: b"{" + b'"k":1,' * 50_000 + b'"z":0}',
            lambda: b'{"a":"' + b"x" * r.choice((40_000, 400_000, 2_000_000)) + m.encode() + b'"}',
            lambda: [b'{"tool":"' + OPEN.encode() + b'","arguments":{"pad":"'] + [b"x" * 65_536] * r.choice((1, 40))
            + [m.encode() + b'"}}'],
            lambda: [b"{", b"", b'"approve"', b":", b"tr", b"ue}"],
        ]
        return r.choice(makers)()

    def _near_valid(self, template: str) -> bytes:
        """The route's body shape with the marker in a place the gateway must refuse or treat as data."""
        m, r = self.marker, self.rng
        tail = template.rsplit("/", 1)[-1]
        bodies: dict[str, list[Any]] = {
            "calls": [{"tool": m, "arguments": {}}, {"tool": OPEN, "arguments": {"document": m}},
                      {"tool": OPEN, "arguments": {"document": self._document}, "call": m},
                      {"tool": OPEN, "arguments": {}, m: 1}, {"tool": PATCH, "arguments": {
                          "sourceCallId": m, "generation": 2**70, "baseRevision": -1, "mutation": {"type": m}}},
                      {"tool": OPEN, "arguments": {"document": {**self._document, "id": m}}, "call": "c-" + m},
                      {"tool": "present_answer", "arguments": {"message_id": m, "block": {"type": m}}}],
            "operations": [{"documentRef": {"sourceCallId": m}, "actionId": m, "values": {m: m}},
                           {"documentRef": m, "requestId": "\u00e9" + m}, {"requestId": m * 50}],
            "confirm": [{"approve": m}, {"approve": True, m: 1}, {"approve": None}],
            "cancel": [{m: m}], "tickets": [{m: m}], "ag-ui": [{"threadId": m, "runId": m, "messages": [m]}],
            "state": [{"nodes": {m: m}, "expected_revision": m, "schema_digest": m},
                      {"nodes": m, "expected_revision": 2**80, "schema_digest": "x", "request_id": m},
                      {"nodes": {}, "schema_digest": m}],
        }
        return json.dumps(r.choice(bodies.get(tail, [{m: m}]))).encode()


def marker_of(rng: random.Random) -> str:
    """A random marker no response could contain by chance."""
    return "Zq" + "".join(rng.choice("BCDFGHJKLMNPQRSTVWXZ") for _ in range(10))


def sample(seed: int, count: int, target: Target) -> Iterator[Probe]:
    """`count` probes of a seed (for looking at what the generator makes)."""
    rng = random.Random(seed)
    generator = ProbeGenerator(rng, marker_of(rng), target)
    for _ in range(count):
        yield generator.probe()
