"""Schedules: when rollouts are produced relative to the learner's updates.

- ``synchronous``: each step samples with the current weights in this process, then trains;
- ``bounded_staleness`` (``params.max_staleness: k``): a producer runs ahead of the learner
  — as the placement runs it (:meth:`~verirl.backends.placement.Backend.rollout_stream`: a
  process of its own on this machine, a thread steering Ray's replicas) — and batch i is
  sampled with the policy of exactly ``max(s, i − k)`` updates
  (:mod:`verirl.backends.staleness`), so the learner trains on rollouts at most k versions old.

Schedules are registered by name (:data:`SCHEDULES`, ``run.schedule: {name, params}``); the
trainer calls
:meth:`Schedule.next_rollouts`, :meth:`~Schedule.before_update` and
:meth:`~Schedule.after_update` around every learner update and never asks which one it runs.

The bounded-staleness schedule's checks, each counted in the step's metrics:

- ``sync/mismatch``: the producer's engine did not hold the weights it was sent (checksums
  over every parameter and buffer and over the merged LoRA weights, and an engine's own copy
  read back); the run stops (:class:`WeightSyncError`): training on samples from weights
  that never arrived looks like staleness and is not;
- ``async/dropped``: a batch that arrives out of order or staler than k is dropped, counted
  and logged (never silently); the schedule makes this impossible unless something is wrong;
- a producer that dies stops the step with :class:`~verirl.errors.WorkerLostError`; the run
  resumes from its last checkpoint (nothing half-applied).

Checkpoints lose nothing: checkpoint c (after c updates) holds the batches c … c + k − 1 —
produced with policies older than c, which a resumed run could not produce again — and the
producer's state right after the last of them; the resumed run trains those batches first and
its producer continues at batch c + k with policy c, as the uninterrupted run did, so a killed
run resumes bit for bit at every k (the run's ledger, :mod:`verirl.train.ledger`, records it).
Taking a checkpoint waits for those batches (at most k − 1 beyond the one the next step
needs anyway).

Metrics every step: ``async/staleness_mean``, ``async/staleness_max``, ``async/queue_depth``
(batches produced and not yet trained on), ``async/learner_idle_s`` (waiting for rollouts),
``async/producer_idle_s`` (waiting for weights), ``async/dropped``, ``sync/mismatch``,
``sync/checksum_s``.
"""

from __future__ import annotations

import logging
import pickle
import queue
import time
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from verirl.backends.placement import Backend
from verirl.errors import WorkerLostError
from verirl.registry import Plugin, Registry, Spec, named
from verirl.rollout.base import RolloutEngine
from verirl.train.ledger import Ledger

if TYPE_CHECKING:
    from verirl.train.producer import Produced, ProducerSettings, RolloutProducer

logger = logging.getLogger("verirl.train")


class WeightSyncError(RuntimeError):
    """The engine's weights after a sync are not the learner's: the run stops."""


class BoundedStalenessParams(BaseModel):
    """The ``bounded_staleness`` schedule's parameters (``run.schedule.params``)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
    max_staleness: int = Field(
        1,
        ge=0,
        description="k: a rollout producer (its own process and engine copy) samples and "
        "verifies batch i with the policy of exactly max(0, i − k) learner updates while the "
        "learner trains, so the learner trains on rollouts at most k versions old. 0 runs the "
        "producer in lock-step (the synchronous loop's weights and metrics, bit for bit). "
        "AReaL's η (8 math, 4 code); verl's one-step-off and TRL's default: 1. See "
        "docs/async.md.",
    )
    producer_threads: int | None = Field(
        None,
        ge=1,
        description="torch CPU threads of the producer process (None: half of run.threads, or "
        "of the cores this process may use, at least 1).",
    )
    learner_threads: int | None = Field(
        None,
        ge=1,
        description="torch CPU threads of the learner while a producer process runs (None: "
        "run.threads, or the cores this process may use, minus producer_threads; at least 1). "
        "Its own threads come back when the producer stops (for the evaluation after "
        "training).",
    )
    pin_cores: bool = Field(
        True,
        description="Give the learner and the producer process disjoint CPU cores (Linux CPU "
        "affinity, every thread of each process): the learner the first learner_threads of "
        "the cores this process may use (`taskset` narrows them), the producer the next "
        "producer_threads — 1 + 1 on 2 cores — so that neither's threads run on, or migrate "
        "to, the other's core. Not done where the OS has no CPU affinity (macOS), with "
        "producer=thread, or when the two ask for more cores than there are (the log says "
        "which). False: both processes may run on every core (two runs sharing one machine "
        "would otherwise pin to the same cores; or give each its own with taskset).",
    )
    producer: Literal["process", "thread"] = Field(
        "process",
        description="Where the producer runs: 'process' (its own process and engine copy, "
        "weights through shared memory) or 'thread' (same schedule in a thread of this "
        "process, sharing the GIL: for tests and debugging). On the ray placement the "
        "producer is a driver thread steering the rollout replicas and the Ray verifier pool; "
        "this, the threads and pin_cores do not apply.",
    )


BUFFER = "async_buffer"
"""The checkpoint's key for the batches produced ahead: ``[[index, pickled Produced], …]``."""


def _buffer(batches: dict[int, Produced], indices: list[int]) -> dict[str, Any]:
    return {BUFFER: [[i, pickle.dumps(batches[i])] for i in indices]}


SCHEDULES: Registry[Spec[type[Schedule]]] = Registry("schedule", on_add=named)
"""Schedules by name (``run.schedule``), built as ``spec.build(params, placement, producer
settings)``."""


@SCHEDULES.register("synchronous", description="sample with the current weights, then train")
class Schedule:
    """The ``synchronous`` schedule, and the base of the others.

    - ``verifies_here``: whether the trainer's own verifiers check the step's rollouts (False
      when a producer with verifiers of its own does: the trainer's then start on first use,
      by an evaluation);
    - :meth:`next_rollouts`: the step's rollouts at policy ``version``;
    - :meth:`before_update` / :meth:`after_update`: around the learner update;
      ``after_update`` makes the new weights reach whatever samples next and returns the
      step's cost and schedule metrics;
    - :meth:`checkpoint_state` / :meth:`restore`: the producer's side of a checkpoint (its
      state, and the batches it produced ahead) and its return on resume;
    - :meth:`close` / :meth:`join`: stop producing / wait until the producer has ended
      (after the placement closed: a producer may be waiting on its actors).
    """

    name = ""
    verifies_here = True

    def __init__(self, settings: BaseModel, backend: Backend, producer: ProducerSettings) -> None:
        self.backend = backend
        self._pending: dict[int, Produced] = {}  # batches produced, not yet trained on

    def next_rollouts(self, producer: RolloutProducer, version: int) -> Produced:
        restored = self._pending.pop(version, None)  # a resumed checkpoint's (see restore)
        return restored if restored is not None else producer.produce(version)

    def before_update(self, engine: RolloutEngine) -> None:
        self.backend.before_update(engine)

    def after_update(self, engine: RolloutEngine, version: int) -> dict[str, float]:
        return self.backend.publish_weights(engine, version)

    def checkpoint_state(self, producer: RolloutProducer, step: int) -> dict[str, Any]:
        """The producer's side of checkpoint ``step`` (after ``step`` updates): its state,
        and under ``BUFFER`` the batches produced and not yet trained on (here: only those a
        resumed checkpoint held and the run has not reached yet)."""
        ahead = sorted(i for i in self._pending if i >= step)
        return {**producer.state_dict(), **_buffer(self._pending, ahead)}

    def restore(self, state: dict[str, Any]) -> list[int]:
        """Take back the batches :meth:`checkpoint_state` saved (the producer's own state,
        right after the last of them, is loaded by the trainer): they are trained first.
        Returns their indices."""
        self._pending = {int(i): pickle.loads(b) for i, b in state.get(BUFFER, [])}
        return sorted(self._pending)

    def close(self) -> None:
        """Stop producing (idempotent)."""

    def join(self) -> None:
        """Wait for the producer to end."""


def build_schedule(chosen: Plugin, backend: Backend, producer: ProducerSettings) -> Schedule:
    """The schedule ``chosen`` names (``run.schedule``) over ``backend``."""
    schedule: Schedule = SCHEDULES.get(chosen.name).build(chosen.params, backend, producer)
    return schedule


@SCHEDULES.register(
    "bounded_staleness",
    BoundedStalenessParams,
    "a producer runs at most params.max_staleness versions ahead",
)
class BoundedStaleness(Schedule):
    """The learner's side of an asynchronous run: takes batch i off the placement's
    producer (:class:`~verirl.backends.placement.RolloutStream`) at version i — batches that
    arrive early wait, batches that cannot be trained on are dropped, counted and logged —,
    stops the run on a weight-sync mismatch or a lost producer, keeps the step's ``async/*``
    and ``sync/*`` metrics, and checkpoints the batches produced ahead (see the module
    docstring)."""

    def __init__(
        self, settings: BoundedStalenessParams, backend: Backend, producer: ProducerSettings
    ) -> None:
        super().__init__(settings, backend, producer)
        self.k = settings.max_staleness
        self.stream = backend.rollout_stream(settings, producer)
        self.verifies_here = not self.stream.own_verifiers
        self.steps = backend.settings.steps
        self.ledger = Ledger(None)  # the run's, once the producer starts (next_rollouts)
        self._started = False
        self._state: dict[str, Any] | None = None
        self._produced = 0
        self._consumed = 0
        self._step_metrics: dict[str, float] = {}
        self.dropped = 0

    # ---- taking batches ------------------------------------------------------------------
    def next_rollouts(self, producer: RolloutProducer, version: int) -> Produced:
        if not self._started:
            self._state = producer.state_dict()
            # restored batches first; the producer goes on after them, from its state after
            # the last of them (which the trainer loaded), with the policy versions of a run
            # that started at ``version``
            first = max(self._pending, default=version - 1) + 1
            self.ledger = Ledger(producer.settings.ledger)
            self.stream.start(producer, version, self.k, first)
            self._started = True
        t0 = time.perf_counter()
        self._take(version, version)
        produced = self._pending.pop(version)
        idle = time.perf_counter() - t0
        self._consumed += 1
        sync = produced.sync or {}
        mismatch = sync.get("mismatch", 0.0)
        if mismatch:
            if sync.get("mismatch_engine"):
                what = produced.sync_detail or "the engine's own copy differs"
            else:
                part = "merged LoRA weights" if sync.get("mismatch_merged") else "weights"
                what = f"the checksum of its {part} differs from the learner's"
            raise WeightSyncError(
                f"sync/mismatch: the producer's engine did not hold policy version "
                f"{produced.version} after loading it ({what}); "
                "stopping: its samples would not come from the policy the learner believes"
            )
        staleness = float(version - produced.version)
        self._state = produced.state
        self._step_metrics = {
            "async/staleness_mean": staleness,
            "async/staleness_max": staleness,
            "async/queue_depth": float(self._produced - self._consumed),
            "async/learner_idle_s": idle,
            "async/producer_idle_s": float(sync.get("producer_idle_s", 0.0)),
            "async/dropped": float(self.dropped),
            "sync/mismatch": mismatch,
            "sync/checksum_s": float(sync.get("checksum_s", 0.0)),
            "sync/engine_checked": float(sync.get("engine_checked", 0.0)),
            **produced.engine,
        }
        return produced

    def _take(self, last: int, version: int) -> None:
        """Read the producer's queue until every batch up to ``last`` is in ``_pending``
        (the learner at ``version``)."""
        while any(i not in self._pending for i in range(version, last + 1)):
            kind, index, payload = self._get()
            if kind == "error":
                raise WorkerLostError(f"the rollout producer failed at batch {index}:\n{payload}")
            self._produced += 1
            accepted = self._accept(index, pickle.loads(payload), version)
            if accepted is not None:
                self._pending[index] = accepted

    def _get(self) -> tuple[str, int, Any]:
        while True:
            try:
                item: tuple[str, int, Any] = self.stream.queue.get(timeout=1.0)
                return item
            except queue.Empty:
                worker = self.stream.worker
                if not worker.is_alive():
                    raise WorkerLostError(
                        "the rollout producer died (exit code "
                        f"{getattr(worker, 'exitcode', None)}); the step did not happen — "
                        "resume the run from its last checkpoint (verirl train --resume RUN_DIR)"
                    ) from None

    def _accept(self, index: int, produced: Produced, version: int) -> Produced | None:
        """The batch, or None when it cannot be trained on (out of order, or staler than k):
        then it is dropped, counted in ``async/dropped`` and logged."""
        if index < version or version - produced.version > self.k:
            self._drop({index: produced}, f"batch {index} arrived at learner version {version}")
            return None
        return produced

    def _drop(self, batches: dict[int, Produced], why: str) -> None:
        groups = sum(len({r.group for r in b.out.rollouts}) for b in batches.values())
        self.dropped += groups
        for index, b in sorted(batches.items()):
            self.ledger.dropped(index, b.out.rollouts, why)
        logger.warning(
            "async: dropped %d produced batch(es), %d group(s): %s", len(batches), groups, why
        )

    def _drain(self) -> dict[int, Produced]:
        left, self._pending = self._pending, {}
        while True:
            try:
                kind, index, payload = self.stream.queue.get_nowait()
            except (queue.Empty, OSError, ValueError):
                return left
            if kind == "batch":
                left[index] = pickle.loads(payload)

    # ---- around the update -----------------------------------------------------------------
    def before_update(self, engine: RolloutEngine) -> None:
        """Nothing to free: whatever samples next is the producer's."""

    def after_update(self, engine: RolloutEngine, version: int) -> dict[str, float]:
        """The new weights go to the producer (which loads them when its schedule reaches
        them); returns the engine's cost and this step's ``async/*`` and ``sync/*``."""
        return {**self.stream.publish(engine, version), **self._step_metrics}

    def checkpoint_state(self, producer: RolloutProducer, step: int) -> dict[str, Any]:
        """Batches ``step`` … ``step + k − 1`` (sampled with policies older than ``step``:
        waits for those not yet produced) and the producer's state right after the last of
        them — or, with none ahead, after the last batch the learner trained on."""
        if not self._started:  # restored batches only, the producer's state after them
            return super().checkpoint_state(producer, step)
        ahead = list(range(step, min(step + self.k, self.steps)))
        if ahead:
            self._take(ahead[-1], step)
        state = self._pending[ahead[-1]].state if ahead else self._state
        assert state is not None, "a produced batch travels with the producer's state"
        return {**state, **_buffer(self._pending, ahead)}

    # ---- stopping ----------------------------------------------------------------------------
    def close(self) -> None:
        """Forget the producer and stop it; batches it produced and the learner did not train
        on are dropped, counted and logged."""
        if not self._started:
            return
        self._started = False
        left = self._drain()
        if left:
            self._drop(left, "the run stopped")
        self.stream.stop()

    def join(self) -> None:
        self.stream.join()


__all__ = [
    "BUFFER",
    "SCHEDULES",
    "BoundedStaleness",
    "BoundedStalenessParams",
    "Schedule",
    "WeightSyncError",
    "build_schedule",
]
