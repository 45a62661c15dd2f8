"""Grid-puzzle environments (grids/logic_puzzles.py): hand-made puzzles with valid, partly
valid and invalid fillings, and the self-check (the grid reader: tests/envs/kit/test_grids.py)."""

from __future__ import annotations

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import ENVIRONMENTS, env_names, get_env
from verirl.envs.selfcheck import self_check

NAMES = [
    n
    for n in env_names(family="grid_puzzles")
    if ENVIRONMENTS.get(n).part.__module__.endswith(".grids.logic_puzzles")
]
FREE4 = {"rows": 4, "cols": 4, "given": [[-1] * 4 for _ in range(4)]}


def test_family_is_registered() -> None:
    assert len(NAMES) == 6


def test_binario() -> None:
    given = [[0, -1, 1, -1], [-1, 1, -1, 0], [0, -1, -1, -1], [-1, -1, 1, 0]]
    data = {"rows": 4, "cols": 4, "given": given}
    assert verdict("binario", "0011\n1100\n0101\n1010", **data).correct
    assert reward("binario", "1011\n1100\n0101\n1010", **data) == -0.5  # a given changed
    assert reward("binario", "0021\n1100\n0101\n1010", **data) == -0.5
    assert reward("binario", "0011\n1100\n0101", **data) == -0.5  # a row short
    # any filling that keeps the rules counts, not only the planted one
    assert verdict("binario", "0011\n0011\n1100\n1100", **FREE4).correct
    # columns unbalanced (4 of 4 broken) and four vertical triples: 16 of 24 rules hold
    r = reward("binario", "0011\n0011\n0011\n1100", **FREE4)
    assert r == pytest.approx((16 / 24) ** 10)
    assert get_env("binario").solve(problem("binario", **data)) == "0011\n1100\n0101\n1010"


def test_binario_no_adjacency_is_binary() -> None:
    name = "binario_no_adjacency_requirement"
    assert verdict(name, "0001\n0011\n1110\n1100", **FREE4).correct is False  # rows unbalanced
    assert verdict(name, "0011\n0011\n1100\n1100", **FREE4).correct
    assert verdict(name, "0110\n0110\n1001\n1001", **FREE4).correct
    assert reward(name, "0011\n0011\n0011\n1100", **FREE4) == 0.0
    assert reward(name, "0011\n0011\n0011", **FREE4) == -0.5


def test_kakurasu() -> None:
    data = {"rows": 3, "cols": 3, "row_sums": [4, 2, 3], "col_sums": [4, 5, 1]}
    assert verdict("kakurasu", "101\n010\n110", **data).correct
    # rows right, every column wrong
    assert reward("kakurasu", "101\n010\n001", **data) == pytest.approx(0.5**10)
    assert reward("kakurasu", "102\n010\n110", **data) == -0.5
    assert get_env("kakurasu").solve(problem("kakurasu", **data)) == "101\n010\n110"


def test_grid_parity_construction() -> None:
    data = {"rows": 3, "cols": 3, "parity": [[1, 1, 0], [1, 0, 0], [0, 0, 0]]}
    assert verdict("grid_parity_construction", "100\n000\n000", **data).correct
    r = reward("grid_parity_construction", "000\n000\n000", **data)
    assert r == pytest.approx((6 / 9) ** 5)
    solved = get_env("grid_parity_construction").solve(problem("grid_parity_construction", **data))
    assert verdict("grid_parity_construction", solved, **data).correct


def test_futoshiki_puzzle() -> None:
    data = {
        "rows": 3,
        "cols": 3,
        "given": [[1, 0, 0], [0, 0, 0], [0, 0, 2]],
        "less": [[0, 1, 0, 2], [1, 0, 2, 0]],
    }
    assert verdict("futoshiki_puzzle", "1 2 3\n2 3 1\n3 1 2", **data).correct
    assert verdict("futoshiki_puzzle", "1, 2, 3; 2, 3, 1; 3, 1, 2", **data).correct
    # row 2 and column 0 repeat a value, and 2 < 2 fails: 5 of 8 rules hold
    r = reward("futoshiki_puzzle", "1 2 3\n2 3 1\n2 1 2", **data)
    assert r == pytest.approx((5 / 8) ** 5)
    assert reward("futoshiki_puzzle", "1 2 3\n3 1 2\n2 3 1", **data) == -0.5  # given changed
    assert reward("futoshiki_puzzle", "1 2 3\n2 3 4\n3 1 2", **data) == -0.5  # out of range
    solved = get_env("futoshiki_puzzle").solve(problem("futoshiki_puzzle", **data))
    assert solved == "1 2 3\n2 3 1\n3 1 2"


def test_hitori_puzzle() -> None:
    data = {"rows": 3, "cols": 3, "values": [[1, 1, 2], [2, 3, 1], [3, 2, 3]]}
    assert verdict("hitori_puzzle", "010\n000\n100", **data).correct
    assert verdict("hitori_puzzle", "100\n000\n001", **data).correct  # another valid shading
    # nothing shaded: rows 0 and 2 repeat a number (17 of 19 rules)
    assert reward("hitori_puzzle", "000\n000\n000", **data) == pytest.approx((17 / 19) ** 10)
    # two shaded cells touch (18 of 19 rules)
    assert reward("hitori_puzzle", "110\n000\n101", **data) == pytest.approx((18 / 19) ** 10)
    # the shaded cells cut off the corner (0, 0): connectivity fails (18 of 19)
    assert reward("hitori_puzzle", "010\n100\n001", **data) == pytest.approx((18 / 19) ** 10)
    assert reward("hitori_puzzle", "012\n000\n100", **data) == -0.5
    solved = get_env("hitori_puzzle").solve(problem("hitori_puzzle", **data))
    assert verdict("hitori_puzzle", solved, **data).correct


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures
