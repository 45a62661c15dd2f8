"""A shared base for integer-answer environments whose instance size is stored with the
problem (``data["size"]``), so :meth:`Environment.size` reads the measure the environment
names in :attr:`Environment.size_measure` instead of the prompt length."""

from __future__ import annotations

from typing import ClassVar

from verirl.envs.base import IntegerAnswer
from verirl.types import Problem


class SizedInteger(IntegerAnswer):
    """An :class:`~verirl.envs.base.IntegerAnswer` whose size is ``problem.data["size"]``.

    ``max_difficulty`` is 40 for these families: their solvers and cross-checks were timed
    up to there (most instances stop growing earlier, at the caps their families name)."""

    max_difficulty: ClassVar[int] = 40

    def size(self, problem: Problem) -> float:
        return float(problem.data["size"])
