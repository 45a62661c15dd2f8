"""Logic puzzles, part 2: grid puzzles (Sudoku of growing size, N-queens with fixed queens).

Both verifiers check the rules, not the stored grid: any completed Sudoku that keeps the givens
and any non-attacking placement that keeps the fixed queens earns full reward; otherwise RLVE's
(satisfied/all)^5 over the rule units (rows, columns, boxes / queen pairs).
"""

from __future__ import annotations

import itertools
import random
import re
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    invalid,
    parse_int,
    parse_int_list,
    satisfied_verdict,
)
from verirl.types import Problem, Verdict

# ---- Sudoku --------------------------------------------------------------------------------


def box_shape(difficulty: int) -> tuple[int, int]:
    """Box rows × columns: 2×2, 2×3, 3×3, 3×4, 4×4, ... one step every four levels."""
    level = difficulty // 4
    return 2 + level // 2, 2 + (level + 1) // 2


def _units(n: int, r: int, c: int) -> list[list[tuple[int, int]]]:
    rows = [[(i, j) for j in range(n)] for i in range(n)]
    cols = [[(i, j) for i in range(n)] for j in range(n)]
    boxes = [
        [(bi * r + i, bj * c + j) for i in range(r) for j in range(c)]
        for bi in range(c)
        for bj in range(r)
    ]
    return rows + cols + boxes


def _full_grid(rng: random.Random, r: int, c: int) -> list[list[int]]:
    """A random valid grid: the shifted base pattern under symbol, row and column shuffles."""
    n = r * c
    symbols = list(range(1, n + 1))
    rng.shuffle(symbols)
    bands = rng.sample(range(c), c)  # c bands of r rows each
    rows = [b * r + i for b in bands for i in rng.sample(range(r), r)]
    stacks = rng.sample(range(r), r)  # r stacks of c columns each
    cols = [s * c + j for s in stacks for j in rng.sample(range(c), c)]
    return [[symbols[(c * (row % r) + row // r + col) % n] for col in cols] for row in rows]


def parse_grid(text: str, n: int) -> list[list[int]]:
    """Rows separated by semicolons/newlines/``\\\\``; entries by spaces or commas (for
    n <= 9 a row may also be written as one run of digits)."""
    if len(text) > (len(str(n)) + 3) * n * n + 1000:
        raise ValueError("answer too long")
    rows = [row for row in re.split(r"[;\n]|\\\\", text.strip().strip("[]")) if row.strip()]
    grid = []
    for row in rows:
        cells = [t for t in re.split(r"[\s,|\[\]]+", row) if t]
        if n <= 9 and len(cells) == 1 and len(cells[0]) == n:
            cells = list(cells[0])
        grid.append([parse_int(t) for t in cells])
    return grid


@ENVIRONMENTS.register("sudoku")
class Sudoku(Environment):
    """Complete a Sudoku keeping its givens; (valid rows, columns, boxes/all)^5 credit.

    The answer is the numbers of the empty cells only, in reading order (the whole grid is
    accepted too): with the full grid as the answer, a large Sudoku was mostly transcription
    (1,038 answer tokens at d = 20, nearly every cell given), so the answer length now
    follows the cells to be deduced, and the share of empty cells grows with the level."""

    tags = ("logic",)
    difficulty_scales = (
        "grid side r*c with boxes 2x2, 2x3, 3x3, ... (one step every 4 levels); "
        "empty share 0.3 + 0.1*(d % 4) + 0.01*d (at most 0.65)"
    )
    size_measure = "number of empty cells to deduce"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        r, c = box_shape(difficulty)
        n = r * c
        full = _full_grid(rng, r, c)
        share = min(0.65, 0.3 + 0.1 * (difficulty % 4) + 0.01 * difficulty)
        blanks = max(2, round(share * n * n))
        puzzle = [row[:] for row in full]
        for cell in rng.sample(range(n * n), blanks):
            puzzle[cell // n][cell % n] = 0
        shown = "\n".join(" ".join(str(v) if v else "." for v in row) for row in puzzle)
        prompt = (
            f"Fill in this {n}x{n} Sudoku. Every row, every column and every {r}x{c} box (the "
            f"grid is cut into boxes of {r} rows and {c} columns from the top-left corner) must "
            f"contain each of the numbers 1 to {n} exactly once. Empty cells are shown as "
            f"'.'.\n{shown}\n\nThere are {blanks} empty cells. Give only the numbers you put "
            "into the empty cells, in reading order (row by row from the top, left to right "
            "within a row), separated by spaces."
        )
        answer = " ".join(str(full[i][j]) for i in range(n) for j in range(n) if not puzzle[i][j])
        return Instance(prompt, answer, {"r": r, "c": c, "puzzle": puzzle})

    @staticmethod
    def _empty(puzzle: list[list[int]]) -> list[tuple[int, int]]:
        return [(i, j) for i, row in enumerate(puzzle) for j, v in enumerate(row) if not v]

    def check(self, problem: Problem, answer: str) -> Verdict:
        r, c, puzzle = problem.data["r"], problem.data["c"], problem.data["puzzle"]
        n = r * c
        empty = self._empty(puzzle)
        rows = parse_grid(answer, n)
        if len(rows) == n and all(len(row) == n for row in rows):
            grid = rows  # the whole completed grid
            if any(puzzle[i][j] and puzzle[i][j] != grid[i][j] for i in range(n) for j in range(n)):
                return invalid("the answer changes a given number")
        else:
            flat = [v for row in rows for v in row]
            if len(flat) != len(empty):
                return invalid(f"give exactly {len(empty)} numbers, one per empty cell")
            grid = [list(row) for row in puzzle]
            for (i, j), v in zip(empty, flat, strict=True):
                grid[i][j] = v
        if any(v < 1 or v > n for row in grid for v in row):
            return invalid(f"every cell must hold a number from 1 to {n}")
        units = _units(n, r, c)
        good = sum(1 for u in units if len({grid[i][j] for i, j in u}) == n)
        return satisfied_verdict(good, len(units), "rows/columns/boxes repeat a number")

    def _solved_grid(self, problem: Problem) -> list[list[int]]:
        """Backtracking on the cell with the fewest candidates."""
        r, c = problem.data["r"], problem.data["c"]
        n = r * c
        grid = [list(row) for row in problem.data["puzzle"]]

        def candidates(i: int, j: int) -> set[int]:
            bi, bj = i - i % r, j - j % c
            used = set(grid[i]) | {grid[k][j] for k in range(n)}
            used |= {grid[bi + a][bj + b] for a in range(r) for b in range(c)}
            return set(range(1, n + 1)) - used

        def search() -> bool:
            empty = [(i, j) for i in range(n) for j in range(n) if not grid[i][j]]
            if not empty:
                return True
            options = [(candidates(i, j), i, j) for i, j in empty]
            cand, i, j = min(options, key=lambda t: len(t[0]))
            for v in sorted(cand):
                grid[i][j] = v
                if search():
                    return True
            grid[i][j] = 0
            return False

        search()
        return grid

    def solve(self, problem: Problem) -> str:
        grid = self._solved_grid(problem)
        return " ".join(str(grid[i][j]) for i, j in self._empty(problem.data["puzzle"]))

    def surface_forms(self, problem: Problem) -> list[str]:
        values = self.solve(problem).split()
        grid = self._solved_grid(problem)
        rows = [" ".join(map(str, row)) for row in grid]
        return [" ".join(values), ", ".join(values), "; ".join(rows), "\n".join(rows)]

    def near_misses(self, problem: Problem) -> list[str]:
        values = self.solve(problem).split()
        rng = random.Random(f"sudoku/near-miss/{problem.difficulty}/{problem.seed}")
        # a changed cell repeats a number of its row; one number short is not a completion
        return [self.corrupt(problem, " ".join(values), rng), " ".join(values[:-1])]

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        n = problem.data["r"] * problem.data["c"]
        values = self.solve(problem).split()
        k = rng.randrange(len(values))
        values[k] = str(int(values[k]) % n + 1)  # that cell now repeats a number of its row
        return " ".join(values)

    def size(self, problem: Problem) -> float:
        return float(sum(1 for row in problem.data["puzzle"] for v in row if not v))


# ---- N-queens ------------------------------------------------------------------------------


def constructive_queens(n: int) -> list[int]:
    """An explicit N-queens solution for n >= 4 (0-based column of the queen in each row)."""
    evens, odds = list(range(2, n + 1, 2)), list(range(1, n + 1, 2))
    if n % 6 == 2:
        odds = [3, 1, *[x for x in odds if x not in (1, 3, 5)], 5]
    elif n % 6 == 3:
        evens = [*evens[1:], 2]
        odds = [*odds[2:], 1, 3]
    return [x - 1 for x in evens + odds]


def queens_ok(cols: list[int]) -> bool:
    return all(
        cols[i] != cols[j] and abs(cols[i] - cols[j]) != j - i
        for i, j in itertools.combinations(range(len(cols)), 2)
    )


def _random_queens(rng: random.Random, n: int) -> list[int]:
    """A random N-queens solution: min-conflicts search, constructive fallback."""
    cols = list(range(n))
    rng.shuffle(cols)
    count_c, count_a, count_b = [0] * n, [0] * (2 * n), [0] * (2 * n)

    def bump(row: int, col: int, delta: int) -> None:
        count_c[col] += delta
        count_a[row + col] += delta
        count_b[row - col + n] += delta

    for row, col in enumerate(cols):
        bump(row, col, 1)
    for _ in range(100 * n):
        bad = [
            row
            for row, col in enumerate(cols)
            if count_c[col] + count_a[row + col] + count_b[row - col + n] > 3
        ]
        if not bad:
            return cols
        row = rng.choice(bad)
        bump(row, cols[row], -1)
        costs = [count_c[k] + count_a[row + k] + count_b[row - k + n] for k in range(n)]
        cols[row] = rng.choice([k for k in range(n) if costs[k] == min(costs)])
        bump(row, cols[row], 1)
    base = constructive_queens(n)
    return base[::-1] if rng.random() < 0.5 else [n - 1 - x for x in base]


@ENVIRONMENTS.register("n_queens")
class NQueens(Environment):
    """Non-attacking queens including fixed ones; (rules met/all)^5 credit."""

    size_measure = "board side"
    answer_kind = "integer_list"
    tags = ("logic",)
    difficulty_scales = "board side: 4 + d//2; fixed queens: 0 at d = 0, then min(1 + d//8, n//4)"

    @staticmethod
    def _fixed_count(difficulty: int, n: int) -> int:
        return 0 if difficulty == 0 else min(1 + difficulty // 8, n // 4)

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty // 2
        cols = _random_queens(rng, n)
        count = self._fixed_count(difficulty, n)
        fixed = sorted([row, cols[row]] for row in rng.sample(range(n), count))
        rule = ""
        if fixed:
            places = ", ".join(f"(row {a + 1}, column {b + 1})" for a, b in fixed)
            rule = f" Queens must stand at these squares: {places}."
        prompt = (
            f"Place {n} queens on a chessboard with {n} rows and {n} columns (both numbered 1 "
            f"to {n}) so that no two queens attack each other: no two share a row, a column or "
            f"a diagonal.{rule} Give the column of the queen in row 1, row 2, ..., row {n}, in "
            "this order, separated by commas."
        )
        return Instance(prompt, ", ".join(str(x + 1) for x in cols), {"n": n, "fixed": fixed})

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, fixed = problem.data["n"], problem.data["fixed"]
        cols = [x - 1 for x in parse_int_list(answer)]
        if len(cols) != n:
            return invalid(f"expected {n} columns, one per row")
        if any(x < 0 or x >= n for x in cols):
            return invalid(f"columns are numbered 1 to {n}")
        pairs = list(itertools.combinations(range(n), 2))
        good = sum(1 for i, j in pairs if cols[i] != cols[j] and abs(cols[i] - cols[j]) != j - i)
        good += sum(1 for row, col in fixed if cols[row] == col)
        total = len(pairs) + len(fixed)
        return satisfied_verdict(good, total, "rules are broken")

    def solve(self, problem: Problem) -> str:
        """Row-by-row backtracking that respects the fixed queens."""
        n = problem.data["n"]
        forced: dict[int, Any] = {row: col for row, col in problem.data["fixed"]}
        cols: list[int] = []

        def place(row: int) -> bool:
            if row == n:
                return True
            for col in [forced[row]] if row in forced else range(n):
                if all(col != c and abs(col - c) != row - r for r, c in enumerate(cols)):
                    cols.append(col)
                    if place(row + 1):
                        return True
                    cols.pop()
            return False

        place(0)
        return ", ".join(str(x + 1) for x in cols)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        cols = answer.split(", ")
        cols[1] = cols[0]  # two queens in one column
        return ", ".join(cols)

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])

    def problem_space(self, difficulty: int) -> int | None:
        """The sets of fixed queens some solution has (the board side is fixed by the
        difficulty), counted over every solution while the board is at most 8 wide: 1 at
        d = 0, 8 at d = 1, 25 for the 5-board, 24 for the 6-board, 49 for the 7-board."""
        n = 4 + difficulty // 2
        if n > 8:
            return None
        count = self._fixed_count(difficulty, n)
        fixed = {
            tuple((row, cols[row]) for row in rows)
            for cols in _all_queens(n)
            for rows in itertools.combinations(range(n), count)
        }
        return len(fixed) if len(fixed) < 1000 else None


def _all_queens(n: int) -> list[tuple[int, ...]]:
    """Every N-queens solution (the column of each row), by backtracking."""
    out: list[tuple[int, ...]] = []

    def place(cols: tuple[int, ...]) -> None:
        row = len(cols)
        if row == n:
            out.append(cols)
            return
        for col in range(n):
            if all(col != c and abs(col - c) != row - r for r, c in enumerate(cols)):
                place((*cols, col))

    place(())
    return out
