"""Counting and optimising on small grids: domino tilings of a board with holes, proper
colourings with some cells fixed, the fewest presses in Lights Out, non-attacking rooks on a
board with forbidden cells and non-attacking kings.

Grid rows in the spirit of RLVE-Gym (Zeng et al. 2025, "RLVE: Scaling Up Reinforcement
Learning for Language Models with Adaptive Verifiable Environments", arXiv:2511.07317,
Appendix A: GridColoringCounting, QueenPlacement, Minimum_DominatingSet_Grid). Each
generator runs one transfer-matrix or linear-algebra method and ``solve_int`` another (a
cell-by-cell broken profile against whole-row transfers; GF(2) elimination against chasing
the lights down from every first-row choice; brute force on small boards), so the contract
tests cross-check them. Answers are integers scored with RLVE's (min/max)^10.
"""

from __future__ import annotations

import functools
import itertools
import math
import random

from verirl.envs.base import ENVIRONMENTS, Instance
from verirl.envs.kit.answers import SizedInteger
from verirl.types import Problem

TAGS = ("grids", "counting")


def _board(rows: list[str]) -> str:
    return "\n".join(rows)


# ---- domino tilings ---------------------------------------------------------------------------
def _blocked_board(rng: random.Random, h: int, w: int, q: float) -> list[str]:
    cells = [["#" if rng.random() < q else "." for _ in range(w)] for _ in range(h)]
    free = [(i, j) for i in range(h) for j in range(w) if cells[i][j] == "."]
    if len(free) % 2:
        i, j = rng.choice(free)
        cells[i][j] = "#"
    return ["".join(r) for r in cells]


def _tilings_profile(board: list[str]) -> int:
    """Cell by cell in row-major order; bit j of the profile: cell j of the next w cells is
    already covered by a vertical domino from above (or a horizontal one from the left)."""
    h, w = len(board), len(board[0])
    ways = {0: 1}
    for i in range(h):
        for j in range(w):
            new: dict[int, int] = {}
            for mask, c in ways.items():
                covered = mask & 1
                rest = mask >> 1
                if board[i][j] == "#" or covered:
                    if board[i][j] == "#" and covered:
                        continue
                    new[rest] = new.get(rest, 0) + c
                    continue
                # vertical: covers (i+1, j), which is w cells ahead -> bit w-1 of rest
                if i + 1 < h and board[i + 1][j] == ".":
                    m = rest | 1 << (w - 1)
                    new[m] = new.get(m, 0) + c
                # horizontal: covers (i, j+1) -> bit 0 of rest
                if j + 1 < w and board[i][j + 1] == "." and not rest & 1:
                    m = rest | 1
                    new[m] = new.get(m, 0) + c
            ways = new
    return ways.get(0, 0)


def _tilings_rows(board: list[str]) -> int:
    """Row transfers: from the set of cells of row i already covered from above, fill row i
    with horizontal dominoes and vertical ones sticking into row i + 1."""
    h, w = len(board), len(board[0])

    def fills(i: int, above: int) -> list[int]:
        out: list[int] = []

        def go(j: int, down: int) -> None:
            if j == w:
                out.append(down)
                return
            if board[i][j] == "#" or above >> j & 1:
                if board[i][j] == "#" and above >> j & 1:
                    return
                go(j + 1, down)
                return
            if i + 1 < h and board[i + 1][j] == ".":
                go(j + 1, down | 1 << j)
            if j + 1 < w and board[i][j + 1] == "." and not above >> (j + 1) & 1:
                go(j + 2, down)

        go(0, 0)
        return out

    ways = {0: 1}
    for i in range(h):
        new: dict[int, int] = {}
        for above, c in ways.items():
            for down in fills(i, above):
                new[down] = new.get(down, 0) + c
        ways = new
    return ways.get(0, 0)


@ENVIRONMENTS.register("domino_tiling_count")
class DominoTilingCount(SizedInteger):
    """Tilings of a board with holes by 1 × 2 dominoes."""

    tags = TAGS
    difficulty_scales = "board (3 + d//5) × (4 + d//3), at most 5 × 12; 0-30% holes"
    size_measure = "number of cells"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        h, w = min(5, 3 + difficulty // 5), min(12, 4 + difficulty // 3)
        board = _blocked_board(
            rng,
            h,
            w,
            rng.choice([0.1, 0.2, 0.3]) if difficulty < 5 else rng.choice([0.0, 0.1, 0.2]),
        )
        prompt = (
            f"A board has {h} rows and {w} columns; '.' is a free cell and '#' a hole:\n"
            f"{_board(board)}\nIn how many ways can all free cells be covered by dominoes "
            "(each domino covers two free cells that share a side; dominoes do not overlap "
            "and never cover a hole)?"
        )
        return Instance(prompt, str(_tilings_profile(board)), {"board": board, "size": h * w})

    def solve_int(self, problem: Problem) -> int:
        return _tilings_rows(problem.data["board"])


# ---- proper colourings with fixed cells ----------------------------------------------------
@ENVIRONMENTS.register("grid_coloring_counting")
class GridColoringCounting(SizedInteger):
    """Colourings of a grid with k colours, neighbours different, some cells fixed."""

    tags = TAGS
    difficulty_scales = "grid (2 + d//8) × (4 + d//2), at most 3 × 14; k = 3..4 colours; 25% fixed"
    size_measure = "number of cells"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        h, w, k = min(3, 2 + difficulty // 8), min(14, 4 + difficulty // 2), rng.randint(3, 4)
        fixed = [["." for _ in range(w)] for _ in range(h)]
        for i in range(h):
            for j in range(w):
                if rng.random() < 0.25:
                    fixed[i][j] = str(rng.randrange(k))
        rows = ["".join(r) for r in fixed]
        prompt = (
            f"Colour every cell of a grid with {h} rows and {w} columns using the colours 0 to "
            f"{k - 1}, so that cells sharing a side get different colours. Some cells already "
            f"have their colour (a digit); '.' cells are free:\n{_board(rows)}\nHow many such "
            "colourings are there?"
        )
        # column transfers over all valid column colourings
        cols = []
        for j in range(w):
            cols.append(
                [
                    c
                    for c in itertools.product(range(k), repeat=h)
                    if all(c[i] != c[i + 1] for i in range(h - 1))
                    and all(rows[i][j] == "." or int(rows[i][j]) == c[i] for i in range(h))
                ]
            )
        ways = {c: 1 for c in cols[0]}
        for j in range(1, w):
            ways = {
                c: sum(v for p, v in ways.items() if all(a != b for a, b in zip(p, c, strict=True)))
                for c in cols[j]
            }
        return Instance(prompt, str(sum(ways.values())), {"rows": rows, "k": k, "size": h * w})

    def solve_int(self, problem: Problem) -> int:
        """Cell by cell down each column in turn; the state is the colours of the last h
        cells (the column so far and the rest of the previous one)."""
        rows, k = problem.data["rows"], problem.data["k"]
        h, w = len(rows), len(rows[0])
        ways: dict[tuple[int, ...], int] = {(): 1}
        for j in range(w):
            for i in range(h):
                new: dict[tuple[int, ...], int] = {}
                for state, c in ways.items():
                    for colour in range(k):
                        if rows[i][j] != "." and int(rows[i][j]) != colour:
                            continue
                        if len(state) >= h and state[-h] == colour:  # the cell to the left
                            continue
                        if i > 0 and state[-1] == colour:  # the cell above
                            continue
                        key = (*state, colour)[-h:]
                        new[key] = new.get(key, 0) + c
                ways = new
        return sum(ways.values())


# ---- Lights Out -----------------------------------------------------------------------------
def _press_effect(h: int, w: int, i: int, j: int) -> int:
    mask = 0
    for a, b in ((i, j), (i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1)):
        if 0 <= a < h and 0 <= b < w:
            mask |= 1 << (a * w + b)
    return mask


@ENVIRONMENTS.register("lights_out_min_presses")
class LightsOutMinPresses(SizedInteger):
    """The fewest presses that switch every light off (a press toggles a cell and its
    neighbours)."""

    tags = ("grids", "puzzles", "linear_algebra")
    difficulty_scales = "grid (3 + d//5) × (3 + d//3), at most 7 × 10; planted presses"
    size_measure = "number of cells"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        h, w = min(7, 3 + difficulty // 5), min(10, 3 + difficulty // 3)
        state = 0
        while state == 0:
            for i in range(h):
                for j in range(w):
                    if rng.random() < 0.3:
                        state ^= _press_effect(h, w, i, j)
        rows = [
            "".join("1" if state >> (i * w + j) & 1 else "0" for j in range(w)) for i in range(h)
        ]
        prompt = (
            f"A grid of lights has {h} rows and {w} columns (1 = on, 0 = off):\n{_board(rows)}\n"
            "Pressing a light toggles it and the lights directly above, below, left and right "
            "of it. What is the smallest number of presses that switches all lights off?"
        )
        return Instance(
            prompt, str(self._by_elimination(h, w, state)), {"rows": rows, "size": h * w}
        )

    @staticmethod
    def _by_elimination(h: int, w: int, state: int) -> int:
        """Solve P·x = state over GF(2); the fewest presses is the lightest solution
        x0 + (null space), enumerated (the null space of these grids is small)."""
        n = h * w
        rows = [(_press_effect(h, w, c // w, c % w), c) for c in range(n)]  # symmetric matrix
        eqs = [[_press_effect(h, w, r // w, r % w), state >> r & 1] for r in range(n)]
        pivots: list[tuple[int, int, int]] = []  # (pivot column, row mask, rhs)
        del rows
        for mask, rhs in eqs:
            for col, pm, pr in pivots:
                if mask >> col & 1:
                    mask ^= pm
                    rhs ^= pr
            if mask:
                col = mask.bit_length() - 1
                pivots = [
                    (c, pm ^ mask, pr ^ rhs) if pm >> col & 1 else (c, pm, pr)
                    for c, pm, pr in pivots
                ]
                pivots.append((col, mask, rhs))
        pivot_cols = {c for c, _, _ in pivots}
        free = [c for c in range(n) if c not in pivot_cols]
        best = n + 1
        for choice in range(1 << len(free)):
            x = 0
            for t, c in enumerate(free):
                if choice >> t & 1:
                    x |= 1 << c
            for col, pm, pr in pivots:
                bit = pr ^ ((pm & x & ~(1 << col)).bit_count() & 1)
                x |= bit << col
            best = min(best, x.bit_count())
        return best

    def solve_int(self, problem: Problem) -> int:
        """Choose the first row's presses; every later row is forced (press under each light
        still on); keep the choices that leave the last row dark."""
        rows = problem.data["rows"]
        h, w = len(rows), len(rows[0])
        start = [[int(c) for c in r] for r in rows]
        best = None
        for first in range(1 << w):
            grid = [r[:] for r in start]
            presses = 0
            for i in range(h):
                for j in range(w):
                    press = (first >> j & 1) if i == 0 else grid[i - 1][j]
                    if press:
                        presses += 1
                        for a, b in ((i, j), (i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1)):
                            if 0 <= a < h and 0 <= b < w:
                                grid[a][b] ^= 1
            if not any(grid[h - 1]) and (best is None or presses < best):
                best = presses
        assert best is not None
        return best


# ---- rooks -----------------------------------------------------------------------------------
@ENVIRONMENTS.register("rook_placement_counting")
class RookPlacementCounting(SizedInteger):
    """Ways to put k rooks on the free cells of a board, no two in one row or column."""

    tags = TAGS
    difficulty_scales = "board n × n with n = min(8, 4 + d//3); k up to n; 20-40% forbidden"
    size_measure = "number of cells"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(8, 4 + difficulty // 3)
        q = rng.choice([0.2, 0.3, 0.4])
        board = ["".join("#" if rng.random() < q else "." for _ in range(n)) for _ in range(n)]
        k = rng.randint(2, n)
        prompt = (
            f"On this {n} × {n} board, '.' cells are free and '#' cells are forbidden:\n"
            f"{_board(board)}\nIn how many ways can {k} identical rooks be placed on free "
            "cells so that no two share a row or a column?"
        )
        ways = {0: 1}  # column mask -> ways, row by row
        for row in board:
            new = dict(ways)  # leave this row empty
            for mask, c in ways.items():
                for j, cell in enumerate(row):
                    if cell == "." and not mask >> j & 1:
                        new[mask | 1 << j] = new.get(mask | 1 << j, 0) + c
            ways = new
        answer = sum(c for mask, c in ways.items() if mask.bit_count() == k)
        return Instance(prompt, str(answer), {"board": board, "k": k, "size": n * n})

    def solve_int(self, problem: Problem) -> int:
        """Choose the k rows, then count systems of distinct free columns (a permanent)."""
        board, k = problem.data["board"], problem.data["k"]
        n = len(board)
        total = 0
        for chosen in itertools.combinations(range(n), k):

            @functools.cache
            def place(t: int, used: int, chosen: tuple[int, ...] = chosen) -> int:
                if t == len(chosen):
                    return 1
                row = board[chosen[t]]
                return sum(
                    place(t + 1, used | 1 << j)
                    for j in range(n)
                    if row[j] == "." and not used >> j & 1
                )

            total += place(0, 0)
        return total


# ---- kings -----------------------------------------------------------------------------------
@ENVIRONMENTS.register("king_placement_counting")
class KingPlacementCounting(SizedInteger):
    """Ways to put k kings on a board with holes, no two attacking (touching)."""

    tags = TAGS
    difficulty_scales = (
        "board (3 + d//6) × (4 + d//4), at most 6 × 8; 20% holes; k up to a sixth of the cells"
    )
    size_measure = "number of cells"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        h, w = min(6, 3 + difficulty // 6), min(8, 4 + difficulty // 4)
        board = ["".join("#" if rng.random() < 0.2 else "." for _ in range(w)) for _ in range(h)]
        k = rng.randint(2, max(2, math.ceil(h / 2) * math.ceil(w / 2) * 2 // 3))
        prompt = (
            f"On this board with {h} rows and {w} columns, '.' cells are free and '#' cells "
            f"are holes:\n{_board(board)}\nIn how many ways can {k} identical kings be placed "
            "on free cells so that no two kings are in cells that touch (sharing a side or a "
            "corner)?"
        )

        # row transfers: row masks with no two adjacent kings, on free cells
        def row_masks(row: str) -> list[int]:
            return [
                m
                for m in range(1 << w)
                if not m & (m >> 1) and all(row[j] == "." for j in range(w) if m >> j & 1)
            ]

        ways: dict[tuple[int, int], int] = {(0, 0): 1}  # (previous row mask, kings) -> ways
        for row in board:
            new: dict[tuple[int, int], int] = {}
            for (prev, used), c in ways.items():
                for m in row_masks(row):
                    if m & (prev | prev << 1 | prev >> 1) or used + m.bit_count() > k:
                        continue
                    key = (m, used + m.bit_count())
                    new[key] = new.get(key, 0) + c
            ways = new
        answer = sum(c for (_, used), c in ways.items() if used == k)
        return Instance(prompt, str(answer), {"board": board, "k": k, "size": h * w})

    def solve_int(self, problem: Problem) -> int:
        """Cell by cell; the state is which of the last w + 1 cells hold a king."""
        board, k = problem.data["board"], problem.data["k"]
        h, w = len(board), len(board[0])
        ways: dict[tuple[int, int], int] = {(0, 0): 1}  # (window bits, kings); bit 0 = latest cell
        for i in range(h):
            for j in range(w):
                new: dict[tuple[int, int], int] = {}
                for (window, used), c in ways.items():
                    shifted = (window << 1) & ((1 << (w + 1)) - 1)
                    new[(shifted, used)] = new.get((shifted, used), 0) + c  # no king here
                    if board[i][j] != "." or used == k:
                        continue
                    left = j > 0 and window & 1
                    up = i > 0 and window >> (w - 1) & 1
                    up_left = i > 0 and j > 0 and window >> w & 1
                    up_right = i > 0 and j + 1 < w and window >> (w - 2) & 1
                    if not (left or up or up_left or up_right):
                        key = (shifted | 1, used + 1)
                        new[key] = new.get(key, 0) + c
                ways = new
        return sum(c for (_, used), c in ways.items() if used == k)
