"""``run.backend: ray``: the verifier pool, the rollout-engine replicas and the learner group
as Ray actors (:mod:`verirl.integrations.ray`, named here by its import path); Ray is
imported only when this is built."""

from __future__ import annotations

import logging
import pickle
import queue
import threading
import time
import traceback
from typing import TYPE_CHECKING, Any, cast

import torch

from verirl.backends.async_local import AsyncConsumer
from verirl.backends.base import Backend, register_backend
from verirl.backends.staleness import merged_checksum, version_for
from verirl.config import TrainConfig
from verirl.device import Placement
from verirl.registry import import_object
from verirl.rollout.base import ReportsCost, RolloutEngine
from verirl.train.learner import PolicyLearner
from verirl.verification.executors import Executor

RAY_PARTS = "verirl.integrations.ray.backend:RayBackend"
TRAINABLE_STATE = "verirl.integrations.ray.learner:trainable_state"

if TYPE_CHECKING:
    from verirl.train.producer import RolloutProducer

logger = logging.getLogger("verirl.train")


@register_backend("ray", "verifier actors, engine replicas and a learner group on Ray")
class RayBackend(Backend):
    """The verifier actors check every proof with their own checkers (the ``ray`` executor
    hosts provers), so the driver starts none at start-up (``verifies_rollouts``)."""

    name = "ray"
    verifies_rollouts = False

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
    steps: int,
    k: int,
    out: queue.Queue[tuple[str, int, Any]],
) -> None:
    """The producer thread of ``run.backend: ray`` with ``run.async``: for batch i, every
    rollout replica loads policy version ``max(start, i − k)`` from the object store (each
    replica checks what it holds against what was sent), samples, and the driver's reward
    stage verifies on the Ray verifier pool while the learner group trains; the batch and
    the producer's state after it go on ``out``, pickled (a snapshot: the thread goes on)."""
    i = start
    try:
        for i in range(start, steps):
            version = version_for(i, k, start)
            (ref, merged), idle = versions.wait_for(version)
            t0 = time.perf_counter()
            mismatch = engine.sync_weights_to(ref, merged)
            checksum_s = time.perf_counter() - t0
            produced = producer.produce(version)
            produced.state = producer.state_dict()
            produced.sync = {
                "producer_idle_s": idle,
                "checksum_s": checksum_s,
                "mismatch": float(mismatch > 0.0),
            }
            out.put(("batch", i, pickle.dumps(produced)))
    except BaseException:  # reported to the learner, which stops the run
        out.put(("error", i, traceback.format_exc()))


@register_backend(
    "ray-async", "Ray actors; the rollout replicas run ≤ k versions ahead of the learner group"
)
class AsyncRayBackend(AsyncConsumer, RayBackend):
    """``run.backend: ray`` with ``run.async.max_staleness: k``. The producer is a thread of
    the driver that steers the existing rollout replicas and the Ray verifier pool (the only
    verifier pool: the driver verifies nothing itself), so generation and verification (in
    actors) overlap the learner group's update (in actors). The replicas load version
    ``max(s, i − k)`` before batch i — from the object store, where the learner group's rank 0
    put it — and check its checksum; the schedule is :mod:`verirl.backends.staleness`'s.
    ``run.async.producer`` and ``producer_threads`` do not apply (the work is in the actors)."""

    name = "ray-async"

    def __init__(self, cfg: TrainConfig, placement: Placement) -> None:
        super().__init__(cfg, placement)
        self._init_async(cfg)
        self._versions = WeightVersions(self.k)
        self._model: torch.nn.Module | None = None
        self._engine: Any = None

    def engine(self, model: torch.nn.Module, tokenizer: Any) -> RolloutEngine:
        self._model = model
        self._engine = super().engine(model, tokenizer)
        return cast(RolloutEngine, self._engine)

    def _start(self, producer: RolloutProducer, step: int) -> None:
        import ray

        trainable_state = import_object(TRAINABLE_STATE)
        assert self._model is not None
        self._versions.publish(
            step, ray.put(trainable_state(self._model)), merged_checksum(self._model)
        )
        self._state = producer.state_dict()
        self._queue = queue.Queue()
        self._worker = threading.Thread(
            target=run_ray_producer,
            args=(
                producer,
                self._engine,
                self._versions,
                step,
                self.cfg.run.steps,
                self.k,
                self._queue,
            ),
            daemon=True,
            name="verirl-ray-producer",
        )
        self._worker.start()
        logger.info("async producer started (ray replicas), max_staleness %d", self.k)

    def publish_weights(self, engine: RolloutEngine, version: int) -> dict[str, float]:
        """Publish the learner group's new weights to the producer (it loads them into the
        replicas when its schedule reaches them); after the last update, wait for the
        producer to end and load them into the replicas (an evaluation follows)."""
        cost = engine.metrics() if isinstance(engine, ReportsCost) else {}
        cost = {(k if "/" in k else f"engine/{k}"): v for k, v in cost.items()}
        ref = self.parts.latest_weights()
        if version < self.cfg.run.steps:  # the driver's policy holds the new weights too
            assert self._model is not None
            self._versions.publish(version, ref, merged_checksum(self._model))
        else:
            if self._worker is not None:
                self._worker.join(timeout=600)
            engine.sync_weights()
        return {**cost, **self._step_metrics}

    def close(self) -> None:
        self._versions.stop()
        worker = self._stop_consuming()
        try:
            super().close()  # the actors: a producer call in flight fails, the thread ends
        finally:
            if worker is not None:
                worker.join(timeout=30)
