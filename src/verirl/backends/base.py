"""The backend seam: where the loop's parts run and how rollouts reach the learner.

A :class:`Backend` builds the rollout engine, the verification executor and the learner the
loop uses (in this process, as torchrun ranks, or as Ray actors), hands the loop each step's
rollouts (sampled now, or taken from an asynchronous producer's queue), shares the collated
batch with the other learner ranks, and publishes the new weights to the engine after every
update. The loop calls these methods and never asks which backend it runs on.

Backends are registered by name (:data:`BACKENDS`); :func:`verirl.backends.select` picks one
from ``run.backend``, ``run.async`` and the torchrun environment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from verirl.config import TrainConfig
from verirl.device import Placement
from verirl.provers.settings import Provers
from verirl.registry import Registry
from verirl.rollout.base import ReportsCost, RolloutEngine, Sleeps, get_engine
from verirl.train.learner import Learner, LearnerSettings, PolicyLearner
from verirl.types import Batch
from verirl.verification.executors import EXECUTORS, Executor

if TYPE_CHECKING:
    from verirl.train.loop import Trainer
    from verirl.train.producer import Produced, RolloutProducer


class Backend:
    """The synchronous, one-process backend; the others override what differs.

    - ``writes_files``: whether this process logs and writes checkpoints (False on torchrun
      ranks other than 0);
    - ``engine`` / ``executor`` / ``provers`` / ``learner``: the parts, built where this
      backend runs them;
    - ``verifies_rollouts``: whether this process verifies the step's rollouts (False when a
      producer elsewhere does: this process's proof checkers then start on first use — by an
      evaluation — rather than at start-up);
    - ``fit``: this process's part of a run (the leader runs :meth:`Trainer.lead`);
    - ``next_rollouts``: the step's rollouts (here: sampled now, by the trainer's producer);
    - ``share_batch``: the collated batch every learner rank trains on;
    - ``before_update`` / ``publish_weights``: around the learner update (free the engine's
      memory; make the engine sample from the new weights), returning the cost metrics;
    - ``producer_state``: the producer's state to checkpoint with the learner's.
    """

    name = "local"
    writes_files = True
    verifies_rollouts = True

    def __init__(self, cfg: TrainConfig, placement: Placement) -> None:
        self.cfg = cfg
        self.placement = placement

    def engine(self, model: torch.nn.Module, tokenizer: Any) -> RolloutEngine:
        e = self.cfg.rollout.engine
        return get_engine(e.name).build(
            e.params, model, tokenizer, self.placement, self.cfg.run.seed
        )

    def executor(self) -> Executor:
        v = self.cfg.verification.executor
        return EXECUTORS.get(v.name).build(v.params, self.cfg.run.plugins)

    def provers(self) -> Provers:
        return Provers(self.cfg.provers)

    def learner(self, model: torch.nn.Module) -> PolicyLearner:
        settings = LearnerSettings.from_config(self.cfg, self.placement)
        return Learner(model, settings, self.cfg.run.steps, None)

    def fit(self, trainer: Trainer, progress: Any) -> dict[str, Any]:
        return trainer.lead(progress)

    def next_rollouts(self, producer: RolloutProducer, version: int) -> Produced:
        return producer.produce(version)

    def share_batch(self, batch: Batch) -> Batch:
        return batch

    def before_update(self, engine: RolloutEngine) -> None:
        if isinstance(engine, Sleeps):  # vLLM on GPU: free its memory meanwhile
            engine.sleep()

    def publish_weights(self, engine: RolloutEngine, version: int) -> dict[str, float]:
        """Make the engine sample from the learner's new weights (``version`` updates in);
        returns the engine's own cost metrics (Ray replicas: ray/*; vLLM's sync: engine/*)."""
        engine.sync_weights()
        cost = engine.metrics() if isinstance(engine, ReportsCost) else {}
        return {(k if "/" in k else f"engine/{k}"): v for k, v in cost.items()}

    def producer_state(self, producer: RolloutProducer) -> dict[str, Any]:
        return producer.state_dict()

    def close(self) -> None:
        """Stop what this backend started (idempotent)."""


BackendFactory = Callable[[TrainConfig, Placement], Backend]


@dataclass(frozen=True)
class BackendSpec:
    name: str
    factory: BackendFactory
    description: str


BACKENDS: Registry[BackendSpec] = Registry("backend")


def register_backend(name: str, description: str) -> Callable[[BackendFactory], BackendFactory]:
    def decorator(factory: BackendFactory) -> BackendFactory:
        BACKENDS.register(name)(BackendSpec(name, factory, description))
        return factory

    return decorator


register_backend("local", "one process, synchronous")(Backend)
