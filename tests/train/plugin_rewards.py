"""A test-only reward source, loaded through ``run.plugins``: the share of response tokens with
an even id. A tiny random model earns varied values of it, so GRPO has signal."""

from __future__ import annotations

from collections.abc import Sequence

from verirl.rewards import REWARDS, RewardContext, RewardSource
from verirl.types import Rollout, Verdict


@REWARDS.register("test_even_tokens")
class EvenTokens(RewardSource):
    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        out = []
        for r in rollouts:
            share = sum(t % 2 == 0 for t in r.response_ids) / max(len(r.response_ids), 1)
            out.append(Verdict(share, share > 0.5, "even token share"))
        return out


@REWARDS.register("test_broken")
class Broken(RewardSource):
    """A reward source with a bug: the CLI must report it as an internal error (exit 1)."""

    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        raise KeyError("a shape bug, not bad input")
