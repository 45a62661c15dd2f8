"""Tools as typed Python functions.

Any callable with type hints and a Google-style docstring (``Args:`` naming every argument)
becomes a :class:`Tool`: its JSON schema comes from transformers' maintained helper
:func:`transformers.utils.get_json_schema` (the schema ``apply_chat_template(tools=...)``
renders, and the one TRL builds from an ``environment_factory``'s methods), and the model's
arguments are checked against the type hints by a strict pydantic model before the call, so a
string where an integer is wanted, a boolean for an integer, a missing or an unknown argument
is an observation naming the argument, never a call with the wrong types.

A call never raises (architecture rule 7: model output is data): :meth:`Tool.call` returns a
:class:`ToolResult` whose ``text`` is the observation the model sees next —

- the function's return value as text (a string as it is; JSON for numbers, lists, dicts,
  booleans and ``None``; ``str()`` otherwise), cut to ``max_output_chars`` with a note saying
  how much was cut;
- ``error: ...`` when the arguments do not fit the signature, the function raised (its
  exception's type and message), it ran past ``timeout_s``, or its value is not text (bytes,
  or an object whose ``str()`` raises).

The time bound runs the call on a daemon thread and stops waiting at ``timeout_s``. Python
cannot kill a thread: a function that never returns keeps its thread, so in-process tools
must be code you trust to return (code a *model* wrote runs in :mod:`verirl.sandbox`, e.g. the
``python`` toolset, whose own limits kill it).
"""

from __future__ import annotations

import inspect
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from verirl.errors import UserInputError


class ToolError(Exception):
    """Raised by a tool to report a failure in its own words: the observation is
    ``error: <message>`` (any other exception reads ``error: <Type>: <message>``)."""


@dataclass(frozen=True)
class ToolLimits:
    """Bounds on one call: ``timeout_s`` of wall time, ``max_output_chars`` of observation."""

    timeout_s: float = 5.0
    max_output_chars: int = 2000

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise UserInputError(f"tool timeout_s must be > 0, got {self.timeout_s!r}")
        if not (isinstance(self.max_output_chars, int) and self.max_output_chars >= 16):
            raise UserInputError(
                f"tool max_output_chars must be an integer >= 16, got {self.max_output_chars!r}"
            )


@dataclass(frozen=True)
class ToolResult:
    """One call's outcome: the observation ``text`` (bounded), whether the call ran and
    returned (``ok``) and, when not, ``error`` (why, one line; also the text). ``refused``:
    the call did not run at all — an unknown tool, arguments that do not fit the signature
    (a malformed call rather than a tool's failure)."""

    name: str
    text: str
    ok: bool
    error: str = ""
    refused: bool = False


def error_result(name: str, reason: str, limits: ToolLimits, refused: bool = False) -> ToolResult:
    """A failed call: the reason as the observation (``error: ...``), bounded."""
    text = bound_text("error: " + " ".join(str(reason).split()), limits.max_output_chars)
    return ToolResult(name, text, False, text, refused)


def bound_text(text: str, max_chars: int) -> str:
    """``text`` made valid UTF-8 (lone surrogates replaced) and cut to ``max_chars``
    characters, with a note saying how many were cut."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    if len(text) <= max_chars:
        return text
    note = f"\n[output cut: {len(text) - max_chars} more characters]"
    return text[: max(0, max_chars - len(note))] + note


def render_value(value: Any) -> str:
    """A tool's return value as observation text (see the module docstring). Raises
    :class:`TypeError` for a value that is not text (bytes) or cannot be turned into text."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"the tool returned {type(value).__name__}, not text")
    if value is None or isinstance(value, bool | int | float | list | tuple | dict):
        try:
            return json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError):
            pass  # a circular or odd container: its str() below
    try:
        return str(value)
    except Exception as exc:  # an object whose __str__ raises
        raise TypeError(
            f"the tool's value ({type(value).__name__}) cannot be shown as text"
        ) from exc


@dataclass(frozen=True)
class Tool:
    """A callable offered to the model: ``name``, its JSON ``schema`` (OpenAI function
    format, as ``apply_chat_template(tools=...)`` takes it), the function itself (called with
    the arguments as keywords) and the strict model its arguments are checked with (``None``:
    the callee checks them, as an MCP server does against its own schema)."""

    name: str
    schema: dict[str, Any]
    fn: Callable[..., Any] = field(repr=False)
    arguments: type[BaseModel] | None = field(default=None, repr=False)

    def call(self, arguments: Any, limits: ToolLimits | None = None) -> ToolResult:
        """Run the tool on the model's ``arguments`` (a JSON object); never raises."""
        limits = limits or ToolLimits()
        if not isinstance(arguments, Mapping):
            reason = f"arguments must be a JSON object, got {_kind(arguments)}"
            return error_result(self.name, reason, limits, refused=True)
        if self.arguments is None:
            return _run_bounded(
                self.name, self.fn, {str(k): v for k, v in arguments.items()}, limits
            )
        try:
            checked = self.arguments.model_validate(dict(arguments))
        except ValidationError as exc:
            return error_result(self.name, _argument_error(self.name, exc), limits, refused=True)
        kwargs = {k: getattr(checked, k) for k in self.arguments.model_fields}
        return _run_bounded(self.name, self.fn, kwargs, limits)


def tool(fn: Callable[..., Any], name: str | None = None) -> Tool:
    """The :class:`Tool` of a typed, documented callable (a function or a bound method).

    Raises :class:`~verirl.errors.UserInputError` naming the function when it cannot be a tool:
    an argument without a type hint or without a description in the docstring's ``Args:``,
    ``*args``/``**kwargs``, or a type the JSON schema helper cannot express."""
    from transformers.utils import get_json_schema

    label = getattr(fn, "__qualname__", repr(fn))
    try:
        schema = get_json_schema(fn)
    except Exception as exc:
        raise UserInputError(f"{label} cannot be a tool: {exc}") from exc
    if name is not None:
        schema = {**schema, "function": {**schema["function"], "name": name}}
    return Tool(schema["function"]["name"], schema, fn, _arguments_model(fn, label))


def _arguments_model(fn: Callable[..., Any], label: str) -> type[BaseModel]:
    """A strict pydantic model of ``fn``'s parameters (no coercion: ``"3"`` is not an int,
    ``true`` is not an int; unknown arguments refused)."""
    from typing import get_type_hints

    try:
        hints = get_type_hints(fn)
    except Exception as exc:
        raise UserInputError(
            f"{label} cannot be a tool: its type hints do not resolve ({exc})"
        ) from exc
    fields: dict[str, Any] = {}
    for pname, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise UserInputError(f"{label} cannot be a tool: *args/**kwargs have no schema")
        if pname not in hints:
            raise UserInputError(f"{label} cannot be a tool: argument {pname!r} has no type hint")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (hints[pname], default)
    config = ConfigDict(strict=True, extra="forbid", arbitrary_types_allowed=True)
    model: type[BaseModel] = create_model(f"{label}_arguments", __config__=config, **fields)
    return model


def _argument_error(name: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(x) for x in err.get("loc", ())) or "arguments"
        msg = str(err.get("msg", "invalid"))
        if err.get("type") == "extra_forbidden":
            msg = "unknown argument"
        parts.append(f"{loc}: {msg}")
    return f"{name}: bad arguments ({'; '.join(parts)})"


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _run_bounded(
    name: str, fn: Callable[..., Any], kwargs: dict[str, Any], limits: ToolLimits
) -> ToolResult:
    """Call ``fn(**kwargs)`` on a daemon thread; render its value there too (a slow
    ``str()`` is bounded by the same timeout)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["text"] = render_value(fn(**kwargs))
        except BaseException as exc:  # SystemExit too: the loop must never see it
            box["error"] = _raised(exc)

    thread = threading.Thread(target=target, name=f"verirl-tool-{name}", daemon=True)
    thread.start()
    thread.join(limits.timeout_s)
    if thread.is_alive():
        return error_result(name, f"{name} did not return within {limits.timeout_s:g} s", limits)
    if "error" in box:
        return error_result(name, box["error"], limits)
    return ToolResult(name, bound_text(box.get("text", ""), limits.max_output_chars), True)


def _raised(exc: BaseException) -> str:
    message = " ".join(str(exc).split())[:300]
    if isinstance(exc, ToolError):
        return message or "the tool failed"
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
