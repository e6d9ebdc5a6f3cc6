"""`iui action ...` and `iui rq-worker`: the action runtime from the command line.

    iui action reserve --session s1 request.json      # a UIActionReserveRequest (file or stdin)
    iui action get --session s1 OPERATION_ID
    iui action cancel --session s1 OPERATION_ID
    iui action confirm --session s1 OPERATION_ID approve|deny
    iui action list --session s1 ref.json             # a UIDocumentRef (file or stdin)
    iui action catalog --session s1
    iui action inbox --session s1                     # the agent inbox entries
    iui rq-worker [QUEUE...]                          # RQ's worker on IUI_RQ_REDIS_URL and the catalog's queues

Each request prints its reply as one JSON line; exit status 1 when it was rejected.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .common import REPLY_BOUND_S, CommandError, _client, _settings, within


def _json_input(name: str) -> Any:
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text("utf-8")
        return json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError):
        raise CommandError(f"{name}: not a readable JSON text", 2) from None


def _body(args: argparse.Namespace) -> Any:
    if args.request in ("reserve", "list"):
        return _json_input(args.file)
    if args.request == "catalog":
        return {}
    if args.request == "confirm":
        return {"operationId": args.operation, "decision": args.decision}
    return {"operationId": args.operation}


def cmd_action(args: argparse.Namespace) -> int:
    """Submit one action request and print its reply (or print the agent inbox)."""
    from ..client.client import ClientError, InvalidEntry

    if not args.timeout > 0:
        raise CommandError("--timeout must be a positive number of seconds", 2)
    settings = _settings(args)
    with within(args.timeout, settings):
        client = _client(settings, min(args.timeout, REPLY_BOUND_S), blocking=args.timeout)
        if args.request == "inbox":
            for entry_id, entry in client.inbox(args.session):
                print(json.dumps({"id": entry_id, **entry}, ensure_ascii=False))
            return 0
        try:
            reply = client.action(args.session, args.request, _body(args), timeout=args.timeout)
        except InvalidEntry as error:  # an id no reply could come for: its rule, not the value
            raise CommandError(f"{error} (--session)", 2) from None
        except ClientError:
            raise CommandError(f"no reply within {args.timeout:g} s") from None
    print(json.dumps(reply, ensure_ascii=False))
    return 0 if reply.get("ok") else 1


def cmd_rq_worker(args: argparse.Namespace) -> int:
    """Replace this process with RQ's worker on the RQ Redis and the catalog's queues."""
    from config.capabilities import load_catalog

    settings = _settings(args)
    queues = args.queues or load_catalog(settings.capabilities).queues
    command = [sys.executable, "-m", "rq.cli", "worker", *_worker_class(args.rq_options), *args.rq_options, *queues]
    # RQ reads its URL from RQ_REDIS_URL too: there it may carry a password, which argv shows to `ps`.
    os.execvpe(command[0], command, {**os.environ, "RQ_REDIS_URL": settings.rq_url})
    return 1  # not reached


def _worker_class(rq_options: list[str]) -> list[str]:
    """`--worker-class` of the project's `RQWorker` (which stops within a second), unless the
    options name a class of their own."""
    from workers.actions.rq_worker import WORKER_CLASS

    named = any(option in ("-w", "--worker-class") or option.startswith("--worker-class=") for option in rq_options)
    return [] if named else ["--worker-class", WORKER_CLASS]


def add_action_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Register `action` (with its request subcommands) and `rq-worker` on the `iui` parser."""
    p = sub.add_parser("action", help="action requests: reserve, get, cancel, confirm, list, catalog, inbox")
    requests = p.add_subparsers(dest="request", required=True)
    for name, what in (("reserve", "a UIActionReserveRequest JSON file ('-' for stdin)"),
                       ("list", "a UIDocumentRef JSON file ('-' for stdin)")):
        q = requests.add_parser(name, help=f"{name}: {what}")
        q.add_argument("file", nargs="?", default="-", help=what)
    for name in ("get", "cancel"):
        requests.add_parser(name, help=f"{name} an operation").add_argument("operation", help="operationId")
    q = requests.add_parser("confirm", help="approve or deny an operation awaiting confirmation")
    q.add_argument("operation", help="operationId")
    q.add_argument("decision", choices=("approve", "deny"), help="approve (-> queued) or deny (-> cancelled)")
    requests.add_parser("catalog", help="the host's public capability catalog")
    requests.add_parser("inbox", help="the session's agent inbox")
    for q in requests.choices.values():
        common(q)
        q.add_argument("--session", required=True, help="the session id (never taken from the body)")
        q.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the reply")
        q.set_defaults(run=cmd_action)
    p = sub.add_parser("rq-worker", help="run RQ's worker for the capability jobs (IUI_RQ_REDIS_URL)")
    common(p)
    p.add_argument("queues", nargs="*", help="queues (default: every queue of the catalog)")
    p.add_argument("--rq-option", dest="rq_options", action="append", default=[],
                   help="an extra option passed to `rq worker` (repeatable), e.g. --rq-option=--burst")
    p.set_defaults(run=cmd_rq_worker)
