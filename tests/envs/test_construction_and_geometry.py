"""Array constructions (array_construction.py) and the convex hull (geometry_convex_hull.py):
hand-made instances with valid, partial and invalid answers, the two hull algorithms against
each other, and the self-check."""

from __future__ import annotations

import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import ENVIRONMENTS, env_names, get_env
from verirl.envs.selfcheck import self_check

MINE = ("assignments", "convex_hull")
NAMES = [n for n in env_names() if ENVIRONMENTS.get(n).part.__module__.rsplit(".", 1)[1] in MINE]


def test_family_is_registered() -> None:
    assert len(NAMES) == 4


def test_convex_hull() -> None:
    square = {"points": [[0, 0], [2, 0], [2, 2], [0, 2], [1, 1]]}  # area 4
    assert verdict("convex_hull", "8", **square).correct
    assert reward("convex_hull", "6", **square) == pytest.approx(0.75**5)
    tri = {"points": [[0, 0], [4, 0], [0, 3], [1, 1], [2, 0]]}  # area 6, a point on an edge
    assert verdict("convex_hull", "12", **tri).correct
    env = get_env("convex_hull")
    rng = random.Random(2)
    for _ in range(200):
        pts = [[rng.randint(0, 6), rng.randint(0, 6)] for _ in range(rng.randint(3, 9))]
        p = problem("convex_hull", points=pts)
        assert env.verify(p, f"\\boxed{{{env.solve(p)}}}").correct, pts


def test_distinct_array_permutation() -> None:
    a = {"a": [1, 2, 3]}
    name = "distinct_array_permutation"
    assert verdict(name, "2, 3, 1", **a).correct  # differences -1, -1, 2: no zero subset
    assert reward(name, "1, 3, 2", **a) == 0.0  # position 1 alone has equal sums
    assert reward(name, "3, 2, 1", **a) == 0.0
    assert reward(name, "1, 2, 4", **a) == -0.5
    assert reward(name, "2, 3", **a) == -0.5
    assert verdict(name, get_env(name).solve(problem(name, a=[5, 1, 9, 4])), a=[5, 1, 9, 4]).correct


def test_integer_programming() -> None:
    data = {"n": 2, "r": 3, "rows": [[1, 1, 3], [1, -1, 0]]}  # x0 + x1 <= 3, x0 - x1 <= 0
    assert verdict("integer_programming", "1, 2", **data).correct
    assert verdict("integer_programming", "x[0] = 0, x[1] = 0", **data).correct
    assert reward("integer_programming", "2, 1", **data) == pytest.approx(0.5**5)
    assert reward("integer_programming", "3, 1", **data) == 0.0
    assert reward("integer_programming", "4, 0", **data) == -0.5  # outside [0, 3]
    assert get_env("integer_programming").solve(problem("integer_programming", **data)) == "0, 0"


def test_different_color_pairing() -> None:
    name = "different_color_pairing"
    assert verdict(name, "(0, 2), (1, 3)", colours=[1, 1, 2, 2]).correct
    assert verdict(name, "0-3, 2-1", colours=[1, 1, 2, 2]).correct
    assert reward(name, "(0, 1), (2, 3)", colours=[1, 1, 2, 2]) == 0.0
    assert reward(name, "(0, 1), (2, 3)", colours=[1, 1, 2, 3]) == pytest.approx(0.5**10)
    assert reward(name, "(0, 2), (1, 2)", colours=[1, 1, 2, 2]) == -0.5
    assert reward(name, "(0, 2)", colours=[1, 1, 2, 2]) == -0.5
    solved = get_env(name).solve(problem(name, colours=[3, 3, 3, 1, 2, 2]))
    assert verdict(name, solved, colours=[3, 3, 3, 1, 2, 2]).correct


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures
