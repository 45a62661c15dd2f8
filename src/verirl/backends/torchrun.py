"""``torchrun --nproc_per_node K -m verirl.cli train``: the local placement as one rank of a
data-parallel learner group. Rank 0 leads — samples, scores, computes advantages, broadcasts
the collated batch, logs and writes checkpoints; the other ranks follow — every rank trains on
its share of each minibatch (:mod:`verirl.train.distributed`)."""

from __future__ import annotations

from typing import Any

import torch

from verirl.backends.placement import PLACEMENTS, Backend, BackendSettings
from verirl.device import Placement
from verirl.train.distributed import (
    DataParallel,
    backend_for,
    from_environment,
    leave_group,
)
from verirl.train.learner import Learner, LearnerSettings, PolicyLearner
from verirl.types import Batch


@PLACEMENTS.register("torchrun", description="one rank of a torchrun data-parallel group")
class TorchrunBackend(Backend):
    def __init__(self, settings: BackendSettings, placement: Placement) -> None:
        super().__init__(settings, placement)
        self.dp: DataParallel = from_environment(backend_for(placement.device))

    @property
    def leads(self) -> bool:  # type: ignore[override]
        return self.dp.rank == 0

    def learner(self, model: torch.nn.Module, settings: LearnerSettings) -> PolicyLearner:
        return Learner(model, settings, self.settings.steps, self.dp)

    def follow(self, learner: PolicyLearner, start: int, steps: int) -> dict[str, Any]:
        for _ in range(start, steps):  # rank 0's batch, this rank's share of it
            learner.update(self.dp.broadcast(None))
        return {"rank": self.dp.rank}

    def share_batch(self, batch: Batch) -> Batch:
        shared: Batch = self.dp.broadcast(batch)
        return shared

    def training_done(self) -> None:
        # at a barrier, so that no rank tears gloo's connections down while a peer still uses
        # them (that rank aborts: "terminate called without an active exception"); only after
        # a clean loop, since a rank stuck in a broadcast would never reach it
        leave_group(together=True)
