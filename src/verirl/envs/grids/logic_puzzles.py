"""Grid puzzles: Binario (Takuzu), balanced 0/1 matrices, Kakurasu, parity matrices and
Futoshiki (RLVE catalogue rows, Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning
for Language Models with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A).

The answer is the filled grid, one row per line (digits may also be separated by spaces or
commas, or given row after row). Verifiers check the rules, so every valid filling earns full
reward, not only the planted one; changing a given cell, a value out of range or a grid of the
wrong shape is invalid (−0.5). Partial credit is RLVE's (satisfied/all)^β over the rules
(rows, columns, windows, clues), β as in each row; the balanced-matrix row is binary.
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
    satisfied_reward,
)
from verirl.envs.kit.grids import grid_lines, read_grid
from verirl.types import Problem, Verdict

TAGS = ("rlve", "puzzles")
Grid = list[list[int]]


def _verdict(good: int, total: int, beta: float, unmet: str) -> Verdict:
    ok = good == total
    return graded(
        satisfied_reward(good, total, beta), ok, "correct" if ok else f"{total - good} {unmet}"
    )


class _GridPuzzle(Environment):
    tags = TAGS
    size_measure = "number of cells"

    def size(self, problem: Problem) -> float:
        return float(problem.data["rows"] * problem.data["cols"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        """Drop the last row: a grid of the wrong shape (invalid)."""
        return answer.rsplit("\n", 1)[0]

    def surface_forms(self, problem: Problem) -> list[str]:
        grid = [list(row) for row in self.solve(problem).split("\n")]
        return [
            grid_lines(grid, ""),
            grid_lines(grid, " "),
            " \\\\ ".join(" & ".join(row) for row in grid),
            "[" + ", ".join("[" + ", ".join(row) + "]" for row in grid) + "]",
        ]


# ---- Binario -------------------------------------------------------------------------------
def _line_patterns(length: int, triples: bool) -> list[tuple[int, ...]]:
    """Every balanced 0/1 line of ``length`` (no three equal in a row when ``triples``)."""
    out: list[tuple[int, ...]] = []

    def extend(prefix: list[int], ones: int) -> None:
        k = len(prefix)
        if k == length:
            out.append(tuple(prefix))
            return
        for v in (0, 1):
            count = ones + v if v else k - ones + 1
            if count > length // 2:
                continue
            if triples and k >= 2 and prefix[-1] == prefix[-2] == v:
                continue
            prefix.append(v)
            extend(prefix, ones + v)
            prefix.pop()

    extend([], 0)
    return out


def _fill_binario(
    rows: int,
    cols: int,
    triples: bool,
    given: Grid | None,
    rng: random.Random | None,
    budget: int = 10**9,
) -> Grid | None:
    """Row-by-row depth-first filling from the valid row patterns (tried in random order
    when ``rng``); None when it fails or runs out of ``budget`` tried rows."""
    patterns = _line_patterns(cols, triples)
    chosen: list[tuple[int, ...]] = []
    ones = [0] * cols
    left = [budget]

    def fits(row: tuple[int, ...], r: int) -> bool:
        for c in range(cols):
            if given is not None and given[r][c] >= 0 and given[r][c] != row[c]:
                return False
            count = ones[c] + row[c] if row[c] else r - ones[c] + 1
            if count > rows // 2:
                return False
            if triples and r >= 2 and chosen[-1][c] == chosen[-2][c] == row[c]:
                return False
        return True

    def place(r: int) -> bool:
        if r == rows:
            return True
        order = list(patterns)
        if rng is not None:
            rng.shuffle(order)
        for row in order:
            left[0] -= 1
            if left[0] < 0:
                return False
            if fits(row, r):
                chosen.append(row)
                for c in range(cols):
                    ones[c] += row[c]
                if place(r + 1):
                    return True
                chosen.pop()
                for c in range(cols):
                    ones[c] -= row[c]
        return False

    return [list(row) for row in chosen] if place(0) else None


class _Binario(_GridPuzzle):
    triples: bool = True

    def _dims(self, difficulty: int) -> tuple[int, int]:
        raise NotImplementedError

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        rows, cols = self._dims(difficulty)
        full = self._full_grid(rows, cols, rng)
        hide = min(0.75, 0.4 + 0.02 * difficulty)
        given = [[-1 if rng.random() < hide else v for v in row] for row in full]
        shown = grid_lines([["*" if v < 0 else v for v in row] for row in given], "")
        rules = (
            f"each row contains exactly {cols // 2} zeros and {cols // 2} ones, and each column "
            f"contains exactly {rows // 2} zeros and {rows // 2} ones"
        )
        if self.triples:
            rules += "; no three consecutive cells in a row or in a column hold the same digit"
        prompt = (
            f"You are given a {rows} × {cols} grid. Each cell holds 0, 1 or * (* is empty):\n"
            f"{shown}\n\nReplace every * by 0 or 1 (keeping the given digits) so that {rules}. "
            f"Give the filled grid as {rows} lines of {cols} digits."
        )
        data = {"rows": rows, "cols": cols, "given": given}
        return Instance(prompt, grid_lines(full, ""), data)

    def _full_grid(self, rows: int, cols: int, rng: random.Random) -> Grid:
        full = None
        while full is None:
            full = _fill_binario(rows, cols, self.triples, None, rng, budget=20_000)
        return full

    def rule_counts(self, grid: Grid) -> tuple[int, int]:
        rows, cols = len(grid), len(grid[0])
        good = sum(1 for row in grid if sum(row) * 2 == cols)
        good += sum(1 for c in range(cols) if sum(grid[r][c] for r in range(rows)) * 2 == rows)
        total = rows + cols
        if self.triples:
            for r, c in itertools.product(range(rows), range(cols)):
                if c + 2 < cols:
                    total += 1
                    good += len({grid[r][c], grid[r][c + 1], grid[r][c + 2]}) > 1
                if r + 2 < rows:
                    total += 1
                    good += len({grid[r][c], grid[r + 1][c], grid[r + 2][c]}) > 1
        return good, total

    def filled(self, problem: Problem, answer: str) -> Grid | Verdict:
        d = problem.data
        grid = read_grid(answer, d["rows"], d["cols"], single_digits=True)
        for r, c in itertools.product(range(d["rows"]), range(d["cols"])):
            if grid[r][c] not in (0, 1):
                return invalid("every cell must be 0 or 1")
            if d["given"][r][c] >= 0 and grid[r][c] != d["given"][r][c]:
                return invalid("a given digit was changed")
        return grid

    def solve(self, problem: Problem) -> str:
        d = problem.data
        grid = _fill_binario(d["rows"], d["cols"], self.triples, d["given"], None)
        return grid_lines(grid or [], "")


@ENVIRONMENTS.register("binario")
class Binario(_Binario):
    """Binario (Takuzu): balanced rows and columns, no three equal digits in a line (RLVE
    Binario). Reward (satisfied rules / all)^10 over rows, columns and 3-cell windows."""

    difficulty_scales = "grid 2(2 + d//8) × 2(2 + d//7); hidden share 0.4 + 0.02d (≤ 0.75)"

    def _dims(self, difficulty: int) -> tuple[int, int]:
        return 2 * (2 + difficulty // 8), 2 * (2 + difficulty // 7)

    def check(self, problem: Problem, answer: str) -> Verdict:
        grid = self.filled(problem, answer)
        if isinstance(grid, Verdict):
            return grid
        good, total = self.rule_counts(grid)
        return _verdict(good, total, 10, "rules are broken")


@ENVIRONMENTS.register("binario_no_adjacency_requirement")
class BinarioNoAdjacencyRequirement(_Binario):
    """A balanced 0/1 matrix (every row and column half zeros) completing given cells, with no
    adjacency rule (RLVE Binario_NoAdjacencyRequirement); right or wrong."""

    difficulty_scales = "grid 2(2 + d//5) × 2(2 + d//4); hidden share 0.4 + 0.02d (≤ 0.75)"
    triples = False

    def _dims(self, difficulty: int) -> tuple[int, int]:
        return 2 * (2 + difficulty // 5), 2 * (2 + difficulty // 4)

    def _full_grid(self, rows: int, cols: int, rng: random.Random) -> Grid:
        """A random balanced matrix: a checkerboard scrambled by 2 × 2 switches, which keep
        every row and column sum."""
        grid = [[(r + c) % 2 for c in range(cols)] for r in range(rows)]
        for _ in range(4 * rows * cols):
            r1, r2 = rng.sample(range(rows), 2)
            c1, c2 = rng.sample(range(cols), 2)
            if grid[r1][c1] == grid[r2][c2] != grid[r1][c2] == grid[r2][c1]:
                for r, c in ((r1, c1), (r2, c2), (r1, c2), (r2, c1)):
                    grid[r][c] ^= 1
        return grid

    def check(self, problem: Problem, answer: str) -> Verdict:
        grid = self.filled(problem, answer)
        if isinstance(grid, Verdict):
            return grid
        good, total = self.rule_counts(grid)
        ok = good == total
        return graded(0.0, ok, "correct" if ok else "some rows or columns are not balanced")


# ---- Kakurasu ------------------------------------------------------------------------------
@ENVIRONMENTS.register("kakurasu")
class Kakurasu(_GridPuzzle):
    """Kakurasu: a 0/1 grid where the column numbers (1-based) of a row's 1s add up to the
    row clue and the row numbers of a column's 1s to the column clue (RLVE Kakurasu). Reward
    (clues met / all)^10; ``solve`` backtracks row by row over subsets with the row's sum."""

    difficulty_scales = "grid (3 + d//3) × (3 + d//4)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        rows, cols = 3 + difficulty // 3, 3 + difficulty // 4
        grid = [[int(rng.random() < 0.45) for _ in range(cols)] for _ in range(rows)]
        row_sums = [sum(c + 1 for c in range(cols) if grid[r][c]) for r in range(rows)]
        col_sums = [sum(r + 1 for r in range(rows) if grid[r][c]) for c in range(cols)]
        prompt = (
            f"Fill a {rows} × {cols} grid (rows and columns numbered from 1) with 0s and 1s so "
            "that for every row i, the sum of the column numbers j of the cells holding 1 in "
            "row i equals R[i], and for every column j, the sum of the row numbers i of the "
            f"cells holding 1 in column j equals C[j].\nR = {row_sums}\nC = {col_sums}\n\nGive "
            f"the grid as {rows} lines of {cols} digits."
        )
        data = {"rows": rows, "cols": cols, "row_sums": row_sums, "col_sums": col_sums}
        return Instance(prompt, grid_lines(grid, ""), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        rows, cols = d["rows"], d["cols"]
        grid = read_grid(answer, rows, cols, single_digits=True)
        if any(v not in (0, 1) for row in grid for v in row):
            return invalid("every cell must be 0 or 1")
        good = sum(
            1
            for r in range(rows)
            if sum(c + 1 for c in range(cols) if grid[r][c]) == d["row_sums"][r]
        )
        good += sum(
            1
            for c in range(cols)
            if sum(r + 1 for r in range(rows) if grid[r][c]) == d["col_sums"][c]
        )
        return _verdict(good, rows + cols, 10, "clues are not met")

    def solve(self, problem: Problem) -> str:
        d = problem.data
        rows, cols = d["rows"], d["cols"]
        by_sum: dict[int, list[tuple[int, ...]]] = {}
        for bits in itertools.product((0, 1), repeat=cols):
            by_sum.setdefault(sum(c + 1 for c in range(cols) if bits[c]), []).append(bits)
        col_left = list(d["col_sums"])
        chosen: list[tuple[int, ...]] = []

        def place(r: int) -> bool:
            if r == rows:
                return not any(col_left)
            for bits in by_sum.get(d["row_sums"][r], []):
                if all(col_left[c] >= (r + 1) * bits[c] for c in range(cols)):
                    for c in range(cols):
                        col_left[c] -= (r + 1) * bits[c]
                    chosen.append(bits)
                    if place(r + 1):
                        return True
                    chosen.pop()
                    for c in range(cols):
                        col_left[c] += (r + 1) * bits[c]
            return False

        place(0)
        return grid_lines([list(b) for b in chosen], "")


# ---- parity matrix -------------------------------------------------------------------------
def _parity(grid: Grid) -> Grid:
    rows, cols = len(grid), len(grid[0])
    out = [[0] * cols for _ in range(rows)]
    for r, c in itertools.product(range(rows), range(cols)):
        s = grid[r][c]
        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            if 0 <= r + dr < rows and 0 <= c + dc < cols:
                s += grid[r + dr][c + dc]
        out[r][c] = s % 2
    return out


@ENVIRONMENTS.register("grid_parity_construction")
class GridParityConstruction(_GridPuzzle):
    """A 0/1 matrix whose parity matrix (each cell plus its up to four neighbours, mod 2) is
    given (RLVE GridParityConstruction). Reward (cells whose parity matches / all)^5;
    ``solve``: Gaussian elimination over GF(2)."""

    difficulty_scales = "grid (3 + d//3) × (3 + d//4)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        rows, cols = 3 + difficulty // 3, 3 + difficulty // 4
        grid = [[rng.randint(0, 1) for _ in range(cols)] for _ in range(rows)]
        parity = _parity(grid)
        prompt = (
            f"The parity matrix P of a {rows} × {cols} 0/1 matrix A has P[i][j] = (A[i][j] plus "
            "the entries of A directly above, below, left and right of (i, j) that exist) mod "
            f"2. Construct a 0/1 matrix A whose parity matrix is:\n{grid_lines(parity, '')}\n\n"
            f"Give A as {rows} lines of {cols} digits."
        )
        return Instance(
            prompt, grid_lines(grid, ""), {"rows": rows, "cols": cols, "parity": parity}
        )

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        grid = read_grid(answer, d["rows"], d["cols"], single_digits=True)
        if any(v not in (0, 1) for row in grid for v in row):
            return invalid("every cell must be 0 or 1")
        got = _parity(grid)
        good = sum(
            1
            for r, c in itertools.product(range(d["rows"]), range(d["cols"]))
            if got[r][c] == d["parity"][r][c]
        )
        return _verdict(good, d["rows"] * d["cols"], 5, "cells have the wrong parity")

    def solve(self, problem: Problem) -> str:
        d = problem.data
        rows, cols = d["rows"], d["cols"]
        n = rows * cols
        eqs = []
        for r, c in itertools.product(range(rows), range(cols)):
            row = 1 << (r * cols + c) | d["parity"][r][c] << n
            for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= r + dr < rows and 0 <= c + dc < cols:
                    row |= 1 << ((r + dr) * cols + c + dc)
            eqs.append(row)
        pivots: list[tuple[int, int]] = []
        for col in range(n):
            pick = next((i for i in range(len(pivots), n) if eqs[i] >> col & 1), None)
            if pick is None:
                continue
            top = len(pivots)
            eqs[top], eqs[pick] = eqs[pick], eqs[top]
            for i in range(n):
                if i != top and eqs[i] >> col & 1:
                    eqs[i] ^= eqs[top]
            pivots.append((top, col))
        x = [0] * n
        for i, col in pivots:
            x[col] = eqs[i] >> n & 1
        return grid_lines([x[r * cols : (r + 1) * cols] for r in range(rows)], "")


# ---- Futoshiki -----------------------------------------------------------------------------
@ENVIRONMENTS.register("futoshiki_puzzle")
class FutoshikiPuzzle(_GridPuzzle):
    """Futoshiki: complete a Latin square (each of 1..N once per row and column) respecting
    given cells and inequalities between cells (RLVE FutoshikiPuzzle). Reward (rules met /
    all)^5 over rows, columns and inequalities; ``solve`` backtracks."""

    difficulty_scales = "N = 3 + d//3; givens ≈ N²/3; inequalities ≈ N + d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty // 3
        rows, cols, syms = list(range(n)), list(range(n)), list(range(1, n + 1))
        rng.shuffle(rows)
        rng.shuffle(cols)
        rng.shuffle(syms)
        square = [[syms[(rows[r] + cols[c]) % n] for c in range(n)] for r in range(n)]
        cells = list(itertools.product(range(n), range(n)))
        shown = set(rng.sample(cells, max(1, n * n // 3)))
        given = [[square[r][c] if (r, c) in shown else 0 for c in range(n)] for r in range(n)]
        pairs = [((r, c), (r, c + 1)) for r in range(n) for c in range(n - 1)]
        pairs += [((r, c), (r + 1, c)) for r in range(n - 1) for c in range(n)]
        less = []
        for a, b in rng.sample(pairs, min(len(pairs), n + difficulty)):
            lo, hi = (a, b) if square[a[0]][a[1]] < square[b[0]][b[1]] else (b, a)
            less.append([lo[0], lo[1], hi[0], hi[1]])
        lines = "\n".join(f"cell ({a}, {b}) < cell ({c}, {d})" for a, b, c, d in less)
        prompt = (
            f"You are given a {n} × {n} grid (rows and columns numbered from 0); 0 marks an "
            f"empty cell:\n{grid_lines(given, ' ')}\n\n"
            f"Fill every empty cell with an integer from 1 to {n} so that each row and each "
            f"column contains each of 1..{n} exactly once, the "
            "given numbers stay, and these inequalities hold (cell (i, j) is row i, column "
            f"j):\n{lines}\n\nGive the grid as {n} lines of {n} numbers separated by spaces."
        )
        data = {"rows": n, "cols": n, "given": given, "less": less}
        return Instance(prompt, grid_lines(square, " "), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        n = d["rows"]
        grid = read_grid(answer, n, n, single_digits=n <= 9)
        for r, c in itertools.product(range(n), range(n)):
            if not 1 <= grid[r][c] <= n:
                return invalid(f"every cell must hold an integer from 1 to {n}")
            if d["given"][r][c] and grid[r][c] != d["given"][r][c]:
                return invalid("a given number was changed")
        good = sum(1 for row in grid if len(set(row)) == n)
        good += sum(1 for c in range(n) if len({grid[r][c] for r in range(n)}) == n)
        good += sum(1 for a, b, c, e in d["less"] if grid[a][b] < grid[c][e])
        return _verdict(good, 2 * n + len(d["less"]), 5, "rules are broken")

    def solve(self, problem: Problem) -> str:
        d = problem.data
        n = d["rows"]
        grid = [list(row) for row in d["given"]]
        less = [((a, b), (c, e)) for a, b, c, e in d["less"]]

        def fits(r: int, c: int, v: int) -> bool:
            if any(grid[r][j] == v for j in range(n) if j != c):
                return False
            if any(grid[i][c] == v for i in range(n) if i != r):
                return False
            for lo, hi in less:
                x, y = grid[lo[0]][lo[1]], grid[hi[0]][hi[1]]
                if (lo == (r, c) and y and not v < y) or (hi == (r, c) and x and not x < v):
                    return False
            return True

        empty = [(r, c) for r in range(n) for c in range(n) if not grid[r][c]]

        def place(k: int) -> bool:
            if k == len(empty):
                return True
            r, c = empty[k]
            for v in range(1, n + 1):
                if fits(r, c, v):
                    grid[r][c] = v
                    if place(k + 1):
                        return True
            grid[r][c] = 0
            return False

        place(0)
        return grid_lines(grid, " ")

    def surface_forms(self, problem: Problem) -> list[str]:
        rows = [row.split(" ") for row in self.solve(problem).split("\n")]
        return [
            grid_lines(rows, " "),
            "; ".join(", ".join(row) for row in rows),
            " \\\\ ".join(" & ".join(row) for row in rows),
        ]


# ---- Hitori --------------------------------------------------------------------------------
def _hitori_rules(values: Grid, shade: Grid) -> tuple[int, int]:
    """(rules met, rules): each row and column without a repeated unshaded number, each pair
    of neighbouring cells not both shaded, and the unshaded cells connected (one rule)."""
    rows, cols = len(values), len(values[0])
    good = total = 0
    for line in [[(r, c) for c in range(cols)] for r in range(rows)] + [
        [(r, c) for r in range(rows)] for c in range(cols)
    ]:
        kept = [values[r][c] for r, c in line if not shade[r][c]]
        total += 1
        good += len(kept) == len(set(kept))
    for r, c in itertools.product(range(rows), range(cols)):
        for x, y in ((r + 1, c), (r, c + 1)):
            if x < rows and y < cols:
                total += 1
                good += not (shade[r][c] and shade[x][y])
    open_cells = [(r, c) for r in range(rows) for c in range(cols) if not shade[r][c]]
    seen = set(open_cells[:1])
    stack = list(seen)
    while stack:
        r, c = stack.pop()
        for x, y in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if (x, y) not in seen and 0 <= x < rows and 0 <= y < cols and not shade[x][y]:
                seen.add((x, y))
                stack.append((x, y))
    total += 1
    good += bool(open_cells) and len(seen) == len(open_cells)
    return good, total


@ENVIRONMENTS.register("hitori_puzzle")
class HitoriPuzzle(_GridPuzzle):
    """Hitori: shade cells so that no number repeats among the unshaded cells of a row or
    column, no two shaded cells touch, and the unshaded cells are connected (RLVE
    HitoriPuzzle). Reward (rules met / all)^10. ``solve``: backtracking over the cells whose
    number repeats in their row or column (the others never need shading)."""

    difficulty_scales = "grid (4 + d//4) × (4 + d//4); about a fifth of the cells shaded"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        rows = cols = 4 + difficulty // 4
        size = max(rows, cols)
        perm_r, perm_c, syms = list(range(size)), list(range(size)), list(range(1, size + 1))
        for xs in (perm_r, perm_c, syms):
            rng.shuffle(xs)
        values = [[syms[(perm_r[r] + perm_c[c]) % size] for c in range(cols)] for r in range(rows)]
        shade = [[0] * cols for _ in range(rows)]
        cells = list(itertools.product(range(rows), range(cols)))
        rng.shuffle(cells)
        for r, c in cells[: rows * cols // 4]:
            near = [(r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)]
            if any(0 <= x < rows and 0 <= y < cols and shade[x][y] for x, y in near):
                continue
            shade[r][c] = 1
            if _hitori_rules(values, shade)[0] != _hitori_rules(values, shade)[1]:
                shade[r][c] = 0
        for r, c in itertools.product(range(rows), range(cols)):
            if shade[r][c]:  # copy a kept number of its row or column: shading is needed
                kept = [values[r][y] for y in range(cols) if not shade[r][y]]
                kept += [values[x][c] for x in range(rows) if not shade[x][c]]
                values[r][c] = rng.choice(kept)
        prompt = (
            f"You are given a {rows} × {cols} grid of numbers:\n{grid_lines(values, ' ')}\n\nShade "
            "some cells so that (1) in every row and every column, no number appears more than "
            "once among the unshaded cells; (2) no two shaded cells are next to each other "
            "horizontally or vertically; (3) all unshaded cells are connected through "
            f"horizontal and vertical steps. Give the shading as {rows} lines of {cols} digits, "
            "1 for a shaded cell and 0 for an unshaded one."
        )
        data = {"rows": rows, "cols": cols, "values": values}
        return Instance(prompt, grid_lines(shade, ""), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        shade = read_grid(answer, d["rows"], d["cols"], single_digits=True)
        if any(v not in (0, 1) for row in shade for v in row):
            return invalid("every cell must be 0 or 1")
        good, total = _hitori_rules(d["values"], shade)
        return _verdict(good, total, 10, "rules are broken")

    def solve(self, problem: Problem) -> str:
        d = problem.data
        rows, cols, values = d["rows"], d["cols"], d["values"]
        repeated = [
            (r, c)
            for r, c in itertools.product(range(rows), range(cols))
            if sum(values[r][y] == values[r][c] for y in range(cols)) > 1
            or sum(values[x][c] == values[r][c] for x in range(rows)) > 1
        ]
        shade = [[0] * cols for _ in range(rows)]
        # cells before (r, c) in row-major order with the same number, in its row or column
        earlier = [
            [
                [(r, y) for y in range(c) if values[r][y] == values[r][c]]
                + [(x, c) for x in range(r) if values[x][c] == values[r][c]]
                for c in range(cols)
            ]
            for r in range(rows)
        ]

        def kept(x: int, y: int) -> bool:
            return not shade[x][y]

        def place(k: int) -> bool:
            if k == len(repeated):
                good, total = _hitori_rules(values, shade)
                return good == total
            r, c = repeated[k]
            for v in (0, 1):
                if v and any(
                    0 <= x < rows and 0 <= y < cols and shade[x][y]
                    for x, y in ((r - 1, c), (r, c - 1))
                ):
                    continue
                if not v and any(kept(x, y) for x, y in earlier[r][c]):
                    continue  # would repeat a number kept earlier in its row or column
                shade[r][c] = v
                if place(k + 1):
                    return True
            shade[r][c] = 0
            return False

        place(0)
        return grid_lines(shade, "")
