"""Impartial games: the bean-splitting game, solved with Sprague–Grundy values.

RLVE-Gym row SplittingGame (Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for
Language Models with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A). The
answer is an exact count (binary reward).
"""

from __future__ import annotations

import random

from verirl.envs.base import ENVIRONMENTS, Instance, IntegerAnswer
from verirl.types import Problem


def grundy_values(n: int) -> list[int]:
    """g[i] for one bean in bottle i of n: mex of g[j] XOR g[k] over i < j ≤ k < n."""
    g = [0] * n
    for i in range(n - 2, -1, -1):
        reachable = {g[j] ^ g[k] for j in range(i + 1, n) for k in range(j, n)}
        g[i] = next(v for v in range(len(reachable) + 1) if v not in reachable)
    return g


@ENVIRONMENTS.register("splitting_game")
class SplittingGame(IntegerAnswer):
    """How many first moves of the splitting game leave the opponent in a losing position."""

    tags = ("rlve", "games")
    difficulty_scales = "bottles 3 + d (at most 20); beans per bottle 0..2 + d//3"
    size_measure = "bottles"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(20, 3 + difficulty)
        beans = [rng.randint(0, 2 + difficulty // 3) for _ in range(n)]
        if not any(beans[:-1]):
            beans[0] = 1
        prompt = (
            f"There are {n} bottles of beans, indexed from 0 to {n - 1}; bottle i holds "
            f"{' '.join(map(str, beans))} beans respectively (bottle 0 first). Two players move "
            "in turn. A move chooses indices i < j ≤ k (j and k may be equal) such that bottle i "
            "is not empty, takes one bean out of bottle i, and puts one bean into bottle j and "
            "one bean into bottle k. A player who cannot move loses. How many different first "
            "moves (i, j, k) guarantee that the first player wins with perfect play?"
        )
        return Instance(prompt, str(self._count(beans)), {"beans": beans})

    def _count(self, beans: list[int]) -> int:
        g = grundy_values(len(beans))
        total = 0
        for i, b in enumerate(beans):
            if b % 2:
                total ^= g[i]
        n = len(beans)
        return sum(
            1
            for i in range(n)
            if beans[i]
            for j in range(i + 1, n)
            for k in range(j, n)
            if total ^ g[i] ^ g[j] ^ g[k] == 0
        )

    def solve_int(self, problem: Problem) -> int:
        return self._count(problem.data["beans"])

    binary = True  # RLVE's row is binary
    wrong_detail = "the number of winning moves is not right"

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["beans"]))

    def problem_space(self, difficulty: int) -> int | None:
        return min(10**9, (3 + difficulty // 3) ** min(20, 3 + difficulty))
