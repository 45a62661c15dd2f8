"""Grids, part 1: a shortest maze walk, a maximum-weight set of non-adjacent cells, and the
most bombs with no two in sight of each other.

Rows Maze, MaximumIndependentSetGrid and MaxNoConflictingBombs of the RLVE catalogue (Zeng et
al., *RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable
Environments*, arXiv:2511.07317). Verifiers replay the walk or check the cells against the
grid, then grade against the optimum: (gold/length)^3 for the walk, (answer/gold)^3 for the
selections. Optima come from breadth-first search, a minimum cut (the grid is bipartite) and a
bipartite matching of row and column segments; ``solve`` uses a different algorithm.
"""

from __future__ import annotations

import functools
import random
import re
from collections import deque

import networkx as nx

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    ratio_reward,
)
from verirl.envs.kit.graphs import parse_pairs
from verirl.envs.kit.size_ladder import grown
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict

TAGS = ("rlve", "grids")
_MOVES = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}


def grid_side(start: int, difficulty: int, cap: int) -> int:
    return grown(start, difficulty, cap)


def read_cells(answer: str) -> list[tuple[int, int]]:
    """``(0, 1), (2, 3)`` / ``0 1, 2 3`` / ``0,1; 2,3`` → cell pairs (row, column)."""
    text = normalize.clean(answer)
    if not text.strip():
        return []
    return parse_pairs(text.replace(";", ","))


class _GridEnv(Environment):
    tags = TAGS
    size_measure = "cells of the grid"

    def size(self, problem: Problem) -> float:
        grid = problem.data["grid"]
        return float(len(grid) * len(grid[0]))


def _cells_ok(cells: list[tuple[int, int]], n: int, m: int) -> Verdict | None:
    if len(set(cells)) != len(cells):
        return invalid("a cell is listed twice")
    if any(not (0 <= r < n and 0 <= c < m) for r, c in cells):
        return invalid("a cell is outside the grid")
    return None


# ---- maze --------------------------------------------------------------------------------
@ENVIRONMENTS.register("maze")
class Maze(_GridEnv):
    """A shortest walk through a maze from the top-left to the bottom-right cell, as moves
    U/D/L/R; (shortest/length)^3 credit, a walk through a wall or off target is invalid."""

    difficulty_scales = "N = 5 then int(1.1·N + 1) per level (at most 40); up to N extra openings"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grid_side(5, difficulty, 40)
        grid = [["#"] * n for _ in range(n)]
        start = (2 * rng.randrange((n + 1) // 2), 2 * rng.randrange((n + 1) // 2))
        stack, grid[start[0]][start[1]] = [start], "."
        while stack:  # randomised depth-first carving on the even lattice, then widen
            r, c = stack[-1]
            options = [
                (r + 2 * dr, c + 2 * dc)
                for dr, dc in _MOVES.values()
                if 0 <= r + 2 * dr < n
                and 0 <= c + 2 * dc < n
                and grid[r + 2 * dr][c + 2 * dc] == "#"
            ]
            if not options:
                stack.pop()
                continue
            nr, nc = rng.choice(options)
            grid[(r + nr) // 2][(c + nc) // 2] = grid[nr][nc] = "."
            stack.append((nr, nc))
        for _ in range(rng.randint(0, n)):
            grid[rng.randrange(n)][rng.randrange(n)] = "."
        grid[n - 1][n - 1] = "."
        if n % 2 == 0:  # the corner is off the carved lattice: join it to (n-2, n-2)
            grid[n - 2][n - 1] = "."
        rows = ["".join(row) for row in grid]
        prompt = (
            f"You are given a {n}×{n} grid representing a maze (rows numbered 0 to {n - 1} from "
            "top to bottom, columns 0 to {0} from left to right). '.' is an open cell and '#' a "
            "wall:\n{1}\n\nFind a shortest walk from the top-left cell (0, 0) to the "
            "bottom-right cell ({0}, {0}) that moves one step at a time up (U), down (D), left "
            "(L) or right (R) through open cells only. Output the moves as one string of "
            "letters U, D, L, R (for example RRDD); if several walks are shortest, any of them "
            "is accepted."
        ).format(n - 1, "\n".join(rows))
        data = {"grid": rows}
        return Instance(prompt, self._path(rows), data)

    @staticmethod
    def _path(rows: list[str]) -> str:
        """Moves of a shortest walk, by BFS from the target (parents point towards it)."""
        n, m = len(rows), len(rows[0])
        goal = (n - 1, m - 1)
        step: dict[tuple[int, int], str] = {goal: ""}
        queue = deque([goal])
        back = {"U": "D", "D": "U", "L": "R", "R": "L"}
        while queue:
            r, c = queue.popleft()
            for move, (dr, dc) in _MOVES.items():
                nr, nc = r + dr, c + dc
                if 0 <= nr < n and 0 <= nc < m and rows[nr][nc] == "." and (nr, nc) not in step:
                    step[(nr, nc)] = back[move]
                    queue.append((nr, nc))
        out, cell = [], (0, 0)
        while cell != goal:
            move = step[cell]
            out.append(move)
            cell = (cell[0] + _MOVES[move][0], cell[1] + _MOVES[move][1])
        return "".join(out)

    def check(self, problem: Problem, answer: str) -> Verdict:
        rows = problem.data["grid"]
        n, m = len(rows), len(rows[0])
        moves = re.sub(r"[\s,;\->]", "", normalize.clean(answer)).upper()
        if not moves or len(moves) > 4 * n * m or set(moves) - set(_MOVES):
            return invalid("the answer must be a string of the letters U, D, L and R")
        r, c = 0, 0
        for move in moves:
            r, c = r + _MOVES[move][0], c + _MOVES[move][1]
            if not (0 <= r < n and 0 <= c < m) or rows[r][c] != ".":
                return invalid("the walk leaves the grid or enters a wall")
        if (r, c) != (n - 1, m - 1):
            return invalid("the walk does not end at the bottom-right cell")
        best = _bfs_distance(rows)
        assert best is not None
        return graded(
            ratio_reward(best, len(moves), 3.0), len(moves) == best, "a shorter walk exists"
        )

    def solve(self, problem: Problem) -> str:
        return self._path(problem.data["grid"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer[:-1] or "U"  # stops one short (or walks off the grid)


def _bfs_distance(grid: list[list[str]] | list[str]) -> int | None:
    n, m = len(grid), len(grid[0])
    dist = {(0, 0): 0}
    queue = deque([(0, 0)])
    while queue:
        r, c = queue.popleft()
        if (r, c) == (n - 1, m - 1):
            return dist[(r, c)]
        for dr, dc in _MOVES.values():
            nr, nc = r + dr, c + dc
            if 0 <= nr < n and 0 <= nc < m and grid[nr][nc] == "." and (nr, nc) not in dist:
                dist[(nr, nc)] = dist[(r, c)] + 1
                queue.append((nr, nc))
    return None


# ---- maximum-weight independent set of grid cells ----------------------------------------
def _grid_mis_by_cut(grid: list[list[int]]) -> tuple[int, list[tuple[int, int]]]:
    """Max weight of non-adjacent cells = total − min vertex cover, a minimum s–t cut with the
    black cells (r + c even) on the source side; the independent set is read off the cut."""
    n, m = len(grid), len(grid[0])
    g = nx.DiGraph()
    g.add_nodes_from(("s", "t"))
    for r in range(n):
        for c in range(m):
            if (r + c) % 2 == 0:
                g.add_edge("s", (r, c), capacity=grid[r][c])
                for dr, dc in _MOVES.values():
                    nr, nc = r + dr, c + dc
                    if 0 <= nr < n and 0 <= nc < m:
                        g.add_edge((r, c), (nr, nc))  # infinite capacity
            else:
                g.add_edge((r, c), "t", capacity=grid[r][c])
    cut, (source_side, _) = nx.minimum_cut(g, "s", "t")
    total = sum(map(sum, grid))
    chosen = [
        (r, c) for r in range(n) for c in range(m) if ((r + c) % 2 == 0) == ((r, c) in source_side)
    ]
    return total - cut, chosen


@ENVIRONMENTS.register("maximum_independent_set_grid")
class MaximumIndependentSetGrid(_GridEnv):
    """Cells of a weighted grid, no two sharing an edge, with the largest total;
    (sum/gold)^3 credit, adjacent cells are invalid."""

    difficulty_scales = "N, M up to 3 then int(1.1·x + 1) per level (at most 16); values 1..9"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = grid_side(3, difficulty, 16)
        n, m = rng.randint(2, top), rng.randint(2, top)
        grid = [[rng.randint(1, 9) for _ in range(m)] for _ in range(n)]
        shown = "\n".join(" ".join(map(str, row)) for row in grid)
        prompt = (
            f"You are given a matrix of size {n} × {m} (rows and columns numbered from 0):\n"
            f"{shown}\n\nSelect some cells such that no two selected cells are adjacent (i.e., no "
            "two selected cells share a horizontal or vertical edge), making the sum of the "
            "selected values as large as possible. Output the selected cells as (row, column) "
            "pairs separated by commas, e.g. (0, 1), (2, 3); if several selections are optimal, "
            "any of them is accepted."
        )
        chosen = _grid_mis_by_cut(grid)[1]
        return Instance(prompt, ", ".join(f"({r}, {c})" for r, c in chosen), {"grid": grid})

    def check(self, problem: Problem, answer: str) -> Verdict:
        grid = problem.data["grid"]
        cells = read_cells(answer)
        bad = _cells_ok(cells, len(grid), len(grid[0]))
        if bad:
            return bad
        picked = set(cells)
        if any((r + dr, c + dc) in picked for r, c in cells for dr, dc in ((0, 1), (1, 0))):
            return invalid("two selected cells are adjacent")
        got = sum(grid[r][c] for r, c in cells)
        best = _grid_mis_by_cut(grid)[0]
        return graded(ratio_reward(got, best, 3.0), got == best, "a heavier selection exists")

    def solve(self, problem: Problem) -> str:
        grid = problem.data["grid"]
        if min(len(grid), len(grid[0])) > 8:
            chosen = _grid_mis_by_cut(grid)[1]
        else:
            chosen = _grid_mis_by_profile(grid)
        return ", ".join(f"({r}, {c})" for r, c in chosen)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return "(0, 0), (0, 1)"  # adjacent


def _grid_mis_by_profile(grid: list[list[int]]) -> list[tuple[int, int]]:
    """Row-mask DP over the narrow side (no two chosen in a row adjacent, none above)."""
    transpose = len(grid[0]) > len(grid)
    g = [list(col) for col in zip(*grid, strict=True)] if transpose else grid
    n, m = len(g), len(g[0])
    masks = [x for x in range(1 << m) if x & (x >> 1) == 0]
    value = [[sum(g[r][c] for c in range(m) if x >> c & 1) for x in masks] for r in range(n)]

    @functools.cache
    def best(r: int, prev: int) -> int:
        if r == n:
            return 0
        return max(value[r][i] + best(r + 1, x) for i, x in enumerate(masks) if not x & prev)

    out, prev = [], 0
    for r in range(n):
        i = max(
            (i for i, x in enumerate(masks) if not x & prev),
            key=lambda i: value[r][i] + best(r + 1, masks[i]),
        )
        prev = masks[i]
        out += [(r, c) for c in range(m) if prev >> c & 1]
    best.cache_clear()
    return sorted((c, r) for r, c in out) if transpose else out


# ---- bombs that do not see each other ----------------------------------------------------
def _segments(rows: list[str]) -> tuple[dict[tuple[int, int], int], dict[tuple[int, int], int]]:
    """Row and column segment ids of every cell (segments are cut by hard walls '#')."""
    n, m = len(rows), len(rows[0])
    row_seg, col_seg, k = {}, {}, 0
    for r in range(n):
        for c in range(m):
            if rows[r][c] == "#":
                continue
            if c == 0 or rows[r][c - 1] == "#":
                k += 1
            row_seg[(r, c)] = k
    for c in range(m):
        for r in range(n):
            if rows[r][c] == "#":
                continue
            if r == 0 or rows[r - 1][c] == "#":
                k += 1
            col_seg[(r, c)] = k
    return row_seg, col_seg


@ENVIRONMENTS.register("max_no_conflicting_bombs")
class MaxNoConflictingBombs(_GridEnv):
    """As many bombs as possible on '*' cells, no two in the same row or column unless a hard
    wall '#' lies between them; (bombs/gold)^3 credit."""

    difficulty_scales = "N, M up to 3 then int(1.1·x + 1) per level (at most 30)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = grid_side(3, difficulty, 30)
        n, m = rng.randint(2, top), rng.randint(2, top)
        rows = [
            "".join(rng.choices("#x*", weights=[2, 2, 6])[0] for _ in range(m)) for _ in range(n)
        ]
        if "*" not in "".join(rows):
            rows[0] = "*" + rows[0][1:]
        prompt = (
            f"You are given a {n} × {m} grid (rows and columns numbered from 0). Each cell "
            "contains one of the following characters: '#' (a hard wall), 'x' (a soft stone) "
            "or '*' (an empty cell):\n" + "\n".join(rows) + "\n\nPlace bombs on empty cells "
            "('*') only. A bomb blasts along its row and its column until a hard wall; soft "
            "stones do not stop the blast. No two bombs may be in each other's blast (the same "
            "row or column with no hard wall between them). Place as many bombs as possible. "
            "Output their cells as (row, column) pairs separated by commas; if several "
            "placements are optimal, any of them is accepted."
        )
        data = {"grid": rows}
        return Instance(prompt, self._kuhn(rows), data)

    @staticmethod
    def _kuhn(rows: list[str]) -> str:
        """Augmenting paths between row segments and column segments (own implementation)."""
        row_seg, col_seg = _segments(rows)
        adj: dict[int, list[tuple[int, tuple[int, int]]]] = {}
        for cell, rs in row_seg.items():
            if rows[cell[0]][cell[1]] == "*":
                adj.setdefault(rs, []).append((col_seg[cell], cell))
        owner: dict[int, tuple[int, tuple[int, int]]] = {}

        def augment(rs: int, seen: set[int]) -> bool:
            for cs, cell in adj.get(rs, []):
                if cs not in seen:
                    seen.add(cs)
                    if cs not in owner or augment(owner[cs][0], seen):
                        owner[cs] = (rs, cell)
                        return True
            return False

        for rs in adj:
            augment(rs, set())
        return ", ".join(f"({r}, {c})" for _, (r, c) in sorted(owner.values(), key=lambda t: t[1]))

    def check(self, problem: Problem, answer: str) -> Verdict:
        rows = problem.data["grid"]
        cells = read_cells(answer)
        bad = _cells_ok(cells, len(rows), len(rows[0]))
        if bad:
            return bad
        if any(rows[r][c] != "*" for r, c in cells):
            return invalid("a bomb is not on an empty cell")
        row_seg, col_seg = _segments(rows)
        if len({row_seg[x] for x in cells}) < len(cells) or len({col_seg[x] for x in cells}) < len(
            cells
        ):
            return invalid("two bombs are in each other's blast")
        g = nx.Graph()
        tops = {("r", row_seg[x]) for x in row_seg if rows[x[0]][x[1]] == "*"}
        g.add_nodes_from(tops)
        g.add_edges_from(
            (("r", row_seg[x]), ("c", col_seg[x])) for x in row_seg if rows[x[0]][x[1]] == "*"
        )
        best = len(nx.bipartite.hopcroft_karp_matching(g, top_nodes=tops)) // 2
        return graded(ratio_reward(len(cells), best, 3.0), len(cells) == best, "more bombs fit")

    def solve(self, problem: Problem) -> str:
        return self._kuhn(problem.data["grid"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        first = answer.split("), ")[0].strip("()")
        return f"({first}), ({first})"  # the same cell twice
