"""Arithmetic: addition, multiplication and chained sums with integer difficulty.

Partial credit follows RLVE's count rule (min/max)^β with β = 10, so an answer that is off by a
little earns a little; only the exact value is ``correct``.
"""

from __future__ import annotations

import random

from verirl.envs.base import ENVIRONMENTS, Instance, IntegerAnswer
from verirl.types import Problem


class _Terms(IntegerAnswer):
    """Arithmetic over ``data["terms"]``; size = total digits of the operands."""

    def size(self, problem: Problem) -> float:
        return float(sum(len(str(abs(x))) for x in problem.data["terms"]))


def _operand(rng: random.Random, digits: int) -> int:
    lo = 0 if digits == 1 else 10 ** (digits - 1)
    return rng.randint(lo, 10**digits - 1)


@ENVIRONMENTS.register("addition")
class Addition(_Terms):
    size_measure = "digits of the operands"
    tags = ("default",)
    difficulty_scales = "digits per operand: 1 + difficulty // 2; a third operand from difficulty 5"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        digits = 1 + difficulty // 2
        count = 2 if difficulty < 5 else 3
        terms = [_operand(rng, digits) for _ in range(count)]
        expr = " + ".join(map(str, terms))
        return Instance(f"Compute {expr}.", str(sum(terms)), {"terms": terms})

    def solve_int(self, problem: Problem) -> int:
        total = 0
        for t in problem.data["terms"]:
            total += int(t)
        return total

    def problem_space(self, difficulty: int) -> int | None:
        digits = 1 + difficulty // 2
        values = 10 if digits == 1 else 9 * 10 ** (digits - 1)
        space = values ** (2 if difficulty < 5 else 3)
        return space if space < 1000 else None


@ENVIRONMENTS.register("multiplication")
class Multiplication(_Terms):
    size_measure = "digits of the factors"
    tags = ("default",)
    difficulty_scales = "digits of the two factors: (1 + (d+1)//2, 1 + d//2)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        a = _operand(rng, 1 + (difficulty + 1) // 2)
        b = _operand(rng, 1 + difficulty // 2)
        return Instance(f"Compute {a} * {b}.", str(a * b), {"terms": [a, b]})

    def solve_int(self, problem: Problem) -> int:
        a, b = problem.data["terms"]
        # long multiplication digit by digit: independent of the generator's a * b
        total = 0
        for i, digit in enumerate(reversed(str(b))):
            total += a * int(digit) * 10**i
        return total

    def problem_space(self, difficulty: int) -> int | None:
        def values(digits: int) -> int:
            return 10 if digits == 1 else 9 * 10 ** (digits - 1)

        space = values(1 + (difficulty + 1) // 2) * values(1 + difficulty // 2)
        return space if space < 1000 else None


@ENVIRONMENTS.register("chain_sum")
class ChainSum(_Terms):
    size_measure = "digits of the terms"
    tags = ("default",)
    difficulty_scales = "terms: 3 + difficulty // 2; digits per term: 1 + difficulty // 3"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty // 2
        digits = 1 + difficulty // 3
        terms = [_operand(rng, digits) for _ in range(n)]
        signs = [1] + [rng.choice([1, -1]) for _ in range(n - 1)]
        expr = str(terms[0])
        for s, t in zip(signs[1:], terms[1:], strict=True):
            expr += f" {'+' if s > 0 else '-'} {t}"
        return Instance(
            f"Compute {expr}.",
            str(sum(s * t for s, t in zip(signs, terms, strict=True))),
            {"terms": terms, "signs": signs, "expression": expr},
        )

    def solve_int(self, problem: Problem) -> int:
        # evaluate the printed expression token by token
        tokens = problem.data["expression"].split()
        value = int(tokens[0])
        for op, num in zip(tokens[1::2], tokens[2::2], strict=True):
            value = value + int(num) if op == "+" else value - int(num)
        return value
