"""Where a run's problems and verdicts come from, chosen once when the run is built.

A problem source gives the rollout producer two things: a *task stream* (the curriculum's
side: hand out problems, take the step's verified rollouts, report metrics, checkpoint
state) and a *verifier* (the batched verification stage the reward sources call). The
producer uses them the same way whichever source built them, so the loop holds no branch
on where its problems live.

- ``local`` (default): the run's own :class:`~verirl.curriculum.Curriculum` (``curriculum:``)
  and :class:`~verirl.verification.batch.BatchVerifier` on the run's executor and provers
  (:mod:`verirl.sources.local`).
- ``server`` (``envs.server: URL``): a ``verirl serve`` gym. The server's named curriculum
  (``envs.curriculum``, default ``run.name``) hands out the problems; its batched
  ``POST /verify`` gives the verdicts, and each verdict on a problem that curriculum handed
  to this run moves it server-side (:mod:`verirl.sources.server`).

``envs.source`` names the registered source; a new source is one more
:func:`register_source`. A source reads the gym's settings
(:class:`~verirl.serve.settings.GymConfig`), not the whole training config.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from verirl.registry import Registry
from verirl.types import Problem, Rollout
from verirl.verification.batch import BatchVerifier

if TYPE_CHECKING:
    from verirl.provers.settings import Provers
    from verirl.serve.settings import GymConfig
    from verirl.verification.executors import Executor


class TaskStream(Protocol):
    """The curriculum's side of a run (:class:`~verirl.curriculum.Curriculum` is one)."""

    def sample(self, n: int) -> list[Problem]:
        """``n`` new problems."""
        ...

    def preview(self, n: int) -> list[Problem]:
        """``n`` problems like the next ones, handing none out (the memory plan's prompts)."""
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


SourceBuilder = Callable[["GymConfig", "Executor", "Provers", bool], ProblemSource]
PROBLEM_SOURCES: Registry[SourceBuilder] = Registry("problem source")


def register_source(name: str) -> Callable[[SourceBuilder], SourceBuilder]:
    """Register ``builder(gym, executor, provers, start_checkers) -> ProblemSource`` under
    ``name`` (``start_checkers``: start the proof checkers the source verifies with now)."""
    return PROBLEM_SOURCES.register(name)


def build_source(
    gym: GymConfig, executor: Executor, provers: Provers, start_checkers: bool = True
) -> ProblemSource:
    """The problem source ``gym.envs`` chooses, built over the run's executor and provers
    (whose checkers start now unless ``start_checkers`` is False)."""
    return PROBLEM_SOURCES.get(gym.envs.source)(gym, executor, provers, start_checkers)


# the built-in sources register themselves
from verirl.sources import local, server  # noqa: E402, F401
