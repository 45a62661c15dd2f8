"""Test-only parts that break a training run the way real runs break, loaded through
``run.plugins``, so the run-health detectors can be shown to catch each fault in a real loop.

- ``test_nan_reward``: every reward is NaN (a reward bug): the loss goes NaN.
- ``test_drifting_hf``: the ``hf`` engine whose reported log-probs are off by 0.5 nats (an
  engine with other numerics); its log-probs are not the learner's, so π_old is recomputed and
  ``train/engine_logp_diff_mean`` measures the drift.
- ``test_stale_copy``: the ``hf`` engine over its own copy of the policy whose weight sync
  never happens; it reports ``sync/mismatch`` from the weight checksums.
- ``test_leaky_reward``: ``test_even_tokens`` that keeps 50 MB more at every call (a plug-in
  keeping tensors across steps): ``memory_growth``'s leak.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict

from verirl.rewards import REWARDS, RewardContext, RewardSource
from verirl.rollout.base import ENGINES, Generation
from verirl.train.health import checksum_mismatch, weights_checksum
from verirl.types import Rollout, SamplingParams, Verdict


@REWARDS.register("test_leaky_reward")
class LeakyReward(RewardSource):
    LEAK_BYTES = 50_000_000

    def __init__(self, params: BaseModel) -> None:
        super().__init__(params)
        self.kept: list[torch.Tensor] = []

    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        self.kept.append(torch.ones(self.LEAK_BYTES // 4))  # the bug: kept, never dropped
        return [Verdict(1.0, True, "leaks") for _ in rollouts]


@REWARDS.register("test_nan_reward")
class NanReward(RewardSource):
    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        return [Verdict(math.nan, False, "a reward bug") for _ in rollouts]


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DriftingEngine:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        out = self.inner.generate(prompts, sampling)
        return [[replace(g, logprobs=tuple(x - 0.5 for x in g.logprobs)) for g in o] for o in out]

    def sync_weights(self) -> None:
        self.inner.sync_weights()

    def state_dict(self) -> dict[str, Any]:
        return dict(self.inner.state_dict())

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.inner.load_state_dict(state)


@ENGINES.register("test_drifting_hf", _Params, logprobs_exact=False)
def build_drifting(params: _Params, model: Any, tokenizer: Any, placement: Any, seed: int) -> Any:
    return DriftingEngine(ENGINES.get("hf").build(None, model, tokenizer, placement, seed))


class StaleCopyEngine(DriftingEngine):
    def __init__(self, inner: Any, copy_: torch.nn.Module, learner: torch.nn.Module) -> None:
        super().__init__(inner)
        self.copy, self.learner = copy_, learner

    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        return list(self.inner.generate(prompts, sampling))

    def sync_weights(self) -> None:  # the bug: the learner's update never reaches the copy
        return None

    def metrics(self, reset: bool = True) -> dict[str, float]:
        held = weights_checksum(p for p in self.copy.parameters())
        sent = weights_checksum(p for p in self.learner.parameters())
        return {"sync/mismatch": checksum_mismatch(held, sent)}


@ENGINES.register("test_stale_copy", _Params, logprobs_exact=False)
def build_stale(params: _Params, model: Any, tokenizer: Any, placement: Any, seed: int) -> Any:
    own = copy.deepcopy(model)
    inner = ENGINES.get("hf").build(None, own, tokenizer, placement, seed)
    return StaleCopyEngine(inner, own, model)
