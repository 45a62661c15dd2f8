"""The environment's own programmatic verifier as the reward (RLVE's R)."""

from __future__ import annotations

from collections.abc import Sequence

from verirl.envs import get_env
from verirl.errors import UserInputError
from verirl.rewards.base import REWARDS, RewardContext, RewardSource
from verirl.types import Rollout, Verdict


@REWARDS.register("env")
class EnvVerifierReward(RewardSource):
    """The environment's verdict for every rollout (RLVE's graded rewards in [-1, 1]), all
    rollouts of the batch verified together by ``ctx.verifier``."""

    verifies_each = True  # every rollout through ctx.env_verdicts

    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        verdicts = ctx.env_verdicts(rollouts)
        missing = [r.problem.env for r, v in zip(rollouts, verdicts, strict=True) if v is None]
        if missing:
            raise UserInputError(
                f"reward 'env' needs registered environments; {missing[0]!r} is not one "
                "(use reward.name=rule or cer for free-form data)"
            )
        return [v for v in verdicts if v is not None]

    def produces(self, environments: Sequence[str]) -> frozenset[str]:
        out: frozenset[str] = frozenset()
        for name in environments:
            out |= get_env(name).produces
        return out
