"""``torchrun --nproc_per_node K -m verirl.cli train``: the local loop as one rank of a
data-parallel learner group. Rank 0 samples, scores, computes advantages, broadcasts the
collated batch, logs and writes checkpoints; every rank trains on its share of each minibatch
(:mod:`verirl.train.distributed`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from verirl.backends.base import Backend, register_backend
from verirl.config import TrainConfig
from verirl.device import Placement
from verirl.train.distributed import DataParallel, backend_for, from_environment
from verirl.train.learner import Learner, LearnerSettings, PolicyLearner
from verirl.types import Batch

if TYPE_CHECKING:
    from verirl.train.loop import Trainer


@register_backend("torchrun", "one rank of a torchrun data-parallel group, synchronous")
class TorchrunBackend(Backend):
    name = "torchrun"

    def __init__(self, cfg: TrainConfig, placement: Placement) -> None:
        super().__init__(cfg, placement)
        dp = from_environment(backend_for(placement.device))
        self.dp: DataParallel = dp if dp is not None else DataParallel(0, 1)

    @property
    def writes_files(self) -> bool:  # type: ignore[override]
        return self.dp.rank == 0

    def learner(self, model: torch.nn.Module) -> PolicyLearner:
        settings = LearnerSettings.from_config(self.cfg, self.placement)
        return Learner(model, settings, self.cfg.run.steps, self.dp)

    def fit(self, trainer: Trainer, progress: Any) -> dict[str, Any]:
        if self.writes_files:
            return trainer.lead(progress)
        for step in range(trainer.step, self.cfg.run.steps):  # rank 0's batch, this share
            trainer.learner.update(self.dp.broadcast(None))
            trainer.step = step + 1
        return {"run_dir": str(trainer.run_dir), "rank": self.dp.rank}

    def share_batch(self, batch: Batch) -> Batch:
        shared: Batch = self.dp.broadcast(batch)
        return shared
