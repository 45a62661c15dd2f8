"""Toolsets: the tools one episode offers, as a registered part.

A toolset is a class whose public methods are its tools — typed, with a Google-style
docstring, the way TRL's ``environment_factory`` reads an environment object — built once per
episode with the parameters its state needs (``tool_world``'s initial world, an MCP server's
address). Registered by name with :func:`register_toolset` (one decorator, duplicate names
refused) and built with :func:`build_toolset`; an environment names the toolset its episodes
use (``Environment.toolset``), and a run may offer more (the ``tool_calls`` collector's
``toolsets``), e.g. a Python interpreter or an MCP server's tools beside a task's own.

>>> @register_toolset("dice")
... class Dice(Toolset):
...     def roll(self, sides: int) -> int:
...         '''Roll one die.
...
...         Args:
...             sides: How many sides the die has.
...         '''
...         return sides  # a loaded die
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from verirl.errors import UserInputError
from verirl.registry import Registry
from verirl.tools.typed import Tool, ToolLimits, ToolResult, error_result, tool

Message = dict[str, Any]

_HOOKS = frozenset({"close", "demonstration", "schemas", "tools", "call"})


class Toolset:
    """Tools for one episode: every public method defined on a subclass (not the hooks of
    this base class) is a tool, named after the method. Override :meth:`demonstration` to
    give a worked example exchange, and :meth:`close` to release resources."""

    name: ClassVar[str] = ""

    def tools(self) -> dict[str, Tool]:
        """The tools, by name (built once per instance)."""
        cached: dict[str, Tool] | None = self.__dict__.get("_tools")
        if cached is None:
            cached = {}
            for attr in tool_names(type(self)):
                t = tool(getattr(self, attr))
                cached[t.name] = t
            self.__dict__["_tools"] = cached
        return cached

    def schemas(self) -> list[dict[str, Any]]:
        """The tools' JSON schemas, as ``apply_chat_template(tools=...)`` takes them."""
        return [t.schema for t in self.tools().values()]

    def call(self, name: str, arguments: Any, limits: ToolLimits | None = None) -> ToolResult:
        """Call tool ``name``; an unknown name is an observation listing the tools."""
        limits = limits or ToolLimits()
        found = self.tools().get(name) if isinstance(name, str) else None
        if found is None:
            known = ", ".join(sorted(self.tools())) or "(none)"
            reason = f"unknown tool {name!r}; tools: {known}"
            return error_result(str(name)[:80], reason, limits, refused=True)
        return found.call(arguments, limits)

    def demonstration(self) -> list[Message]:
        """A worked example in chat messages (a user task, the assistant's structured
        ``tool_calls``, optionally the ``tool`` results): shown before the task when a run
        asks for a demonstration; the chat template renders it in the model's own format.
        Default: none."""
        return []

    def close(self) -> None:
        """Release what the toolset holds (a connection, a process). Default: nothing."""


class FunctionToolset(Toolset):
    """A toolset of plain typed functions (no state of its own)."""

    def __init__(self, functions: Sequence[Callable[..., Any]]) -> None:
        tools = [tool(fn) for fn in functions]
        names = [t.name for t in tools]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise UserInputError(f"two tools share the name(s) {dupes}")
        self.__dict__["_tools"] = {t.name: t for t in tools}


def tool_names(cls: type[Toolset]) -> list[str]:
    """The names of a toolset class's tools (its public methods), without building one."""
    return [
        attr
        for attr, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
        if not attr.startswith("_") and attr not in _HOOKS
    ]


TOOLSETS: Registry[type[Toolset]] = Registry("toolset")


def register_toolset(name: str) -> Callable[[type[Toolset]], type[Toolset]]:
    """Register a :class:`Toolset` subclass under ``name`` (a duplicate name is refused)."""

    def decorator(cls: type[Toolset]) -> type[Toolset]:
        if not (isinstance(cls, type) and issubclass(cls, Toolset)):
            raise TypeError(f"register_toolset({name!r}) decorates a Toolset subclass")
        cls.name = name
        TOOLSETS.register(name)(cls)
        return cls

    return decorator


def get_toolset(name: str) -> type[Toolset]:
    """The toolset class registered as ``name`` (the built-in ones and every environment's
    are imported first)."""
    import verirl.tools.builtin  # noqa: F401  (registers calculator, python, mcp)

    if name not in TOOLSETS:
        # environments (a floor above) register their own toolsets: loaded by module path,
        # as a registry finds plug-ins, so tools/ never imports envs/
        importlib.import_module("verirl.envs").load_all()
    return TOOLSETS.get(name)


def build_toolset(name: str, params: Mapping[str, Any] | None = None) -> Toolset:
    """An instance of toolset ``name`` built with ``params``; a wrong parameter is one
    :class:`~verirl.errors.UserInputError` naming the toolset."""
    cls = get_toolset(name)
    try:
        return cls(**dict(params or {}))
    except TypeError as exc:
        raise UserInputError(f"toolset {name!r}: {exc}") from exc


def merged_tools(toolsets: Sequence[Toolset]) -> dict[str, tuple[Toolset, Tool]]:
    """Every tool of ``toolsets`` by name; two toolsets offering one name is an error."""
    out: dict[str, tuple[Toolset, Tool]] = {}
    for ts in toolsets:
        for tname, t in ts.tools().items():
            if tname in out:
                raise UserInputError(
                    f"tool {tname!r} is offered by two toolsets ({out[tname][0].name or 'a'} "
                    f"and {ts.name or 'another'}); tool names must be unique in an episode"
                )
            out[tname] = (ts, t)
    return out
