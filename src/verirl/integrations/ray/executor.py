"""The ``ray`` executor: verifier calls on a pool of Ray actors.

Each :class:`VerifierActor` is a long-lived worker process that imports the environments and
the run's plugins once and builds its own proof checkers (a Coq ``coqidetop`` pool, a Lean
REPL, ...) the first time a proof reaches it, keeping them for the run. The driver keeps at
most ``actors × concurrency × (1 + prefetch)`` calls in flight (``prefetch`` calls queued at
each place, so an actor goes from one call to the next without waiting for the driver);
further items wait in the driver, so a saturated pool slows the caller down instead of
queueing unboundedly on the cluster (back-pressure).

Items travel in small batches, one actor call each, so Ray's fixed cost per call is shared
by several items: each call takes a share of the items still waiting (at most ``max_batch``),
so calls shrink towards the end of a batch and every actor stays busy to the end.

Every item has a deadline, on the verification alone (an actor loads every environment
module before its first item, outside the clock). An item whose verifier returns after it
counts as a timeout (as the ``inline`` executor reports it). An actor whose calls are still
running ``grace_s`` after their items' deadlines (the sum over every item sent to it,
counted from when the call before them ended) is hung (a verifier stuck in untrusted
parsing, a prover that stopped answering): the actor is killed and replaced. So is an actor
that dies on its own (a crash, the OOM killer, a lost node). The calls it may have been
running (its ``concurrency`` oldest) score as timeouts; the calls queued behind them never
started and are sent again. The run never sees an exception from a verifier.
"""

from __future__ import annotations

import functools
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from verirl.envs import load_all
from verirl.integrations.ray.cluster import ActorEnv, actor_setup, connect, disconnect
from verirl.integrations.ray.settings import RayPoolParams
from verirl.provers.settings import Provers, ProversConfig
from verirl.verification.executors import EXECUTORS, Executor, Outcome

log = logging.getLogger("verirl.ray")

T = TypeVar("T")
R = TypeVar("R")


class VerifierActor:
    """One verifier worker (run as a Ray actor; see the module docstring)."""

    def __init__(self, env: ActorEnv) -> None:
        actor_setup(env)
        self._provers: dict[str, Provers] = {}

    def ready(self) -> int:
        import os

        return os.getpid()

    def call(self, fn: Callable[[Any], Any], items: list[Any]) -> list[Outcome[Any]]:
        load_all()
        return [_timed(functools.partial(fn, item)) for item in items]

    def call_with_provers(
        self, fn: Callable[[Any, Provers], Any], items: list[Any], provers_json: str
    ) -> list[Outcome[Any]]:
        load_all()
        provers = self._provers.get(provers_json)
        if provers is None:
            provers = Provers(ProversConfig.model_validate_json(provers_json))
            self._provers[provers_json] = provers
        return [_timed(functools.partial(fn, item, provers)) for item in items]

    def close(self) -> None:
        for p in self._provers.values():
            p.close()
        self._provers = {}


def _timed(thunk: Callable[[], Any]) -> Outcome[Any]:
    t0 = time.perf_counter()
    try:
        value = thunk()
    except Exception as exc:
        return Outcome(error=f"{type(exc).__name__}: {exc}".splitlines()[0][:300])
    # the elapsed time rides along so the driver can report a late answer as a timeout
    return Outcome(value=(value, time.perf_counter() - t0))


@dataclass
class _Slot:
    """One actor of the pool and the calls it is running."""

    handle: Any
    ready_ref: Any  # the actor's ``ready`` call until it has answered, then None
    # ref -> (the call's item indices, when it started)
    running: dict[Any, tuple[list[int], float]] = field(default_factory=dict)


@EXECUTORS.register("ray", RayPoolParams, "a pool of Ray actors")
class RayExecutor(Executor):
    """A pool of :class:`VerifierActor` (see the module docstring). ``restarts`` counts the
    actors replaced since the pool started (hung or dead)."""

    hosts_provers: ClassVar[bool] = True

    def __init__(self, params: RayPoolParams | None = None, plugins: Sequence[str] = ()) -> None:
        import ray

        self.params = params or RayPoolParams()
        self._started_ray = connect(self.params.address)
        self._env = ActorEnv.here(plugins, threads=1)
        self._actor_cls: Any = ray.remote(VerifierActor)
        self._slots = [self._new_slot() for _ in range(self.params.actors)]
        self.restarts = 0
        self._closed = False

    # ---- the pool ----------------------------------------------------------------------
    def _new_slot(self) -> _Slot:
        handle = self._actor_cls.options(
            num_cpus=self.params.num_cpus,
            max_concurrency=self.params.concurrency,
            max_restarts=0,
        ).remote(self._env)
        return _Slot(handle, handle.ready.remote())

    def _replace(self, k: int, why: str) -> tuple[list[int], list[int]]:
        """Kill actor ``k`` (if still alive) and start a new one. Returns the items of the
        calls it may have been running (its ``concurrency`` oldest: an actor serves its
        calls in order) and those of the calls still queued behind them, which never
        started and go to another actor."""
        import ray

        slot = self._slots[k]
        calls = list(slot.running.values())  # in the order they were sent
        running = calls[: self.params.concurrency]
        lost = [i for idx, _ in running for i in idx]
        queued = [i for idx, _ in calls[self.params.concurrency :] for i in idx]
        try:
            ray.kill(slot.handle, no_restart=True)
        except Exception as exc:  # already gone
            log.debug("killing verifier actor %d: %s", k, exc)
        log.warning(
            "verifier actor %d %s; replacing it (%d items lost, %d requeued)",
            k,
            why,
            len(lost),
            len(queued),
        )
        self._slots[k] = self._new_slot()
        self.restarts += 1
        return lost, queued

    def actor_pids(self) -> list[int]:
        """The process id of each actor (waits until each is up)."""
        import ray

        return [int(ray.get(s.handle.ready.remote())) for s in self._slots]

    # ---- calls -------------------------------------------------------------------------
    def map(
        self, fn: Callable[[T], R], items: Sequence[T], timeout_s: float | None = None
    ) -> list[Outcome[R]]:
        return self._run(lambda h, item: h.call.remote(fn, item), items, timeout_s)

    def map_with_provers(
        self,
        fn: Callable[[T, Provers], R],
        items: Sequence[T],
        provers: ProversConfig,
        timeout_s: float | None = None,
    ) -> list[Outcome[R]]:
        key = provers.model_dump_json()
        return self._run(
            lambda h, item: h.call_with_provers.remote(fn, item, key), items, timeout_s
        )

    def _run(
        self,
        submit: Callable[[Any, Any], Any],
        items: Sequence[Any],
        timeout_s: float | None,
    ) -> list[Outcome[Any]]:
        import ray
        from ray.exceptions import GetTimeoutError, RayActorError, RayError

        if self._closed:
            raise RuntimeError("the ray executor is closed")
        out: list[Outcome[Any] | None] = [None] * len(items)
        places = self.params.actors * self.params.concurrency
        todo = deque(range(len(items)))

        def next_call() -> list[int]:
            """The next call's items: a share of what is left (guided self-scheduling), so
            calls shrink towards the end of a batch and no actor idles behind a long last
            call; at most ``max_batch``."""
            size = max(1, min(self.params.max_batch, -(-len(todo) // (2 * places))))
            return [todo.popleft() for _ in range(min(size, len(todo)))]

        per_actor = self.params.concurrency * (1 + self.params.prefetch)

        def budget(slot: _Slot) -> float:
            """When the actor's calls are due: queued calls wait for the ones before them,
            so the deadline is the sum over all its items from its oldest call."""
            assert timeout_s is not None
            items_sent = sum(len(idx) for idx, _ in slot.running.values())
            oldest = min(t for _, t in slot.running.values())
            return oldest + items_sent * timeout_s + self.params.grace_s

        def hung(slot: _Slot, now: float) -> bool:
            return timeout_s is not None and bool(slot.running) and now > budget(slot)

        lost_msg = "verifier actor {} ({}): the call scores as a timeout"

        def lose(replaced: tuple[list[int], list[int]], why: str) -> None:
            lost, queued = replaced
            for i in lost:
                out[i] = Outcome(error=why, timed_out=True)
            todo.extendleft(reversed(queued))  # never started: they run elsewhere

        while todo or any(s.running for s in self._slots):
            # admit new actors that answered, then fill free places (back-pressure: the
            # rest of ``todo`` waits here)
            for k, slot in enumerate(self._slots):
                if slot.ready_ref is not None:
                    done, _ = ray.wait([slot.ready_ref], timeout=0)
                    if not done:
                        continue
                    try:
                        ray.get(slot.ready_ref)
                        slot.ready_ref = None
                    except RayError as exc:
                        self._replace(k, f"failed to start ({type(exc).__name__})")
                        continue
                while todo and len(slot.running) < per_actor:
                    idx = next_call()
                    ref = submit(slot.handle, [items[i] for i in idx])
                    slot.running[ref] = (idx, time.monotonic())
            refs = [r for s in self._slots for r in s.running]
            waiting = [s.ready_ref for s in self._slots if s.ready_ref is not None]
            now = time.monotonic()
            wake = 1.0
            if timeout_s is not None and refs:
                first = min(budget(s) for s in self._slots if s.running)
                wake = max(0.0, min(wake, first - now))
            ready, _ = ray.wait(refs + waiting, num_returns=1, timeout=wake)
            for k, slot in enumerate(self._slots):
                for ref in [r for r in ready if r in slot.running]:
                    idx, _ = slot.running[ref]
                    results: list[Outcome[Any]] | None
                    try:
                        results = ray.get(ref, timeout=0)
                    except RayActorError as exc:  # every call it had is lost or requeued
                        why = f"died: {type(exc).__name__}"
                        lose(self._replace(k, why), lost_msg.format(k, why))
                        break
                    except (GetTimeoutError, RayError) as exc:
                        results = None
                        for i in idx:
                            out[i] = Outcome(error=f"{type(exc).__name__}: {exc}".splitlines()[0])
                    del slot.running[ref]
                    now = time.monotonic()  # the queued calls' clock starts as this one ends
                    for r, (other, t) in slot.running.items():
                        slot.running[r] = (other, max(t, now))
                    if results is not None:
                        for i, res in zip(idx, results, strict=True):
                            out[i] = self._judge(res, timeout_s)
            if timeout_s is not None:
                now = time.monotonic()
                for k, slot in enumerate(self._slots):
                    if hung(slot, now):
                        why = f"hung past {timeout_s:g} s + {self.params.grace_s:g} s grace"
                        lose(self._replace(k, why), lost_msg.format(k, why))
        return [o if o is not None else Outcome(error="no result") for o in out]

    @staticmethod
    def _judge(res: Outcome[Any], timeout_s: float | None) -> Outcome[Any]:
        """An actor's outcome for one item: its value, its error, or a late answer's timeout."""
        if res.value is None:
            return res
        value, elapsed = res.value
        if timeout_s is not None and elapsed > timeout_s:
            return Outcome(error=f"exceeded {timeout_s:g} s", timed_out=True)
        return Outcome(value=value)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            import ray

            if ray.is_initialized():
                for slot in self._slots:
                    try:
                        ray.get(slot.handle.close.remote(), timeout=10)
                    except Exception as exc:  # dead or hung: killed below anyway
                        log.debug("closing a verifier actor: %s", exc)
                    ray.kill(slot.handle, no_restart=True)
        finally:
            self._slots = []
            disconnect(self._started_ray)
