"""The answer kinds families share (kit/answers.py), on small unregistered environments."""

from __future__ import annotations

import random
from typing import Any

import pytest

from verirl.envs.base import Instance
from verirl.envs.kit.answers import FastCount, ResidueAnswer
from verirl.types import Problem


class _Divisors(FastCount):
    """Divisors of n: counted fast by pairs up to √n, enumerated one by one by ``solve_int``."""

    name = "test_divisors"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        return self.instance("How many divisors?", {"n": rng.randint(1, 100)})

    def count(self, data: dict[str, Any]) -> int:
        n, d, total = data["n"], 1, 0
        while d * d <= n:
            if n % d == 0:
                total += 1 if d * d == n else 2
            d += 1
        return total

    def solve_int(self, problem: Problem) -> int:
        n = problem.data["n"]
        return sum(1 for d in range(1, n + 1) if n % d == 0)


class _Square(ResidueAnswer):
    """x² mod m."""

    name = "test_square"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        data = {"x": rng.randint(0, 99), "modulus": 13}
        return Instance("x² mod 13?", str(data["x"] ** 2 % 13), data)

    def residue(self, problem: Problem) -> int:
        return int(problem.data["x"] ** 2 % problem.data["modulus"])


def _problem(**data: Any) -> Problem:
    return Problem(env="test", difficulty=0, seed=0, prompt="", answer="", data=data)


def test_fast_count_checks_against_its_fast_count() -> None:
    env = _Divisors()
    p = _problem(n=36)  # 1 2 3 4 6 9 12 18 36
    assert env.solve(p) == "9" and env.count({"n": 36}) == 9
    assert env.check(p, "9").correct and env.check(p, "9").reward == 1.0
    wrong = env.check(p, "6")
    assert not wrong.correct and wrong.reward == pytest.approx((6 / 9) ** 10)
    assert env.size(p) == 36.0
    assert env.tags == ("rlve", "counting")
    inst = env._generate(0, random.Random(3))
    assert inst.answer == str(env.count(inst.data))


def test_residue_answer_is_binary_and_bounded_by_the_modulus() -> None:
    env = _Square()
    p = _problem(x=5, modulus=13)  # 25 mod 13 = 12
    assert env.solve(p) == "12"
    assert env.check(p, "12").correct
    assert env.check(p, "11").reward == 0.0 and not env.check(p, "11").correct
    assert env.check(p, "13").reward == -0.5  # not a remainder: invalid
    assert env.check(p, "-1").reward == -0.5
    assert env.size(_problem(x=123, modulus=13)) == 5.0  # digits of 123 and 13
