"""Reward shaping: wrappers that adjust another reward source's verdicts.

``OverlongShaping`` is DAPO's soft overlong punishment (Yu et al. 2025, "DAPO: An Open-Source
LLM Reinforcement Learning System at Scale", arXiv:2503.14476, eq. 13): a penalty on the
reward of responses that run into the length budget. It is reward shaping, not a loss term,
so it wraps the run's reward source (``reward.overlong.buffer`` in the config) and applies to
every scored response — each turn of a multi-turn episode too, measured on that turn's tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import torch

from verirl.rewards.base import RewardContext, RewardSource
from verirl.types import Rollout, Verdict


def overlong_penalty(lengths: torch.Tensor, max_length: int, buffer: int) -> torch.Tensor:
    """DAPO's soft overlong punishment (eq. 13), added to the reward:

        0                                     if |y| ≤ L_max − L_cache
        ((L_max − L_cache) − |y|) / L_cache   if L_max − L_cache < |y| ≤ L_max
        −1                                    if |y| > L_max

    ``lengths`` [N] response lengths, ``max_length`` = L_max, ``buffer`` = L_cache.
    """
    if buffer <= 0 or buffer > max_length:
        raise ValueError(f"overlong buffer must be in (0, max_length={max_length}], got {buffer}")
    lengths = lengths.to(torch.float32)
    soft_start = max_length - buffer
    penalty = (soft_start - lengths) / buffer
    penalty = torch.where(lengths <= soft_start, torch.zeros_like(lengths), penalty)
    return torch.where(lengths > max_length, torch.full_like(lengths, -1.0), penalty)


class OverlongShaping(RewardSource):
    """``inner``'s verdicts with :func:`overlong_penalty` added to each reward; the penalty is
    kept in ``extra["overlong_penalty"]``. Length = the response's trained tokens."""

    def __init__(self, inner: RewardSource, max_length: int, buffer: int) -> None:
        super().__init__(inner.params)
        overlong_penalty(torch.zeros(1), max_length, buffer)  # validates the two numbers
        self.inner, self.max_length, self.buffer = inner, max_length, buffer
        self.needs = inner.needs
        self.verifies_each = inner.verifies_each

    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        verdicts = self.inner.score(rollouts, ctx)
        lengths = torch.tensor([sum(r.mask) for r in rollouts])
        penalty = overlong_penalty(lengths, self.max_length, self.buffer).tolist()
        return [
            replace(v, reward=v.reward + p, extra={**v.extra, "overlong_penalty": p})
            for v, p in zip(verdicts, penalty, strict=True)
        ]

    def produces(self, environments: Sequence[str]) -> frozenset[str]:
        return self.inner.produces(environments)

    def metrics(self) -> dict[str, float]:
        return self.inner.metrics()
