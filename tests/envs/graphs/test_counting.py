"""Graph counting environments (graph_counting.py): hand-counted graphs, the verifier's method
against the solver, yes/no balance, and the self-check."""

from __future__ import annotations

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import ENVIRONMENTS, env_names, get_env
from verirl.envs.selfcheck import self_check

NAMES = [
    n
    for n in env_names(family="graph_counting")
    if ENVIRONMENTS.get(n).part.__module__.endswith(".graphs.counting")
]
K4 = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
SQUARE = [[0, 1], [1, 2], [2, 3], [3, 0]]


def _solved(name: str, **data: object) -> str:
    return get_env(name).solve(problem(name, **data))


def test_family_is_registered() -> None:
    assert len(NAMES) == 5


def test_check_all_cycle_xor_zero() -> None:
    name = "check_all_cycle_xor_zero"
    zero = {"n": 3, "edges": [[0, 1, 1], [1, 2, 2], [2, 0, 3]]}  # 1 ^ 2 ^ 3 = 0
    assert verdict(name, "Yes", **zero).correct
    assert verdict(name, "\\text{yes}", **zero).correct
    assert reward(name, "No", **zero) == 0.0
    assert reward(name, "perhaps", **zero) == -1.0
    odd = {"n": 3, "edges": [[0, 1, 1], [1, 2, 2], [2, 0, 4]]}
    assert verdict(name, "No", **odd).correct and _solved(name, **odd) == "No"
    assert verdict(name, "Yes", n=3, edges=[[0, 1, 5], [1, 2, 6]]).correct  # no cycle at all
    answers = [get_env(name).generate(d, s).answer for d in (0, 3, 8) for s in range(40)]
    assert 0.25 < answers.count("Yes") / len(answers) < 0.75


def test_cycle_counting() -> None:
    assert verdict("cycle_counting", "7", n=4, edges=K4).correct  # 4 triangles, 3 squares
    assert verdict("cycle_counting", "1", n=4, edges=SQUARE).correct
    assert verdict("cycle_counting", "3", n=4, edges=[*SQUARE, [0, 2]]).correct
    assert _solved("cycle_counting", n=4, edges=K4) == "7"
    assert reward("cycle_counting", "6", n=4, edges=K4) == pytest.approx((6 / 7) ** 10)


def test_coloring_counting() -> None:
    tri = [[0, 1], [1, 2], [2, 0]]
    assert verdict("coloring_counting", "6", n=3, edges=tri, k=3).correct
    assert verdict("coloring_counting", "2", n=3, edges=[[0, 1], [1, 2]], k=2).correct
    assert verdict("coloring_counting", "0", n=4, edges=K4, k=3).correct
    assert verdict("coloring_counting", "18", n=4, edges=SQUARE, k=3).correct  # (k-1)^4 + k-1
    assert verdict("coloring_counting", "9", n=2, edges=[], k=3).correct
    assert _solved("coloring_counting", n=4, edges=SQUARE, k=3) == "18"
    assert reward("coloring_counting", "9", n=4, edges=SQUARE, k=3) == pytest.approx(0.5**10)


def test_clique_independent_set_partitioning_counting() -> None:
    name = "clique_independent_set_partitioning_counting"
    # path 0-1-2: C = {1}, {0, 1}, {1, 2}
    assert verdict(name, "3", n=3, edges=[[0, 1], [1, 2]]).correct
    # triangle: C = all three, or any two
    assert verdict(name, "4", n=3, edges=[[0, 1], [1, 2], [2, 0]]).correct
    assert _solved(name, n=3, edges=[[0, 1], [1, 2]]) == "3"
    assert reward(name, "2", n=3, edges=[[0, 1], [1, 2]]) == pytest.approx((2 / 3) ** 10)


def test_graph_contain_tree_counting() -> None:
    name = "graph_contain_tree_counting"
    tri = [[0, 1], [1, 2], [2, 0]]
    path = [[0, 1], [1, 2]]
    assert verdict(name, "6", n=3, edges=tri, tree=path).correct  # any order fits a triangle
    assert verdict(name, "2", n=3, edges=path, tree=path).correct  # the middle stays
    assert verdict(name, "2", n=3, edges=path, tree=[[1, 0], [0, 2]]).correct  # p(0) = 1
    star = [[0, 1], [0, 2], [0, 3]]
    assert verdict(name, "0", n=4, edges=[[0, 1], [1, 2], [2, 3]], tree=star).correct
    assert verdict(name, "24", n=4, edges=K4, tree=star).correct
    assert _solved(name, n=3, edges=path, tree=path) == "2"
    assert reward(name, "3", n=3, edges=path, tree=path) == pytest.approx((2 / 3) ** 10)


@pytest.mark.parametrize("name", NAMES)
def test_verifier_method_matches_solver(name: str) -> None:
    env = get_env(name)
    for d in (0, 2, 5, 9):
        for seed in range(6):
            p = env.generate(d, seed)
            assert env.solve(p) == p.answer, (d, seed)


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures
