"""Verifiable environments: the protocol, the registry and every family of environments.

Each family lives in its own module of this package and registers its environments with
``@register_env``; the modules are discovered on first lookup, so adding an environment
touches only its own file.

Environments from other libraries (reasoning-gym's tasks as ``rg/<task>``) are *on demand*:
:data:`ON_DEMAND` maps a name prefix to the function that registers such a name, which
:func:`get_env` and :func:`is_env` call the first time a process asks for it. They never
enter the default catalogue: :func:`env_names` leaves them out unless ``on_demand=True``.
"""

from __future__ import annotations

import importlib
import pkgutil

from verirl.envs.answers import extract_answer, last_boxed, split_boxed
from verirl.envs.base import (
    ENVIRONMENTS,
    INVALID,
    WRONG_FORMAT,
    Environment,
    Instance,
    register_env,
)
from verirl.envs.base import get_env as _get_env
from verirl.errors import UserInputError

__all__ = [
    "ENVIRONMENTS",
    "INVALID",
    "WRONG_FORMAT",
    "Environment",
    "Instance",
    "env_names",
    "extract_answer",
    "get_env",
    "is_env",
    "last_boxed",
    "load_all",
    "register_env",
    "split_boxed",
]

_NOT_FAMILIES = {
    "base",
    "proof_env",
    "answers",
    "selfcheck",
    "freeform_forms",
    "symbolic_parse",
    "normalize",
    "formats",
}
_loaded = False

ON_DEMAND: dict[str, str] = {"rg/": "verirl.integrations.reasoning_gym:register_task"}
"""Name prefix → ``"module:function"`` that registers an environment of that name on demand
(returns False for a name it does not know)."""


def load_all() -> None:
    """Import every module of this package so that all environments are registered."""
    global _loaded
    if _loaded:
        return
    for mod in pkgutil.iter_modules(__path__):
        if mod.name not in _NOT_FAMILIES and not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")
    _loaded = True


def _on_demand(name: str) -> bool:
    for prefix, target in ON_DEMAND.items():
        if isinstance(name, str) and name.startswith(prefix):
            module, _, function = target.partition(":")
            return bool(getattr(importlib.import_module(module), function)(name))
    return False


def is_env(name: str) -> bool:
    """Whether ``name`` is an environment: registered, or registered now on demand."""
    load_all()
    return name in ENVIRONMENTS or _on_demand(name)


def get_env(name: str) -> Environment:
    """The environment registered as ``name`` (error lists the known names); an on-demand
    name (:data:`ON_DEMAND`) is registered first."""
    load_all()
    if name not in ENVIRONMENTS:
        _on_demand(name)
    return _get_env(name)


def _is_on_demand(name: str) -> bool:
    return any(name.startswith(prefix) for prefix in ON_DEMAND)


def env_names(
    family: str | None = None, tag: str | None = None, *, on_demand: bool = False
) -> list[str]:
    """Registered environment names, optionally filtered by family or tag. An unknown
    ``family`` raises :class:`~verirl.errors.UserInputError` listing the known ones.
    Environments registered on demand (:data:`ON_DEMAND`) are left out unless
    ``on_demand``."""
    load_all()
    if family is not None:
        families = sorted({cls.family for _, cls in ENVIRONMENTS.items()})
        if family not in families:
            raise UserInputError(
                f"unknown environment family {family!r}; known families: {', '.join(families)}"
            )
    out = []
    for name, cls in ENVIRONMENTS.items():
        if not on_demand and _is_on_demand(name):
            continue
        if family is not None and cls.family != family:
            continue
        if tag is not None and tag not in cls.tags:
            continue
        out.append(name)
    return out
