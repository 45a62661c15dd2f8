"""Group filters: which sampled groups a step trains on (``dynamic_sampling.filter``).

With dynamic sampling on, the producer drops every group its filter refuses and refills the
step from new prompts, for up to ``dynamic_sampling.max_rounds`` generation rounds (DAPO, Yu
et al. 2025, "DAPO: An Open-Source LLM Reinforcement Learning System at Scale",
arXiv:2503.14476, §3.2, eq. 11). A filter is a pure function of one group's scored
rollouts, registered by name like every other part, so a new rule is one more
``@GROUP_FILTERS.register``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel

from verirl.registry import Registry, Spec
from verirl.types import Rollout

FilterFn = Callable[[BaseModel, Sequence[Rollout]], bool]
GROUP_FILTERS: Registry[Spec[FilterFn]] = Registry("group filter")
"""Group filters by name (``dynamic_sampling.filter``): ``@GROUP_FILTERS.register(name, params)``
on ``fn(params, one group's scored rollouts) -> keep?``."""


@GROUP_FILTERS.register("reward_variance")
def reward_variance(params: BaseModel, group: Sequence[Rollout]) -> bool:
    """Keep a group whose rewards are not all equal (a group of equal rewards has zero
    advantage everywhere: no gradient; verl's ``filter_groups`` on the score)."""
    return len({r.reward for r in group}) > 1


@GROUP_FILTERS.register("mixed_correctness")
def mixed_correctness(params: BaseModel, group: Sequence[Rollout]) -> bool:
    """Keep a group that is neither all correct nor all wrong: DAPO's eq. 11,
    ``0 < |{o_i : correct}| < G``, on the verdicts' ``correct`` flag (with a graded reward,
    two different partial credits are no sign of a solved or failed problem)."""
    correct = [bool(r.verdict and r.verdict.correct) for r in group]
    return any(correct) and not all(correct)
