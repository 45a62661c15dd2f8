"""A ``run.plugins`` module that adds one part to each registry the registry-kind tests
choose by name from a config: a curriculum kind, a Coq checker backend, a group filter and
a loss aggregation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from pydantic import BaseModel

from verirl.curriculum import CURRICULA, CurriculumConfig, StaticWindow
from verirl.provers.settings import CHECKERS, CoqSettings
from verirl.train.group_filters import GROUP_FILTERS
from verirl.train.loss import AGGREGATIONS, AggregationScale
from verirl.types import Rollout


@CURRICULA.register("test_top_only", description="every problem at static_high")
def top_only(cfg: CurriculumConfig, envs: Sequence[str], seed: int) -> StaticWindow:
    return StaticWindow(envs, low=cfg.static_high, high=cfg.static_high, seed=seed)


class CountingChecker:
    """A checker that records what it was built with (never checks anything)."""

    name = "test-counting"

    def __init__(self, settings: CoqSettings) -> None:
        self.workers = settings.workers

    def check(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def check_batch(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        pass


CHECKERS["coq"].register("test_counting", description="records its settings")(CountingChecker)


@GROUP_FILTERS.register("test_first_correct")
def first_correct(params: BaseModel, group: Sequence[Rollout]) -> bool:
    """Keep a group whose first rollout is correct."""
    return bool(group and group[0].verdict and group[0].verdict.correct)


@AGGREGATIONS.register("test-sum")
def token_sum(loss: torch.Tensor, mask: torch.Tensor, scale: AggregationScale) -> torch.Tensor:
    return (loss * mask).sum()
