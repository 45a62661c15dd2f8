"""``run.backend: ray``: the verifier pool, the rollout-engine replicas and the learner group
as Ray actors (:mod:`verirl.integrations.ray`, named here by its import path); Ray is
imported only when this is built."""

from __future__ import annotations

from typing import Any

import torch

from verirl.backends.base import Backend, register_backend
from verirl.config import TrainConfig
from verirl.device import Placement
from verirl.registry import import_object
from verirl.rollout.base import RolloutEngine
from verirl.train.learner import PolicyLearner
from verirl.verification.executors import Executor

RAY_PARTS = "verirl.integrations.ray.backend:RayBackend"


@register_backend("ray", "verifier actors, engine replicas and a learner group on Ray")
class RayBackend(Backend):
    name = "ray"

    def __init__(self, cfg: TrainConfig, placement: Placement) -> None:
        super().__init__(cfg, placement)
        self.parts = import_object(RAY_PARTS)(cfg)

    def engine(self, model: torch.nn.Module, tokenizer: Any) -> RolloutEngine:
        return self.parts.rollout_engine(model)

    def executor(self) -> Executor:
        return self.parts.executor(self.cfg.run.plugins)

    def learner(self, model: torch.nn.Module) -> PolicyLearner:
        return self.parts.learner(model)

    def close(self) -> None:
        self.parts.close()
