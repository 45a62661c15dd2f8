"""Executors: where the verification stage runs verifier calls, each with a deadline.

``verification.executor`` in the config names one (``inline``, ``threads``, ``processes``; the
Ray backend adds ``ray``). Every executor maps a picklable function over items and returns one
:class:`Outcome` per item, in order — a value, an error, or a timeout — and never raises for a
failing item:

- ``inline``: in this process, one after another. No overhead, no parallelism, and a deadline
  it can only *report* (a call that overran is marked ``timed_out`` after it returns).
- ``threads``: a thread pool. Parallel only for verifiers that release the GIL (waiting on a
  subprocess or a socket); a call past its deadline is reported as a timeout and abandoned.
- ``processes``: a pool of worker processes (``pebble``), started once and kept warm. Truly
  parallel, and it *enforces* deadlines: a call past its deadline has its worker killed and
  replaced, so a verifier stuck in untrusted parsing cannot hold the run.
- ``ray``: a pool of Ray actors (:mod:`verirl.integrations.ray.executor`, a plug-in found by
  its entry point), on this machine or a cluster. Each actor owns long-lived proof checkers
  (``hosts_provers``), so proof checks spread over the actors too; a hung actor is killed and
  replaced, a dead one replaced, and their calls score as timeouts. Ray is imported only when
  this executor is built.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from verirl.registry import NoParams, Registry, Spec, load_plugins, named

if TYPE_CHECKING:
    from verirl.provers.settings import Provers, ProversConfig

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Outcome(Generic[R]):
    """The result of one call: ``value``, or ``error`` (the exception, one line), or a
    timeout (``timed_out``; ``error`` says so too)."""

    value: R | None = None
    error: str | None = None
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out


class Executor(ABC):
    """Runs ``fn`` over ``items``; see the module docstring."""

    name: str = ""
    hosts_provers: ClassVar[bool] = False  # True: map_with_provers runs on the workers' checkers

    @abstractmethod
    def map(
        self, fn: Callable[[T], R], items: Sequence[T], timeout_s: float | None = None
    ) -> list[Outcome[R]]:
        """One outcome per item, in order; ``timeout_s`` is the deadline of each call."""

    def map_with_provers(
        self,
        fn: Callable[[T, Provers], R],
        items: Sequence[T],
        provers: ProversConfig,
        timeout_s: float | None = None,
    ) -> list[Outcome[R]]:
        """Like :meth:`map`, each call given the worker's own long-lived
        :class:`~verirl.provers.settings.Provers` built from ``provers`` (only executors
        with ``hosts_provers``)."""
        raise NotImplementedError(f"the {self.name!r} executor does not host proof checkers")

    def close(self) -> None:  # noqa: B027  (nothing to release by default)
        """Release worker threads or processes."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


EXECUTORS: Registry[Spec[type[Executor]]] = Registry("executor", on_add=named)
"""Executors by name (``verification.executor``), built as ``spec.build(params, plugins)``."""


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:300]


# ---- inline --------------------------------------------------------------------------------
@EXECUTORS.register("inline", description="this process, one call after another")
class InlineExecutor(Executor):
    def __init__(self, params: NoParams | None = None, plugins: Sequence[str] = ()) -> None:
        del params, plugins

    def map(
        self, fn: Callable[[T], R], items: Sequence[T], timeout_s: float | None = None
    ) -> list[Outcome[R]]:
        out: list[Outcome[R]] = []
        for item in items:
            t0 = time.perf_counter()
            try:
                value = fn(item)
            except Exception as exc:
                out.append(Outcome(error=_one_line(exc)))
                continue
            if timeout_s is not None and time.perf_counter() - t0 > timeout_s:
                out.append(Outcome(error=f"exceeded {timeout_s:g} s", timed_out=True))
            else:
                out.append(Outcome(value=value))
        return out


# ---- threads -------------------------------------------------------------------------------
class PoolParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    workers: int = Field(
        2, ge=1, description="Worker threads or processes (one per core is a good start)."
    )


@EXECUTORS.register("threads", PoolParams, "a thread pool")
class ThreadExecutor(Executor):
    def __init__(self, params: PoolParams | None = None, plugins: Sequence[str] = ()) -> None:
        del plugins
        self.params = params or PoolParams()
        self._pool = concurrent.futures.ThreadPoolExecutor(self.params.workers)

    def map(
        self, fn: Callable[[T], R], items: Sequence[T], timeout_s: float | None = None
    ) -> list[Outcome[R]]:
        started = time.monotonic()
        futures = [self._pool.submit(fn, item) for item in items]
        out: list[Outcome[R]] = []
        for k, fut in enumerate(futures):
            # calls start as threads free up: allow each its own deadline after its turn
            wait = None
            if timeout_s is not None:
                turn = k // self.params.workers + 1
                wait = max(0.0, started + turn * timeout_s - time.monotonic())
            try:
                out.append(Outcome(value=fut.result(timeout=wait)))
            except concurrent.futures.TimeoutError:
                fut.cancel()
                out.append(Outcome(error=f"exceeded {timeout_s:g} s", timed_out=True))
            except Exception as exc:
                out.append(Outcome(error=_one_line(exc)))
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


# ---- processes -----------------------------------------------------------------------------
def _import_modules(modules: Sequence[str], sandbox: str | None = None) -> None:
    """Worker initializer: configure the sandbox the parent handed over (``sandbox``: its
    :class:`~verirl.sandbox.SandboxConfig` as JSON), import the run's plugin modules so their
    registrations exist, then load every environment family. Loading takes seconds (6.6 s
    on a loaded 2-core machine); done here, once per worker and before it takes a call, it
    never counts against a call's deadline — done lazily inside the first call, it did, and
    on a loaded machine every call of a fresh worker timed out, the replacement worker
    started over, and no verdict came."""
    from verirl.sandbox import configure_worker_sandbox

    configure_worker_sandbox(sandbox)
    load_plugins(modules)
    from verirl.envs import load_all

    load_all()


@EXECUTORS.register("processes", PoolParams, "warm worker processes, deadlines enforced")
class ProcessExecutor(Executor):
    """A warm pool of worker processes with enforced per-call deadlines.

    Workers start from a fork server (not a fork of this process, whose torch threads and
    locks must not be copied), configure the code sandbox this process was configured with
    when the pool was built (:func:`~verirl.sandbox.current_sandbox_config`, handed over as an
    initializer argument), import the run's plugins and load every environment once
    (outside any call's deadline), and serve
    calls until the pool closes; a worker whose call overruns is killed and replaced.
    """

    def __init__(self, params: PoolParams | None = None, plugins: Sequence[str] = ()) -> None:
        from pebble import ProcessPool

        from verirl.sandbox import current_sandbox_config

        self.params = params or PoolParams()
        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else None
        context = multiprocessing.get_context(method)
        if method == "forkserver":
            context.set_forkserver_preload(["verirl.envs"])
        self._pool = ProcessPool(
            max_workers=self.params.workers,
            context=context,
            initializer=_import_modules,
            initargs=(tuple(plugins), current_sandbox_config().model_dump_json()),
        )

    def map(
        self, fn: Callable[[T], R], items: Sequence[T], timeout_s: float | None = None
    ) -> list[Outcome[R]]:
        from pebble import ProcessExpired

        futures = [self._pool.schedule(fn, args=(item,), timeout=timeout_s) for item in items]
        out: list[Outcome[R]] = []
        for fut in futures:
            try:
                out.append(Outcome(value=fut.result()))
            except concurrent.futures.TimeoutError:
                out.append(Outcome(error=f"exceeded {timeout_s:g} s", timed_out=True))
            except ProcessExpired as exc:
                out.append(Outcome(error=f"worker died (exit code {exc.exitcode})"))
            except Exception as exc:
                out.append(Outcome(error=_one_line(exc)))
        return out

    def close(self) -> None:
        self._pool.stop()
        self._pool.join(timeout=10)


class LazyExecutor(Executor):
    """An executor built on first use and stopped by :meth:`close` (a later call builds a
    new one): the trainer's executor when a producer with verifiers of its own checks the
    rollouts (the bounded-staleness schedule on one machine), so the trainer's verifies
    nothing while that producer runs — only an evaluation before or after."""

    def __init__(self, build: Callable[[], Executor]) -> None:
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
