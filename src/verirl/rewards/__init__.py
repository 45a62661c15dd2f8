"""Reward sources (scorers), registered by name; every module here registers on import."""

from __future__ import annotations

import importlib
import pkgutil

from verirl.rewards.base import (
    REWARDS,
    RewardContext,
    RewardSource,
    get_reward,
    register_reward,
)

__all__ = [
    "REWARDS",
    "RewardContext",
    "RewardSource",
    "get_reward",
    "register_reward",
]

for _mod in pkgutil.iter_modules(__path__):
    if _mod.name != "base" and not _mod.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_mod.name}")
