"""The ``local`` problem source: the run's own curriculum and verifiers, in this process."""

from __future__ import annotations

from verirl.curriculum import build_curriculum
from verirl.envs import get_env
from verirl.provers.settings import Provers
from verirl.serve.settings import GymConfig
from verirl.sources.base import PROBLEM_SOURCES, ProblemSource
from verirl.verification.batch import BatchVerifier
from verirl.verification.executors import Executor


@PROBLEM_SOURCES.register("local")
def local_source(
    gym: GymConfig, executor: Executor, provers: Provers, start_checkers: bool = True
) -> ProblemSource:
    """The run's own curriculum and verifiers; every proof checker the curriculum needs is
    started now (unless ``start_checkers`` is False: a producer that only evaluates, beside
    an asynchronous producer that verifies the rollouts), so a missing prover stops the run
    before any work."""
    curriculum = build_curriculum(gym.curriculum, seed=gym.run.seed)
    if start_checkers:
        environments = gym.curriculum.resolved_environments()
        provers.start(s for e in environments if (s := get_env(e).prover))
    return ProblemSource(curriculum, BatchVerifier(executor, provers, gym.verification.timeout_s))
