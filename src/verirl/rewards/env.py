"""The environment's own programmatic verifier as the reward (RLVE's R)."""

from __future__ import annotations

from collections.abc import Sequence

from verirl.envs import get_env
from verirl.rewards.base import RewardContext, RewardSource, register_reward
from verirl.types import Rollout, Verdict


@register_reward("env")
class EnvVerifierReward(RewardSource):
    """``get_env(problem.env).verify(problem, text)`` for every rollout."""

    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        return [get_env(r.problem.env).verify(r.problem, r.text) for r in rollouts]
