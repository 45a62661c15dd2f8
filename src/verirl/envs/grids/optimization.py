"""Grids, part 3: three non-overlapping squares with the largest sum, and a cheapest set of
cells dominating a grid.

Rows MaxThreeSquareSum and Minimum_DominatingSet_Grid of the RLVE catalogue (Zeng et al.,
*RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable
Environments*, arXiv:2511.07317). The square sum is exact (binary reward); the dominating set
is checked on the grid and graded (gold/cost)^5. Optima come from exhaustive search (triples of
squares; branch and bound on an undominated cell), and ``solve`` searches another way (best
third square for every pair; all subsets on small grids).
"""

from __future__ import annotations

import itertools
import random

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    optimum_verdict,
    parse_int,
)
from verirl.envs.grids.selection import read_cells
from verirl.envs.kit.size_ladder import grown
from verirl.types import Problem, Verdict

TAGS = ("rlve", "grids")


def _rows_text(grid: list[list[int]]) -> str:
    return "\n".join(" ".join(f"{x:2d}" for x in row) for row in grid)


class _GridEnv(Environment):
    tags = TAGS
    size_measure = "cells of the grid"

    def size(self, problem: Problem) -> float:
        grid = problem.data["grid"]
        return float(len(grid) * len(grid[0]))


# ---- three squares ------------------------------------------------------------------------
def _square_sums(grid: list[list[int]], k: int) -> dict[tuple[int, int], int]:
    n, m = len(grid), len(grid[0])
    return {
        (r, c): sum(grid[r + a][c + b] for a in range(k) for b in range(k))
        for r in range(n - k + 1)
        for c in range(m - k + 1)
    }


def _apart(p: tuple[int, int], q: tuple[int, int], k: int) -> bool:
    return abs(p[0] - q[0]) >= k or abs(p[1] - q[1]) >= k


def best_three_squares(grid: list[list[int]], k: int) -> int | None:
    """Exhaustive over triples of pairwise non-overlapping k × k squares, taken in order of
    decreasing sum and cut off once the bound (first + twice the second) cannot win."""
    sums = _square_sums(grid, k)
    ranked = sorted(sums, key=sums.__getitem__, reverse=True)
    best: int | None = None
    for i, a in enumerate(ranked):
        if best is not None and 3 * sums[a] <= best:
            break
        for j in range(i + 1, len(ranked)):
            b = ranked[j]
            if best is not None and sums[a] + 2 * sums[b] <= best:
                break
            if not _apart(a, b, k):
                continue
            for c in ranked[j + 1 :]:
                if best is not None and sums[a] + sums[b] + sums[c] <= best:
                    break
                if _apart(a, c, k) and _apart(b, c, k):
                    best = sums[a] + sums[b] + sums[c]
                    break  # later c are no larger
    return best


@ENVIRONMENTS.register("max_three_square_sum")
class MaxThreeSquareSum(_GridEnv):
    """The largest total of three non-overlapping K × K squares of a grid (binary)."""

    difficulty_scales = "N, M up to 4 then int(1.1·x + 1) per level (at most 10); K in 1..3"
    answer_kind = "integer"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = grown(4, difficulty, 10)
        while True:
            n, m = rng.randint(2, top), rng.randint(3, top)
            k = rng.randint(1, min(3, max(1, min(n, m) // 2)))
            grid = [[rng.randint(-5, 20) for _ in range(m)] for _ in range(n)]
            gold = best_three_squares(grid, k)
            if gold is not None:
                break
        prompt = (
            f"You are given a grid of size {n} × {m}, where each cell contains an integer:\n"
            f"{_rows_text(grid)}\n\nChoose three {k} × {k} squares of cells (aligned with the "
            "grid, inside it) that do not overlap (no cell belongs to two of them), so that "
            "the sum of all numbers in the three squares is as large as possible. What is "
            "that largest sum? Give it as a single integer."
        )
        return Instance(prompt, str(gold), {"grid": grid, "k": k})

    def check(self, problem: Problem, answer: str) -> Verdict:
        ok = parse_int(answer) == best_three_squares(problem.data["grid"], problem.data["k"])
        return graded(0.0, ok, "correct" if ok else "that is not the largest sum")

    def solve(self, problem: Problem) -> str:
        # Independent: for every non-overlapping pair, scan squares by decreasing sum for the
        # first one apart from both.
        grid, k = problem.data["grid"], problem.data["k"]
        sums = _square_sums(grid, k)
        ranked = sorted(sums, key=sums.__getitem__, reverse=True)
        best = None
        for a, b in itertools.combinations(ranked, 2):
            if not _apart(a, b, k):
                continue
            third = next((c for c in ranked if _apart(a, c, k) and _apart(b, c, k)), None)
            if third is not None:
                total = sums[a] + sums[b] + sums[third]
                best = total if best is None else max(best, total)
        return str(best)


# ---- dominating cells --------------------------------------------------------------------
def _closed(n: int, m: int, r: int, c: int) -> list[tuple[int, int]]:
    return [
        (r + dr, c + dc)
        for dr, dc in ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1))
        if 0 <= r + dr < n and 0 <= c + dc < m
    ]


def cheapest_domination(grid: list[list[int]]) -> tuple[int, list[tuple[int, int]]]:
    """Branch and bound: the first undominated cell must be dominated by one of its closed
    neighbours; prune when the cost reaches the best found."""
    n, m = len(grid), len(grid[0])
    cells = [(r, c) for r in range(n) for c in range(m)]
    best: list = [sum(map(sum, grid)) + 1, []]

    def search(chosen: list[tuple[int, int]], dominated: set[tuple[int, int]], cost: int) -> None:
        if cost >= best[0]:
            return
        target = next((x for x in cells if x not in dominated), None)
        if target is None:
            best[0], best[1] = cost, list(chosen)
            return
        for cell in _closed(n, m, *target):
            if cell not in chosen:
                search(
                    [*chosen, cell],
                    dominated | set(_closed(n, m, *cell)),
                    cost + grid[cell[0]][cell[1]],
                )

    search([], set(), 0)
    return best[0], best[1]


@ENVIRONMENTS.register("minimum_dominating_set_grid")
class MinimumDominatingSetGrid(_GridEnv):
    """Cells of a grid with costs such that every cell is chosen or next to a chosen one,
    with the smallest total cost; (gold/cost)^5, a set that misses a cell is invalid."""

    difficulty_scales = "N, M in 2..min(5, 3 + d//4); costs 1..9"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = min(5, 3 + difficulty // 4)
        n, m = rng.randint(2, top), rng.randint(2, top)
        grid = [[rng.randint(1, 9) for _ in range(m)] for _ in range(n)]
        prompt = (
            f"We have a grid with {n} rows and {m} columns (1-based indices). The cost of "
            f"cell (i, j) is the j-th number of row i:\n{_rows_text(grid)}\n\nChoose some cells "
            "so that every cell is chosen or shares an edge with a chosen cell, with the "
            "smallest total cost. Output the chosen cells as (row, column) pairs, 1-based, "
            "separated by commas; if several choices are optimal, any of them is accepted."
        )
        chosen = cheapest_domination(grid)[1]
        answer = ", ".join(f"({r + 1}, {c + 1})" for r, c in sorted(chosen))
        return Instance(prompt, answer, {"grid": grid})

    def check(self, problem: Problem, answer: str) -> Verdict:
        grid = problem.data["grid"]
        n, m = len(grid), len(grid[0])
        cells = [(r - 1, c - 1) for r, c in read_cells(answer)]
        if len(set(cells)) != len(cells) or any(not (0 <= r < n and 0 <= c < m) for r, c in cells):
            return invalid("list distinct cells of the grid (1-based)")
        dominated = {x for cell in cells for x in _closed(n, m, *cell)}
        if len(dominated) != n * m:
            return invalid("some cell is neither chosen nor next to a chosen cell")
        cost = sum(grid[r][c] for r, c in cells)
        return optimum_verdict(
            cost, cheapest_domination(grid)[0], "a cheaper choice exists", minimise=True
        )

    def solve(self, problem: Problem) -> str:
        grid = problem.data["grid"]
        n, m = len(grid), len(grid[0])
        cells = [(r, c) for r in range(n) for c in range(m)]
        if len(cells) > 12:
            chosen = cheapest_domination(grid)[1]
        else:  # every subset
            best = None
            for mask in range(1 << len(cells)):
                pick = [cells[i] for i in range(len(cells)) if mask >> i & 1]
                if len({x for cell in pick for x in _closed(n, m, *cell)}) == n * m:
                    cost = sum(grid[r][c] for r, c in pick)
                    if best is None or cost < best[0]:
                        best = (cost, pick)
            assert best is not None
            chosen = best[1]
        return ", ".join(f"({r + 1}, {c + 1})" for r, c in sorted(chosen))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        cells = read_cells(answer)
        return ", ".join(f"({r}, {c})" for r, c in cells[1:]) or "(0, 0)"
