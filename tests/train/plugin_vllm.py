"""Test-only plugins of the vLLM training test, loaded through ``run.plugins``."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from pydantic import BaseModel

from verirl.credit import CREDIT, CreditInput
from verirl.rewards import REWARDS, RewardContext, RewardSource
from verirl.types import Rollout, Verdict


@REWARDS.register("test_alternating")
class Alternating(RewardSource):
    """1, 0, 1, 0, ... in batch order, whatever the text: groups always have reward variance,
    even when greedy decoding makes every sample of a group the same."""

    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        return [Verdict(float(i % 2 == 0), i % 2 == 0, "alternating") for i in range(len(rollouts))]


@CREDIT.register("test_raw_reward")
def raw_reward(inp: CreditInput, params: BaseModel) -> torch.Tensor:
    """REINFORCE without a baseline, A_i = r_i on every token (test only): identical greedy
    samples of a group still get a non-zero loss and gradient."""
    return inp.rewards[:, None] * inp.response_mask
