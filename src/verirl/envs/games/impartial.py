"""Impartial games under the normal play rule (who cannot move loses) and misère Nim: Grundy
values of subtraction games, winning first moves in sums of subtraction, divisor, Kayles,
staircase-Nim and Wythoff positions, and misère Nim.

Games in the spirit of RLVE-Gym's game rows (Zeng et al. 2025, "RLVE: Scaling Up
Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A: NewNimGame, DeltaNimGame, StoneGame, TakingPrimeGame), through
the Sprague–Grundy theorem (a sum of games is lost for the mover exactly when the XOR of the
Grundy values is 0). Where a closed rule exists (staircase Nim, Wythoff's Beatty pairs,
misère Nim) the generator uses it and ``solve_int`` enumerates moves or searches the game
tree, so the two cross-check. Answers are integers scored with RLVE's (min/max)^10.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Iterable

from verirl.envs.base import ENVIRONMENTS, Instance
from verirl.envs.kit.answers import SizedInteger
from verirl.envs.kit.wording import plural
from verirl.types import Problem

TAGS = ("games",)

LOSER = "A player who cannot make a move loses."


def _mex(values: Iterable[int]) -> int:
    seen = set(values)
    m = 0
    while m in seen:
        m += 1
    return m


def _grundy_table(limit: int, moves: Callable[[int], Iterable[int]]) -> list[int]:
    """g[n] for 0 ≤ n ≤ limit, where ``moves(n)`` lists the pile sizes reachable from n."""
    g: list[int] = []
    for n in range(limit + 1):
        g.append(_mex(g[m] for m in moves(n)))
    return g


def _grundy_function(limit: int, moves: Callable[[int], Iterable[int]]) -> Callable[[int], int]:
    """A memoised recursive Grundy function, warmed up bottom-up to ``limit`` so that the
    recursion stays shallow."""

    @functools.cache
    def go(k: int) -> int:
        return _mex(go(m) for m in moves(k))

    for k in range(limit + 1):
        go(k)
    return go


def _grundy_recursive(n: int, moves: Callable[[int], Iterable[int]]) -> int:
    return _grundy_function(n, moves)(n)


def _subtract(options: list[int]) -> Callable[[int], list[int]]:
    return lambda n: [n - s for s in options if s <= n]


def _divisor_moves(n: int) -> list[int]:
    return [n - d for d in range(1, n) if n % d == 0]


def _xor(values: Iterable[int]) -> int:
    out = 0
    for v in values:
        out ^= v
    return out


def _count_winning(
    piles: list[int], moves: Callable[[int], Iterable[int]], g: Callable[[int], int]
) -> int:
    total = _xor(g(p) for p in piles)
    return sum(1 for i, p in enumerate(piles) for q in moves(p) if total ^ g(p) ^ g(q) == 0)


@ENVIRONMENTS.register("subtraction_game_grundy")
class SubtractionGameGrundy(SizedInteger):
    """The Grundy value of one pile in a subtraction game."""

    tags = TAGS
    difficulty_scales = "moves from {1..4 + d//2} (2-4 of them); pile up to 40 + 15d"
    size_measure = "pile size"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        options = sorted(rng.sample(range(1, 5 + difficulty // 2), rng.randint(2, 3)))
        if difficulty >= 4:
            options = sorted(set(options) | set(rng.sample(range(1, 5 + difficulty // 2), 1)))
        n = rng.randint(5 + difficulty, 40 + 15 * difficulty)
        prompt = (
            f"In a game, a move removes {', '.join(map(str, options[:-1]))} or {options[-1]} "
            "stones from a pile (never more stones than the pile has). The Grundy value of a "
            "pile is defined recursively: it is the smallest non-negative integer that is not "
            "the Grundy value of any pile reachable in one move (a pile with no moves has "
            f"Grundy value 0). What is the Grundy value of a pile of {n} stones?"
        )
        g = _grundy_table(n, _subtract(options))
        return Instance(prompt, str(g[n]), {"options": options, "n": n, "size": n})

    def solve_int(self, problem: Problem) -> int:
        return _grundy_recursive(problem.data["n"], _subtract(problem.data["options"]))


def _piles_text(piles: list[int]) -> str:
    return ", ".join(map(str, piles))


@ENVIRONMENTS.register("subtraction_game_winning_moves")
class SubtractionGameWinningMoves(SizedInteger):
    """Winning first moves in a sum of subtraction-game piles."""

    tags = TAGS
    difficulty_scales = "2 + d//3 piles of up to 8 + 4d stones; moves from {1..3 + d//3}"
    size_measure = "total number of stones"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        options = sorted(rng.sample(range(1, 4 + difficulty // 3), 2 + min(2, difficulty // 5)))
        piles = [rng.randint(1, 8 + 4 * difficulty) for _ in range(2 + difficulty // 3)]
        prompt = (
            f"Two players alternate moves on piles of stones with sizes {_piles_text(piles)}. "
            f"A move picks one pile and removes exactly {', '.join(map(str, options[:-1]))} or "
            f"{options[-1]} stones from it (never more than it has). {LOSER} Counting every "
            "(pile, number removed) choice as a separate move, how many of the first player's "
            "possible first moves lead to a position from which the first player wins with "
            "perfect play?"
        )
        table = _grundy_table(max(piles), _subtract(options))
        answer = _count_winning(piles, _subtract(options), table.__getitem__)
        return Instance(
            prompt, str(answer), {"options": options, "piles": piles, "size": sum(piles)}
        )

    def solve_int(self, problem: Problem) -> int:
        moves, piles = _subtract(problem.data["options"]), problem.data["piles"]
        return _count_winning(piles, moves, _grundy_function(max(piles), moves))


@ENVIRONMENTS.register("divisor_game_winning_moves")
class DivisorGameWinningMoves(SizedInteger):
    """Piles where a move removes a proper divisor of the pile's size."""

    tags = TAGS
    difficulty_scales = "2 + d//3 piles of up to 20 + 10d stones"
    size_measure = "total number of stones"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        piles = [rng.randint(1, 20 + 10 * difficulty) for _ in range(2 + difficulty // 3)]
        prompt = (
            f"Two players alternate moves on piles of stones with sizes {_piles_text(piles)}. "
            "A move picks one pile, say with m stones, and removes d stones from it, where d "
            "is a divisor of m with d < m (so a pile of 1 stone can no longer be touched). "
            f"{LOSER} Counting every (pile, d) choice as a separate move, how many of the "
            "first player's possible first moves lead to a position from which the first "
            "player wins with perfect play?"
        )
        table = _grundy_table(max(piles), _divisor_moves)
        answer = _count_winning(piles, _divisor_moves, table.__getitem__)
        return Instance(prompt, str(answer), {"piles": piles, "size": sum(piles)})

    def solve_int(self, problem: Problem) -> int:
        piles = problem.data["piles"]
        return _count_winning(piles, _divisor_moves, _grundy_function(max(piles), _divisor_moves))


def _kayles_grundy(limit: int) -> list[int]:
    g = [0] * (limit + 1)
    for n in range(1, limit + 1):
        reach = set()
        for take in (1, 2):
            for left in range(n - take + 1):
                reach.add(g[left] ^ g[n - take - left])
        g[n] = _mex(reach)
    return g


@ENVIRONMENTS.register("kayles_winning_moves")
class KaylesWinningMoves(SizedInteger):
    """Kayles: knock down one pin or two adjacent pins from rows of pins."""

    tags = TAGS
    difficulty_scales = "3 + d//4 rows of 1..5 + 2d pins"
    size_measure = "total number of pins"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        rows = [rng.randint(1, 5 + 2 * difficulty) for _ in range(3 + difficulty // 4)]
        prompt = (
            "Rows of bowling pins stand side by side; the numbers of pins in the rows are "
            f"{_piles_text(rows)} (the pins of a row stand in a line). Two players alternate; "
            "a move knocks down either one pin or two pins that stand directly next to each "
            "other in the same row (this may split a row in two). "
            f"{LOSER} Two moves are different when they knock down different pins. How many "
            "of the first player's possible first moves lead to a position from which the "
            "first player wins with perfect play?"
        )
        g = _kayles_grundy(max(rows))
        total = _xor(g[r] for r in rows)
        answer = sum(
            1
            for r in rows
            for take in (1, 2)
            for left in range(r - take + 1)
            if total ^ g[r] ^ g[left] ^ g[r - take - left] == 0
        )
        return Instance(prompt, str(answer), {"rows": rows, "size": sum(rows)})

    def problem_space(self, difficulty: int) -> int | None:
        space = (5 + 2 * difficulty) ** (3 + difficulty // 4)
        return space if space < 1000 else None

    def solve_int(self, problem: Problem) -> int:
        """Grundy values of multisets of rows by memoised search over the moves."""

        @functools.cache
        def row(n: int) -> int:
            return _mex(
                row(left) ^ row(n - take - left) for take in (1, 2) for left in range(n - take + 1)
            )

        rows = problem.data["rows"]
        for n in range(max(rows) + 1):
            row(n)
        count = 0
        for i, r in enumerate(rows):
            rest = _xor(row(x) for j, x in enumerate(rows) if j != i)
            for take in (1, 2):
                for left in range(r - take + 1):
                    if rest ^ row(left) ^ row(r - take - left) == 0:
                        count += 1
        return count


@ENVIRONMENTS.register("staircase_nim_winning_moves")
class StaircaseNimWinningMoves(SizedInteger):
    """Staircase Nim: coins move down one stair; the coins on odd stairs form a Nim."""

    tags = TAGS
    difficulty_scales = "3 + d//2 stairs with 0..5 + 3d coins"
    size_measure = "number of stairs times coins"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        k = 3 + difficulty // 2
        coins = [rng.randint(0, 5 + 3 * difficulty) for _ in range(k)]
        if not any(coins):
            coins[rng.randrange(k)] = 1
        listing = ", ".join(f"stair {i + 1}: {c}" for i, c in enumerate(coins))
        prompt = (
            f"A staircase has {k} stairs numbered 1 to {k} from the bottom, with these numbers "
            f"of coins: {listing}. Two players alternate; a move takes one or more coins from a "
            "single stair i and puts them on stair i - 1 (coins moved from stair 1 go to the "
            f"ground and leave the game). {LOSER} Counting every (stair, number of coins moved) "
            "choice as a separate move, how many of the first player's possible first moves "
            "lead to a position from which the first player wins with perfect play?"
        )
        odd = _xor(coins[0::2])  # stairs 1, 3, 5, ... (0-based even indices)
        answer = 0
        if odd:
            for i, c in enumerate(coins):
                if i % 2 == 0 and c ^ odd < c:  # take from an odd stair
                    answer += 1
                elif i % 2 == 1 and coins[i - 1] ^ odd > coins[i - 1]:  # push onto an odd stair
                    answer += 1 if (coins[i - 1] ^ odd) - coins[i - 1] <= c else 0
        return Instance(prompt, str(answer), {"coins": coins, "size": k * (5 + 3 * difficulty)})

    def solve_int(self, problem: Problem) -> int:
        coins = list(problem.data["coins"])
        count = 0
        for i, c in enumerate(coins):
            for t in range(1, c + 1):
                after = list(coins)
                after[i] -= t
                if i > 0:
                    after[i - 1] += t
                if _xor(after[0::2]) == 0:
                    count += 1
        return count


def _wythoff_p_positions(limit: int) -> set[tuple[int, int]]:
    """Beatty pairs (⌊kφ⌋, ⌊kφ²⌋) with exact integer square roots."""
    out: set[tuple[int, int]] = set()
    k = 0
    while True:
        a = (k + math.isqrt(5 * k * k)) // 2
        if a > limit:
            return out
        out |= {(a, a + k), (a + k, a)}
        k += 1


@ENVIRONMENTS.register("wythoff_winning_moves")
class WythoffWinningMoves(SizedInteger):
    """Wythoff's game from (a, b): take from one pile, or the same number from both."""

    tags = TAGS
    difficulty_scales = "pile sizes up to 15 + 12d"
    size_measure = "the larger pile"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = 15 + 12 * difficulty
        a, b = rng.randint(1, top), rng.randint(1, top)
        prompt = (
            f"Two piles hold {plural(a, 'stone')} and {plural(b, 'stone')}. Two players "
            "alternate; a move removes any positive number of stones from one pile, or the "
            f"same positive number of stones from both piles. {LOSER} How many different "
            "first moves lead to a position from which the first player wins with perfect "
            "play (a move is given by how many stones it takes from each pile)?"
        )
        p = _wythoff_p_positions(max(a, b))
        answer = sum((a - t, b) in p for t in range(1, a + 1))
        answer += sum((a, b - t) in p for t in range(1, b + 1))
        answer += sum((a - t, b - t) in p for t in range(1, min(a, b) + 1))
        return Instance(prompt, str(answer), {"a": a, "b": b, "size": max(a, b)})

    def solve_int(self, problem: Problem) -> int:
        """P-positions by the mex construction: a_k the least unused number, b_k = a_k + k."""
        a, b = problem.data["a"], problem.data["b"]
        used: set[int] = set()
        p: set[tuple[int, int]] = set()
        k, x = 0, 0
        while x <= max(a, b):
            while x in used:
                x += 1
            p |= {(x, x + k), (x + k, x)}
            used |= {x, x + k}
            k += 1
        moves = [(a - t, b) for t in range(1, a + 1)] + [(a, b - t) for t in range(1, b + 1)]
        moves += [(a - t, b - t) for t in range(1, min(a, b) + 1)]
        return sum(m in p for m in moves)


@ENVIRONMENTS.register("misere_nim_winning_moves")
class MisereNimWinningMoves(SizedInteger):
    """Misère Nim (the player who takes the last stone loses): winning first moves."""

    tags = TAGS
    difficulty_scales = "3 + d//4 piles of 1..4 + 2d stones"
    size_measure = "total number of stones"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        piles = [rng.randint(1, 4 + 2 * difficulty) for _ in range(3 + difficulty // 4)]
        prompt = (
            f"Piles of stones have sizes {_piles_text(piles)}. Two players alternate; a move "
            "removes one or more stones from a single pile. The player who takes the last "
            "stone loses. Counting every (pile, number removed) choice as a separate move, how "
            "many of the first player's possible first moves lead to a position from which "
            "the first player wins with perfect play?"
        )
        count = 0
        for i, p in enumerate(piles):
            for t in range(1, p + 1):
                after = [*piles[:i], p - t, *piles[i + 1 :]]
                count += not _misere_mover_wins(after)
        return Instance(prompt, str(count), {"piles": piles, "size": sum(piles)})

    def problem_space(self, difficulty: int) -> int | None:
        space = (4 + 2 * difficulty) ** (3 + difficulty // 4)
        return space if space < 1000 else None

    def solve_int(self, problem: Problem) -> int:
        piles = problem.data["piles"]
        if math.prod(p + 1 for p in piles) > 20_000:
            return self._rule_count(piles)

        @functools.cache
        def wins(state: tuple[int, ...]) -> bool:
            if not any(state):
                return True  # the previous player took the last stone
            return any(
                not wins(tuple(sorted((*state[:i], p - t, *state[i + 1 :]))))
                for i, p in enumerate(state)
                for t in range(1, p + 1)
            )

        count = 0
        for i, p in enumerate(piles):
            for t in range(1, p + 1):
                count += not wins(tuple(sorted([*piles[:i], p - t, *piles[i + 1 :]])))
        return count

    @staticmethod
    def _rule_count(piles: list[int]) -> int:
        count = 0
        for i, p in enumerate(piles):
            for t in range(1, p + 1):
                count += not _misere_mover_wins([*piles[:i], p - t, *piles[i + 1 :]])
        return count


def _misere_mover_wins(piles: list[int]) -> bool:
    """Bouton's misère rule: with every pile ≤ 1 the mover wins iff the number of 1-piles is
    even; otherwise iff the XOR is non-zero."""
    if all(p <= 1 for p in piles):
        return sum(piles) % 2 == 0
    return _xor(piles) != 0
