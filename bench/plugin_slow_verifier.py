"""A bench-only reward source (``run.plugins=[bench.plugin_slow_verifier]``): the share of even
response tokens, returned after ``latency_s`` seconds per scored batch — a stand-in for a
verifier whose cost is wall-clock latency rather than this process's CPU (a proof checker or
code sandbox in another process, a remote tool call)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from verirl.rewards import REWARDS, RewardContext, RewardSource
from verirl.types import Rollout, Verdict


class SlowParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    latency_s: float = Field(0.5, ge=0, description="Seconds of latency per scored batch.")


@REWARDS.register("bench_slow_verifier", SlowParams)
class SlowVerifier(RewardSource[SlowParams]):
    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        time.sleep(self.params.latency_s)
        out = []
        for r in rollouts:
            share = sum(t % 2 == 0 for t in r.response_ids) / max(len(r.response_ids), 1)
            out.append(Verdict(share, share > 0.5, "even token share"))
        return out
