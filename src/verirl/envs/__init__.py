"""Verifiable environments: the protocol, the registry and every family of environments.

Each family is a module of a category package (``graphs/walks.py`` is the family
``graphs/walks``; :mod:`verirl.envs.families`, which also keeps the old family names as
aliases) and registers its environments with ``@ENVIRONMENTS.register(name)``; the modules are
imported on the first lookup (:func:`load_all`), so adding an environment touches only its own
file. ``base`` holds the protocol
and the registry, ``reading/`` answer extraction and normalisation, ``kit/`` what families
share.

Environments from other libraries (reasoning-gym's tasks as ``rg/<task>``) and those that
depend on what is installed (``coq_stdlib``: the installed Coq's library) are *on demand*:
:data:`ON_DEMAND` maps a name prefix to the function that registers such a name, which
:func:`get_env` and :func:`is_env` call the first time a process asks for it (reasoning-gym's
prefix is registered by its plug-in, found by its entry point). They never enter the default
catalogue: :func:`env_names` leaves them out unless ``on_demand=True``.
"""

from __future__ import annotations

import importlib
import pkgutil

from verirl.envs.base import (
    ENVIRONMENTS,
    INVALID,
    ON_DEMAND,
    WRONG_FORMAT,
    Environment,
    Instance,
)
from verirl.envs.base import get_env as _get_env
from verirl.envs.families import FAMILY_ALIASES, family_members
from verirl.envs.reading.answers import extract_answer, last_boxed, split_boxed
from verirl.errors import UserInputError
from verirl.tools.toolset import TOOLSETS
from verirl.types import TURN_SEPARATOR

__all__ = [
    "CATEGORIES",
    "ENVIRONMENTS",
    "FAMILY_ALIASES",
    "INVALID",
    "ON_DEMAND",
    "TURN_SEPARATOR",
    "WRONG_FORMAT",
    "Environment",
    "Instance",
    "env_names",
    "extract_answer",
    "families",
    "family_modules",
    "get_env",
    "is_env",
    "last_boxed",
    "load_all",
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
"""The category packages: every module in one is a family of environments.
``reading`` (answer extraction and normalisation) and ``kit`` (shared helpers) register
nothing and are not categories."""
_loaded = False


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


ENVIRONMENTS.builtins(load_all)
ON_DEMAND.builtins(load_all)  # a family module may register a prefix (``coq_stdlib``)
TOOLSETS.builtins(load_all)  # the tool environments' own toolsets


def _on_demand(name: str) -> bool:
    for prefix, spec in ON_DEMAND.items():
        if isinstance(name, str) and name.startswith(prefix):
            return bool(spec.part(name))
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


def families(*, on_demand: bool = False) -> list[str]:
    """The families of the registered environments, sorted (``<category>/<module>`` for
    verirl's own; on-demand environments only with ``on_demand``)."""
    load_all()
    return sorted(
        {s.part.family for name, s in ENVIRONMENTS.items() if on_demand or not _is_on_demand(name)}
    )


def env_names(
    family: str | None = None, tag: str | None = None, *, on_demand: bool = False
) -> list[str]:
    """Registered environment names, optionally filtered by family or tag. ``family`` is a
    family (``graphs/walks``) or an old family name (``graphs_walks``,
    :data:`~verirl.envs.families.FAMILY_ALIASES`), which selects the environments it always
    did; an unknown one raises :class:`~verirl.errors.UserInputError` listing the known
    names. Environments registered on demand (:data:`ON_DEMAND`) are left out unless
    ``on_demand``."""
    load_all()
    members = None if family is None else family_members(family)
    if members is not None and not members & {s.part.family for _, s in ENVIRONMENTS.items()}:
        raise UserInputError(
            f"unknown environment family {family!r}; known families: "
            f"{', '.join(families(on_demand=True))}; old family names (aliases): "
            f"{', '.join(sorted(FAMILY_ALIASES))}"
        )
    out = []
    for name, spec in ENVIRONMENTS.items():
        cls = spec.part
        if not on_demand and _is_on_demand(name):
            continue
        if members is not None and cls.family not in members:
            continue
        if tag is not None and tag not in cls.tags:
            continue
        out.append(name)
    return out
