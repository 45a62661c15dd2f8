"""``run.backend: ray``: the run's verifier pool, rollout replicas and learner group.

:class:`RayBackend` joins (or starts) Ray, checks that the cluster can place every actor the
config asks for (a request Ray cannot place would otherwise wait forever), and builds the
three parts the loop uses through its usual interfaces: an
:class:`~verirl.verification.executors.Executor`, a :class:`~verirl.rollout.base.RolloutEngine`
and a learner with :class:`~verirl.train.learner.Learner`'s ``update`` / ``state_dict`` /
``load_state_dict``. ``close`` stops every actor and shuts Ray down if it started it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from verirl.config import TrainConfig
from verirl.errors import UserInputError
from verirl.integrations.ray.cluster import connect, disconnect, require_ray
from verirl.integrations.ray.executor import RayExecutor
from verirl.integrations.ray.learner import RayLearnerGroup
from verirl.integrations.ray.rollout import RayRolloutEngine


class RayBackend:
    def __init__(self, cfg: TrainConfig) -> None:
        require_ray()
        self.cfg = cfg
        self._started = connect(cfg.ray.address, cfg.ray.num_cpus)
        self._parts: list[Any] = []
        self._group: RayLearnerGroup | None = None
        try:
            check_resources(cfg)
        except Exception:
            disconnect(self._started)
            raise

    def executor(self, plugins: Sequence[str]) -> RayExecutor:
        params = self.cfg.ray.verifiers.model_copy(update={"address": self.cfg.ray.address})
        ex = RayExecutor(params, plugins)
        self._parts.append(ex)
        return ex

    def rollout_engine(self, model: torch.nn.Module) -> RayRolloutEngine:
        engine = RayRolloutEngine(self.cfg, model, self.latest_weights)
        self._parts.append(engine)
        return engine

    def learner(self, model: torch.nn.Module) -> RayLearnerGroup:
        self._group = RayLearnerGroup(self.cfg, model)
        self._parts.append(self._group)
        return self._group

    def latest_weights(self) -> Any:
        """The learner group's newest weights in the object store (None before an update)."""
        return self._group.latest_weights if self._group is not None else None

    def close(self) -> None:
        parts, self._parts = self._parts, []
        try:
            for part in reversed(parts):
                part.close()
        finally:
            disconnect(self._started)


def check_resources(cfg: TrainConfig) -> None:
    """Raise :class:`~verirl.errors.UserInputError` naming the ``ray.*`` fields when the
    cluster has fewer CPUs or GPUs than the actors ask for in total."""
    import ray

    r = cfg.ray
    want_cpu = (
        r.verifiers.actors * r.verifiers.num_cpus
        + r.rollout.workers * r.rollout.num_cpus
        + r.learner.workers * r.learner.num_cpus
    )
    want_gpu = r.rollout.workers * r.rollout.num_gpus + r.learner.workers * r.learner.num_gpus
    have = ray.cluster_resources()
    have_cpu, have_gpu = float(have.get("CPU", 0.0)), float(have.get("GPU", 0.0))
    if want_cpu > have_cpu + 1e-9 or want_gpu > have_gpu + 1e-9:
        raise UserInputError(
            f"the Ray cluster has {have_cpu:g} CPUs and {have_gpu:g} GPUs but the actors ask "
            f"for {want_cpu:g} CPUs and {want_gpu:g} GPUs (ray.verifiers.actors × num_cpus + "
            "ray.rollout.workers × num_cpus + ray.learner.workers × num_cpus; num_gpus "
            "likewise): lower them (fractions such as 0.5 are allowed) or add nodes"
        )
