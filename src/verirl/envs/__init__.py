"""Verifiable environments: the protocol, the registry and every family of environments.

Each family lives in its own module of this package and registers its environments with
``@register_env``; the modules are discovered on first lookup, so adding an environment
touches only its own file.
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


def load_all() -> None:
    """Import every module of this package so that all environments are registered."""
    global _loaded
    if _loaded:
        return
    for mod in pkgutil.iter_modules(__path__):
        if mod.name not in _NOT_FAMILIES and not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")
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
