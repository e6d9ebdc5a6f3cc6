"""`iui`: one command with subcommands; every option also readable from an `IUI_*` variable.

Errors are one line on stderr (`iui: error: ...`) with a non-zero exit status, never a
traceback.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from config.settings import ENV_PREFIX, Settings, SettingsError

from .actions import add_action_commands
from .common import REPLY_BOUND_S, CommandError, _client, _redis, _settings, unlistenable, within
from .gateway import add_gateway_commands

if TYPE_CHECKING:  # imported where used: each subcommand loads only what it runs
    from prometheus_client import CollectorRegistry

# -- validate / schema --------------------------------------------------------------------


def _validate_one(name: str) -> int:
    from core.document.model import parse_document
    from core.errors import UISchemaError

    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text("utf-8")
        value = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else "not a JSON text"
        print(f"iui: error: {name}: {reason}", file=sys.stderr)
        return 2
    try:
        parse_document(value)
    except UISchemaError as error:
        for issue in error.issues:
            print(f"{name}: {issue.path or '/'}: {issue.message}")
        return 1
    print(f"{name}: OK")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate UI documents; exit 1 if any is invalid, 2 if any is unreadable."""
    statuses = [_validate_one(name) for name in args.files]
    return 2 if 2 in statuses else (1 if 1 in statuses else 0)


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the JSON Schema of UI documents."""
    from core.document.schema import document_json_schema

    print(json.dumps(document_json_schema(), indent=2, ensure_ascii=False))
    return 0


# -- worker -------------------------------------------------------------------------------


def cmd_worker(args: argparse.Namespace) -> int:
    """Run one pool process until SIGTERM/SIGINT, then hand its partitions over."""
    import logging

    from prometheus_client import CollectorRegistry

    from ..observability.metrics import Metrics
    from ..runtime.pool import WorkerPool

    settings = _settings(args)
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    metrics = Metrics(registry=CollectorRegistry())
    metrics.partitions.set(settings.partitions)
    if settings.metrics_port:
        _serve_metrics(args, settings, metrics.registry)
    from ..redisio.connection import connect

    # A socket timeout turns a black-holed Redis into a retried error (XREADGROUP blocks 250 ms).
    redis = connect(settings.redis_url, socket_timeout=10, socket_connect_timeout=5)
    def serving() -> None:  # after the first successful tick: Redis answered and meta matched
        # the deployment's partition count, not this worker's share (`iui status` shows who holds which)
        print(f"iui worker {pool.worker_id}: serving {settings.key_prefix!r} (a pool of {settings.partitions} "
              "partitions shared by its workers)", file=sys.stderr, flush=True)

    pool = WorkerPool(settings=settings, redis=redis, metrics=metrics, worker_id=settings.worker_id or None,
                      on_serving=serving)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: pool.stop())
    pool.run()
    return 0


def _serve_metrics(args: argparse.Namespace, settings: Settings, registry: CollectorRegistry) -> None:
    """Listen for Prometheus's scrapes, or fail in one line blaming the metrics setting: an
    `OSError` would otherwise read as Redis being unreachable (it is one of its transient errors)."""
    from prometheus_client import start_http_server

    try:
        start_http_server(settings.metrics_port, addr=settings.metrics_addr, registry=registry)
    except OSError as error:
        raise unlistenable(args, settings, error, "serve metrics", ("metrics_addr", "metrics_port")) from None


# -- submit / tail / status ---------------------------------------------------------------


def cmd_submit(args: argparse.Namespace) -> int:
    """Submit one tool call (arguments JSON from a file or stdin) and print its reply."""
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
        arguments = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError):
        raise CommandError(f"{args.file}: not a readable JSON text", 2) from None
    if not args.timeout > 0:
        raise CommandError("--timeout must be a positive number of seconds", 2)
    deadline = time.monotonic() + args.timeout
    settings = _settings(args)
    with within(args.timeout, settings):
        client = _client(settings, min(args.timeout, REPLY_BOUND_S), blocking=args.timeout)
        from ..client.client import ClientError, InvalidEntry

        try:
            fields = client.entry(args.session, args.tool, arguments, call=args.call, request=args.request)
        except InvalidEntry as error:  # an id no reply could come for: its rule, not the value
            raise CommandError(f"{error} (--session, --request, --call)", 2) from None
        if args.no_wait:
            print(client.add(fields))
            return 0
        try:  # a connection error sends the same entry again: the runtime answers it from its ledger
            reply = client.send(fields, timeout=max(0.01, deadline - time.monotonic()))
        except ClientError:
            raise CommandError(f"no reply to request {fields['request']} within {args.timeout:g} s") from None
    print(json.dumps(reply, ensure_ascii=False))
    return 0 if reply.get("ok") else 1


def _print_frame(state: Any, whole: bool) -> None:
    frame = state.checkpoint
    if whole:
        print(json.dumps(frame, ensure_ascii=False), flush=True)
    else:
        print(f"uiId={frame['uiId']} sourceCallId={frame['sourceCallId']} generation={frame['generation']} "
              f"seq={frame['seq']} revision={frame['revision']} type={frame['type']} "
              f"status={state.status}", flush=True)


def _print_receipt(receipt: dict[str, Any], whole: bool) -> None:
    if whole:
        print(json.dumps({"receipt": receipt}, ensure_ascii=False), flush=True)
    else:
        ref = receipt["documentRef"]
        print(f"receipt operationId={receipt['operationId']} actionId={receipt['actionId']} "
              f"status={receipt['status']} uiId={ref['uiId']} generation={ref['generation']}"
              + (f" message={receipt['message']!r}" if receipt.get("message") else "")
              + (f" result={json.dumps(receipt['result'], ensure_ascii=False)}" if "result" in receipt else ""),
              flush=True)


def cmd_tail(args: argparse.Namespace) -> int:
    """Print a session's frames and receipt changes as they arrive (after the logged ones)."""
    client = _client(_settings(args), min(args.timeout, REPLY_BOUND_S) if args.timeout > 0 else REPLY_BOUND_S)
    idle_limit = args.timeout if args.timeout > 0 else float("inf")
    with client.follow(args.session) as feed, client.follow_receipts(args.session) as receipts:
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < idle_limit:
            seen = 0
            for state in feed.states(timeout=0.1, idle=0.05):
                _print_frame(state, args.json)
                seen += 1
            for receipt in receipts.receipts(timeout=0.1, idle=0.05):
                _print_receipt(receipt, args.json)
                seen += 1
            if seen:
                quiet_since = time.monotonic()
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """Print partitions, owners, epochs, pending counts and lag (as one JSON object with --json)."""
    from .status import deployment_report, deployment_status

    settings = _settings(args)
    if not args.timeout > 0:
        raise CommandError("--timeout must be a positive number of seconds", 2)
    redis = _redis(settings, args.timeout)
    if args.json:
        print(json.dumps(deployment_report(redis, settings)))
        return 0
    for line in deployment_status(redis, settings):
        print(line)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Run the stream example end to end (embedded Redis unless IUI_REDIS_URL is set); with --serve,
    keep it running behind the gateway for the browser."""
    from .demo import EXAMPLES, run_demo

    settings = _settings(args)
    embedded = "redis_url" not in settings.model_fields_set  # neither IUI_REDIS_URL nor --redis-url
    if embedded and "partitions" not in settings.model_fields_set:
        # The embedded Redis is private: fewer partitions start faster.  A real one keeps its P.
        settings = _settings(args, partitions=8)
    if not embedded:  # fail in one line before worker threads start against an unreachable Redis
        _redis(settings, REPLY_BOUND_S).ping()
    if args.serve:  # the demo followed live in the browser, until Ctrl-C
        if args.which == "answer":
            raise CommandError("--serve plays the stream, the actions and the answers together: drop 'answer'", 2)
        if not 0 <= args.pause <= 60:
            raise CommandError("--pause must be 0-60 seconds", 2)
        from .demo_serve import serve_demo

        return serve_demo(settings, embedded=embedded, port=settings.gateway_port, pause=args.pause,
                          out=lambda line: print(line, flush=True),
                          examples=Path(args.examples) if args.examples else EXAMPLES)
    if args.which == "answer":  # the answer-ui@1 examples and a view-state round trip
        from .demo_answers import EXAMPLES as ANSWER_EXAMPLES
        from .demo_answers import run_answer_demo

        return run_answer_demo(settings, embedded=embedded,
                               examples=Path(args.examples) if args.examples else ANSWER_EXAMPLES)
    return run_demo(settings, embedded=embedded, examples=Path(args.examples) if args.examples else EXAMPLES)


# -- parser -------------------------------------------------------------------------------


class _Version(argparse.Action):
    """`--version`: the installed distribution's version and which builds of the core and of the
    worker's hot path run (compiled or pure Python)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **_: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the version of iui and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from core import COMPILED

        from ..observability.metrics import build_version
        from ..runtime.build import COMPILED as WORKER_COMPILED

        print(f"iui {build_version()} ({'compiled' if COMPILED else 'pure'} core, "
              f"{'compiled' if WORKER_COMPILED else 'pure'} worker)")
        parser.exit()


def _common(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("connection (defaults from IUI_* variables)")
    group.add_argument("--redis-url", help="Redis URL (IUI_REDIS_URL)")
    group.add_argument("--key-prefix", help="key prefix (IUI_KEY_PREFIX, default iui)")
    group.add_argument("--partitions", type=int, help="partition count (IUI_PARTITIONS, default 64)")


def build_parser() -> argparse.ArgumentParser:
    """The `iui` argument parser."""
    parser = argparse.ArgumentParser(prog="iui", description="Intelligent UI host: documents and the Redis runtime")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate", help="validate UI document files")
    p.add_argument("files", nargs="+", metavar="FILE", help="JSON files ('-' for stdin)")
    p.set_defaults(run=cmd_validate)
    sub.add_parser("schema", help="print the JSON Schema of UI documents").set_defaults(run=cmd_schema)
    p = sub.add_parser("worker", help="run a worker pool process")
    _common(p)
    p.add_argument("--metrics-port", type=int, help="serve Prometheus metrics on this port (IUI_METRICS_PORT)")
    p.add_argument("--metrics-addr", help="address the metrics listen on (IUI_METRICS_ADDR, default 0.0.0.0)")
    p.add_argument("--log-level",
                   help="DEBUG, INFO, WARNING, ERROR or CRITICAL, any case (IUI_LOG_LEVEL, default WARNING)")
    p.add_argument("--lease-ttl-ms", type=int, help="lease TTL (IUI_LEASE_TTL_MS)")
    p.add_argument("--lease-renew-ms", type=int, help="lease renew interval (IUI_LEASE_RENEW_MS)")
    p.add_argument("--max-document-bytes", type=int, help="document budget (IUI_MAX_DOCUMENT_BYTES)")
    p.add_argument("--worker-id", help="worker id shown in leases and status (IUI_WORKER_ID, default random)")
    p.set_defaults(run=cmd_worker)
    p = sub.add_parser("submit", help="submit one tool call and print its reply")
    _common(p)
    p.add_argument("--session", required=True, help="session id (1-128 printable ASCII, no space, ':', '{' or '}')")
    p.add_argument("--tool", required=True, help="e.g. intelligent_ui_open")
    p.add_argument("--call", help="native tool call id (default random)")
    p.add_argument("--request", help="request id (default random)")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="seconds to wait for the reply (and at most for Redis to answer)")
    p.add_argument("--no-wait", action="store_true", help="print the request id instead of waiting")
    p.add_argument("file", nargs="?", default="-", help="arguments JSON file (default stdin)")
    p.set_defaults(run=cmd_submit)
    p = sub.add_parser("tail", help="print a session's frames as they arrive")
    _common(p)
    p.add_argument("session", help="session id whose frames to print")
    p.add_argument("--timeout", type=float, default=0, help="stop after this many idle seconds (0: never)")
    p.add_argument("--json", action="store_true", help="print whole frames")
    p.set_defaults(run=cmd_tail)
    p = sub.add_parser("status", help="partitions, owners, epochs, pending counts, lag")
    _common(p)
    p.add_argument("--timeout", type=float, default=REPLY_BOUND_S, help="seconds to wait for Redis (default 5)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (meta, streaming, tools, workers, owned, partitions)")
    p.set_defaults(run=cmd_status)
    p = sub.add_parser("demo", help="run the stream example (or the answer-ui@1 examples) end to end")
    _common(p)
    p.add_argument("which", nargs="?", choices=("stream", "answer"), default="stream",
                   help="stream (default) or answer: the answer-ui@1 examples and a view-state round trip")
    p.add_argument("--examples", help="folder holding stream-initial.json and stream-mutations.json "
                                      "(default: the copies shipped with iui)")
    p.add_argument("--serve", action="store_true",
                   help="keep the demo running with the gateway and print the browser viewer's URL (until Ctrl-C)")
    p.add_argument("--port", dest="gateway_port", type=int,
                   help="with --serve: the port on 127.0.0.1 (IUI_GATEWAY_PORT, default 8080)")
    p.add_argument("--pause", type=float, default=1.0,
                   help="with --serve: seconds between the streamed frames and steps (default 1)")
    p.set_defaults(run=cmd_demo)
    add_action_commands(sub, _common)
    add_gateway_commands(sub, _common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `iui` console script."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except CommandError as error:
        print(f"iui: error: {error}", file=sys.stderr)
        return error.status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `| head`): nothing left to say
        sys.stderr.close()
        return 1
    except Exception as error:
        print(f"iui: error: {_describe(error, args)}", file=sys.stderr)
        return 1


OWN_PACKAGES = frozenset(("core", "workers", "gateway", "config"))


def _describe(error: BaseException, args: argparse.Namespace) -> str:
    from config.capabilities import CatalogError

    from ..redisio.connection import unavailable

    if isinstance(error, SettingsError):
        return str(error)
    if isinstance(error, CatalogError):  # the catalog every command loads is IUI_CAPABILITIES's
        return f"invalid setting {ENV_PREFIX}CAPABILITIES: {error}"
    try:
        url = _settings(args).redis_url
    except SettingsError:
        url = ""
    translated = unavailable(error, url)
    if translated is not None:
        return str(translated)
    text = " ".join(str(error).split()) or type(error).__name__
    if isinstance(error, OSError) or type(error).__module__.split(".")[0] in OWN_PACKAGES:
        return text  # our own errors say what is wrong in words; a class name would be noise
    return f"{type(error).__name__}: {text}"


if __name__ == "__main__":
    sys.exit(main())
