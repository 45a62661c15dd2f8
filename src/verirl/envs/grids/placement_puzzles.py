"""Grid puzzles: skyscrapers seen from the four sides (counts or sums of the visible heights),
star battle, and Survo sums.

RLVE-Gym rows SkyscraperPuzzle, SkyscraperSumPuzzle, StarBattle and SurvoPuzzle (Zeng et al.
2025, "RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable
Environments", arXiv:2511.07317, Appendix A). The verifier checks every rule of the puzzle
(solve–verify asymmetry), so any valid filling is accepted; partial credit is
(rules met/all)^β as in the rows (β = 10 for skyscrapers, 5 for Survo), star battle is binary.
Grids are written row by row as integers; ``;`` or line breaks may separate the rows.
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
    parse_int_list,
    satisfied_reward,
)
from verirl.types import Problem, Verdict

TAGS = ("rlve", "puzzle")


def _grid_numbers(answer: str) -> list[int]:
    """The grid's cells in row-major order; rows may be separated by ``;``, line breaks or
    LaTeX's ``\\\\``, cells by spaces or commas (cells are small: no thousands separators)."""
    flat = answer
    for sep in (";", "\n", "\\\\", ","):
        flat = flat.replace(sep, " ")
    return parse_int_list(flat)


def _grid_forms(solution: str) -> list[str]:
    """Renderings of a grid answer ``"1 2; 3 4"`` that must all be accepted."""
    rows = solution.split("; ")
    return [
        solution,
        " ".join(rows),
        ", ".join(c for r in rows for c in r.split()),
        "\n".join(rows),
        " \\\\ ".join(rows),
        "; ".join(", ".join(r.split()) for r in rows),
    ]


def _latin_square(rng: random.Random, n: int) -> list[list[int]]:
    """A random Latin square on 1..n: a cyclic square with shuffled rows, columns, symbols."""
    rows, cols, symbols = list(range(n)), list(range(n)), list(range(1, n + 1))
    for x in (rows, cols, symbols):
        rng.shuffle(x)
    return [[symbols[(r + c) % n] for c in cols] for r in rows]


def _visible(line: list[int], use_sum: bool) -> int:
    top, count, total = 0, 0, 0
    for h in line:
        if h > top:
            top, count, total = h, count + 1, total + h
    return total if use_sum else count


def _clues(grid: list[list[int]], use_sum: bool) -> dict[str, list[int]]:
    cols = [list(c) for c in zip(*grid, strict=True)]
    return {
        "left": [_visible(r, use_sum) for r in grid],
        "right": [_visible(r[::-1], use_sum) for r in grid],
        "top": [_visible(c, use_sum) for c in cols],
        "bottom": [_visible(c[::-1], use_sum) for c in cols],
    }


class _Skyscraper(Environment):
    tags = TAGS
    answer_kind = "text"
    use_sum = False
    difficulty_scales = "grid side N = 3 + d//3 (at most 6); all 4N clues given"
    size_measure = "grid side N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(6, 3 + difficulty // 3)
        grid = _latin_square(rng, n)
        clues = _clues(grid, self.use_sum)
        what = (
            "the sum of the heights of the buildings" if self.use_sum else "the number of buildings"
        )
        lines = "\n".join(
            f"{side}: {' '.join(map(str, clues[side]))}"
            for side in ("top", "bottom", "left", "right")
        )
        prompt = (
            f"You are given a {n} × {n} grid. Place a building of height 1 to {n} in every cell so "
            f"that each row and each column contains every height exactly once. A building is "
            "visible from a side of the grid when it is taller than every building in front of it "
            f"on that line of sight. The clues give {what} visible from each side: 'top' lists "
            "the columns from left to right seen from above, 'bottom' the columns seen from "
            "below, 'left' the rows from top to bottom seen from the left, 'right' the rows seen "
            f"from the right.\n{lines}\nGive the heights row by row, top to bottom, each row "
            "left to right, all separated by spaces (rows may be separated by semicolons)."
        )
        return Instance(
            prompt, "; ".join(" ".join(map(str, r)) for r in grid), {"n": n, "clues": clues}
        )

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, clues = problem.data["n"], problem.data["clues"]
        cells = _grid_numbers(answer)
        if len(cells) != n * n or any(not 1 <= h <= n for h in cells):
            return invalid(f"give {n * n} heights, each from 1 to {n}")
        grid = [cells[i * n : (i + 1) * n] for i in range(n)]
        got = _clues(grid, self.use_sum)
        good = sum(1 for r in grid if len(set(r)) == n)
        good += sum(1 for c in zip(*grid, strict=True) if len(set(c)) == n)
        good += sum(
            1 for side in clues for a, b in zip(clues[side], got[side], strict=True) if a == b
        )
        total = 2 * n + 4 * n
        ok = good == total
        return graded(
            satisfied_reward(good, total, 10.0),
            ok,
            "correct" if ok else f"{total - good} rules are broken",
        )

    def solve(self, problem: Problem) -> str:
        """Row by row over the permutations that meet the row's two clues; each column so far
        must be the start of a permutation that meets the column's two clues."""
        n, clues = problem.data["n"], problem.data["clues"]
        perms = list(itertools.permutations(range(1, n + 1)))

        def fits(p: tuple[int, ...], front: int, back: int) -> bool:
            return (
                _visible(list(p), self.use_sum) == front
                and _visible(list(p)[::-1], self.use_sum) == back
            )

        rows = [
            [p for p in perms if fits(p, clues["left"][i], clues["right"][i])] for i in range(n)
        ]
        starts = [
            {
                p[:k]
                for p in perms
                if fits(p, clues["top"][c], clues["bottom"][c])
                for k in range(1, n + 1)
            }
            for c in range(n)
        ]
        grid: list[tuple[int, ...]] = []

        def place(i: int) -> bool:
            if i == n:
                return True
            for p in rows[i]:
                if all((*tuple(r[c] for r in grid), p[c]) in starts[c] for c in range(n)):
                    grid.append(p)
                    if place(i + 1):
                        return True
                    grid.pop()
            return False

        place(0)
        return "; ".join(" ".join(map(str, r)) for r in grid)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        rows = answer.split("; ")
        rows[0], rows[1] = rows[1], rows[0]  # columns stay distinct, the side clues break
        swapped = "; ".join(rows)
        return (
            swapped
            if not self.check(problem, swapped).correct
            else "; ".join([rows[0]] * len(rows))
        )

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])

    def surface_forms(self, problem: Problem) -> list[str]:
        return _grid_forms(self.solve(problem))

    def problem_space(self, difficulty: int) -> int | None:
        """At most the number of Latin squares of the side (12, 576, 161280, ...)."""
        return {3: 12, 4: 576, 5: 161280}.get(min(6, 3 + difficulty // 3))


@ENVIRONMENTS.register("skyscraper_puzzle")
class SkyscraperPuzzle(_Skyscraper):
    """Skyscrapers with the number of visible buildings as clues; (rules met/all)^10."""


@ENVIRONMENTS.register("skyscraper_sum_puzzle")
class SkyscraperSumPuzzle(_Skyscraper):
    """Skyscrapers with the sum of the visible heights as clues; (rules met/all)^10."""

    use_sum = True


@ENVIRONMENTS.register("star_battle")
class StarBattle(Environment):
    """One star per row and per column, never on an X, no two stars touching (diagonals
    included); binary reward."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "grid side N = 4 + d//2 (at most 14); about a third of the other cells X"
    size_measure = "grid side N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(14, 4 + difficulty // 2)
        while True:  # a permutation whose neighbours differ by at least 2
            cols = list(range(n))
            rng.shuffle(cols)
            if all(abs(a - b) >= 2 for a, b in itertools.pairwise(cols)):
                break
        blocked = [
            "".join("." if cols[r] == c or rng.random() > 0.35 else "X" for c in range(n))
            for r in range(n)
        ]
        prompt = (
            f"You are given a {n} × {n} grid; each cell contains either X or . (a dot):\n"
            + "\n".join(blocked)
            + "\n\nPlace stars on dot cells so that every row and every column contains exactly "
            "one star and no two stars touch, not even diagonally. Give the column (numbered 1 "
            f"to {n} from the left) of the star in each row, top to bottom, separated by commas."
        )
        return Instance(prompt, ", ".join(str(c + 1) for c in cols), {"grid": blocked})

    def check(self, problem: Problem, answer: str) -> Verdict:
        grid = problem.data["grid"]
        n = len(grid)
        cols = [c - 1 for c in parse_int_list(answer)]
        if len(cols) != n or any(not 0 <= c < n for c in cols):
            return invalid(f"give {n} columns from 1 to {n}, one per row")
        if any(grid[r][c] == "X" for r, c in enumerate(cols)):
            return invalid("a star is placed on an X")
        ok = len(set(cols)) == n and all(abs(a - b) >= 2 for a, b in itertools.pairwise(cols))
        return graded(0.0, ok, "correct" if ok else "two stars share a column or touch")

    def solve(self, problem: Problem) -> str:
        grid = problem.data["grid"]
        n = len(grid)
        cols: list[int] = []

        def place(r: int) -> bool:
            if r == n:
                return True
            for c in range(n):
                if grid[r][c] == "." and c not in cols and (not cols or abs(cols[-1] - c) >= 2):
                    cols.append(c)
                    if place(r + 1):
                        return True
                    cols.pop()
            return False

        place(0)
        return ", ".join(str(c + 1) for c in cols)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        items = answer.split(", ")
        return ", ".join([items[0], *items[:-1]])  # a column repeated in rows 1 and 2

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["grid"]))


@ENVIRONMENTS.register("survo_puzzle")
class SurvoPuzzle(Environment):
    """Fill the empty cells with the missing numbers of 0..MN-1 so that the row and column
    sums match: (sums met/all)^5."""

    tags = TAGS
    answer_kind = "text"
    difficulty_scales = "M, N in 2..3 + d//6 (at most 4); 2 + d//3 empty cells (at most 7)"
    size_measure = "empty cells"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        m, n = (rng.randint(2, min(4, 3 + difficulty // 6)) for _ in range(2))
        values = list(range(m * n))
        rng.shuffle(values)
        full = [values[i * n : (i + 1) * n] for i in range(m)]
        empty = sorted(rng.sample(range(m * n), min(m * n - 1, 2 + difficulty // 3, 7)))
        shown = [[-1 if i * n + j in empty else full[i][j] for j in range(n)] for i in range(m)]
        rows, cols = [sum(r) for r in full], [sum(c) for c in zip(*full, strict=True)]
        prompt = (
            f"You are given a {m} × {n} matrix; empty cells are marked -1:\n"
            + "\n".join(" ".join(map(str, r)) for r in shown)
            + f"\n\nFill the empty cells so that the matrix contains every integer from 0 to "
            f"{m * n - 1} exactly once, the row sums are {' '.join(map(str, rows))} (top to "
            f"bottom) and the column sums are {' '.join(map(str, cols))} (left to right). Give the "
            "whole filled matrix row by row, all numbers separated by spaces (rows may be "
            "separated by semicolons)."
        )
        data = {"shown": shown, "rows": rows, "cols": cols}
        return Instance(prompt, "; ".join(" ".join(map(str, r)) for r in full), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        m, n = len(d["shown"]), len(d["shown"][0])
        cells = _grid_numbers(answer)
        if len(cells) != m * n or sorted(cells) != list(range(m * n)):
            return invalid(f"give {m * n} numbers: each of 0 to {m * n - 1} exactly once")
        # cells in row-major order next to the shown grid's (every row has n cells)
        shown = [v for row in d["shown"] for v in row]
        if any(v != -1 and c != v for v, c in zip(shown, cells, strict=True)):
            return invalid("a given number was changed")
        good = sum(1 for i, s in enumerate(d["rows"]) if sum(cells[i * n : (i + 1) * n]) == s)
        good += sum(1 for j, s in enumerate(d["cols"]) if sum(cells[j::n]) == s)
        total = m + n
        ok = good == total
        return graded(
            satisfied_reward(good, total, 5.0),
            ok,
            "correct" if ok else f"{total - good} sums are wrong",
        )

    def solve(self, problem: Problem) -> str:
        d = problem.data
        shown = d["shown"]
        m, n = len(shown), len(shown[0])
        holes = [(i, j) for i in range(m) for j in range(n) if shown[i][j] == -1]
        missing = sorted(set(range(m * n)) - {v for r in shown for v in r})
        for perm in itertools.permutations(missing):
            grid = [row[:] for row in shown]
            for (i, j), v in zip(holes, perm, strict=True):
                grid[i][j] = v
            if [sum(r) for r in grid] == d["rows"] and [
                sum(c) for c in zip(*grid, strict=True)
            ] == d["cols"]:
                return "; ".join(" ".join(map(str, r)) for r in grid)
        return ""

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer + " 0"

    def surface_forms(self, problem: Problem) -> list[str]:
        return _grid_forms(self.solve(problem))

    def size(self, problem: Problem) -> float:
        return float(sum(v == -1 for r in problem.data["shown"] for v in r))
