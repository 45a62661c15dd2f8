"""Name → object registries: the one place where algorithms, environments and backends plug in.

A registry maps a name to an object (a function or a class). Registering a name twice is an
error, so two modules can never silently shadow each other; a lookup of an unknown name lists
what is available.

Most pluggable parts are registered as a :class:`Spec`: the part's name, the part itself or
its factory (or the import path of one that lives above the registry's package), the pydantic
model of its ``params`` and one line saying what it is. ``params`` of a part that takes none is
:class:`NoParams`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from verirl.errors import UnknownNameError, format_errors

T = TypeVar("T")
R = TypeVar("R")


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
class Spec(Generic[R]):
    """A registered part.

    - ``name``: what a config calls it (``rollout.engine.name: hf``);
    - ``factory``: the part itself or what builds it, called as ``factory(params, *args)``
      by :meth:`build`; or the import path ``"package.module:attribute"`` of one that lives
      above the registry's package, imported on first use (:func:`import_object`);
    - ``params``: the pydantic model its ``params`` are checked against (:class:`NoParams`);
    - ``description``: one line for listings and the generated docs.
    """

    name: str
    factory: Callable[..., R] | str
    params: type[BaseModel] = NoParams
    description: str = ""

    def load(self) -> Callable[..., R]:
        """The factory, imported now when it is named by its import path."""
        if isinstance(self.factory, str):
            loaded: Callable[..., R] = import_object(self.factory)
            return loaded
        return self.factory

    def parse(self, params: BaseModel | Mapping[str, Any] | None = None) -> BaseModel:
        """``params`` checked against the part's parameter model (a model passes through)."""
        if isinstance(params, BaseModel):
            return params
        return self.params.model_validate(dict(params or {}))

    def build(self, params: BaseModel | Mapping[str, Any] | None = None, *args: Any) -> R:
        """``factory(parsed params, *args)``."""
        return self.load()(self.parse(params), *args)


class Registry(Generic[T]):
    """A named collection of ``T`` filled by a decorator.

    >>> losses: Registry[Callable] = Registry("loss")
    >>> @losses.register("my_loss")
    ... def my_loss(x): return x
    >>> losses.get("my_loss") is my_loss
    True
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        if not name or not isinstance(name, str):
            raise ValueError(f"{self.kind} name must be a non-empty string, got {name!r}")

        def decorator(obj: T) -> T:
            if name in self._items and self._items[name] is not obj:
                raise ValueError(
                    f"{self.kind} {name!r} is already registered "
                    f"(by {_describe(self._items[name])}); pick another name"
                )
            self._items[name] = obj
            return obj

        return decorator

    def add(self, spec: T, name: str | None = None) -> T:
        """Register ``spec`` under ``name`` (default: its own ``name``); returns it."""
        key = name if name is not None else getattr(spec, "name", None)
        if not isinstance(key, str):
            raise ValueError(f"{self.kind}: {spec!r} has no name to register it under")
        return self.register(key)(spec)

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "(none)"
            raise UnknownNameError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> list[tuple[str, T]]:
        return sorted(self._items.items())

    def names(self) -> list[str]:
        return sorted(self._items)


def _describe(obj: object) -> str:
    module = getattr(obj, "__module__", "?")
    qualname = getattr(obj, "__qualname__", type(obj).__name__)
    return f"{module}.{qualname}"


def import_object(path: str) -> Any:
    """The object an import path names: ``"package.module:attribute"``, imported now.

    Registries name a part that lives above them this way (the ``ray`` executor and the
    ``ray`` placement: :mod:`verirl.integrations.ray`), so the module is imported only when
    the part is built and nothing below ``integrations/`` imports it.
    """
    module, sep, attribute = path.partition(":")
    if not sep or not module or not attribute:
        raise ValueError(f"import path {path!r} must look like 'package.module:attribute'")
    try:
        return getattr(importlib.import_module(module), attribute)
    except AttributeError:
        raise ImportError(f"module {module!r} has no attribute {attribute!r}") from None
