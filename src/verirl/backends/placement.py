"""Placement: where the loop's parts run.

A placement builds the parts the trainer drives — the rollout engine, the verification
executor, the learner — where it runs them (this process, a torchrun rank, Ray actors), shares
the collated batch with the other learner ranks, and makes the engine sample from the new
weights after every update. It never calls the trainer: a process that does not lead (a
torchrun rank other than 0) *follows* — :meth:`Backend.follow` trains on the leader's batches.
When rollouts are produced (now, or by a producer running ahead) is the schedule's business
(:mod:`verirl.backends.schedules`); a placement offers the schedule a producer of its own when
it can (:meth:`Backend.rollout_stream`).

Placements are registered by name (:data:`PLACEMENTS`, ``run.placement: {name, params}``);
each reads :class:`BackendSettings`, not the whole training config.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import torch
from pydantic import BaseModel

from verirl.config import TrainConfig
from verirl.device import Placement
from verirl.errors import UserInputError
from verirl.models import PolicySpec
from verirl.registry import Plugin, Registry, Spec, named
from verirl.rollout.base import ENGINES, ReportsCost, RolloutEngine, Sleeps
from verirl.train.learner import Learner, LearnerSettings, PolicyLearner
from verirl.types import Batch
from verirl.verification.executors import EXECUTORS, Executor

if TYPE_CHECKING:
    from verirl.backends.schedules import BoundedStalenessParams
    from verirl.train.producer import ProducerSettings, RolloutProducer


@dataclass(frozen=True)
class BackendSettings:
    """What a placement reads from a run's config: the engine and executor to build, the
    modules their workers import, the policy (a placement may rebuild it elsewhere: Ray
    actors), the run's seed, steps and threads, and its own ``params``
    (``run.placement.params``, parsed by its parameter model)."""

    engine: Plugin
    executor: Plugin
    plugins: tuple[str, ...]
    seed: int
    steps: int
    threads: int | None
    policy: PolicySpec
    params: BaseModel

    @classmethod
    def from_config(cls, cfg: TrainConfig, placement: Placement) -> BackendSettings:
        return cls(
            engine=cfg.rollout.engine,
            executor=cfg.verification.executor,
            plugins=tuple(cfg.run.plugins),
            seed=cfg.run.seed,
            steps=cfg.run.steps,
            threads=cfg.run.threads,
            policy=PolicySpec.from_config(cfg),
            params=PLACEMENTS.get(cfg.run.placement.name).parse(cfg.run.placement.params),
        )


PLACEMENTS: Registry[Spec[type[Backend]]] = Registry("placement", on_add=named)
"""Placements by name (``run.placement``): ``spec.part(settings, device placement)``, a
:class:`Backend` subclass."""


class RolloutStream(Protocol):
    """A producer that runs ahead of the learner, as a placement runs it (its own process on
    this machine, a thread steering Ray replicas); the bounded-staleness schedule consumes it.

    - ``own_verifiers``: the producer verifies with verifiers of its own, so the trainer's
      verify nothing but an evaluation (they start on first use and are stopped when the
      producer starts);
    - :meth:`start`: start producing batches ``first`` … ``steps − 1`` with ``producer``'s
      settings and state, batch i with policy ``version_for(i, max_staleness, step)``
      (``step``: the learner's version now; ``first`` > ``step`` when a resumed run's
      checkpoint held the batches before it); then ``worker`` (with ``is_alive()``) and
      ``queue`` are set: the producer puts ``("batch", i, pickled Produced)`` or
      ``("error", i, traceback)`` on it;
    - :meth:`publish`: the learner's weights after ``version`` updates reach the producer;
      returns the engine's cost metrics;
    - :meth:`stop` / :meth:`join`: ask the producer to end / wait for it.
    """

    own_verifiers: bool
    worker: Any
    queue: Any

    def start(
        self, producer: RolloutProducer, step: int, max_staleness: int, first: int
    ) -> None: ...

    def publish(self, engine: RolloutEngine, version: int) -> dict[str, float]: ...

    def stop(self) -> None: ...

    def join(self) -> None: ...


class Backend:
    """The base of every placement: the parts built in this process (what the ``local``
    placement, :class:`~verirl.backends.local.LocalBackend`, does), overridden where a
    placement differs.

    - ``leads``: whether this process samples, logs and writes checkpoints (False on torchrun
      ranks other than 0: they :meth:`follow`);
    - ``verifies_rollouts``: whether this process verifies the step's rollouts (False when
      the executor's workers check proofs with checkers of their own, as Ray's actors do:
      this process's proof checkers then start on first use rather than at start-up);
    - :meth:`engine` / :meth:`executor` / :meth:`learner`: the parts, built where this
      placement runs them (the learner with the settings the run's build resolved);
    - :meth:`share_batch`: the collated batch every learner rank trains on;
    - :meth:`before_update` / :meth:`publish_weights`: around the learner update (free the
      engine's memory; make the engine sample from the new weights), the latter returning
      the engine's cost metrics;
    - :meth:`rollout_stream`: a producer of its own for the bounded-staleness schedule (none
      by default).
    """

    name = ""
    leads = True
    verifies_rollouts = True

    def __init__(self, settings: BackendSettings, placement: Placement) -> None:
        self.settings = settings
        self.placement = placement

    def engine(self, model: torch.nn.Module, tokenizer: Any) -> RolloutEngine:
        e = self.settings.engine
        return ENGINES.get(e.name).build(
            e.params, model, tokenizer, self.placement, self.settings.seed
        )

    def executor(self) -> Executor:
        v = self.settings.executor
        return EXECUTORS.get(v.name).build(v.params, self.settings.plugins)

    def learner(self, model: torch.nn.Module, settings: LearnerSettings) -> PolicyLearner:
        return Learner(model, settings, self.settings.steps)

    def share_batch(self, batch: Batch) -> Batch:
        return batch

    def follow(self, learner: PolicyLearner, start: int, steps: int) -> dict[str, Any]:
        """Train on the leader's batches for ``start`` … ``steps − 1`` (a process that does
        not lead); returns what this process did, for the summary."""
        raise NotImplementedError(f"the {self.name!r} placement always leads")

    def before_update(self, engine: RolloutEngine) -> None:
        if isinstance(engine, Sleeps):  # vLLM on GPU: free its memory meanwhile
            engine.sleep()

    def publish_weights(self, engine: RolloutEngine, version: int) -> dict[str, float]:
        """Make the engine sample from the learner's new weights (``version`` updates in);
        returns the engine's own cost metrics (Ray replicas: ray/*; vLLM's sync: engine/*)."""
        engine.sync_weights()
        return engine_cost(engine)

    def rollout_stream(
        self, staleness: BoundedStalenessParams, producer: ProducerSettings
    ) -> RolloutStream:
        """A producer that runs ahead of the learner; a placement that has none refuses."""
        raise no_stream(self.name)

    def training_done(self) -> None:
        """Every step has been trained, without an error (called by each process after the
        loop or :meth:`follow`, before the leader's final save, export and evaluation, which
        need no peer): a placement with a process group leaves it here, all ranks together."""

    def close(self) -> None:
        """Stop what this placement started (idempotent)."""


def engine_cost(engine: RolloutEngine) -> dict[str, float]:
    """The engine's own cost metrics (``engine/*`` unless they name their group)."""
    cost = engine.metrics() if isinstance(engine, ReportsCost) else {}
    return {(k if "/" in k else f"engine/{k}"): v for k, v in cost.items()}


def build_placement(name: str, settings: BackendSettings, placement: Placement) -> Backend:
    """The placement ``name`` over ``settings`` (which hold its params)."""
    backend: Backend = PLACEMENTS.get(name).part(settings, placement)
    return backend


def no_stream(name: str) -> UserInputError:
    """The error of a placement that cannot run a producer ahead of its learner."""
    return UserInputError(
        f"the bounded_staleness schedule (run.schedule) does not run on placement {name!r}: use "
        "the local placement (one process, not under torchrun: a data-parallel learner group "
        "there would need every rank to take its batch from the one producer) or the ray "
        f"placement (known placements: {', '.join(PLACEMENTS.names())})"
    )
