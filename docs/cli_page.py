"""The `iui` command reference, built from the parser itself (`workers.cli.main.build_parser`):
every subcommand with its usage line and each of its arguments and options."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from workers.cli.main import build_parser

from .markdown import code, page, table

INTRO = ("Every subcommand of the `iui` console script, as `iui <command> --help` prints it. Options "
         "that name a setting default to its `IUI_*` variable ([Settings](settings.md)); how to run each "
         "part: [Operations](../operations.md), [Gateway](../gateway.md), [Actions](../actions.md).")


def cli_page() -> str:
    """The reference page of every `iui` subcommand."""
    parts = [INTRO]
    for name, parser in _commands(build_parser(), "iui"):
        parts.append(f"## {code(name)}")
        parser.formatter_class = _FixedWidth  # the page must not depend on the terminal's width
        parts.append("```text\n" + parser.format_usage().strip().removeprefix("usage: ") + "\n```")
        rows = [(_flags(action), _help(action)) for action in parser._actions
                if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))]
        if rows:
            parts.append(table(("argument", "meaning"), rows))
    return page("Command line", "workers/cli (`build_parser`)", *parts)


class _FixedWidth(argparse.HelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=100)


def _commands(parser: argparse.ArgumentParser, name: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(full name, parser) of every leaf subcommand, depth first in declaration order."""
    groups = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    if not groups:
        yield name, parser
        return
    for group in groups:
        for child, subparser in group.choices.items():
            yield from _commands(subparser, f"{name} {child}")


def _flags(action: argparse.Action) -> str:
    if not action.option_strings:
        return code(action.metavar or action.dest)
    shown = ", ".join(action.option_strings)
    if action.nargs != 0:
        shown += " " + str(action.metavar or action.dest.upper())
    return code(shown)


def _help(action: argparse.Action) -> str:
    text = (action.help or "").replace("%%", "%")
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        text += (" " if text else "") + "(one of " + ", ".join(code(choice) for choice in action.choices) + ")"
    if action.required and action.option_strings:
        text += " (required)"
    return text or "—"
