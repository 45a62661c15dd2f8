"""The problem-source interface and registry (see :mod:`verirl.sources`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from verirl.registry import Registry, Spec
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
PROBLEM_SOURCES: Registry[Spec[SourceBuilder]] = Registry("problem source")
"""Problem sources by name (``envs.source``): ``@PROBLEM_SOURCES.register(name)`` on
``builder(gym, executor, provers, start_checkers) -> ProblemSource`` (``start_checkers``:
start the proof checkers the source verifies with now)."""


def build_source(
    gym: GymConfig, executor: Executor, provers: Provers, start_checkers: bool = True
) -> ProblemSource:
    """The problem source ``gym.envs`` chooses, built over the run's executor and provers
    (whose checkers start now unless ``start_checkers`` is False)."""
    return PROBLEM_SOURCES.get(gym.envs.source).part(gym, executor, provers, start_checkers)
