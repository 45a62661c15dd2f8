"""Name → object registries: the one place where algorithms, environments and backends plug in.

A registry maps a name to an object (a function or a class). Registering a name twice is an
error, so two modules can never silently shadow each other; a lookup of an unknown name lists
what is available.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from verirl.errors import UnknownNameError

T = TypeVar("T")


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

    Registries name a part that lives above them this way (the ``ray`` executor, the Ray
    backend's parts: :mod:`verirl.integrations.ray`), so the module is imported only when the
    part is built and nothing below ``integrations/`` imports it.
    """
    module, sep, attribute = path.partition(":")
    if not sep or not module or not attribute:
        raise ValueError(f"import path {path!r} must look like 'package.module:attribute'")
    try:
        return getattr(importlib.import_module(module), attribute)
    except AttributeError:
        raise ImportError(f"module {module!r} has no attribute {attribute!r}") from None
