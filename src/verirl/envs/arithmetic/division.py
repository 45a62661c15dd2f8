"""Integer division rounded down (RLVE catalogue row Division, one of the C4 training
environments; Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for Language Models
with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A). Right or wrong, as in
the row. The verifier checks the defining inequality q·b ≤ a < (q + 1)·b; ``solve`` is
schoolbook long division digit by digit.
"""

from __future__ import annotations

import random

from verirl.envs.base import ENVIRONMENTS, Instance, IntegerAnswer, graded
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict


@ENVIRONMENTS.register("division")
class Division(IntegerAnswer):
    """⌊a / b⌋ for a with 2 + d digits and b with 1 + d//2 digits."""

    tags = ("rlve", "arithmetic")
    difficulty_scales = "dividend: 2 + d digits; divisor: 1 + d//2 digits"
    size_measure = "digits of the dividend and the divisor"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        da, db = 2 + difficulty, 1 + difficulty // 2
        a = rng.randint(10 ** (da - 1), 10**da - 1)
        b = rng.randint(max(2, 10 ** (db - 1)), 10**db - 1)
        prompt = f"What is {a} divided by {b}? Round down to the nearest integer."
        return Instance(prompt, str(a // b), {"a": a, "b": b})

    def check(self, problem: Problem, answer: str) -> Verdict:
        q = normalize.parse_integer(answer)
        a, b = problem.data["a"], problem.data["b"]
        ok = q * b <= a < (q + 1) * b
        return graded(0.0, ok, "correct" if ok else "that is not the rounded-down quotient")

    def solve_int(self, problem: Problem) -> int:
        a, b = problem.data["a"], problem.data["b"]
        quotient, remainder = 0, 0
        for digit in str(a):  # long division
            remainder = remainder * 10 + int(digit)
            q = 0
            while (q + 1) * b <= remainder:
                q += 1
            quotient, remainder = quotient * 10 + q, remainder - q * b
        return quotient

    def size(self, problem: Problem) -> float:
        return float(len(str(problem.data["a"])) + len(str(problem.data["b"])))
