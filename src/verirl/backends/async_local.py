"""``run.async.max_staleness: k`` on one machine: a rollout producer in its own process.

The producer process holds its own copy of the policy and its own engine, verifier executor,
proof checkers, curriculum and reward stage (:class:`~verirl.train.producer.RolloutProducer`).
For batch i it waits for policy version ``max(s, i − k)`` (:mod:`verirl.backends.staleness`),
loads it from shared memory, checks the loaded weights' checksum against the learner's,
samples, verifies (so slow verifiers — the Coq pool, the sandbox — run while the learner
trains), updates its curriculum from the verdicts in generation order, and puts the batch,
tagged with its policy version and the producer's state after it, on a queue. The learner
takes batch i at version i, trains, and publishes version i + 1.

Checks, each counted in the step's metrics:

- ``sync/mismatch``: the engine's weights after a sync differ from the learner's (checksums
  over every parameter and buffer — LoRA adapters and base weights — and over the merged
  LoRA weights W + s·BA the engine samples with,
  :func:`~verirl.backends.staleness.engine_checksum`), and for an engine with weights of
  its own (vLLM) the weights read back from it vs the module it synced from
  (``weights_mismatch``; ``sync/engine_checked``); the run stops
  (:class:`WeightSyncError`): training on samples from weights that never arrived looks like
  staleness and is not;
- ``async/dropped``: a batch that arrives out of order or staler than k is dropped, counted
  and logged (never silently); the schedule makes this impossible unless something is wrong;
- a producer that dies stops the step with :class:`~verirl.errors.WorkerLostError`; the
  run resumes from its last checkpoint, which holds the learner's state and the producer's
  state right after the last batch trained on (nothing half-applied).

Metrics every step: ``async/staleness_mean``, ``async/staleness_max``, ``async/queue_depth``
(batches produced and not yet trained on), ``async/learner_idle_s`` (waiting for rollouts),
``async/producer_idle_s`` (waiting for weights), ``async/dropped``, ``sync/mismatch``,
``sync/checksum_s``.
"""

from __future__ import annotations

import atexit
import copy
import functools
import importlib
import logging
import os
import pickle
import queue
import threading
import time
import traceback
from typing import TYPE_CHECKING, Any

import torch

from verirl.backends.base import Backend, register_backend
from verirl.backends.staleness import WeightRing, engine_checksum, version_for
from verirl.config import TrainConfig
from verirl.device import Placement
from verirl.errors import UserInputError, WorkerLostError
from verirl.provers.settings import Provers
from verirl.rollout.base import HoldsOwnWeights, RolloutEngine
from verirl.verification.executors import Executor, Outcome

if TYPE_CHECKING:
    from verirl.train.producer import Produced, RolloutProducer

logger = logging.getLogger("verirl.train")


class LazyExecutor(Executor):
    """An executor built on first use and stopped by :meth:`close` (a later call builds a
    new one): the learner side's executor of an asynchronous run, which verifies nothing
    while the producer (and its own pool) runs — only an evaluation before or after."""

    def __init__(self, build: Any) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._executor: Executor | None = None

    @property
    def started(self) -> bool:
        return self._executor is not None

    def _get(self) -> Executor:
        with self._lock:
            if self._executor is None:
                self._executor = self._build()
            return self._executor

    @property
    def name(self) -> str:  # type: ignore[override]
        return self._get().name

    @property
    def hosts_provers(self) -> bool:  # type: ignore[override]
        return self._get().hosts_provers

    def map(self, fn: Any, items: Any, timeout_s: float | None = None) -> list[Outcome[Any]]:
        return self._get().map(fn, items, timeout_s)

    def map_with_provers(
        self, fn: Any, items: Any, provers: Any, timeout_s: float | None = None
    ) -> list[Outcome[Any]]:
        return self._get().map_with_provers(fn, items, provers, timeout_s)

    def close(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.close()


class WeightSyncError(RuntimeError):
    """The engine's weights after a sync are not the learner's: the run stops."""


def load_weights(ring: WeightRing, model: torch.nn.Module, version: int) -> int:
    """The producer's weight sync (a seam the tests replace to simulate a stale engine)."""
    return ring.load(model, version)


def split_threads(total: int | None, producer: int | None) -> tuple[int, int]:
    """(learner, producer) torch threads out of ``total`` (None: the cores)."""
    total = total or os.cpu_count() or 1
    producer = producer or max(1, total // 2)
    return max(1, total - producer), producer


def run_producer(
    cfg: TrainConfig,
    model: torch.nn.Module,
    tokenizer: Any,
    state: dict[str, Any],
    start: int,
    ring: WeightRing,
    out: Any,
    threads: int,
    in_process: bool = False,
) -> None:
    """The producer's main loop (a process of its own, or a thread in tests): batches
    ``start`` … ``run.steps − 1``, each put on ``out`` as ``("batch", i, produced)``; an error
    as ``("error", i, text)``."""
    i = start
    parent = os.getppid()

    def learner_alive() -> bool:  # not stopped by the learner, which has not died either
        return not ring.stopped.is_set() and (in_process or os.getppid() == parent)

    try:
        if not in_process:
            torch.set_num_threads(threads)
            for name in cfg.run.plugins:
                importlib.import_module(name)
        from verirl.device import resolve_placement
        from verirl.provers.settings import Provers
        from verirl.train.producer import build_producer

        model = copy.deepcopy(model)  # this process's own engine copy
        placement = resolve_placement(cfg.model.device, cfg.model.dtype)
        model.to(placement.device)
        local = Backend(cfg, placement)
        engine = local.engine(model, tokenizer)
        executor, provers = local.executor(), Provers(cfg.provers)
        try:
            producer = build_producer(cfg, model, tokenizer, placement, engine, executor, provers)
            producer.load_state_dict(state)
            k = cfg.run.async_.max_staleness or 0
            for i in range(start, cfg.run.steps):
                version = version_for(i, k, start)
                idle = ring.wait_for(version, alive=learner_alive)
                t0 = time.perf_counter()
                load_weights(ring, model, version)
                engine.sync_weights()
                # the engine's module after the sync: every parameter and buffer (LoRA
                # adapters and base weights) and the merged LoRA weights it samples with
                loaded, merged = engine_checksum(model)
                expected, expected_merged = ring.expected(version)
                # an engine with weights of its own (vLLM's worker) is read back and
                # compared with the module it synced from, which the checksum ties to
                # the learner: a load that never reached the engine is caught here
                reads_back = isinstance(engine, HoldsOwnWeights)
                stale_in_engine = (
                    engine.weights_mismatch(model) if isinstance(engine, HoldsOwnWeights) else []
                )
                checksum_s = time.perf_counter() - t0
                produced = producer.produce(version)
                produced.state = producer.state_dict()
                produced.sync = {
                    "producer_idle_s": idle,
                    "checksum_s": checksum_s,
                    "mismatch": float(
                        loaded != expected or merged != expected_merged or bool(stale_in_engine)
                    ),
                    "mismatch_merged": float(merged != expected_merged),
                    "engine_checked": float(reads_back),
                }
                if stale_in_engine:
                    produced.sync["mismatch_engine"] = float(len(stale_in_engine))
                    produced.sync_detail = (
                        f"the engine's own copy ({type(engine).__name__}) holds other "
                        f"weights than the policy it synced from: {', '.join(stale_in_engine[:5])}"
                        + (" …" if len(stale_in_engine) > 5 else "")
                    )
                # plain pickle: tensors travel as bytes, not as shared-memory handles that
                # would tie the learner to this process's lifetime
                out.put(("batch", i, pickle.dumps(produced)))
        finally:
            executor.close()
            provers.close()
    except BaseException:  # reported to the learner, which stops the run
        if ring.stopped.is_set():  # the learner stopped it: nobody reads the queue any more
            cancel = getattr(out, "cancel_join_thread", None)
            if cancel is not None:
                cancel()  # do not wait, at exit, for unread batches to be flushed
            return
        out.put(("error", i, traceback.format_exc()))


def stop_producer(worker: Any, ring: WeightRing, grace_s: float = 10.0) -> None:
    """Ask the producer process to stop (it ends at its next wait for weights, closing its
    verifier pool and proof checkers), wait ``grace_s``, then kill it."""
    ring.stopped.set()
    if worker.is_alive():
        worker.join(timeout=grace_s)
    if worker.is_alive():
        worker.kill()
        worker.join(timeout=10)


class AsyncConsumer:
    """The learner's side of an asynchronous backend, shared by the local and the Ray one:
    takes batch i off the producer's queue at version i (batches that arrive early wait,
    batches that cannot be trained on are dropped, counted and logged), stops the run on a
    weight-sync mismatch or a lost producer, and keeps the step's ``async/*`` and ``sync/*``
    metrics and the producer's state after the last batch trained on.

    A subclass starts the producer in :meth:`_start`, which sets ``_worker`` (with
    ``is_alive()``) and ``_queue``, on which the producer puts ``("batch", i, pickled
    Produced)`` or ``("error", i, traceback text)``."""

    cfg: TrainConfig

    def _init_async(self, cfg: TrainConfig) -> None:
        self.k = cfg.run.async_.max_staleness or 0
        self._worker: Any = None
        self._queue: Any = None
        self._state: dict[str, Any] | None = None
        self._pending: dict[int, Produced] = {}
        self._produced = 0
        self._consumed = 0
        self._step_metrics: dict[str, float] = {}
        self.dropped = 0

    def _start(self, producer: RolloutProducer, step: int) -> None:
        raise NotImplementedError

    def _stop_consuming(self) -> Any:
        """Forget the producer; batches it produced and the learner did not train on are
        dropped, counted and logged. Returns the worker (None if none was started)."""
        worker, self._worker = self._worker, None
        if worker is not None:
            left = self._drain()
            if left:
                self._drop(left, "the run stopped")
        return worker

    def next_rollouts(self, producer: RolloutProducer, version: int) -> Produced:
        if self._worker is None:
            self._start(producer, version)
        t0 = time.perf_counter()
        produced = self._pending.pop(version, None)
        while produced is None:
            kind, index, payload = self._get()
            if kind == "error":
                raise WorkerLostError(f"the rollout producer failed at batch {index}:\n{payload}")
            self._produced += 1
            accepted = self._accept(index, pickle.loads(payload), version)
            if accepted is not None and index == version:
                produced = accepted
            elif accepted is not None:
                self._pending[index] = accepted
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
        }
        return produced

    def _get(self) -> tuple[str, int, Any]:
        while True:
            try:
                item: tuple[str, int, Any] = self._queue.get(timeout=1.0)
                return item
            except queue.Empty:
                if not self._worker.is_alive():
                    raise WorkerLostError(
                        "the rollout producer died (exit code "
                        f"{getattr(self._worker, 'exitcode', None)}); the step did not happen — "
                        "resume the run from its last checkpoint (verirl train --resume RUN_DIR)"
                    ) from None

    def _accept(self, index: int, produced: Produced, version: int) -> Produced | None:
        """The batch, or None when it cannot be trained on (out of order, or staler than k):
        then it is dropped, counted in ``async/dropped`` and logged."""
        if index < version or version - produced.version > self.k:
            self._drop([produced], f"batch {index} arrived at learner version {version}")
            return None
        return produced

    def _drop(self, batches: list[Produced], why: str) -> None:
        groups = sum(len({r.group for r in b.out.rollouts}) for b in batches)
        self.dropped += groups
        logger.warning(
            "async: dropped %d produced batch(es), %d group(s): %s", len(batches), groups, why
        )

    def _drain(self) -> list[Produced]:
        left = list(self._pending.values())
        self._pending = {}
        while True:
            try:
                kind, _, payload = self._queue.get_nowait()
            except (queue.Empty, OSError, ValueError):
                return left
            if kind == "batch":
                left.append(pickle.loads(payload))

    def before_update(self, engine: RolloutEngine) -> None:
        """Nothing to free: the producer's engine is not this process's."""

    def producer_state(self, producer: RolloutProducer) -> dict[str, Any]:
        """The producer's state right after the last batch the learner trained on."""
        return self._state if self._state is not None else producer.state_dict()


@register_backend("local-async", "one machine; a producer process runs ≤ k versions ahead")
class AsyncLocalBackend(AsyncConsumer, Backend):
    """The producer verifies every rollout with its own executor and proof checkers; this
    process's (:meth:`executor`, :meth:`provers`) start only if an evaluation needs them and
    are stopped before the producer starts, so a run holds one verifier pool at a time."""

    name = "local-async"
    verifies_rollouts = False

    def __init__(self, cfg: TrainConfig, placement: Placement) -> None:
        super().__init__(cfg, placement)
        self._init_async(cfg)
        self.in_process = cfg.run.async_.producer == "thread"
        if self.in_process and cfg.rollout.engine.name == "vllm":
            raise UserInputError(
                "run.async.producer=thread cannot run rollout.engine.name=vllm: vLLM keeps "
                "one parallel state per process, and the learner's process holds its own "
                "engine (for evaluation); use run.async.producer=process"
            )
        self._ring: WeightRing | None = None
        self._model: torch.nn.Module | None = None
        self._executor: LazyExecutor | None = None
        self._provers: Provers | None = None
        self._exit_hook: Any = None

    # ---- start and stop ------------------------------------------------------------------------
    def engine(self, model: torch.nn.Module, tokenizer: Any) -> RolloutEngine:
        self._model, self._tokenizer = model, tokenizer
        return super().engine(model, tokenizer)  # the learner side's engine: evaluation only

    def executor(self) -> Executor:
        self._executor = LazyExecutor(super().executor)
        return self._executor

    def provers(self) -> Provers:
        self._provers = super().provers()
        return self._provers

    def _start(self, producer: RolloutProducer, step: int) -> None:
        import torch.multiprocessing as tmp

        assert self._model is not None
        for part in (self._executor, self._provers):  # started by an evaluation, maybe
            if part is not None:
                part.close()
        a = self.cfg.run.async_
        learner_threads, producer_threads = split_threads(self.cfg.run.threads, a.producer_threads)
        ctx = tmp.get_context("spawn")
        self._ring = WeightRing(self._model, self.k, ctx)
        self._ring.publish(self._model, step)
        self._state = producer.state_dict()
        self._start_step = step
        # a copy travels: pickling for a spawned process moves a tensor's storage into shared
        # memory in place, and the learner's own parameters must stay where they are (their
        # numerics may depend on their alignment: k = 0 must equal the synchronous loop)
        model = copy.deepcopy(self._model)
        args = (self.cfg, model, self._tokenizer, self._state, step, self._ring)
        if self.in_process:
            self._queue = queue.Queue()
            self._worker = threading.Thread(
                target=run_producer,
                args=(*args, self._queue, producer_threads, True),
                daemon=True,
            )
        else:
            torch.set_num_threads(learner_threads)
            self._queue = ctx.Queue()
            # not a daemon: the producer's verifier pool (the `processes` executor) starts
            # processes of its own, which a daemonic process may not; an exit hook stops it
            # instead (registered after multiprocessing's own, so it runs before that one
            # joins the children)
            self._worker = ctx.Process(
                target=run_producer,
                args=(*args, self._queue, producer_threads, False),
                daemon=False,
            )
            self._exit_hook = functools.partial(stop_producer, self._worker, self._ring, 2.0)
            atexit.register(self._exit_hook)
        self._worker.start()
        logger.info(
            "async producer started (%s, pid %s), max_staleness %d, threads %d learner / %d "
            "producer",
            "thread" if self.in_process else "process",
            getattr(self._worker, "pid", os.getpid()),
            self.k,
            learner_threads,
            producer_threads,
        )

    @property
    def producer_pid(self) -> int | None:
        return getattr(self._worker, "pid", None)

    def close(self) -> None:
        worker = self._stop_consuming()
        if worker is None:
            return
        assert self._ring is not None
        if isinstance(worker, threading.Thread):
            self._ring.stopped.set()  # a daemon thread: it ends at its next wait
            return
        if self._exit_hook is not None:
            atexit.unregister(self._exit_hook)
            self._exit_hook = None
        stop_producer(worker, self._ring)

    def publish_weights(self, engine: RolloutEngine, version: int) -> dict[str, float]:
        """The producer's engine gets ``version`` through the ring. This process's engine
        samples only for an evaluation and is not synced here: an engine with weights of
        its own (vLLM) loads what changed before it next generates or scores."""
        assert self._ring is not None and self._model is not None
        if version < self.cfg.run.steps:  # the producer needs no weights after the last batch
            self._ring.publish(self._model, version)
        return dict(self._step_metrics)
