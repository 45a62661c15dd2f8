"""The smallest positive solution of a linear congruence a·x ≡ c (mod m) (RLVE catalogue row
CongruentEquation; Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for Language
Models with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A). Right or wrong,
as in the row. The verifier solves it with the extended Euclidean algorithm on a/g and m/g
(g = gcd(a, m), which divides c by construction); ``solve`` tries x = 1, 2, … in turn.
"""

from __future__ import annotations

import math
import random

from verirl.envs.base import ENVIRONMENTS, Instance, IntegerAnswer, graded
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict


@ENVIRONMENTS.register("congruent_equation")
class CongruentEquation(IntegerAnswer):
    """Smallest positive x with a·x ≡ c (mod m); solutions exist by construction."""

    tags = ("rlve", "number_theory")
    difficulty_scales = "modulus m ≤ 20·1.3^d; a, c below m"
    size_measure = "modulus m (brute force tries up to m values)"
    answer_names = ("x",)

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        m = rng.randint(3, int(20 * 1.3**difficulty))
        a = rng.randint(1, m - 1)
        c = a * rng.randint(1, m) % m  # c is a multiple of gcd(a, m): solvable
        prompt = (
            f"Find the smallest positive integer x such that {a}·x ≡ {c} (mod {m}), that is, "
            f"{a}·x − {c} is divisible by {m}."
        )
        data = {"a": a, "c": c, "m": m}
        return Instance(prompt, str(self._fast(a, c, m)), data)

    @staticmethod
    def _fast(a: int, c: int, m: int) -> int:
        g = math.gcd(a, m)
        a2, c2, m2 = a // g, c // g, m // g
        x = c2 * pow(a2, -1, m2) % m2 if m2 > 1 else 0
        return x if x > 0 else m2

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        value = normalize.parse_integer(answer, self.answer_names)
        ok = value == self._fast(d["a"], d["c"], d["m"])
        return graded(0.0, ok, "correct" if ok else "that is not the smallest positive solution")

    def solve_int(self, problem: Problem) -> int:
        a, c, m = problem.data["a"], problem.data["c"], problem.data["m"]
        return next(x for x in range(1, m + 1) if (a * x - c) % m == 0)

    def size(self, problem: Problem) -> float:
        return float(problem.data["m"])
