"""Where a run's problems and verdicts come from, chosen once when the run is built.

A problem source gives the rollout producer two things: a *task stream* (the curriculum's
side: hand out problems, take the step's verified rollouts, report metrics, checkpoint
state) and a *verifier* (the batched verification stage the reward sources call). The
producer uses them the same way whichever source built them, so the loop holds no branch
on where its problems live.

- ``local`` (default): the run's own :class:`~verirl.curriculum.Curriculum` (``curriculum:``)
  and :class:`~verirl.verification.batch.BatchVerifier` on the run's executor and provers.
- ``server`` (``envs.server: URL``): a ``verirl serve`` gym. The server's named curriculum
  (``envs.curriculum``, default ``run.name``) hands out the problems; its batched
  ``POST /verify`` gives the verdicts, and each verdict on a problem that curriculum handed
  to this run moves it server-side (:mod:`verirl.serve.client`).

``envs.source`` names the registered source; a new source is one more
:func:`register_source`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from verirl.registry import Registry
from verirl.types import Problem, Rollout
from verirl.verification.batch import BatchVerifier

if TYPE_CHECKING:
    from verirl.config import TrainConfig
    from verirl.provers.settings import Provers
    from verirl.verification.executors import Executor


class TaskStream(Protocol):
    """The curriculum's side of a run (:class:`~verirl.curriculum.Curriculum` is one)."""

    def sample(self, n: int) -> list[Problem]:
        """``n`` new problems."""
        ...

    def update(self, results: Iterable[Rollout]) -> list[str]:
        """Every rollout of the step, verified; returns the environments whose window rose."""
        ...

    def metrics(self) -> dict[str, float]: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: Mapping[str, Any]) -> None: ...


@dataclass(frozen=True)
class ProblemSource:
    """A run's task stream and verification stage (see the module docstring)."""

    tasks: TaskStream
    verifier: BatchVerifier


SourceBuilder = Callable[["TrainConfig", "Executor", "Provers", bool], ProblemSource]
PROBLEM_SOURCES: Registry[SourceBuilder] = Registry("problem source")


def register_source(name: str) -> Callable[[SourceBuilder], SourceBuilder]:
    """Register ``builder(cfg, executor, provers, start_checkers) -> ProblemSource`` under
    ``name`` (``start_checkers``: start the proof checkers the source verifies with now)."""
    return PROBLEM_SOURCES.register(name)


def build_source(
    cfg: TrainConfig, executor: Executor, provers: Provers, start_checkers: bool = True
) -> ProblemSource:
    """The problem source ``cfg.envs`` chooses, built over the run's executor and provers
    (whose checkers start now unless ``start_checkers`` is False)."""
    return PROBLEM_SOURCES.get(cfg.envs.source)(cfg, executor, provers, start_checkers)


@register_source("local")
def local_source(
    cfg: TrainConfig, executor: Executor, provers: Provers, start_checkers: bool = True
) -> ProblemSource:
    """The run's own curriculum and verifiers; every proof checker the curriculum needs is
    started now (unless ``start_checkers`` is False: a producer that only evaluates, beside
    an asynchronous producer that verifies the rollouts), so a missing prover stops the run
    before any work."""
    from verirl.curriculum import build_curriculum
    from verirl.train.producer import start_provers

    curriculum = build_curriculum(cfg.curriculum, seed=cfg.run.seed)
    if start_checkers:
        start_provers(provers, cfg.curriculum.resolved_environments())
    return ProblemSource(curriculum, BatchVerifier(executor, provers, cfg.verification.timeout_s))


@register_source("server")
def server_source(
    cfg: TrainConfig, executor: Executor, provers: Provers, start_checkers: bool = True
) -> ProblemSource:
    """Problems and verdicts from the ``verirl serve`` gym at ``envs.server`` (whose own
    checkers check proofs: none start here)."""
    from verirl.serve.client import connect

    return connect(cfg)
