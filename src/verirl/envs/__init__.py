"""Verifiable environments: the protocol, the registry and every family of environments.

Each family lives in a module of a category package (``graphs/``, ``counting/``, ...) and
registers its environments with ``@register_env``; the modules are discovered on first
lookup, so adding an environment touches only its own file. ``base`` holds the protocol and
the registry, ``reading/`` answer extraction and normalisation, ``kit/`` what families share.

Environments from other libraries (reasoning-gym's tasks as ``rg/<task>``) and those that
depend on what is installed (``coq_stdlib``: the installed Coq's library) are *on demand*:
:data:`ON_DEMAND` maps a name prefix to the function that registers such a name, which
:func:`get_env` and :func:`is_env` call the first time a process asks for it. They never
enter the default catalogue: :func:`env_names` leaves them out unless ``on_demand=True``.
"""

from __future__ import annotations

import importlib
import pkgutil

from verirl.envs.base import (
    ENVIRONMENTS,
    INVALID,
    TURN_SEPARATOR,
    WRONG_FORMAT,
    Environment,
    Instance,
    register_env,
)
from verirl.envs.base import get_env as _get_env
from verirl.envs.reading.answers import extract_answer, last_boxed, split_boxed
from verirl.errors import UserInputError

__all__ = [
    "CATEGORIES",
    "ENVIRONMENTS",
    "INVALID",
    "TURN_SEPARATOR",
    "WRONG_FORMAT",
    "Environment",
    "Instance",
    "env_names",
    "extract_answer",
    "family_modules",
    "get_env",
    "is_env",
    "last_boxed",
    "load_all",
    "register_env",
    "split_boxed",
]

CATEGORIES = (
    "agents",
    "algebra",
    "arithmetic",
    "arrays",
    "bits",
    "code",
    "counting",
    "freeform",
    "games",
    "geometry",
    "graphs",
    "grids",
    "logic",
    "number_theory",
    "optimization",
    "proofs",
    "simulation",
    "strings",
)
"""The category packages: every module in one holds a family (or sub-family) of environments.
``reading`` (answer extraction and normalisation) and ``kit`` (shared helpers) register
nothing and are not categories."""
_loaded = False

ON_DEMAND: dict[str, str] = {
    "rg/": "verirl.integrations.reasoning_gym:register_task",
    "coq_stdlib": "verirl.envs.proofs.coq_stdlib:register_on_demand",
}
"""Name prefix → ``"module:function"`` that registers an environment of that name on demand
(returns False for a name it does not know)."""


def family_modules() -> list[str]:
    """The dotted names of every module in a category package, in order."""
    out = []
    for category in CATEGORIES:
        package = importlib.import_module(f"{__name__}.{category}")
        for mod in pkgutil.iter_modules(package.__path__):
            out.append(f"{package.__name__}.{mod.name}")
    return out


def load_all() -> None:
    """Import every family module so that all environments are registered."""
    global _loaded
    if _loaded:
        return
    for name in family_modules():
        importlib.import_module(name)
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
