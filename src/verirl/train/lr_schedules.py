"""Learning-rate schedules: pure functions of training progress, registered by name
(``optim.schedule``).

A schedule is the LR multiplier after warmup as a function of ``progress`` ∈ [0, 1], the
share of the post-warmup optimizer steps already taken. :func:`lr_factor` puts a linear
warmup of ``optim.warmup_steps`` in front of any of them, so a new shape is one more
``@LR_SCHEDULES.register`` and never a branch in the learner.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from verirl.registry import Registry, Spec

ScheduleFn = Callable[[float], float]

LR_SCHEDULES: Registry[Spec[ScheduleFn]] = Registry("learning-rate schedule")
"""Schedules by name (``optim.schedule``): ``@LR_SCHEDULES.register(name)`` on
``fn(progress ∈ [0, 1]) → LR multiplier``."""


@LR_SCHEDULES.register("constant")
def constant(progress: float) -> float:
    """1 throughout (RLVE, DAPO)."""
    return 1.0


@LR_SCHEDULES.register("linear")
def linear(progress: float) -> float:
    """1 − progress: linear decay to 0 at the last step (transformers' and TRL's default
    ``lr_scheduler_type="linear"``)."""
    return 1.0 - progress


@LR_SCHEDULES.register("cosine")
def cosine(progress: float) -> float:
    """½ (1 + cos(π · progress)): half a cosine from 1 to 0 (Loshchilov & Hutter, "SGDR",
    arXiv 1608.03983, eq. 5 with one cycle and η_min = 0)."""
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def lr_factor(name: str, warmup_steps: int, total_steps: int) -> Callable[[int], float]:
    """The LR multiplier of optimizer step ``step`` (0-based) for ``torch.optim.lr_scheduler.
    LambdaLR``: a linear warmup ``(step + 1) / warmup_steps`` over the first ``warmup_steps``
    steps, then schedule ``name`` over the remaining ``total_steps − warmup_steps``."""
    shape = LR_SCHEDULES.get(name).part

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        return shape(min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps)))

    return factor
