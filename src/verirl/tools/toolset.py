"""Toolsets: the tools one episode offers, as a registered part.

A toolset is a class whose public methods are its tools — typed, with a Google-style
docstring, the way TRL's ``environment_factory`` reads an environment object — built once per
episode with the parameters its state needs (``tool_world``'s initial world, an MCP server's
address). Registered by name in :data:`TOOLSETS` (one decorator, duplicate names refused) and
built with :func:`build_toolset`; an environment names the toolset its episodes use
(``Environment.toolset``), and a run may offer more (the ``tool_calls`` collector's
``toolsets``), e.g. a Python interpreter or an MCP server's tools beside a task's own. The
built-in ones are :mod:`verirl.tools`'s to load; the environments' are loaded with the
environments (:mod:`verirl.envs`).

>>> @TOOLSETS.register("dice")
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

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from verirl.errors import UserInputError
from verirl.registry import Registry, Spec
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


def _is_toolset(spec: Spec[type[Toolset]]) -> None:
    cls = spec.part
    if not (isinstance(cls, type) and issubclass(cls, Toolset)):
        raise TypeError(f"toolset {spec.name!r} must be a Toolset subclass, got {cls!r}")
    cls.name = spec.name


TOOLSETS: Registry[Spec[type[Toolset]]] = Registry("toolset", on_add=_is_toolset)
"""Toolsets by name: ``@TOOLSETS.register(name)`` on a :class:`Toolset` subclass, built with
its keyword parameters by :func:`build_toolset`."""


def build_toolset(name: str, params: Mapping[str, Any] | None = None) -> Toolset:
    """An instance of toolset ``name`` built with ``params``; a wrong parameter is one
    :class:`~verirl.errors.UserInputError` naming the toolset."""
    cls = TOOLSETS.get(name).part
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
