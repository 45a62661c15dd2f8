"""Hand-built multi-turn credit inputs shared by the credit tests.

Every episode is laid out as: turn 1 (2 tokens) ▸ feedback glue (1 token) ▸ turn 2 (2 tokens)
▸ …, so turn k occupies tokens [3(k−1), 3(k−1)+2) and the glue token after it sits at
3(k−1)+2.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import torch

from verirl.credit import CreditInput
from verirl.types import Turn

TOKENS_PER_TURN = 2


def episodes(
    spec: Sequence[tuple[int, Sequence[float]]],
    alts: dict[tuple[int, int], Sequence[float]] | None = None,
) -> CreditInput:
    """``spec``: (group, turn scores) per episode; ``alts[(episode, turn0)]``: alt scores."""
    alts = alts or {}
    all_turns: list[tuple[Turn, ...]] = []
    lengths = []
    for e, (_, scores) in enumerate(spec):
        ts = []
        for k, s in enumerate(scores):
            start = 3 * k
            ts.append(
                Turn(
                    start=start,
                    end=start + TOKENS_PER_TURN,
                    text=f"e{e}t{k}",
                    score=s,
                    correct=s >= 1.0,
                    alt_scores=tuple(alts.get((e, k), ())),
                )
            )
        all_turns.append(tuple(ts))
        lengths.append(3 * len(scores) - 1)
    width = max(lengths)
    mask = torch.zeros(len(spec), width)
    for i, ts in enumerate(all_turns):
        for t in ts:
            mask[i, t.start : t.end] = 1.0
    return CreditInput(
        rewards=torch.tensor([s[-1] for _, s in spec]),
        correct=torch.tensor([s[-1] >= 1.0 for _, s in spec]),
        groups=torch.tensor([g for g, _ in spec]),
        response_mask=mask,
        turns=tuple(all_turns),
    )


def zs(values: Sequence[float], eps: float = 1e-6) -> list[float]:
    """Reference z-score with the unbiased std (independent of the package's helper)."""
    mean = statistics.fmean(values)
    std = statistics.stdev(values)
    return [(v - mean) / (std + eps) for v in values]
