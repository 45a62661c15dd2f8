"""Program synthesis of small dynamic programmes (see
:mod:`verirl.envs.code.synthesis`): coin change ways, edit distance, 0/1 knapsack, paths
through a grid. Difficulty adds variants and grows the inputs; where a brute force exists,
the large tests' CPU limit rules it out."""

from __future__ import annotations

import random
from typing import Any

from verirl.envs.base import ENVIRONMENTS
from verirl.envs.code.synthesis import ProgramSynthesis


def ref_coin_ways(p: dict[str, Any], coins: list[int], amount: int) -> int:
    ways = [1] + [0] * amount
    for c in coins:
        for a in range(c, amount + 1):
            ways[a] = (ways[a] + ways[a - c]) % p["mod"]
    return ways[amount]


@ENVIRONMENTS.register("code_coin_ways")
class CodeCoinWays(ProgramSynthesis):
    difficulty_scales = "more coin kinds, amounts grow to 10^5 (enumeration is too slow)"
    signature = "def solve(coins: list[int], amount: int) -> int"
    reference = ref_coin_ways

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {"mod": rng.choice([10**9 + 7, 998_244_353]), "steps": [1] * (1 + difficulty // 3)}

    def spec(self, p: dict[str, Any]) -> str:
        return (
            "coins are distinct positive integers, each usable any number of times. It returns "
            "the number of multisets of coins that sum to amount (order does not matter; 1 for "
            f"amount 0), modulo {p['mod']}."
        )

    def _coins(self, rng: random.Random, k: int) -> list[int]:
        return sorted(rng.sample(range(1, 4 + 2 * k), k))

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        k = 2 + difficulty // 3
        out: list[list[Any]] = [[[1, 2, 5], 11], [[2], 3], [[3, 7], 0]]
        out += [[self._coins(rng, k), rng.randint(0, 20 + 10 * difficulty)] for _ in range(15)]
        return out

    def stress(self, p: dict[str, Any], difficulty: int) -> list[int]:
        return [] if difficulty < 6 else [min(100_000, 5000 * (difficulty - 5))]

    def stress_args(self, p: dict[str, Any], n: int, seed: int) -> list[Any]:
        return [self._coins(random.Random(seed), 6), n]


def ref_edit_distance(p: dict[str, Any], a: str, b: str) -> int:
    ins, dele, sub = p["costs"]
    prev = [j * ins for j in range(len(b) + 1)]
    for i in range(1, len(a) + 1):
        cur = [i * dele] + [0] * len(b)
        for j in range(1, len(b) + 1):
            same = a[i - 1] == b[j - 1]
            cur[j] = min(prev[j] + dele, cur[j - 1] + ins, prev[j - 1] + (0 if same else sub))
        prev = cur
    return prev[len(b)]


@ENVIRONMENTS.register("code_edit_distance")
class CodeEditDistance(ProgramSynthesis):
    difficulty_scales = (
        "unequal operation costs at d >= 3; longer strings (exhaustive search is hopeless)"
    )
    signature = "def solve(a: str, b: str) -> int"
    reference = ref_edit_distance

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        costs = [1, 1, 1] if difficulty < 3 else [rng.randint(1, 4) for _ in range(3)]
        return {"costs": costs, "steps": [1] * (1 + (difficulty >= 3) + difficulty // 4)}

    def spec(self, p: dict[str, Any]) -> str:
        ins, dele, sub = p["costs"]
        return (
            "It returns the cheapest cost of turning a into b, where inserting a character costs "
            f"{ins}, deleting one costs {dele} and replacing one by another costs {sub}."
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def w(n: int) -> str:
            return "".join(rng.choice("abcd") for _ in range(n))

        out: list[list[Any]] = [["kitten", "sitting"], [w(4), w(5)], ["", "abc"], ["ab", ""]]
        out += [
            [w(rng.randint(0, 4 + 3 * difficulty)), w(rng.randint(0, 4 + 3 * difficulty))]
            for _ in range(15)
        ]
        return out


def ref_knapsack(p: dict[str, Any], items: list[list[int]], capacity: int) -> int:
    best = [0] * (capacity + 1)
    for weight, value in items:
        rng = range(weight, capacity + 1) if p["unbounded"] else range(capacity, weight - 1, -1)
        for c in rng:
            best[c] = max(best[c], best[c - weight] + value)
    return best[capacity]


@ENVIRONMENTS.register("code_knapsack")
class CodeKnapsack(ProgramSynthesis):
    difficulty_scales = "unbounded copies at d >= 4; more items (2^n subsets become too many)"
    signature = "def solve(items: list[list[int]], capacity: int) -> int"
    reference = ref_knapsack

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {"unbounded": difficulty >= 4, "steps": [1] * (1 + difficulty // 3)}

    def spec(self, p: dict[str, Any]) -> str:
        use = "any number of times" if p["unbounded"] else "at most once"
        return (
            f"items are [weight, value] pairs with positive weights; each item may be used {use}. "
            "It returns the largest total value with total weight <= capacity."
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def items(n: int) -> list[list[int]]:
            return [[rng.randint(1, 10), rng.randint(1, 30)] for _ in range(n)]

        out: list[list[Any]] = [[[[2, 3], [3, 4], [4, 5]], 5], [[], 10], [[[5, 10]], 4]]
        n = 3 + 2 * difficulty
        out += [[items(rng.randint(1, n)), rng.randint(0, 10 * n)] for _ in range(15)]
        return out


def ref_grid_paths(p: dict[str, Any], grid: list[str]) -> int:
    rows, cols = len(grid), len(grid[0])
    ways = [[0] * cols for _ in range(rows)]
    for r in range(rows):
        for c in range(cols):
            if grid[r][c] == "#":
                continue
            if r == 0 and c == 0:
                ways[r][c] = 1
                continue
            total = (ways[r - 1][c] if r else 0) + (ways[r][c - 1] if c else 0)
            if p["diagonal"] and r and c:
                total += ways[r - 1][c - 1]
            ways[r][c] = total % p["mod"]
    return ways[rows - 1][cols - 1]


@ENVIRONMENTS.register("code_grid_paths")
class CodeGridPaths(ProgramSynthesis):
    difficulty_scales = "diagonal moves at d >= 4; grids grow (enumerating paths is too slow)"
    signature = "def solve(grid: list[str]) -> int"
    reference = ref_grid_paths

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {"diagonal": difficulty >= 4, "mod": 10**9 + 7, "steps": [1] * (1 + difficulty // 3)}

    def spec(self, p: dict[str, Any]) -> str:
        moves = "right, down or diagonally down-right" if p["diagonal"] else "right or down"
        return (
            "grid is a non-empty list of equal-length rows of '.' (free) and '#' (blocked). It "
            "returns the number of paths from the top-left to the bottom-right cell moving "
            f"{moves} "
            f"through free cells only (0 if either end is blocked), modulo {p['mod']}."
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def grid(r: int, c: int) -> list[str]:
            return ["".join("#" if rng.random() < 0.2 else "." for _ in range(c)) for _ in range(r)]

        out: list[list[Any]] = [[["...", "...", "..."]], [[".#", ".."]], [["#"]], [["."]]]
        top = 3 + 2 * difficulty
        out += [[grid(rng.randint(1, top), rng.randint(1, top))] for _ in range(15)]
        return out


__all__: list[str] = []
