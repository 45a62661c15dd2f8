"""The ``grid_puzzles`` family (grids_selection.py, grids_puzzles.py): hand-computed
verdicts with exact partial credit, brute-force cross-checks and the self-check."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.grids.optimization import best_three_squares
from verirl.envs.grids.puzzles import magic_square
from verirl.envs.grids.selection import _grid_mis_by_cut, _grid_mis_by_profile
from verirl.envs.selfcheck import self_check

SELECTION = ["maze", "maximum_independent_set_grid", "max_no_conflicting_bombs"]


@pytest.mark.parametrize("name", SELECTION)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_maze() -> None:
    data = {"grid": ["..", "#."]}
    assert verdict("maze", "RD", **data).correct
    assert verdict("maze", "R, D", **data).correct
    assert reward("maze", "RDUD", **data) == pytest.approx(0.5**3)  # valid but 4 moves
    assert reward("maze", "DR", **data) == -0.5  # into the wall
    assert reward("maze", "R", **data) == -0.5  # not at the target
    assert reward("maze", "RX", **data) == -0.5


def test_maximum_independent_set_grid() -> None:
    data = {"grid": [[6, 9], [8, 4], [1, 9]]}  # 9 + 8 + 9
    name = "maximum_independent_set_grid"
    assert verdict(name, "(0, 1), (1, 0), (2, 1)", **data).correct
    assert reward(name, "(0, 0), (2, 1)", **data) == pytest.approx((15 / 26) ** 3)
    assert reward(name, "(0, 0), (0, 1)", **data) == -0.5
    assert reward(name, "(3, 0)", **data) == -0.5
    rng = random.Random(6)
    for _ in range(40):
        n, m = rng.randint(1, 4), rng.randint(1, 4)
        grid = [[rng.randint(1, 9) for _ in range(m)] for _ in range(n)]
        cells = [(r, c) for r in range(n) for c in range(m)]
        brute = max(
            sum(grid[r][c] for r, c in chosen)
            for k in range(len(cells) + 1)
            for chosen in itertools.combinations(cells, k)
            if not any(
                abs(a - c) + abs(b - d) == 1 for (a, b), (c, d) in itertools.combinations(chosen, 2)
            )
        )
        assert _grid_mis_by_cut(grid)[0] == brute
        assert sum(grid[r][c] for r, c in _grid_mis_by_profile(grid)) == brute


def test_max_no_conflicting_bombs() -> None:
    data = {"grid": ["**#", "*#x", "x##", "**#"]}
    name = "max_no_conflicting_bombs"
    assert verdict(name, "(0, 1), (1, 0), (3, 1)", **data).correct
    assert reward(name, "(0, 0)", **data) == pytest.approx((1 / 3) ** 3)
    assert reward(name, "(0, 0), (1, 0)", **data) == -0.5  # one column, no wall between
    assert reward(name, "(0, 2)", **data) == -0.5  # a wall
    p = problem(name, **data)
    assert get_env(name).check(p, get_env(name).solve(p)).correct


PUZZLES = ["light_up_puzzle", "magic_square_puzzle", "minesweeping", "numbrix"]


def test_family_is_registered() -> None:
    names = [*SELECTION, *PUZZLES, "max_three_square_sum", "minimum_dominating_set_grid"]
    assert set(names) <= set(env_names(family="grid_puzzles"))


@pytest.mark.parametrize("name", PUZZLES)
def test_self_check_puzzles(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_light_up_puzzle() -> None:
    data = {"grid": ["WWW", "WWW", "B0W"]}
    assert verdict("light_up_puzzle", "(0, 2), (1, 0)", **data).correct
    assert verdict("light_up_puzzle", "(0, 0), (1, 2)", **data).correct
    # one light at (0, 2): 5 of 7 white cells lit, the 0 clue holds: 6 of 8
    assert reward("light_up_puzzle", "(0, 2)", **data) == pytest.approx(0.75**10)
    assert reward("light_up_puzzle", "(0, 0), (0, 2)", **data) == -0.5  # they see each other
    assert reward("light_up_puzzle", "(2, 0)", **data) == -0.5  # a wall


def test_magic_square_puzzle() -> None:
    for n in (3, 4, 5, 7, 8, 9):
        sq = magic_square(n)
        magic = n * (n * n + 1) // 2
        assert sorted(x for row in sq for x in row) == list(range(1, n * n + 1))
        assert all(sum(row) == magic for row in sq)
        assert all(sum(col) == magic for col in zip(*sq, strict=True))
        assert sum(sq[i][i] for i in range(n)) == magic == sum(sq[i][n - 1 - i] for i in range(n))
    data = {"grid": [[0, 9, 4], [0, 5, 3], [6, 1, 8]]}
    assert verdict("magic_square_puzzle", "2 9 4; 7 5 3; 6 1 8", **data).correct
    # 7 and 2 swapped: rows 1 and 2, the main diagonal wrong; 5 of 8 lines
    assert reward("magic_square_puzzle", "7 9 4; 2 5 3; 6 1 8", **data) == pytest.approx(
        (5 / 8) ** 10
    )
    assert reward("magic_square_puzzle", "2 9 4; 7 5 3; 6 8 1", **data) == -0.5  # a given moved
    assert reward("magic_square_puzzle", "2 9 4; 2 5 3; 6 1 8", **data) == -0.5


def test_minesweeping() -> None:
    data = {"grid": [[-1, 1, 0], [-1, -1, -1]]}
    assert verdict("minesweeping", "(0, 0)", **data).correct
    assert verdict("minesweeping", "(1, 0)", **data).correct
    assert reward("minesweeping", "(1, 1)", **data) == pytest.approx(0.5**10)  # the 0 is wrong
    assert reward("minesweeping", "(0, 2)", **data) == -0.5  # on a number


def test_numbrix() -> None:
    data = {"grid": [[-1, -1, -1], [-1, 6, 1], [8, 7, 0]]}
    assert verdict("numbrix", "4 3 2; 5 6 1; 8 7 0", **data).correct
    # 1 -> 2 and 4 -> 5 are not neighbours: 6 of 8 steps
    assert reward("numbrix", "2 3 4; 5 6 1; 8 7 0", **data) == pytest.approx(0.75**5)
    assert reward("numbrix", "4 3 2; 5 1 6; 8 7 0", **data) == -0.5  # a given moved


OPTIMIZATION = ["max_three_square_sum", "minimum_dominating_set_grid"]


@pytest.mark.parametrize("name", OPTIMIZATION)
def test_self_check_optimization(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_max_three_square_sum() -> None:
    data = {"grid": [[2, 4, 6], [10, -3, -5], [9, 14, 13], [9, 9, 9]], "k": 1}
    assert verdict("max_three_square_sum", "37", **data).correct  # 14 + 13 + 10
    assert reward("max_three_square_sum", "36", **data) == 0.0
    wide = {"grid": [[1, 2, 3, 4, 5, 6], [1, 1, 1, 1, 1, 1]], "k": 2}  # columns 0, 2, 4
    assert verdict("max_three_square_sum", "27", **wide).correct
    rng = random.Random(13)
    for _ in range(40):
        n, m, k = rng.randint(2, 5), rng.randint(3, 6), rng.randint(1, 2)
        grid = [[rng.randint(-5, 9) for _ in range(m)] for _ in range(n)]
        squares = {
            (r, c): sum(grid[r + a][c + b] for a in range(k) for b in range(k))
            for r in range(n - k + 1)
            for c in range(m - k + 1)
        }
        totals = [
            squares[x] + squares[y] + squares[z]
            for x, y, z in itertools.combinations(squares, 3)
            if all(
                abs(p[0] - q[0]) >= k or abs(p[1] - q[1]) >= k for p, q in ((x, y), (x, z), (y, z))
            )
        ]
        assert best_three_squares(grid, k) == (max(totals) if totals else None)


def test_minimum_dominating_set_grid() -> None:
    data = {"grid": [[9, 1], [4, 9], [6, 3]]}
    name = "minimum_dominating_set_grid"
    assert verdict(name, "(1, 2), (3, 1)", **data).correct  # 1 + 6
    assert reward(name, "(1, 2), (2, 1), (3, 2)", **data) == pytest.approx((7 / 8) ** 5)
    assert reward(name, "(1, 2)", **data) == -0.5
    assert reward(name, "(0, 1), (3, 1)", **data) == -0.5  # 1-based: row 0 does not exist
