"""Two-player games with perfect play: Euclid's game and the minimum-taking game (RLVE
catalogue rows EuclidGame and GraMinimaGame, Zeng et al. 2025, "RLVE: Scaling Up
Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A).

Both rows are right or wrong. The verifier uses the known closed-form strategy; ``solve``
searches the game tree (minimax with memoisation), so the two cross-check in the tests.
"""

from __future__ import annotations

import functools
import itertools
import random
import re
from typing import ClassVar

from verirl.envs.base import ENVIRONMENTS, Environment, Instance, IntegerAnswer, graded
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict

TAGS = ("rlve", "games")


def _winner_name(text: str, players: tuple[str, str]) -> str | None:
    """The player an answer names (``Stan``, ``\\text{Ollie}``, ``Stan wins``); None when it
    names neither or both."""
    t = normalize.clean(text).lower()
    t = re.sub(r"[^a-z ]", " ", t)
    words = set(t.split()) - {"wins", "will", "win", "the", "winner", "is"}
    named = [p for p in players if p.lower() in words]
    if len(named) != 1 or len(words) != 1:
        return None
    return named[0]


@ENVIRONMENTS.register("euclid_game")
class EuclidGame(Environment):
    """Euclid's game: from (a, b) a move subtracts a positive multiple of the smaller number
    from the larger, keeping it non-negative; whoever makes a 0 wins (RLVE EuclidGame). The
    verifier uses the classic rule (the mover wins when a ≥ 2b or b | a); ``solve`` is a
    memoised game-tree search."""

    tags = TAGS
    difficulty_scales = "starting numbers up to 16·2^(d/2)"
    size_measure = "the larger starting number"
    players: ClassVar[tuple[str, str]] = ("Stan", "Ollie")

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = int(16 * 2 ** (difficulty / 2))
        a, b = rng.randint(1, top), rng.randint(1, top)
        prompt = (
            f"Stan and Ollie play a game starting with the two integers {a} and {b}. Stan moves "
            "first, then they alternate. A move subtracts a positive multiple of the smaller "
            "number from the larger one, and the result must not be negative (so the pair 25 "
            "and 7 can become 18 and 7, 11 and 7, or 4 and 7). The player who makes one of the "
            "numbers 0 wins. Both play perfectly. Who wins? Answer Stan or Ollie."
        )
        data = {"a": a, "b": b}
        return Instance(prompt, self._fast(a, b), data)

    def _fast(self, a: int, b: int) -> str:
        mover = 0
        a, b = max(a, b), min(a, b)
        while not (a % b == 0 or a >= 2 * b):  # a forced single move (a - b, b)
            a, b = b, a - b
            mover ^= 1
        return self.players[mover]

    def check(self, problem: Problem, answer: str) -> Verdict:
        named = _winner_name(answer, self.players)
        if named is None:
            raise ValueError("answer Stan or Ollie")
        ok = named == self._fast(problem.data["a"], problem.data["b"])
        return graded(0.0, ok, "correct" if ok else "that player loses with perfect play")

    def solve(self, problem: Problem) -> str:
        @functools.cache
        def mover_wins(a: int, b: int) -> bool:
            a, b = max(a, b), min(a, b)
            return any(a - k * b == 0 or not mover_wins(a - k * b, b) for k in range(1, a // b + 1))

        a, b = problem.data["a"], problem.data["b"]
        if max(a, b) // min(a, b) > 10_000:  # a ≥ 2b: the mover wins at once
            return self.players[0]
        return self.players[0 if mover_wins(a, b) else 1]

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return self.players[1] if answer == self.players[0] else self.players[0]

    def surface_forms(self, problem: Problem) -> list[str]:
        w = self.solve(problem)
        return [w, w.lower(), w.upper(), f"\\text{{{w}}}", f"{w} wins", f"{w}."]

    def near_misses(self, problem: Problem) -> list[str]:
        w = self.solve(problem)
        other = self.corrupt(problem, w, random.Random(0))
        return [other, f"{w} or {other}", f"{other} wins", f"not {w}"]

    def size(self, problem: Problem) -> float:
        return float(max(problem.data["a"], problem.data["b"]))


@ENVIRONMENTS.register("gra_minima_game")
class GraMinimaGame(IntegerAnswer):
    """Alice and Bob alternately take any non-empty set of the remaining numbers and score its
    minimum; with perfect play (each maximising own minus other's score), what is Alice's
    score minus Bob's? (RLVE GraMinimaGame, POI "Gra"). Right or wrong. The verifier: sort,
    f = max(f, x − f); ``solve``: minimax over the remaining multisets."""

    tags = TAGS
    difficulty_scales = "N = 3 + d//2 numbers in 1..10 + 2d"
    size_measure = "number of numbers N"
    size_key = "numbers"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty // 2
        numbers = [rng.randint(1, 10 + 2 * difficulty) for _ in range(n)]
        prompt = (
            f"There are {n} numbers: {', '.join(map(str, numbers))}. Alice and Bob play a game; "
            "Alice moves first and then they alternate. In a move the player takes any "
            "non-empty set of the numbers still on the table and adds the smallest number "
            "taken to their score. The game ends when no numbers are left. Each player plays "
            "to maximise their own score minus the other's. What is Alice's final score minus "
            "Bob's final score?"
        )
        return Instance(prompt, str(self._fast(numbers)), {"numbers": numbers})

    @staticmethod
    def _fast(numbers: list[int]) -> int:
        best = 0
        for x in sorted(numbers):
            best = max(best, x - best)
        return best

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = normalize.parse_integer(answer)
        ok = value == self._fast(list(problem.data["numbers"]))
        return graded(0.0, ok, "correct" if ok else "the difference is not right")

    def solve_int(self, problem: Problem) -> int:
        @functools.cache
        def value(left: tuple[int, ...]) -> int:  # mover's best (own − other's) from here
            if not left:
                return 0
            best = None
            idx = range(len(left))
            for size in range(1, len(left) + 1):
                for take in itertools.combinations(idx, size):
                    rest = tuple(x for i, x in enumerate(left) if i not in take)
                    score = min(left[i] for i in take) - value(rest)
                    best = score if best is None else max(best, score)
            return int(best or 0)

        return value(tuple(sorted(problem.data["numbers"])))
