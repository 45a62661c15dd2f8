"""Grids, part 2: logic puzzles with planted solutions — Light Up (Akari), magic squares,
Minesweeper placements and Numbrix.

Rows LightUpPuzzle, MagicSquarePuzzle, Minesweeping and Numbrix of the RLVE catalogue (Zeng et
al., *RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable
Environments*, arXiv:2511.07317). Each generator plants a solution; each verifier checks the
rules on the answer, so any solution is accepted, and gives (satisfied constraints/all)^β:
lit cells and clue walls (Light Up, β = 10), lines with the magic sum (β = 10), clues with the
right mine count (β = 10), consecutive numbers that are neighbours (Numbrix, β = 5). Answers
that break the format of the grid (a light on a wall, a changed given number) are invalid.
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
from verirl.envs.grids.selection import read_cells
from verirl.envs.kit.grids import matrix_text, parse_matrix
from verirl.types import Problem, Verdict

TAGS = ("rlve", "grids", "puzzles")
_ORTHO = ((-1, 0), (1, 0), (0, -1), (0, 1))


def _side(difficulty: int, start: int, cap: int) -> int:
    return min(cap, start + difficulty // 2)


def _cells_text(cells: list[tuple[int, int]]) -> str:
    return ", ".join(f"({r}, {c})" for r, c in sorted(cells))


class _Puzzle(Environment):
    tags = TAGS
    size_measure = "cells of the grid"

    def size(self, problem: Problem) -> float:
        grid = problem.data["grid"]
        return float(len(grid) * len(grid[0]))


# ---- Light Up ------------------------------------------------------------------------------
def _lit_by(rows: list[str], r: int, c: int) -> set[tuple[int, int]]:
    """Cells a light at (r, c) illuminates: itself and the line of sight in 4 directions."""
    out = {(r, c)}
    for dr, dc in _ORTHO:
        nr, nc = r + dr, c + dc
        while 0 <= nr < len(rows) and 0 <= nc < len(rows[0]) and rows[nr][nc] == "W":
            out.add((nr, nc))
            nr, nc = nr + dr, nc + dc
    return out


@ENVIRONMENTS.register("light_up_puzzle")
class LightUpPuzzle(_Puzzle):
    """Akari: place lights on white cells so every white cell is lit, no light shines on
    another, and every numbered wall has that many lights next to it."""

    difficulty_scales = "N, M in 3..3 + d//2 (at most 12); walls 20%; clues on 70% of walls"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = _side(difficulty, 3, 12)
        n, m = rng.randint(3, top), rng.randint(3, top)
        walls = {(r, c) for r in range(n) for c in range(m) if rng.random() < 0.2}
        rows = ["".join("B" if (r, c) in walls else "W" for c in range(m)) for r in range(n)]
        lit: set[tuple[int, int]] = set()
        lights = []
        whites = [(r, c) for r in range(n) for c in range(m) if (r, c) not in walls]
        rng.shuffle(whites)
        for cell in whites:  # a light on an unlit cell never sees another light
            if cell not in lit:
                lights.append(cell)
                lit |= _lit_by(rows, *cell)
        shown = [list(row) for row in rows]
        for r, c in walls:
            if rng.random() < 0.7:
                shown[r][c] = str(sum((r + dr, c + dc) in lights for dr, dc in _ORTHO))
        grid = ["".join(row) for row in shown]
        prompt = (
            f"You are given a {n} × {m} grid (rows and columns numbered from 0). Each cell "
            "contains either a number from 0 to 4, or a character B or W:\n"
            + "\n".join(grid)
            + "\n\nW is a white cell; B and the numbers are black walls. Place lights on white "
            "cells so that: (1) every white cell is lit — a light lights its own cell and every "
            "white cell in its row and column up to the first wall; (2) no light is lit by "
            "another light; (3) each numbered wall has exactly that many lights in the cells "
            "directly above, below, left and right of it. Output the cells with a light as "
            "(row, column) pairs separated by commas."
        )
        return Instance(prompt, _cells_text(lights), {"grid": grid})

    def check(self, problem: Problem, answer: str) -> Verdict:
        grid = problem.data["grid"]
        n, m = len(grid), len(grid[0])
        lights = read_cells(answer)
        if len(set(lights)) != len(lights) or len(lights) > n * m:
            return invalid("a cell is listed twice")
        if any(not (0 <= r < n and 0 <= c < m) or grid[r][c] != "W" for r, c in lights):
            return invalid("lights go on white cells of the grid")
        plain = ["".join("W" if ch == "W" else "B" for ch in row) for row in grid]
        lit: set[tuple[int, int]] = set()
        for r, c in lights:
            seen = _lit_by(plain, r, c)
            if any(other in seen for other in lights if other != (r, c)):
                return invalid("two lights shine on each other")
            lit |= seen
        whites = [(r, c) for r in range(n) for c in range(m) if grid[r][c] == "W"]
        clues = [(r, c) for r in range(n) for c in range(m) if grid[r][c].isdigit()]
        placed = set(lights)
        good = sum(cell in lit for cell in whites) + sum(
            sum((r + dr, c + dc) in placed for dr, dc in _ORTHO) == int(grid[r][c])
            for r, c in clues
        )
        total = len(whites) + len(clues)
        return graded(satisfied_reward(good, total, 10.0), good == total, "some rules are broken")

    def solve(self, problem: Problem) -> str:
        # Independent: backtracking over white cells in reading order (light or not), with the
        # clue counts and "no two lights see each other" pruned as it goes.
        grid = problem.data["grid"]
        n, m = len(grid), len(grid[0])
        plain = ["".join("W" if ch == "W" else "B" for ch in row) for row in grid]
        whites = [(r, c) for r in range(n) for c in range(m) if grid[r][c] == "W"]
        clues = {
            (r, c): int(grid[r][c]) for r in range(n) for c in range(m) if grid[r][c].isdigit()
        }
        sight = {cell: _lit_by(plain, *cell) for cell in whites}
        last = {cell: i for i, cell in enumerate(whites)}
        chosen: list[tuple[int, int]] = []

        def clue_ok(done_upto: int, strict: bool) -> bool:
            for (r, c), need in clues.items():
                around = [(r + dr, c + dc) for dr, dc in _ORTHO if (r + dr, c + dc) in last]
                have = sum(x in chosen for x in around)
                open_ = sum(last[x] > done_upto for x in around)
                if have > need or have + open_ < need or (strict and have != need):
                    return False
            return True

        def search(i: int) -> bool:
            if i == len(whites):
                lit = set().union(*(sight[x] for x in chosen)) if chosen else set()
                return len(lit) == len(whites) and clue_ok(i, True)
            cell = whites[i]
            if not any(x in sight[cell] for x in chosen):
                chosen.append(cell)
                if clue_ok(i, False) and search(i + 1):
                    return True
                chosen.pop()
            # leaving it dark: it must still be lit later or already
            lit_now = any(cell in sight[x] for x in chosen)
            could = any(last[x] > i for x in sight[cell] if x in last)
            return bool((lit_now or could) and clue_ok(i, False) and search(i + 1))

        if not search(0):
            raise RuntimeError("no solution found")
        return _cells_text(chosen)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return _cells_text(read_cells(answer)[1:])  # the first light's own cell goes dark


# ---- magic squares -----------------------------------------------------------------------
def magic_square(n: int) -> list[list[int]]:
    """A normal magic square of order n (odd: Siamese method; n ≡ 0 mod 4: the diagonal
    complement pattern)."""
    if n % 2:
        sq = [[0] * n for _ in range(n)]
        r, c = 0, n // 2
        for k in range(1, n * n + 1):
            sq[r][c] = k
            nr, nc = (r - 1) % n, (c + 1) % n
            if sq[nr][nc]:
                nr, nc = (r + 1) % n, c
            r, c = nr, nc
        return sq
    assert n % 4 == 0
    return [
        [
            n * n + 1 - (i * n + j + 1)
            if (i % 4 == j % 4 or (i % 4 + j % 4) == 3)
            else i * n + j + 1
            for j in range(n)
        ]
        for i in range(n)
    ]


@ENVIRONMENTS.register("magic_square_puzzle")
class MagicSquarePuzzle(_Puzzle):
    """Complete a magic square (1..N² once each, all rows, columns and both diagonals with
    the same sum); (lines with the magic sum/all lines)^10 credit."""

    difficulty_scales = "order N in 3, 4, 5, 7, 8, 9 (one step per 3 levels); blanks 30% + 2%·d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = [3, 4, 5, 7, 8, 9][min(5, difficulty // 3)]
        sq = magic_square(n)
        for _ in range(rng.randrange(4)):  # a random symmetry of the square
            sq = [list(row) for row in zip(*sq[::-1], strict=True)]
        if rng.random() < 0.5:
            sq = [row[::-1] for row in sq]
        if rng.random() < 0.5:
            sq = [[n * n + 1 - x for x in row] for row in sq]
        if n > 3 and rng.random() < 0.5:  # swapping rows i, n-1-i and the same columns
            i = rng.randrange(n // 2)
            k = n - 1 - i
            sq[i], sq[k] = sq[k], sq[i]
            for row in sq:
                row[i], row[k] = row[k], row[i]
        blanks = min(0.9, 0.3 + 0.02 * difficulty)
        shown = [[0 if rng.random() < blanks else x for x in row] for row in sq]
        magic = n * (n * n + 1) // 2
        prompt = (
            f"Given a grid of size {n} × {n} filled with integers, some cells may be empty "
            f"(represented by 0):\n"
            + "\n".join(" ".join(map(str, row)) for row in shown)
            + f"\n\nFill the empty cells so that the grid contains every integer from 1 to "
            f"{n * n} exactly once and every row, every column and both main diagonals sum to "
            f"{magic}. Keep the given numbers. Output the completed grid row by row, rows "
            "separated by semicolons and numbers by spaces."
        )
        return Instance(prompt, matrix_text(sq), {"grid": shown})

    def check(self, problem: Problem, answer: str) -> Verdict:
        shown = problem.data["grid"]
        n = len(shown)
        got = parse_matrix(answer)
        if len(got) != n or any(len(row) != n for row in got):
            return invalid(f"give a {n} × {n} grid")
        if sorted(x for row in got for x in row) != list(range(1, n * n + 1)):
            return invalid(f"the grid must contain 1 to {n * n} exactly once each")
        if any(
            s and s != g
            for rs, rg in zip(shown, got, strict=True)
            for s, g in zip(rs, rg, strict=True)
        ):
            return invalid("a given number was changed")
        magic = n * (n * n + 1) // 2
        lines = [*got, *zip(*got, strict=True)]
        lines += [[got[i][i] for i in range(n)], [got[i][n - 1 - i] for i in range(n)]]
        good = sum(sum(line) == magic for line in lines)
        return graded(
            satisfied_reward(good, len(lines), 10.0),
            good == len(lines),
            "some lines have the wrong sum",
        )

    def solve(self, problem: Problem) -> str:
        # Independent of the construction: among the 8 symmetries and the complement of
        # the standard square (and the row/column pair swaps), find one matching the givens;
        # all squares generated are in that family.
        shown = problem.data["grid"]
        n = len(shown)
        base = magic_square(n)
        candidates = []
        for complement, flip in itertools.product((False, True), repeat=2):
            sq = [[n * n + 1 - x if complement else x for x in row] for row in base]
            if flip:
                sq = [row[::-1] for row in sq]
            for _ in range(4):
                sq = [list(row) for row in zip(*sq[::-1], strict=True)]
                candidates.append(sq)
                for i in range(n // 2):
                    k = n - 1 - i
                    sw = [list(row) for row in sq]
                    sw[i], sw[k] = sw[k], sw[i]
                    for row in sw:
                        row[i], row[k] = row[k], row[i]
                    candidates.append(sw)
        for sq in candidates:
            if all(
                s in (0, g)
                for rs, rg in zip(shown, sq, strict=True)
                for s, g in zip(rs, rg, strict=True)
            ):
                return matrix_text(sq)
        raise RuntimeError("no square in the family fits the givens")

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        rows = [r.split() for r in answer.split("; ")]
        rows[0][0] = str(int(rows[0][0]) % (len(rows) ** 2) + 1)  # a duplicate number
        return "; ".join(" ".join(r) for r in rows)


# ---- Minesweeper -------------------------------------------------------------------------
def _around(n: int, m: int, r: int, c: int) -> list[tuple[int, int]]:
    return [
        (r + dr, c + dc)
        for dr in (-1, 0, 1)
        for dc in (-1, 0, 1)
        if (dr or dc) and 0 <= r + dr < n and 0 <= c + dc < m
    ]


@ENVIRONMENTS.register("minesweeping")
class Minesweeping(_Puzzle):
    """Place mines on the unknown (-1) cells so that every number counts its neighbouring
    mines; (clues met/all clues)^10 credit, a mine on a number is invalid."""

    difficulty_scales = "N, M in 4..4 + d//2 (at most 16); mines 20%; 60% of safe cells shown"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = _side(difficulty, 4, 16)
        n, m = rng.randint(3, top), rng.randint(3, top)
        mines = {(r, c) for r in range(n) for c in range(m) if rng.random() < 0.2}
        if not mines:
            mines = {(rng.randrange(n), rng.randrange(m))}
        grid = []
        for r in range(n):
            row = []
            for c in range(m):
                if (r, c) in mines or rng.random() < 0.4:
                    row.append(-1)
                else:
                    row.append(sum(x in mines for x in _around(n, m, r, c)))
            grid.append(row)
        prompt = (
            f"You are given a {n} × {m} matrix (rows and columns numbered from 0). Each element "
            "is either a number in [0, 8] or -1:\n"
            + "\n".join(" ".join(f"{x:2d}" for x in row) for row in grid)
            + "\n\nA -1 is an unknown cell; a number says how many of its (up to 8) "
            "neighbouring cells — horizontally, vertically or diagonally adjacent — hold a mine. "
            "Mines can only be on unknown cells. Choose a set of unknown cells to hold mines so "
            "that every number is right. Output the mine cells as (row, column) pairs separated "
            "by commas; if several placements work, any of them is accepted."
        )
        return Instance(prompt, _cells_text(sorted(mines)), {"grid": grid})

    def check(self, problem: Problem, answer: str) -> Verdict:
        grid = problem.data["grid"]
        n, m = len(grid), len(grid[0])
        mines = read_cells(answer)
        if len(set(mines)) != len(mines):
            return invalid("a cell is listed twice")
        if any(not (0 <= r < n and 0 <= c < m) or grid[r][c] != -1 for r, c in mines):
            return invalid("mines go on unknown (-1) cells of the grid")
        placed = set(mines)
        clues = [(r, c) for r in range(n) for c in range(m) if grid[r][c] >= 0]
        good = sum(sum(x in placed for x in _around(n, m, r, c)) == grid[r][c] for r, c in clues)
        return graded(
            satisfied_reward(good, len(clues), 10.0), good == len(clues), "some numbers are wrong"
        )

    def solve(self, problem: Problem) -> str:
        # Independent: backtracking over unknown cells next to a clue (others stay empty),
        # checking each clue once all its unknown neighbours are decided.
        grid = problem.data["grid"]
        n, m = len(grid), len(grid[0])
        clues = [(r, c) for r in range(n) for c in range(m) if grid[r][c] >= 0]
        relevant = sorted(
            {x for r, c in clues for x in _around(n, m, r, c) if grid[x[0]][x[1]] == -1}
        )
        index = {x: i for i, x in enumerate(relevant)}
        watch = {(r, c): [x for x in _around(n, m, r, c) if x in index] for r, c in clues}
        chosen: set[tuple[int, int]] = set()

        def feasible(i: int) -> bool:
            for clue, cells in watch.items():
                have = sum(x in chosen for x in cells)
                left = sum(index[x] >= i for x in cells)
                if have > grid[clue[0]][clue[1]] or have + left < grid[clue[0]][clue[1]]:
                    return False
            return True

        def search(i: int) -> bool:
            if not feasible(i):
                return False
            if i == len(relevant):
                return True
            chosen.add(relevant[i])
            if search(i + 1):
                return True
            chosen.discard(relevant[i])
            return search(i + 1)

        if not search(0):
            raise RuntimeError("no placement found")
        return _cells_text(sorted(chosen))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        grid = problem.data["grid"]
        clue = next((r, c) for r, row in enumerate(grid) for c, x in enumerate(row) if x >= 0)
        return f"{answer}, ({clue[0]}, {clue[1]})" if answer else f"({clue[0]}, {clue[1]})"


# ---- Numbrix ------------------------------------------------------------------------------
def _hamiltonian_path(rng: random.Random, n: int, m: int) -> list[tuple[int, int]]:
    """A random Hamiltonian path of the n × m grid: a serpentine path reshaped by backbite
    moves (reverse the tail after a neighbour of an end)."""
    path = [(r, c if r % 2 == 0 else m - 1 - c) for r in range(n) for c in range(m)]
    for _ in range(10 * n * m):
        if rng.random() < 0.5:
            path.reverse()
        r, c = path[-1]
        dr, dc = rng.choice(_ORTHO)
        nb = (r + dr, c + dc)
        if not (0 <= nb[0] < n and 0 <= nb[1] < m) or nb == path[-2]:
            continue
        i = path.index(nb)
        path[i + 1 :] = reversed(path[i + 1 :])
    return path


@ENVIRONMENTS.register("numbrix")
class Numbrix(_Puzzle):
    """Fill a grid with 0..NM−1 so that consecutive numbers are orthogonal neighbours, keeping
    the given ones; (neighbouring consecutive pairs/(NM − 1))^5 credit."""

    difficulty_scales = "N, M in 2..3 + d//3 (at most 8); given numbers 50% falling to 25%"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = min(8, 3 + difficulty // 3)
        n, m = rng.randint(2, top), rng.randint(2, top)
        path = _hamiltonian_path(rng, n, m)
        full = [[0] * m for _ in range(n)]
        for k, (r, c) in enumerate(path):
            full[r][c] = k
        keep = max(0.25, 0.5 - 0.01 * difficulty)
        shown = [
            [x if rng.random() < keep or x in (0, n * m - 1) else -1 for x in row] for row in full
        ]
        prompt = (
            f"You are given a {n} × {m} matrix with some cells filled with numbers from 0 to "
            f"{n * m - 1}, and some cells empty (represented by -1):\n"
            + "\n".join(" ".join(f"{x:2d}" for x in row) for row in shown)
            + f"\n\nFill the empty cells so that every number from 0 to {n * m - 1} appears "
            "exactly once and, for every k, the cells holding k and k + 1 are horizontally or "
            "vertically adjacent. Keep the given numbers. Output the completed matrix row by "
            "row, rows separated by semicolons and numbers by spaces; if several completions "
            "work, any of them is accepted."
        )
        return Instance(prompt, matrix_text(full), {"grid": shown})

    def check(self, problem: Problem, answer: str) -> Verdict:
        shown = problem.data["grid"]
        n, m = len(shown), len(shown[0])
        got = parse_matrix(answer)
        if len(got) != n or any(len(row) != m for row in got):
            return invalid(f"give a {n} × {m} matrix")
        if sorted(x for row in got for x in row) != list(range(n * m)):
            return invalid(f"every number from 0 to {n * m - 1} must appear once")
        if any(
            s >= 0 and s != g
            for rs, rg in zip(shown, got, strict=True)
            for s, g in zip(rs, rg, strict=True)
        ):
            return invalid("a given number was changed")
        where = {got[r][c]: (r, c) for r in range(n) for c in range(m)}
        good = sum(
            abs(where[k][0] - where[k + 1][0]) + abs(where[k][1] - where[k + 1][1]) == 1
            for k in range(n * m - 1)
        )
        total = n * m - 1
        return graded(
            satisfied_reward(good, total, 5.0), good == total, "some consecutive numbers are apart"
        )

    def solve(self, problem: Problem) -> str:
        # Independent: depth-first search for a Hamiltonian path from the cell of 0 that
        # passes every given number at its index.
        shown = problem.data["grid"]
        n, m = len(shown), len(shown[0])
        given = {shown[r][c]: (r, c) for r in range(n) for c in range(m) if shown[r][c] >= 0}
        fixed = set(given.values())
        path = [given[0]]
        used = {given[0]}

        def search() -> bool:
            k = len(path)
            if k == n * m:
                return True
            r, c = path[-1]
            if k in given:
                nxt = given[k]
                options = [nxt] if abs(nxt[0] - r) + abs(nxt[1] - c) == 1 else []
            else:
                options = [
                    (r + dr, c + dc)
                    for dr, dc in _ORTHO
                    if 0 <= r + dr < n and 0 <= c + dc < m and (r + dr, c + dc) not in fixed
                ]
            for cell in options:
                if cell in used:
                    continue
                # the next given number must stay reachable in time
                later = [g for g in given if g > k]
                if later:
                    g = min(later)
                    gr, gc = given[g]
                    if abs(gr - cell[0]) + abs(gc - cell[1]) > g - k:
                        continue
                path.append(cell)
                used.add(cell)
                if search():
                    return True
                path.pop()
                used.discard(cell)
            return False

        if not search():
            raise RuntimeError("no completion found")
        full = [[0] * m for _ in range(n)]
        for k, (r, c) in enumerate(path):
            full[r][c] = k
        return matrix_text(full)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        rows = [r.split() for r in answer.split("; ")]
        rows[0][0] = rows[0][1] if len(rows[0]) > 1 else rows[1][0]  # a number twice
        return "; ".join(" ".join(r) for r in rows)
