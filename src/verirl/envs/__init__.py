"""Verifiable environments: the protocol, the registry and every family of environments.

Each family lives in a module of a category package (``graphs/``, ``counting/``, ...) and
registers its environments with ``@register_env``; the modules are discovered on first
lookup, so adding an environment touches only its own file. ``base`` holds the protocol and
the registry, ``reading/`` answer extraction and normalisation, ``kit/`` what families share.
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


def get_env(name: str) -> Environment:
    """The environment registered as ``name`` (error lists the known names)."""
    load_all()
    return _get_env(name)


def env_names(family: str | None = None, tag: str | None = None) -> list[str]:
    """Registered environment names, optionally filtered by family or tag. An unknown
    ``family`` raises :class:`~verirl.errors.UserInputError` listing the known ones."""
    load_all()
    if family is not None:
        families = sorted({cls.family for _, cls in ENVIRONMENTS.items()})
        if family not in families:
            raise UserInputError(
                f"unknown environment family {family!r}; known families: {', '.join(families)}"
            )
    out = []
    for name, cls in ENVIRONMENTS.items():
        if family is not None and cls.family != family:
            continue
        if tag is not None and tag not in cls.tags:
            continue
        out.append(name)
    return out
