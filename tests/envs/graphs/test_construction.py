"""Graph-construction environments (graph_construction.py): hand-made graphs with valid,
partly valid and invalid answers, and the self-check."""

from __future__ import annotations

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import ENVIRONMENTS, env_names, get_env
from verirl.envs.selfcheck import self_check

NAMES = [
    n
    for n in env_names(family="graph_construction")
    if ENVIRONMENTS.get(n).part.__module__.endswith(".graphs.construction")
]

# a triangle 0-1-2 with a tail 2-3-4: the bridges are 2-3 and 3-4
TAIL = {"n": 5, "edges": [[0, 1], [1, 2], [2, 0], [2, 3], [3, 4]]}


def test_family_is_registered() -> None:
    assert len(NAMES) == 7


def test_bridge_scores_intersection_over_union() -> None:
    assert verdict("bridge", "(2, 3), (3, 4)", **TAIL).correct
    assert verdict("bridge", "4-3, 3-2", **TAIL).correct
    assert reward("bridge", "(3, 2)", **TAIL) == pytest.approx(0.5**5)
    assert reward("bridge", "(2, 3), (0, 1)", **TAIL) == pytest.approx((1 / 3) ** 5)
    assert reward("bridge", "(0, 4)", **TAIL) == -0.5  # not an edge
    assert reward("bridge", "(2, 3), (3, 2)", **TAIL) == -0.5  # listed twice
    assert reward("bridge", "(2, 3), (3, 4), (5, 5)", **TAIL) == -0.5
    assert get_env("bridge").solve(problem("bridge", **TAIL)) == "(2, 3), (3, 4)"


def test_even_degree_graph_partitioning() -> None:
    path = {"n": 3, "edges": [[0, 1], [1, 2]]}
    assert verdict("even_degree_graph_partitioning", "1, 2, 1", **path).correct
    assert verdict("even_degree_graph_partitioning", "[2, 1, 2]", **path).correct
    # all in one group: the two ends have one neighbour in their group
    r = reward("even_degree_graph_partitioning", "1, 1, 1", **path)
    assert r == pytest.approx((1 / 3) ** 10)
    assert reward("even_degree_graph_partitioning", "1, 3, 1", **path) == -0.5
    assert reward("even_degree_graph_partitioning", "1, 2", **path) == -0.5
    solved = get_env("even_degree_graph_partitioning").solve(
        problem("even_degree_graph_partitioning", **TAIL)
    )
    assert verdict("even_degree_graph_partitioning", solved, **TAIL).correct


def test_imp_party() -> None:
    clique = [[u, v] for u in range(4) for v in range(u + 1, 4)]
    data = {"n": 6, "k": 2, "edges": [*clique, [4, 5]]}
    assert verdict("imp_party", "0, 3", **data).correct
    assert verdict("imp_party", "5, 4", **data).correct  # any clique of size k
    assert reward("imp_party", "0, 4", **data) == 0.0
    assert reward("imp_party", "1, 1", **data) == -0.5
    assert reward("imp_party", "0, 1, 2", **data) == -0.5
    assert verdict("imp_party", get_env("imp_party").solve(problem("imp_party", **data)), **data)


def test_degree_fixed_spanning_tree() -> None:
    square = {"n": 4, "edges": [[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]], "degree": [1, 2, 2, 1]}
    assert verdict("degree_fixed_spanning_tree", "(0, 1), (1, 2), (2, 3)", **square).correct
    # a star at 0: only vertex 3 has its degree
    r = reward("degree_fixed_spanning_tree", "(0, 1), (0, 2), (0, 3)", **square)
    assert r == pytest.approx(0.25**5)
    assert reward("degree_fixed_spanning_tree", "(0, 1), (1, 2), (0, 2)", **square) == -0.5
    assert reward("degree_fixed_spanning_tree", "(1, 3), (1, 2), (0, 2)", **square) == -0.5
    solved = get_env("degree_fixed_spanning_tree").solve(
        problem("degree_fixed_spanning_tree", **square)
    )
    assert verdict("degree_fixed_spanning_tree", solved, **square).correct


def test_fixed_one_edge_num_spanning_tree() -> None:
    tri = {"n": 3, "edges": [[0, 1, 0], [1, 2, 1], [0, 2, 1]], "k": 1}
    assert verdict("fixed_one_edge_num_spanning_tree", "(0, 1), (1, 2)", **tri).correct
    assert verdict("fixed_one_edge_num_spanning_tree", "(0, 2), (1, 0)", **tri).correct
    assert reward("fixed_one_edge_num_spanning_tree", "(1, 2), (0, 2)", **tri) == 0.0
    assert reward("fixed_one_edge_num_spanning_tree", "(0, 1)", **tri) == -0.5
    two = {**tri, "k": 2}
    assert verdict("fixed_one_edge_num_spanning_tree", "(1, 2), (0, 2)", **two).correct
    solved = get_env("fixed_one_edge_num_spanning_tree").solve(
        problem("fixed_one_edge_num_spanning_tree", **two)
    )
    assert verdict("fixed_one_edge_num_spanning_tree", solved, **two).correct


def test_graph_isomorphism() -> None:
    data = {"n": 3, "edges": [[0, 1], [1, 2]], "edges2": [[0, 2], [2, 1]]}
    assert verdict("graph_isomorphism", "0, 2, 1", **data).correct
    assert verdict("graph_isomorphism", "1, 2, 0", **data).correct
    assert reward("graph_isomorphism", "0, 1, 2", **data) == pytest.approx(0.5**10)
    assert reward("graph_isomorphism", "0, 0, 1", **data) == -0.5


def test_hamiltonian_path_existence() -> None:
    cycle = {"n": 3, "edges": [[0, 1], [1, 2], [2, 0]]}
    assert verdict("hamiltonian_path_existence", "0, 1, 2", **cycle).correct
    assert verdict("hamiltonian_path_existence", "2 -> 0 -> 1", **cycle).correct
    assert reward("hamiltonian_path_existence", "2, 1, 0", **cycle) == 0.0  # against the arcs
    chain = {"n": 4, "edges": [[0, 1], [1, 2], [2, 3]]}
    r = reward("hamiltonian_path_existence", "0, 1, 3, 2", **chain)
    assert r == pytest.approx((1 / 3) ** 5)
    assert reward("hamiltonian_path_existence", "0, 1, 2", **chain) == -0.5
    assert (
        get_env("hamiltonian_path_existence").solve(problem("hamiltonian_path_existence", **chain))
        == "0, 1, 2, 3"
    )


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures
