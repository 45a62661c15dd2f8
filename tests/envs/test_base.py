"""The protocol's integer answer kind (envs/base.py): partial credit by default, binary when
the class says so."""

from __future__ import annotations

import random

from verirl.envs.base import Instance, IntegerAnswer
from verirl.types import Problem


class _Count(IntegerAnswer):
    name = "test_count"
    family = "test"
    difficulty_scales = "none"
    wrong_detail = "the count is not right"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        return Instance("count", "100", {"n": 100})

    def solve_int(self, problem: Problem) -> int:
        return int(problem.data["n"])


class _BinaryCount(_Count):
    binary = True


def test_integer_answer_gives_partial_credit_unless_binary() -> None:
    problem = _Count().generate(0, 0)
    near = _Count().check(problem, "99")
    assert not near.correct and 0.0 < near.reward < 1.0  # (99/100)^10
    assert near.detail == "the count is not right"
    binary = _BinaryCount().check(problem, "99")
    assert (binary.reward, binary.correct, binary.detail) == (0.0, False, "the count is not right")
    exact = _BinaryCount().check(problem, "100")
    assert (exact.reward, exact.correct) == (1.0, True)
