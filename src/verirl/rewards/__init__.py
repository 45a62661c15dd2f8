"""Reward sources (scorers), registered by name; the built-in ones are imported on the first
lookup of :data:`REWARDS`."""

from __future__ import annotations

from verirl.rewards.base import REWARDS, RewardContext, RewardSource


@REWARDS.builtins
def _builtins() -> None:
    from verirl.rewards import cer, env, likelihood, rule  # noqa: F401


__all__ = ["REWARDS", "RewardContext", "RewardSource"]
