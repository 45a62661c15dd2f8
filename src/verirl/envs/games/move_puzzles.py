"""Puzzles solved by a sequence of moves: rotating 2 × 2 blocks of a digit grid into a
target, clearing a grid of moles with one fixed-size hammer, and swapping neighbours until
equal pairs vanish.

RLVE-Gym rows TwiddlePuzzle, WhackAMole and TetrisAttack (Zeng et al. 2025, "RLVE: Scaling
Up Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A). The rotation sequence is simulated (any sequence within the
move limit that reaches the target is accepted; partial credit (matching cells/all)^5); the
hammer count is an exact value (binary); the swap sequence is simulated and scored
(gold/answer)^5, the optimum being the greedy count (checked against breadth-first search in
the tests).
"""

from __future__ import annotations

import itertools
import math
import random
from collections import deque

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    IntegerAnswer,
    graded,
    invalid,
    optimum_verdict,
    parse_int_list,
)
from verirl.envs.kit.grids import grid_lines
from verirl.envs.kit.wording import plural
from verirl.types import Problem, Verdict

TAGS = ("rlve", "puzzle")

Grid = tuple[tuple[int, ...], ...]


def _rotate(grid: Grid, i: int, j: int) -> Grid:
    """Turn the 2 × 2 block with top-left corner (i, j) clockwise."""
    g = [list(r) for r in grid]
    a, b, c, d = g[i][j], g[i][j + 1], g[i + 1][j + 1], g[i + 1][j]
    g[i][j], g[i][j + 1], g[i + 1][j + 1], g[i + 1][j] = d, a, b, c
    return tuple(tuple(r) for r in g)


@ENVIRONMENTS.register("twiddle_puzzle")
class TwiddlePuzzle(Environment):
    """At most L clockwise 2 × 2 rotations that turn grid A into grid B."""

    tags = TAGS
    answer_kind = "text"
    difficulty_scales = "3 × 3 grid (3 × 4 from d 6); L = 1 + d//3 moves (at most 6)"
    size_measure = "move limit L times block positions"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = 3, 3 if difficulty < 6 else 4
        moves = min(6, 1 + difficulty // 3)
        start: Grid = tuple(tuple(rng.randint(0, 9) for _ in range(m)) for _ in range(n))
        grid, ops = start, []
        for _ in range(moves):
            i, j = rng.randrange(n - 1), rng.randrange(m - 1)
            grid = _rotate(grid, i, j)
            ops.append((i, j))
        if grid == start:
            return self._generate(difficulty, rng)
        prompt = (
            f"You are given a {n} × {m} grid of digits:\n{grid_lines(start)}\nA move (i, j) with "
            f"0 ≤ i ≤ {n - 2} and 0 ≤ j ≤ {m - 2} rotates the 2 × 2 block whose top-left cell is "
            "in row i and column j (both counted from 0) clockwise by 90 degrees: the top-left "
            "digit moves to the top-right, top-right to bottom-right, bottom-right to "
            "bottom-left and bottom-left to top-left. Using at most "
            f"{plural(moves, 'move')}, turn the grid "
            f'into\n{grid_lines(grid)}\nGive the moves in order as pairs, e.g. "(0, 1), (1, 0)".'
        )
        data = {
            "start": [list(r) for r in start],
            "target": [list(r) for r in grid],
            "moves": moves,
        }
        return Instance(prompt, ", ".join(f"({i}, {j})" for i, j in ops), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        n, m = len(d["start"]), len(d["start"][0])
        text = answer.replace("(", " ").replace(")", " ").strip()
        flat = parse_int_list(text) if text else []
        if len(flat) % 2 or len(flat) > 2 * d["moves"]:
            return invalid(f"give at most {d['moves']} moves as pairs (i, j)")
        grid: Grid = tuple(tuple(r) for r in d["start"])
        for i, j in zip(flat[::2], flat[1::2], strict=True):
            if not (0 <= i < n - 1 and 0 <= j < m - 1):
                return invalid(f"moves need 0 ≤ i ≤ {n - 2} and 0 ≤ j ≤ {m - 2}")
            grid = _rotate(grid, i, j)
        target = d["target"]
        same = sum(grid[r][c] == target[r][c] for r in range(n) for c in range(m))
        ok = same == n * m
        return graded(
            (same / (n * m)) ** 5, ok, "correct" if ok else "the grid does not match the target"
        )

    def solve(self, problem: Problem) -> str:
        """Breadth-first search from the start grid, up to the move limit."""
        d = problem.data
        n, m = len(d["start"]), len(d["start"][0])
        start: Grid = tuple(tuple(r) for r in d["start"])
        target: Grid = tuple(tuple(r) for r in d["target"])
        prev: dict[Grid, tuple[Grid, tuple[int, int]] | None] = {start: None}
        queue = deque([(start, 0)])
        while queue:
            grid, depth = queue.popleft()
            if grid == target:
                ops = []
                while prev[grid] is not None:
                    grid, op = prev[grid]  # type: ignore[misc]
                    ops.append(op)
                return ", ".join(f"({i}, {j})" for i, j in reversed(ops))
            if depth < d["moves"]:
                for i in range(n - 1):
                    for j in range(m - 1):
                        nxt = _rotate(grid, i, j)
                        if nxt not in prev:
                            prev[nxt] = (grid, (i, j))
                            queue.append((nxt, depth + 1))
        return ""

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return f"({len(problem.data['start'])}, 0)"  # out of the grid

    def size(self, problem: Problem) -> float:
        d = problem.data
        return float(d["moves"] * (len(d["start"]) - 1) * (len(d["start"][0]) - 1))


@ENVIRONMENTS.register("whack_a_mole")
class WhackAMole(IntegerAnswer):
    """Choose one hammer size r × c; each hit removes a mole from every cell of an r × c
    block, and may only hit blocks whose cells all still hold a mole. The fewest hits that
    clear the grid (binary reward)."""

    tags = TAGS
    difficulty_scales = "N, M in 2..3 + d//3 (at most 10); up to 2 hits per anchor"
    size_measure = "cells of the grid"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = (rng.randint(2, min(10, 3 + difficulty // 3)) for _ in range(2))
        r, c = rng.randint(1, n), rng.randint(1, m)
        grid = [[0] * m for _ in range(n)]
        for i in range(n - r + 1):
            for j in range(m - c + 1):
                hits = rng.choice([0, 0, 1, 2])
                for a in range(i, i + r):
                    for b in range(j, j + c):
                        grid[a][b] += hits
        if not any(map(any, grid)):
            grid[0][0] = 1
        prompt = (
            f"You are given an {n} × {m} grid; each cell holds the number of moles in that hole:\n"
            f"{grid_lines(grid)}\nYou pick one hammer size r × c (1 ≤ r ≤ {n}, 1 ≤ c ≤ {m}) and "
            "keep it. Each hit covers an r × c block of cells inside the grid and removes one "
            "mole from every cell of the block; a hit is only allowed when every cell of the "
            "block still holds at least one mole. What is the smallest number of hits that "
            "removes all the moles?"
        )
        return Instance(prompt, str(_fewest_hits(grid)), {"grid": grid})

    def solve_int(self, problem: Problem) -> int:
        """For each size, clear the cells in reading order: the first non-empty cell can only
        be the top-left corner of its hits."""
        grid = problem.data["grid"]
        n, m = len(grid), len(grid[0])
        total = sum(map(sum, grid))
        best = total  # the 1 × 1 hammer always works
        for r in range(1, n + 1):
            for c in range(1, m + 1):
                if total % (r * c) or total // (r * c) >= best:
                    continue
                g = [row[:] for row in grid]
                ok = True
                for i in range(n):
                    for j in range(m):
                        h = g[i][j]
                        if h == 0:
                            continue
                        if h < 0 or i + r > n or j + c > m:
                            ok = False
                            break
                        for a in range(i, i + r):
                            for b in range(j, j + c):
                                g[a][b] -= h
                    if not ok:
                        break
                if ok:
                    best = total // (r * c)
        return best

    binary = True  # RLVE's row is binary
    wrong_detail = "the number of hits is not right"

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["grid"]) * len(problem.data["grid"][0]))


def _fewest_hits(grid: list[list[int]]) -> int:
    """Per hammer size, a 2D difference array of the hits placed so far."""
    n, m = len(grid), len(grid[0])
    best = None
    for r in range(1, n + 1):
        for c in range(1, m + 1):
            diff = [[0] * (m + 1) for _ in range(n + 1)]
            hits, ok = 0, True
            for i in range(n):
                for j in range(m):
                    applied = _prefix(diff, i, j)  # hits covering (i, j) so far
                    need = grid[i][j] - applied
                    if need < 0 or (need and (i + r > n or j + c > m)):
                        ok = False
                        break
                    if need:
                        hits += need
                        diff[i][j] += need
                        diff[i + r][j] -= need
                        diff[i][j + c] -= need
                        diff[i + r][j + c] += need
                if not ok:
                    break
            if ok and (best is None or hits < best):
                best = hits
    return best if best is not None else 0


def _prefix(diff: list[list[int]], i: int, j: int) -> int:
    return sum(diff[a][b] for a in range(i + 1) for b in range(j + 1))


def _settle(a: list[int]) -> list[int]:
    """Remove adjacent equal pairs until none is left (each value occurs twice, so the order
    of removals does not matter)."""
    out: list[int] = []
    for x in a:  # a stack pass is the same reduction
        if out and out[-1] == x:
            out.pop()
        else:
            out.append(x)
    return out


@ENVIRONMENTS.register("tetris_attack")
class TetrisAttack(Environment):
    """Swap neighbours until equal neighbours vanish and the array is empty, in as few swaps
    as possible: (gold/answer)^5 for a sequence that clears it."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "N = 3 + d values, each twice"
    size_measure = "values N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        while True:
            a = list(range(n)) * 2
            rng.shuffle(a)
            if all(x != y for x, y in itertools.pairwise(a)):
                break
        prompt = (
            f"There is an array A of length {2 * n} containing each integer from 0 to {n - 1} "
            f"exactly twice: {' '.join(map(str, a))}\nA swap at position i exchanges the "
            "elements at positions i and i + 1 of the current array (positions count from 0). "
            "Whenever two equal elements become adjacent, both are removed and the array closes "
            "up, which may make two other equal elements adjacent and remove them too. Remove "
            "all elements with as few swaps as possible. Give the positions of the swaps in "
            "order (each position refers to the array as it is at that moment), separated by "
            "commas."
        )
        return Instance(prompt, ", ".join(map(str, _tetris_greedy(a))), {"a": a})

    def check(self, problem: Problem, answer: str) -> Verdict:
        a = problem.data["a"]
        ops = parse_int_list(answer) if answer.strip() else []
        if len(ops) > len(a) ** 2:
            return invalid("far too many swaps")
        cur = _settle(list(a))
        for i in ops:
            if not 0 <= i < len(cur) - 1:
                return invalid("a swap position is outside the current array")
            cur[i], cur[i + 1] = cur[i + 1], cur[i]
            cur = _settle(cur)
        if cur:
            return invalid("the swaps do not remove every element")
        best = len(_tetris_greedy(a))
        return optimum_verdict(len(ops), best, "fewer swaps suffice", minimise=True)

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, _tetris_greedy(problem.data["a"])))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return ", ".join(answer.split(", ")[:-1])

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["a"]) // 2)

    def problem_space(self, difficulty: int) -> int | None:
        """Arrangements of two copies of 0..N-1 with no equal neighbours (inclusion–exclusion
        over the pairs glued together)."""
        n = 3 + difficulty
        total = sum(
            (-1) ** k * math.comb(n, k) * math.factorial(2 * n - k) // 2 ** (n - k)
            for k in range(n + 1)
        )
        return min(10**9, total)


def _tetris_greedy(a: list[int]) -> list[int]:
    """Take the first element whose partner appears earlier and move it up next to the
    partner (the cost is the number of elements between them); repeat."""
    cur, ops = _settle(list(a)), []
    while cur:
        seen: dict[int, int] = {}
        for j, x in enumerate(cur):
            if x in seen:
                break
            seen[x] = j
        i = seen[cur[j]]
        while j > i + 1:
            cur[j - 1], cur[j] = cur[j], cur[j - 1]
            ops.append(j - 1)
            j -= 1
            after = _settle(cur)
            if len(after) != len(cur):
                break
        cur = _settle(cur)
    return ops
