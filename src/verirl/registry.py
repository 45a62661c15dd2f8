"""Name → part registries: the one way every pluggable part of verirl is added.

A registry maps a name to a :class:`Spec`: the part (a function, a class or an object), the
pydantic model of its ``params`` (:class:`NoParams` for a part without any) and one line
saying what it is. A part registers with the registry's decorator, next to its code::

    @CREDIT.register("my_estimator", MyParams, "what it computes, and the paper")
    def my_estimator(inp, params): ...

Registering a name twice is an error, so two modules never silently shadow each other; a
lookup of an unknown name lists what is available.

Where parts come from — one mechanism, a module whose import registers them:

- built-in parts: the registry's package names the modules that hold them in a loader
  (:meth:`Registry.builtins`), imported on the first lookup;
- plug-ins: a module named in ``run.plugins`` (:func:`load_plugins`), or one a package
  declares as an entry point in the group ``verirl.plugins`` (``[project.entry-points.
  "verirl.plugins"]`` in its ``pyproject.toml``), imported the first time a registry is
  asked for a name it does not hold (:func:`discover`). verirl's own plug-ins of other
  systems (Ray) are found this way, so nothing below ``integrations/`` names them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from verirl.errors import UnknownNameError, format_errors

P = TypeVar("P")
S = TypeVar("S", bound="Spec[Any]")
T = TypeVar("T")

ENTRY_POINTS = "verirl.plugins"
"""The entry-point group of plug-in modules (:func:`discover`)."""


class NoParams(BaseModel):
    """The parameter model of a part without parameters (any key is refused)."""

    model_config = ConfigDict(extra="forbid")


class Plugin(BaseModel):
    """A registered component chosen by name in a config, with the parameters its model
    accepts (``{name: grpo, params: {...}}``); checked against the registry's :class:`Spec`
    by :mod:`verirl.assembly`."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    name: str = Field(description="The registered component's name.")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="Parameters of the named component, checked against its parameter model.",
    )

    def check_params(self, model: type[BaseModel], where: str) -> None:
        """Validate ``params`` against the component's parameter ``model``; ``ValueError``
        naming ``where.params.<field>`` if they do not fit."""
        try:
            model.model_validate(self.params)
        except ValidationError as exc:
            raise ValueError(format_errors(exc, f"{where}.params")) from None


@dataclass(frozen=True)
class Spec(Generic[P]):
    """A registered part.

    - ``name``: what a config calls it (``rollout.engine.name: hf``);
    - ``part``: the part itself — a function, a class, or an object; :meth:`build` calls it
      as ``part(params, *args)``;
    - ``params``: the pydantic model its ``params`` are checked against (:class:`NoParams`);
    - ``description``: one line for listings and the generated docs.

    A registry whose parts declare more (an engine's exact log-probs, an optimizer's state
    bytes) holds a subclass with those fields.
    """

    name: str
    part: P
    params: type[BaseModel] = NoParams
    description: str = ""

    def parse(self, params: BaseModel | Mapping[str, Any] | None = None) -> BaseModel:
        """``params`` checked against the part's parameter model (a model passes through)."""
        if isinstance(params, BaseModel):
            return params
        return self.params.model_validate(dict(params or {}))

    def build(self, params: BaseModel | Mapping[str, Any] | None = None, *args: Any) -> Any:
        """``part(parsed params, *args)``."""
        part: Any = self.part
        return part(self.parse(params), *args)


class Registry(Generic[S]):
    """The parts of one kind, by name (see the module docstring).

    ``spec`` is the :class:`Spec` class its parts are held in; ``on_add(spec)`` checks (or
    completes) a part as it registers, e.g. a class that must subclass the kind's base.

    >>> losses: Registry[Spec[Callable]] = Registry("loss")
    >>> @losses.register("double", description="twice the input")
    ... def double(params, x): return 2 * x
    >>> losses.get("double").build(None, 3)
    6
    """

    def __init__(
        self,
        kind: str,
        spec: Callable[..., S] = Spec,  # type: ignore[assignment]
        on_add: Callable[[S], None] | None = None,
    ) -> None:
        self.kind = kind
        self._spec = spec
        self._on_add = on_add
        self._items: dict[str, S] = {}
        self._loaders: list[Callable[[], object]] = []

    def register(
        self,
        name: str,
        params: type[BaseModel] = NoParams,
        description: str | None = None,
        **extra: Any,
    ) -> Callable[[T], T]:
        """Decorator: register the decorated part as ``name`` with parameter model ``params``
        and ``description`` (default: the first line of its docstring); ``extra`` are the
        further fields of this registry's spec."""

        def decorator(part: T) -> T:
            about = _first_line(part) if description is None else description
            self.add(self._spec(name, part, params, about, **extra))
            return part

        return decorator

    def add(self, spec: S) -> S:
        """Register a spec built elsewhere; a second part under one name is refused."""
        if not spec.name or not isinstance(spec.name, str):
            raise ValueError(f"{self.kind} name must be a non-empty string, got {spec.name!r}")
        old = self._items.get(spec.name)
        if old is not None and old.part is not spec.part:
            raise ValueError(
                f"{self.kind} {spec.name!r} is already registered (by {_describe(old.part)}); "
                "pick another name"
            )
        if self._on_add is not None:
            self._on_add(spec)
        self._items[spec.name] = spec
        return spec

    def builtins(self, loader: Callable[[], object]) -> Callable[[], object]:
        """Decorator: ``loader`` imports the modules of this registry's built-in parts; it
        runs once, before the first lookup. The registry's package declares it, so the
        modules it imports (which import the registry) never import it back."""
        self._loaders.append(loader)
        return loader

    def _load(self) -> None:
        while self._loaders:
            self._loaders.pop(0)()

    def get(self, name: str) -> S:
        """The spec registered as ``name``; an unknown name is an
        :class:`~verirl.errors.UnknownNameError` listing the known ones (and any plug-in
        that failed to load)."""
        if name in self:
            return self._items[name]
        known = ", ".join(sorted(self._items)) or "(none)"
        failed = "".join(f"; plug-in {k} failed to load: {v}" for k, v in _FAILED.items())
        raise UnknownNameError(f"unknown {self.kind} {name!r}; known: {known}{failed}")

    def __contains__(self, name: object) -> bool:
        self._load()
        if isinstance(name, str) and name not in self._items:
            discover()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self._load()
        return len(self._items)

    def items(self) -> list[tuple[str, S]]:
        self._load()
        return sorted(self._items.items())

    def names(self) -> list[str]:
        self._load()
        return sorted(self._items)


def named(spec: Spec[Any]) -> None:
    """The ``on_add`` of a registry of classes that carry their name: sets ``part.name``."""
    spec.part.name = spec.name


def _first_line(part: object) -> str:
    return (getattr(part, "__doc__", None) or "").strip().split("\n")[0]


def _describe(obj: object) -> str:
    module = getattr(obj, "__module__", "?")
    qualname = getattr(obj, "__qualname__", type(obj).__name__)
    return f"{module}.{qualname}"


def load_plugins(modules: Iterable[str]) -> None:
    """Import the plug-in modules ``modules`` names (``run.plugins``), so that what they
    register exists; in every process that builds parts (workers and actors too)."""
    for name in modules:
        importlib.import_module(name)


_FAILED: dict[str, str] = {}
_discovered = False


def discover() -> None:
    """Import every module declared in the ``verirl.plugins`` entry-point group, once per
    process. A plug-in that fails to import (its library is not installed) is remembered and
    named by the next unknown-name error rather than stopping the lookup."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    for entry in metadata.entry_points(group=ENTRY_POINTS):
        try:
            entry.load()
        except Exception as exc:  # a plug-in's missing library must not stop a lookup
            _FAILED[entry.name] = f"{type(exc).__name__}: {exc}"
