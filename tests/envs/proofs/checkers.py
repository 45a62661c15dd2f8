"""Stand-in proof checkers the proof environments' tests share."""

from __future__ import annotations

from collections.abc import Sequence

from verirl.provers.base import FormalProblem, ProofCheck, ProofChecker
from verirl.provers.settings import Provers


class ExplodingChecker:
    """A checker that fails the test when called: proves a verdict needed no proof checker."""

    name = "explode"

    def check(self, problem: FormalProblem, proof: str, *, timeout_s: float = 15.0) -> ProofCheck:
        raise AssertionError("the checker must not be called")

    def check_batch(
        self, items: Sequence[tuple[FormalProblem, str]], *, timeout_s: float = 15.0
    ) -> list[ProofCheck]:
        raise AssertionError("the checker must not be called")

    def close(self) -> None:
        pass


class FixedProvers(Provers):
    """Provers that hand out the given checker for every proof system."""

    def __init__(self, checker: ProofChecker) -> None:
        super().__init__()
        self.fixed = checker

    def checker(self, system: str) -> ProofChecker:
        return self.fixed
