"""The admin capability catalog: which host capabilities an action may reserve, and how they run.

A catalog is a TOML (or JSON) file, never anything a model sent.  Each entry names a Python
callable `module:function`; its signature *is* the parameter schema: a pydantic model is
derived from `inspect.signature`, so the schema published in the catalog, the validation of
arguments and the function that runs can never drift apart.  A keyword-only parameter named
`context` is not a parameter: the job runner passes a `CapabilityContext` there.

`load_catalog(path)` raises `CatalogError` whose text is one line naming the entry and field.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import tomllib
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from core import UISchemaError, parse_ui_capability_descriptor

MAX_HOST_CAPABILITIES = 32
DEFAULT_CATALOG = Path(__file__).with_name("capabilities.toml")
_CALLABLE = r"^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*$"
_QUEUE = r"^[A-Za-z0-9_.\-]{1,64}$"
CONTEXT_PARAMETER = "context"
CONFIRMATION_TIMEOUT_S = 3_600.0  # an approval nobody gives within an hour is cancelled (`confirmationTimeout`)
MAX_CONFIRMATION_TIMEOUT_S = 604_800.0  # a week: as long as a session outlives its last call by default


class CatalogError(Exception):
    """The catalog cannot be used; the message is one line."""


class ArgumentsError(Exception):
    """Arguments do not match a capability's parameter schema (`message` names the first problem)."""


@dataclass(frozen=True, slots=True)
class CapabilityContext:
    """What the job runner passes to a capability's keyword-only `context` parameter."""

    files_root: Path
    max_file_bytes: int


class CapabilitySpec(BaseModel):
    """One catalog entry as the admin writes it."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    id: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_\-]{0,63}$")
    # No length bounds here: the public descriptor is checked by core's
    # `parse_ui_capability_descriptor` (title 1-256, description <= 4,096 UTF-16 code units,
    # seed 000 section 13), the one source of those limits.
    title: str
    description: str = ""
    risk: Literal["read", "write", "external"]
    requires_confirmation: bool = Field(alias="requiresConfirmation")
    callable: str = Field(pattern=_CALLABLE)
    result_fields: tuple[str, ...] = Field(alias="resultFields", max_length=32)
    timeout_s: float = Field(default=60.0, alias="timeout", gt=0, le=86_400)
    # How long an operation waits for its approval; then the reaper cancels it (nothing ran).
    # Absent: CONFIRMATION_TIMEOUT_S.  Only a capability that requires confirmation has one.
    confirmation_timeout_s: float | None = Field(default=None, alias="confirmationTimeout", gt=0,
                                                 le=MAX_CONFIRMATION_TIMEOUT_S)
    queue: str = Field(default="iui", pattern=_QUEUE)

    @model_validator(mode="after")
    def _confirmation_timeout_needs_confirmation(self) -> CapabilitySpec:
        if self.confirmation_timeout_s is not None and not self.requires_confirmation:
            raise ValueError("confirmationTimeout is for a capability with requiresConfirmation = true")
        return self

    @property
    def approval_window_ms(self) -> int:
        """How long an operation of this capability waits for its approval, in milliseconds."""
        seconds = CONFIRMATION_TIMEOUT_S if self.confirmation_timeout_s is None else self.confirmation_timeout_s
        return max(1, round(seconds * 1000))


@dataclass(frozen=True)
class Capability:
    """A validated catalog entry with its callable, parameter model and public descriptor."""

    spec: CapabilitySpec
    function: Callable[..., Any]
    parameters: type[BaseModel]
    descriptor: Mapping[str, Any]
    wants_context: bool

    @property
    def id(self) -> str:
        """The capability id that actions name in `capabilityId`."""
        return self.spec.id

    def validate_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as the callable takes them, or `ArgumentsError` (values never echoed)."""
        try:
            model = self.parameters.model_validate(dict(arguments))
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ())) or "arguments"
            kind = str(first.get("type", "invalid"))
            if kind == "extra_forbidden":
                raise ArgumentsError("an argument is not a parameter of the capability") from None
            raise ArgumentsError(f"argument {where!r}: {kind.replace('_', ' ')}") from None
        return {name: getattr(model, name) for name in type(model).model_fields}

    def public_result(self, result: Any) -> dict[str, Any]:
        """Only the result fields the admin made public (the rest never leaves the job)."""
        if not isinstance(result, Mapping):
            return {}
        return {name: result[name] for name in self.spec.result_fields if name in result}


def _parameter_model(spec: CapabilitySpec, function: Callable[..., Any]) -> tuple[type[BaseModel], bool]:
    """A strict pydantic model of the callable's parameters (all but a keyword-only `context`)."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        raise CatalogError(f"capability {spec.id!r}: callable {spec.callable} has no inspectable signature") from None
    try:  # string annotations (`from __future__ import annotations`) resolved in the callable's module
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception:
        raise CatalogError(f"capability {spec.id!r}: the annotations of {spec.callable} cannot be resolved") from None
    fields: dict[str, Any] = {}
    wants_context = False
    for name, parameter in signature.parameters.items():
        if name == CONTEXT_PARAMETER and parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            wants_context = True
            continue
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD,
                              inspect.Parameter.POSITIONAL_ONLY):
            raise CatalogError(f"capability {spec.id!r}: parameter {name!r} must be a plain named parameter")
        if name not in hints:
            raise CatalogError(f"capability {spec.id!r}: parameter {name!r} needs a type annotation")
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[name] = (hints[name], default)
    config = ConfigDict(extra="forbid", strict=True)
    try:
        model = create_model(f"{spec.id}_parameters", __config__=config, **fields)
    except Exception as error:
        raise CatalogError(f"capability {spec.id!r}: unusable parameter annotations ({type(error).__name__})") from None
    return model, wants_context


def _resolve(spec: CapabilitySpec) -> Callable[..., Any]:
    module_name, _, attribute = spec.callable.partition(":")
    try:
        function: object = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError):
        raise CatalogError(f"capability {spec.id!r}: callable {spec.callable} cannot be imported") from None
    if not callable(function):
        raise CatalogError(f"capability {spec.id!r}: {spec.callable} is not callable")
    return function


def build_capability(spec: CapabilitySpec) -> Capability:
    """Resolve the callable, derive its schema and check the public descriptor with core."""
    function = _resolve(spec)
    parameters, wants_context = _parameter_model(spec, function)
    schema = parameters.model_json_schema()
    descriptor = {"id": spec.id, "title": spec.title, "description": spec.description, "risk": spec.risk,
                  "requiresConfirmation": spec.requires_confirmation, "parameters": schema,
                  "resultFields": list(spec.result_fields)}
    try:
        frozen = parse_ui_capability_descriptor(json.loads(json.dumps(descriptor)))
    except UISchemaError as error:
        raise CatalogError(f"capability {spec.id!r}: its public descriptor is invalid: {error.message}") from None
    return Capability(spec=spec, function=function, parameters=parameters, descriptor=frozen,
                      wants_context=wants_context)


class Catalog:
    """The capabilities of one host, by id, in file order."""

    def __init__(self, capabilities: list[Capability]) -> None:
        self._by_id = {capability.id: capability for capability in capabilities}

    def get(self, capability_id: str) -> Capability | None:
        """The capability with that id, or None."""
        return self._by_id.get(capability_id)

    def descriptors(self) -> list[Mapping[str, Any]]:
        """The public `UICapabilityCatalog` (file order)."""
        return [capability.descriptor for capability in self._by_id.values()]

    @property
    def ids(self) -> list[str]:
        """Every capability id, in file order."""
        return list(self._by_id)

    @property
    def queues(self) -> list[str]:
        """The distinct RQ queues the capabilities run on."""
        return sorted({capability.spec.queue for capability in self._by_id.values()})

    def __len__(self) -> int:
        return len(self._by_id)


def _read(path: Path) -> Any:
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else "not UTF-8 text"
        raise CatalogError(f"capability catalog {path}: {reason}") from None
    try:
        return json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as error:
        first = " ".join(str(error).split())[:200]
        kind = path.suffix[1:].upper() or "TOML"
        raise CatalogError(f"capability catalog {path}: not valid {kind}: {first}") from None


def _entries(document: Any, path: Path) -> list[Any]:
    entries = document.get("capability") if isinstance(document, dict) else document
    if not isinstance(entries, list):
        raise CatalogError(f"capability catalog {path}: expected [[capability]] tables (TOML) or an array (JSON)")
    if len(entries) > MAX_HOST_CAPABILITIES:
        raise CatalogError(f"capability catalog {path}: {len(entries)} capabilities; at most {MAX_HOST_CAPABILITIES}")
    return entries


def _spec(entry: Any, index: int, path: Path) -> CapabilitySpec:
    name = entry.get("id") if isinstance(entry, dict) else None
    label = f"capability {name!r}" if isinstance(name, str) and re.fullmatch(r"[ -~]{1,64}", name) else \
        f"capability #{index + 1}"
    try:
        return CapabilitySpec.model_validate(entry)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first.get("loc", ()))
        message = " ".join(str(first.get("msg", "invalid")).split()).removeprefix("Value error, ")
        where = f"field {field!r}: " if field else ""  # none: a rule between fields (the message names them)
        raise CatalogError(f"capability catalog {path}: {label}: {where}{message}") from None


def load_catalog(path: Path | str) -> Catalog:
    """Read and validate a catalog file; raise a one-line `CatalogError` on any problem."""
    path = Path(path)
    entries = _entries(_read(path), path)
    capabilities: list[Capability] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        spec = _spec(entry, index, path)
        if spec.id in seen:
            raise CatalogError(f"capability catalog {path}: capability {spec.id!r} is listed twice")
        seen.add(spec.id)
        try:
            capabilities.append(build_capability(spec))
        except CatalogError as error:
            raise CatalogError(f"capability catalog {path}: {error}") from None
    return Catalog(capabilities)
