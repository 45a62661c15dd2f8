"""The local placement's producer for the ``bounded_staleness`` schedule: a process of its own.

The producer process holds its own copy of the policy and its own engine, verifier executor,
proof checkers, curriculum and reward stage (:class:`~verirl.train.producer.RolloutProducer`,
built from the same :class:`~verirl.train.producer.ProducerSettings` as the trainer's). For
batch i it waits for policy version ``max(s, i − k)`` (:mod:`verirl.backends.staleness`),
loads it from shared memory, checks the loaded weights' checksum against the learner's,
samples, verifies (so slow verifiers — the Coq pool, the sandbox — run while the learner
trains), updates its curriculum from the verdicts in generation order, and puts the batch,
tagged with its policy version and the producer's state after it, on a queue that the
bounded-staleness schedule (:mod:`verirl.backends.schedules`) takes it from.

The weight check: checksums over every parameter and buffer — LoRA adapters and base
weights — and over the merged LoRA weights W + s·BA the engine samples with
(:func:`~verirl.backends.staleness.engine_checksum`), and for an engine with weights of its
own (vLLM, :class:`~verirl.rollout.base.HoldsOwnWeights`) the weights read back from it vs
the module it synced from (``sync/engine_checked``).

Cores are assigned, not contended (:func:`assign_cores`): the learner and the producer
process split the run's torch threads (``run.schedule.params.learner_threads`` /
``producer_threads``; 1 + 1 on 2 cores) and, where the OS allows, each process — every
thread of it — is pinned to cores of its own, so neither runs on or migrates to the other's.
When the producer has made its last batch the learner gets its threads and cores back.
"""

from __future__ import annotations

import atexit
import copy
import functools
import logging
import os
import pickle
import queue
import threading
import time
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from verirl.backends.placement import Backend, BackendSettings, engine_cost
from verirl.backends.staleness import WeightRing, engine_checksum, version_for
from verirl.device import Placement
from verirl.errors import UserInputError
from verirl.registry import load_plugins
from verirl.rollout.base import HoldsOwnWeights, RolloutEngine

if TYPE_CHECKING:
    from verirl.backends.schedules import BoundedStalenessParams
    from verirl.train.producer import ProducerSettings, RolloutProducer

logger = logging.getLogger("verirl.train")


def load_weights(ring: WeightRing, model: torch.nn.Module, version: int) -> int:
    """The producer's weight sync (a seam the tests replace to simulate a stale engine)."""
    return ring.load(model, version)


@dataclass(frozen=True)
class Cores:
    """The learner's and the producer's torch threads, and the cores each is pinned to
    (None: not pinned; ``why``: why not, or "pinned")."""

    learner_threads: int
    producer_threads: int
    learner: tuple[int, ...] | None
    producer: tuple[int, ...] | None
    why: str


def available_cores() -> tuple[int, ...] | None:
    """The cores this process may run on (its CPU affinity), or None where the OS does not
    say (macOS)."""
    get = getattr(os, "sched_getaffinity", None)
    return tuple(sorted(get(0))) if get is not None else None


def assign_cores(
    total: int | None,
    learner: int | None,
    producer: int | None,
    pin: bool,
    cores: tuple[int, ...] | None,
) -> Cores:
    """Threads and cores for the learner and the producer process: ``total`` threads (None:
    the ``cores``' number, or the machine's) split ``producer`` (None: half, at least 1) and
    ``learner`` (None: the rest, at least 1); pinned (``pin``) to the first ``learner`` of
    ``cores`` and the next ``producer`` of them when there are that many."""
    total = total or (len(cores) if cores else os.cpu_count() or 1)
    producer = producer or max(1, total // 2)
    learner = learner or max(1, total - producer)
    if not pin:
        why = "run.schedule.params.pin_cores is off"
    elif cores is None:
        why = "this OS sets no CPU affinity"
    elif learner + producer > len(cores):
        why = f"{learner} + {producer} threads need more than the {len(cores)} cores available"
    else:
        mine, theirs = cores[:learner], cores[learner : learner + producer]
        return Cores(learner, producer, mine, theirs, "pinned")
    return Cores(learner, producer, None, None, why)


def pin_process(cores: tuple[int, ...] | None) -> None:
    """Restrict every thread of this process (and the threads and processes it starts
    later) to ``cores`` (None: leave it alone)."""
    if cores is None:
        return
    tasks = (
        [int(t) for t in os.listdir("/proc/self/task")] if os.path.isdir("/proc/self/task") else [0]
    )
    for tid in tasks:
        try:
            os.sched_setaffinity(tid, cores)
        except ProcessLookupError:  # a thread that has just ended
            continue


def run_producer(
    settings: ProducerSettings,
    backend: BackendSettings,
    placement: Placement,
    model: torch.nn.Module,
    tokenizer: Any,
    state: dict[str, Any],
    start: int,
    first: int,
    k: int,
    ring: WeightRing,
    out: Any,
    threads: int,
    in_process: bool = False,
    cores: tuple[int, ...] | None = None,
) -> None:
    """The producer's main loop (a process of its own, or a thread in tests): batches
    ``first`` … ``backend.steps − 1``, batch i with policy ``version_for(i, k, start)``,
    each put on ``out`` as ``("batch", i, produced)``; an error as ``("error", i, text)``."""
    i = first
    parent = os.getppid()

    def learner_alive() -> bool:  # not stopped by the learner, which has not died either
        return not ring.stopped.is_set() and (in_process or os.getppid() == parent)

    try:
        if not in_process:
            torch.set_num_threads(threads)
            pin_process(cores)
            load_plugins(backend.plugins)
        from verirl.sources import build_source
        from verirl.train.producer import build_producer, training_formatter
        from verirl.verification.resources import build_verifier_resources

        model = copy.deepcopy(model)  # this process's own engine copy
        model.to(placement.device)
        local = Backend(backend, placement)
        engine = local.engine(model, tokenizer)
        gym = settings.gym
        resources = build_verifier_resources(
            gym.verification, gym.provers, gym.sandbox, backend.plugins, local.executor
        )
        try:
            source = build_source(gym, resources.executor, resources.provers)
            formatter = training_formatter(settings.rollout, tokenizer)
            device = str(placement.device)
            producer = build_producer(settings, source, formatter, model, tokenizer, device, engine)
            producer.load_state_dict(state)
            for i in range(first, backend.steps):
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
                produced = producer.produce(version, batch=i)
                produced.state = producer.state_dict()
                produced.engine = engine_cost(engine)
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
            resources.close()
    except BaseException:  # reported to the learner, which stops the run
        if ring.stopped.is_set():  # the learner stopped it: nobody reads the queue any more
            cancel = getattr(out, "cancel_join_thread", None)
            if cancel is not None:
                cancel()  # do not wait, at exit, for unread batches to be flushed
            return
        out.put(("error", i, traceback.format_exc()))


def _cpus(cores: tuple[int, ...] | None) -> str:
    return ",".join(map(str, cores or ()))


def stop_producer(worker: Any, ring: WeightRing, grace_s: float = 10.0) -> None:
    """Ask the producer process to stop (it ends at its next wait for weights, closing its
    verifier pool and proof checkers), wait ``grace_s``, then kill it."""
    ring.stopped.set()
    if worker.is_alive():
        worker.join(timeout=grace_s)
    if worker.is_alive():
        worker.kill()
        worker.join(timeout=10)


class LocalStream:
    """The producer of the local placement (see the module docstring): a process of its own
    (the schedule's ``producer: process``) or, for tests and debugging, a thread of this process
    with the same schedule (``thread``). It verifies every rollout with its own executor and
    proof checkers (``own_verifiers``): the trainer's start only if an evaluation needs them
    and are stopped when the producer starts, so a run holds one verifier pool at a time."""

    own_verifiers = True

    def __init__(
        self, backend: Backend, staleness: BoundedStalenessParams, producer: ProducerSettings
    ) -> None:
        self.in_process = staleness.producer == "thread"
        if self.in_process and backend.settings.engine.name == "vllm":
            raise UserInputError(
                "run.schedule.params.producer=thread cannot run rollout.engine.name=vllm: vLLM "
                "keeps one parallel state per process, and the learner's process holds its own "
                "engine (for evaluation); use run.schedule.params.producer=process"
            )
        self.backend = backend
        self.staleness = staleness
        self.worker: Any = None
        self.queue: Any = None
        self._ring: WeightRing | None = None
        self._model: torch.nn.Module | None = None
        self._exit_hook: Any = None
        self._restore: tuple[int, tuple[int, ...] | None] | None = None

    def start(self, producer: RolloutProducer, step: int, max_staleness: int, first: int) -> None:
        import torch.multiprocessing as tmp

        verifier = producer.verifier  # started by an evaluation, maybe
        verifier.executor.close()
        verifier.provers.close()
        self._model = producer.model
        s = self.backend.settings
        a = self.staleness
        cores = assign_cores(
            s.threads,
            a.learner_threads,
            a.producer_threads,
            a.pin_cores and not self.in_process,
            available_cores(),
        )
        ctx = tmp.get_context("spawn")
        self._ring = WeightRing(self._model, max_staleness, ctx)
        self._ring.publish(self._model, step)
        # a copy travels: pickling for a spawned process moves a tensor's storage into shared
        # memory in place, and the learner's own parameters must stay where they are (their
        # numerics may depend on their alignment: k = 0 must equal the synchronous loop)
        model = copy.deepcopy(self._model)
        args = (
            producer.settings,  # the run's: recording to its ledger (RolloutProducer.record_to)
            s,
            self.backend.placement,
            model,
            producer.tokenizer,
            producer.state_dict(),
            step,
            first,
            max_staleness,
            self._ring,
        )
        if self.in_process:
            self.queue = queue.Queue()
            self.worker = threading.Thread(
                target=run_producer,
                args=(*args, self.queue, cores.producer_threads, True),
                daemon=True,
            )
        else:
            self._restore = (torch.get_num_threads(), available_cores())
            torch.set_num_threads(cores.learner_threads)
            self.queue = ctx.Queue()
            # not a daemon: the producer's verifier pool (the `processes` executor) starts
            # processes of its own, which a daemonic process may not; an exit hook stops it
            # instead (registered after multiprocessing's own, so it runs before that one
            # joins the children)
            self.worker = ctx.Process(
                target=run_producer,
                args=(*args, self.queue, cores.producer_threads, False, cores.producer),
                daemon=False,
            )
            self._exit_hook = functools.partial(stop_producer, self.worker, self._ring, 2.0)
            atexit.register(self._exit_hook)
        self.worker.start()
        if not self.in_process:
            pin_process(cores.learner)  # after the start: the producer inherits no mask
        logger.info(
            "async producer started (%s, pid %s), max_staleness %d, threads %d learner / %d "
            "producer, cores %s",
            "thread" if self.in_process else "process",
            getattr(self.worker, "pid", os.getpid()),
            max_staleness,
            cores.learner_threads,
            cores.producer_threads,
            f"{_cpus(cores.learner)} learner / {_cpus(cores.producer)} producer"
            if cores.learner is not None
            else f"shared ({cores.why})",
        )

    @property
    def producer_pid(self) -> int | None:
        return getattr(self.worker, "pid", None)

    def publish(self, engine: RolloutEngine, version: int) -> dict[str, float]:
        """The producer's engine gets ``version`` through the ring. This process's engine
        samples only for an evaluation and is not synced here: an engine with weights of
        its own (vLLM) loads what changed before it next generates or scores."""
        assert self._ring is not None and self._model is not None
        if version < self.backend.settings.steps:  # none needed after the last batch
            self._ring.publish(self._model, version)
        else:  # the producer made its last batch: the cores are the learner's again
            self._give_back_cores()
        return {}

    def _give_back_cores(self) -> None:
        """The learner's own threads and cores, as before the producer started."""
        if self._restore is not None:
            threads, cores = self._restore
            self._restore = None
            torch.set_num_threads(threads)
            pin_process(cores)

    def stop(self) -> None:
        worker = self.worker
        if worker is None or self._ring is None:
            return
        if isinstance(worker, threading.Thread):
            self._ring.stopped.set()  # a daemon thread: it ends at its next wait
            return
        if self._exit_hook is not None:
            atexit.unregister(self._exit_hook)
            self._exit_hook = None
        stop_producer(worker, self._ring)
        self._give_back_cores()

    def join(self) -> None:
        """:meth:`stop` already waited for the producer process."""
