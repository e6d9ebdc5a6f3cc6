"""The error hierarchy of the protocol library.

Every public function of :mod:`core` raises only these classes for any decoded-JSON
input.  Schema and stream errors carry located issues (RFC 6901 JSON Pointer paths);
the lists and texts are bounded so a hostile document cannot make an error huge.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mypy_extensions import mypyc_attr

MAX_ISSUES = 20
MAX_PATH_LENGTH = 512
MAX_MESSAGE_LENGTH = 300

# One fixed text for every unknown property: the key and the value are never echoed.
UNKNOWN_PROPERTY = "unknown property is not allowed"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _clip_pointer(path: str) -> str:
    """A valid RFC 6901 pointer of at most MAX_PATH_LENGTH UTF-8-encodable characters.

    Cutting only at a `/` keeps every `~0`/`~1` escape whole: the result is an ancestor of
    the location, never a different one.  A segment holding a lone surrogate cannot be
    UTF-8, so the path stops before it.
    """
    if not path.isascii():
        bad = next((i for i, char in enumerate(path) if 0xD800 <= ord(char) <= 0xDFFF), None)
        if bad is not None:
            path = path[: max(path.rfind("/", 0, bad + 1), 0)]
    if len(path) > MAX_PATH_LENGTH:
        path = path[: max(path.rfind("/", 0, MAX_PATH_LENGTH + 1), 0)]
    return path


def _require_text(name: str, value: object) -> None:
    # A compiled build checks declared types itself; the pure one would fail later, and less clearly.
    # By exact type: `isinstance` asks a foreign object for its `__class__`, which could run anything,
    # and a str subclass (an enum member) would be kept as the path.
    if type(value) is not str:
        raise TypeError(f"{name} must be a string")


def _clip_message(text: str) -> str:
    if not text.isascii():
        text = "".join("\ufffd" if 0xD800 <= ord(char) <= 0xDFFF else char for char in text)
    return _clip(text, MAX_MESSAGE_LENGTH)


@dataclass(frozen=True, slots=True)
class Issue:
    """One located problem: a JSON Pointer `path` and a human `message`."""

    path: str
    message: str
    code: str = "invalid"

    def __post_init__(self) -> None:
        _require_text("Issue path", self.path)
        _require_text("Issue message", self.message)
        _require_text("Issue code", self.code)
        object.__setattr__(self, "path", _clip_pointer(self.path))
        object.__setattr__(self, "message", _clip_message(self.message))

    def prefixed(self, prefix: str) -> Issue:
        """The same issue located under `prefix` (a JSON Pointer)."""
        return Issue(prefix + self.path, self.message, self.code)

    def __str__(self) -> str:
        return f"{self.path or '/'}: {self.message}"


def escape_pointer(segment: str | int) -> str:
    """One RFC 6901 reference token."""
    if isinstance(segment, int):
        return str(segment)
    return segment.replace("~", "~0").replace("/", "~1")


class Place:
    """Where a checked value sits: a chain of segments from the document's root.

    A walker hands each rule the place of the value it checks and descends with
    `place / segment`; rules report issues at their place or at a child of it and never
    build a path.  The JSON Pointer text is made only when an issue is reported.
    """

    __slots__ = ("parent", "segment")

    def __init__(self, parent: Place | None = None, segment: str | int = "") -> None:
        self.parent, self.segment = parent, segment

    def __truediv__(self, segment: str | int) -> Place:
        return Place(self, segment)

    @property
    def pointer(self) -> str:
        """The RFC 6901 JSON Pointer of this place (`""` at the root)."""
        tokens: list[str] = []
        place: Place = self
        while place.parent is not None:
            tokens.append(escape_pointer(place.segment))
            place = place.parent
        return "".join("/" + token for token in reversed(tokens))


ROOT = Place()


# The errors stay Python classes in the compiled build (`native_class=False`): a native class
# keeps no per-subclass default of `code`, and raising is never the hot path.
@mypyc_attr(native_class=False)
class UIError(Exception):
    """Base of every error the protocol library raises."""

    code = "ui_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        _require_text("UIError message", message)
        if code is not None and type(code) is not str:
            raise TypeError("UIError code must be a string or None")
        super().__init__(_clip_message(message))
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


def _issue_of(owner: str, item: object) -> Issue:
    if type(item) is not Issue:
        raise TypeError(f"{owner} issues must be Issue values or one string")
    return item


@mypyc_attr(native_class=False)
class _LocatedError(UIError):
    """An error that carries a bounded list of located issues."""

    def __init__(self, issues: Iterable[Issue] | str, *, code: str | None = None) -> None:
        if type(issues) is str:
            issues = [Issue("", issues)]
        elif not isinstance(issues, Iterable):
            raise TypeError(f"{type(self).__name__} issues must be Issue values or one string")
        items: list[object] = []
        items.extend(issues)
        del items[MAX_ISSUES:]
        self.issues: list[Issue] = [_issue_of(type(self).__name__, item) for item in items]
        if not self.issues:
            self.issues = [Issue("", "invalid input")]
        first = self.issues[0]
        more = len(self.issues) - 1
        summary = str(first) + (f" (and {more} more)" if more else "")
        super().__init__(summary, code=code)


@mypyc_attr(native_class=False)
class UISchemaError(_LocatedError):
    """A document or protocol value failed validation."""

    code = "schema"


@mypyc_attr(native_class=False)
class UIStreamError(_LocatedError):
    """A stream event or checkpoint frame was rejected."""

    code = "stream"


@mypyc_attr(native_class=False)
class UIViewStateError(_LocatedError):
    """An answer-view-state@1 `nodes` value does not fit its block (issues under `/nodes`)."""

    code = "view_state"


@mypyc_attr(native_class=False)
class UIStateError(UIError):
    """A state update or state value is invalid."""

    code = "state"


@mypyc_attr(native_class=False)
class UIExpressionError(UIError):
    """An expression failed at run time (division by zero, overflow, bad type...)."""

    code = "expression"


@mypyc_attr(native_class=False)
class UIActionError(UIError):
    """An action definition, its resolution or its result mapping is invalid."""

    code = "action"
