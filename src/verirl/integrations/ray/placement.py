"""``run.placement: {name: ray, params: ...}``: the verifier pool, the rollout-engine replicas and
the learner group as Ray actors.

:class:`RayBackend` is the ``ray`` placement, registered with its parameters
(:class:`~verirl.integrations.ray.settings.RayParams`) when this module is imported: the
``verirl.plugins`` entry point names it, so a config that asks for ``ray`` finds it, and Ray
itself is imported only when the placement is built. It joins (or starts) Ray, checks that
the cluster can place every actor the config asks for (a request Ray cannot place would
otherwise wait forever), and builds the parts the trainer drives through their usual
interfaces: an :class:`~verirl.verification.executors.Executor` (the verifier actors, which
check every proof with checkers of their own), a :class:`~verirl.rollout.base.RolloutEngine`
(the replicas) and a learner with :class:`~verirl.train.learner.Learner`'s ``update`` /
``state_dict`` / ``load_state_dict`` (the group). ``close`` stops every actor and shuts Ray
down if it started it.

With the ``bounded_staleness`` schedule (``max_staleness: k``) its producer
(:class:`RayStream`) is a thread of the driver that steers the replicas and the verifier
pool, so generation and verification (in actors) overlap the learner group's update (in
actors). The replicas load version ``max(s, i − k)`` before batch i — from the object
store, where the learner group's rank 0 put it — and check its checksum; the schedule is
:mod:`verirl.backends.staleness`'s. The schedule's ``producer`` and ``producer_threads`` do
not apply (the work is in the actors).
"""

from __future__ import annotations

import logging
import pickle
import queue
import threading
import time
import traceback
from typing import TYPE_CHECKING, Any

import torch

from verirl.backends.placement import (
    PLACEMENTS,
    Backend,
    BackendSettings,
    RolloutStream,
    engine_cost,
)
from verirl.backends.staleness import merged_checksum, version_for
from verirl.device import Placement
from verirl.errors import UserInputError
from verirl.integrations.ray.cluster import connect, disconnect, require_ray
from verirl.integrations.ray.executor import RayExecutor
from verirl.integrations.ray.learner import RayLearnerGroup, trainable_state
from verirl.integrations.ray.rollout import RayRolloutEngine
from verirl.integrations.ray.settings import RayParams
from verirl.rollout.base import RolloutEngine
from verirl.train.learner import LearnerSettings, PolicyLearner

if TYPE_CHECKING:
    from verirl.backends.schedules import BoundedStalenessParams
    from verirl.train.producer import ProducerSettings, RolloutProducer

logger = logging.getLogger("verirl.train")


@PLACEMENTS.register("ray", RayParams, "verifier actors, engine replicas, a learner group")
class RayBackend(Backend):
    """The ``ray`` placement (see the module docstring). The verifier actors check every
    proof with their own checkers (the ``ray`` executor hosts provers), so the driver starts
    none at start-up (``verifies_rollouts``)."""

    verifies_rollouts = False

    def __init__(self, settings: BackendSettings, placement: Placement) -> None:
        super().__init__(settings, placement)
        require_ray()
        self.params = RayParams.of(settings)
        self._started = connect(self.params.address, self.params.num_cpus)
        self._parts: list[Any] = []
        self._group: RayLearnerGroup | None = None
        try:
            check_resources(self.params)
        except Exception:
            disconnect(self._started)
            raise

    def engine(self, model: torch.nn.Module, tokenizer: Any) -> RolloutEngine:
        engine = RayRolloutEngine(self.settings, model, self.latest_weights)
        self._parts.append(engine)
        return engine

    def executor(self) -> RayExecutor:
        ray = self.params
        params = ray.verifiers.model_copy(update={"address": ray.address})
        ex = RayExecutor(params, self.settings.plugins)
        self._parts.append(ex)
        return ex

    def learner(self, model: torch.nn.Module, settings: LearnerSettings) -> PolicyLearner:
        self._group = RayLearnerGroup(self.settings, settings, model)
        self._parts.append(self._group)
        return self._group

    def latest_weights(self) -> Any:
        """The learner group's newest weights in the object store (None before an update)."""
        return self._group.latest_weights if self._group is not None else None

    def rollout_stream(
        self, staleness: BoundedStalenessParams, producer: ProducerSettings
    ) -> RolloutStream:
        return RayStream(self)

    def close(self) -> None:
        parts, self._parts = self._parts, []
        try:
            for part in reversed(parts):
                part.close()
        finally:
            started, self._started = self._started, False
            disconnect(started)


def check_resources(ray_cfg: RayParams) -> None:
    """Raise :class:`~verirl.errors.UserInputError` naming the ``run.placement.params`` fields
    when the
    cluster has fewer CPUs or GPUs than the actors ask for in total."""
    import ray

    r = ray_cfg
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
            f"for {want_cpu:g} CPUs and {want_gpu:g} GPUs (run.placement.params: "
            "verifiers.actors × num_cpus + rollout.workers × num_cpus + learner.workers × "
            "num_cpus; num_gpus likewise): lower them (fractions such as 0.5 are allowed) or "
            "add nodes"
        )


# ---- bounded staleness on Ray ----------------------------------------------------------------
class WeightVersions:
    """The learner's weights by policy version, as Ray object references (the last k + 1
    versions), with a condition the producer thread waits on for a version to appear."""

    def __init__(self, max_staleness: int) -> None:
        self.keep = max_staleness + 1
        self._refs: dict[int, tuple[Any, int]] = {}
        self._cond = threading.Condition()
        self._stopped = False

    def publish(self, version: int, ref: Any, merged: int = 0) -> None:
        """``ref``: the weights in the object store; ``merged``: their merged-LoRA checksum."""
        with self._cond:
            self._refs[version] = (ref, merged)
            for old in [v for v in self._refs if v <= version - self.keep]:
                del self._refs[old]  # no batch still to be produced samples from it
            self._cond.notify_all()

    def wait_for(self, version: int) -> tuple[tuple[Any, int], float]:
        """``version``'s (weights, merged checksum) once published, and the seconds waited;
        RuntimeError if the run stopped meanwhile or the version was already dropped."""
        t0 = time.perf_counter()
        with self._cond:
            while version not in self._refs and not self._stopped:
                if self._refs and min(self._refs) > version:
                    raise RuntimeError(f"weight version {version} was dropped before its use")
                self._cond.wait(0.5)
            if self._stopped:
                raise RuntimeError("the run stopped")
            return self._refs[version], time.perf_counter() - t0

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()


def run_ray_producer(
    producer: RolloutProducer,
    engine: Any,
    versions: WeightVersions,
    start: int,
    first: int,
    steps: int,
    k: int,
    out: queue.Queue[tuple[str, int, Any]],
) -> None:
    """The producer thread: for batch i (``first`` … ``steps − 1``), every rollout replica
    loads policy version ``max(start, i − k)`` from the object store (each replica checks
    what it holds against what was sent), samples, and the driver's reward stage verifies on
    the Ray verifier pool while the learner group trains; the batch and the producer's state
    after it go on ``out``, pickled (a snapshot: the thread goes on)."""
    i = first
    try:
        for i in range(first, steps):
            version = version_for(i, k, start)
            (ref, merged), idle = versions.wait_for(version)
            t0 = time.perf_counter()
            mismatch = engine.sync_weights_to(ref, merged)
            checksum_s = time.perf_counter() - t0
            produced = producer.produce(version, batch=i)
            produced.state = producer.state_dict()
            produced.sync = {
                "producer_idle_s": idle,
                "checksum_s": checksum_s,
                "mismatch": float(mismatch > 0.0),
            }
            out.put(("batch", i, pickle.dumps(produced)))
    except BaseException:  # reported to the learner, which stops the run
        out.put(("error", i, traceback.format_exc()))


class RayStream:
    """The ``ray`` placement's producer: a driver thread over the replicas and the verifier
    pool (the only verifier pool: the driver verifies nothing itself)."""

    own_verifiers = False

    def __init__(self, backend: RayBackend) -> None:
        self.backend = backend
        self.worker: threading.Thread | None = None
        self.queue: queue.Queue[tuple[str, int, Any]] | None = None
        self._versions: WeightVersions | None = None
        self._model: torch.nn.Module | None = None

    def start(self, producer: RolloutProducer, step: int, max_staleness: int, first: int) -> None:
        import ray

        self._model = producer.model
        self._versions = WeightVersions(max_staleness)
        self._versions.publish(
            step, ray.put(trainable_state(self._model)), merged_checksum(self._model)
        )
        self.queue = queue.Queue()
        self.worker = threading.Thread(
            target=run_ray_producer,
            args=(
                producer,
                producer.engine,
                self._versions,
                step,
                first,
                self.backend.settings.steps,
                max_staleness,
                self.queue,
            ),
            daemon=True,
            name="verirl-ray-producer",
        )
        self.worker.start()
        logger.info("async producer started (ray replicas), max_staleness %d", max_staleness)

    def publish(self, engine: RolloutEngine, version: int) -> dict[str, float]:
        """Publish the learner group's new weights to the producer (it loads them into the
        replicas when its schedule reaches them); after the last update, wait for the
        producer to end and load them into the replicas (an evaluation follows)."""
        cost = engine_cost(engine)
        ref = self.backend.latest_weights()
        assert self._versions is not None and self._model is not None
        if version < self.backend.settings.steps:  # the driver's policy holds them too
            self._versions.publish(version, ref, merged_checksum(self._model))
        else:
            if self.worker is not None:
                self.worker.join(timeout=600)
            engine.sync_weights()
        return cost

    def stop(self) -> None:
        """The producer ends at its next wait for weights (or when a call on the actors
        fails: the placement closes them next)."""
        if self._versions is not None:
            self._versions.stop()

    def join(self) -> None:
        if self.worker is not None:
            self.worker.join(timeout=30)
