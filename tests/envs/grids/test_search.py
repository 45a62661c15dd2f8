"""Grid and state search environments (grid_search.py): hand-made grids and puzzles with
valid, partial and invalid answers, and the self-check."""

from __future__ import annotations

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import ENVIRONMENTS, env_names, get_env
from verirl.envs.selfcheck import self_check

NAMES = [
    n
    for n in env_names(family="grid_search")
    if ENVIRONMENTS.get(n).part.__module__.endswith(".grids.search")
]


def test_family_is_registered() -> None:
    assert len(NAMES) == 4


def test_grid_bfs() -> None:
    data = {"cells": ["10", "0X"]}
    assert verdict("grid_bfs", "0 1\n1 -1", **data).correct
    assert verdict("grid_bfs", "0, 1; 1, −1", **data).correct
    assert reward("grid_bfs", "0 1\n1 0", **data) == pytest.approx(0.75**10)
    assert reward("grid_bfs", "0 1", **data) == -0.5
    assert verdict("grid_bfs", "0 -1 -1", cells=["1X0"]).correct  # the last 0 is cut off
    assert get_env("grid_bfs").solve(problem("grid_bfs", **data)) == "0 1\n1 -1"


def test_grid_component() -> None:
    assert verdict("grid_component", "4", cells=["110", "011", "000"]).correct
    assert verdict("grid_component", "1", cells=["101", "010", "101"]).correct  # no diagonals
    assert reward("grid_component", "5", cells=["110", "011", "000"]) == 0.0
    assert (
        get_env("grid_component").solve(problem("grid_component", cells=["111", "000", "011"]))
        == "3"
    )


def test_eight_digit_puzzle() -> None:
    data = {"cols": 3, "start": [1, 2, 3, 4, 0, 5], "target": [1, 2, 3, 4, 5, 0], "bound": 1}
    assert verdict("eight_digit_puzzle", "R", **data).correct
    assert reward("eight_digit_puzzle", "L", **data) == pytest.approx(0.5**10)  # 3 of 6 cells
    assert reward("eight_digit_puzzle", "RL", **data) == -0.5  # over the bound
    assert reward("eight_digit_puzzle", "D", **data) == -0.5  # off the grid
    assert reward("eight_digit_puzzle", "X", **data) == -1.0
    roomy = {**data, "bound": 3}
    assert verdict("eight_digit_puzzle", "L R R", **roomy).correct  # any route within the bound
    assert get_env("eight_digit_puzzle").solve(problem("eight_digit_puzzle", **roomy)) == "R"


def test_jug_puzzle() -> None:
    data = {"caps": [3, 5], "target": 4}
    moves = "fill 1; pour 1 0; empty 0; pour 1 0; fill 1; pour 1 0"  # ends with 3 and 4
    assert verdict("jug_puzzle", moves, **data).correct
    assert verdict("jug_puzzle", moves.replace("; ", "\n").upper(), **data).correct
    assert verdict("jug_puzzle", moves.replace("pour 1 0", "pour 1 into 0"), **data).correct
    assert reward("jug_puzzle", "fill 1", **data) == 0.0
    assert reward("jug_puzzle", moves + "; empty 1", **data) == 0.0  # the 4 is poured away
    assert reward("jug_puzzle", "fill 2", **data) == -0.5
    assert reward("jug_puzzle", "pour 0 0", **data) == -0.5
    assert reward("jug_puzzle", "fill", **data) == -1.0
    solved = get_env("jug_puzzle").solve(problem("jug_puzzle", **data))
    assert verdict("jug_puzzle", solved, **data).correct and solved.count("\n") == 5


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_grid_component_flood_fill_agrees_with_union_find_on_random_grids() -> None:
    """The verifier's flood fill (flat indices, a 0 column after each row) and ``solve_int``'s
    union-find give the same largest component on random grids, square or not, where a
    component touching the right edge must not wrap into the next row."""
    import random

    from verirl.envs.grids.search import GridComponent
    from verirl.types import Problem

    env = get_env("grid_component")
    rng = random.Random(11)
    for _ in range(400):
        n, m = rng.randint(1, 9), rng.randint(1, 9)
        p = rng.random()
        cells = ["".join("1" if rng.random() < p else "0" for _ in range(m)) for _ in range(n)]
        problem = Problem("grid_component", 0, 0, "", "0", {"cells": cells})
        assert GridComponent._fast(cells) == env.solve_int(problem), cells
    assert GridComponent._fast(["01", "10"]) == 1  # the right edge does not touch the next row
