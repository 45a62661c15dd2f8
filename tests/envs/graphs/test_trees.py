"""Tree environments from RLVE rows: hand-computed instances, brute-force cross-checks of the
tree DPs and closed forms, and the self-check."""

from __future__ import annotations

import itertools
import random

import networkx as nx
import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.kit.graphs import adjacency, random_tree
from verirl.envs.selfcheck import self_check

COUNTING = env_names(family="trees_counting")
CHOICES = env_names(family="trees_choices")


def test_families_are_registered() -> None:
    assert len(COUNTING) == 6 and len(CHOICES) == 5


@pytest.mark.parametrize("name", COUNTING + CHOICES)
def test_self_check(name: str) -> None:
    assert self_check(get_env(name)).failures == []


def _trees(count: int, n: int, base: int = 0) -> list[list[list[int]]]:
    rng = random.Random(7)
    return [[list(e) for e in random_tree(rng, list(range(base, n + base)))] for _ in range(count)]


def test_tree_topological_sequence_counting() -> None:
    name = "tree_topological_sequence_counting"
    assert verdict(name, "2", n=3, arcs=[[0, 1], [0, 2]]).correct
    assert verdict(name, "2", n=3, arcs=[[0, 1], [2, 1]]).correct
    assert verdict(name, "1", n=3, arcs=[[0, 1], [1, 2]]).correct
    assert reward(name, "3", n=3, arcs=[[0, 1], [1, 2]]) == 0.0
    env, rng = get_env(name), random.Random(3)
    for edges in _trees(6, 7):
        arcs = [e if rng.random() < 0.5 else e[::-1] for e in edges]
        brute = sum(
            1 for p in itertools.permutations(range(7)) if all(p[u] < p[v] for u, v in arcs)
        )
        assert env.solve(problem(name, n=7, arcs=arcs)) == str(brute)


def test_tree_distance_equal_triads() -> None:
    name = "tree_distance_equal_triad_counting"
    assert verdict(name, "1", n=4, edges=[[1, 2], [1, 3], [1, 4]]).correct  # the three leaves
    assert verdict(name, "0", n=4, edges=[[1, 2], [2, 3], [3, 4]]).correct
    assert reward(name, "2", n=4, edges=[[1, 2], [1, 3], [1, 4]]) == pytest.approx(0.5**10)
    env = get_env(name)
    for edges in _trees(6, 12, base=1):
        dist = dict(nx.all_pairs_shortest_path_length(nx.Graph([tuple(e) for e in edges])))
        brute = sum(
            1
            for a, b, c in itertools.combinations(range(1, 13), 3)
            if dist[a][b] == dist[a][c] == dist[b][c]
        )
        assert env.solve(problem(name, n=12, edges=edges)) == str(brute)


def test_tree_elimination_expectation_reads_fractions() -> None:
    name = "tree_elimination_expectation"
    assert verdict(name, "2", parents=[1, 1]).correct  # 1 + 1/2 + 1/2
    for text in ("11/6", "\\frac{11}{6}", "\\dfrac{11}{6}", "22/12", "$11/6$"):
        assert verdict(name, text, parents=[1, 2]).correct, text  # 1 + 1/2 + 1/3
    assert reward(name, "11/5", parents=[1, 2]) == 0.0
    assert reward(name, "1/0", parents=[1, 2]) == -1.0
    assert reward(name, "eleven sixths", parents=[1, 2]) == -1.0


def test_preorder_traversal() -> None:
    data = {"inorder": [0, 1, 2], "postorder": [0, 2, 1]}  # root 1, children 0 and 2
    assert verdict("preorder_traversal", "1, 0, 2", **data).correct
    assert reward("preorder_traversal", "1, 2, 0", **data) == pytest.approx((1 / 3) ** 10)
    assert reward("preorder_traversal", "0, 1", **data) == -0.5


def test_tree_center_and_coloring() -> None:
    path = {"n": 3, "edges": [[0, 1, 1], [1, 2, 1]]}  # sums 3, 2, 3
    assert verdict("tree_center", "1", **path).correct
    assert reward("tree_center", "0", **path) == pytest.approx((2 / 3) ** 8)
    assert reward("tree_center", "3", **path) == -0.5
    # one black: the white pair is the profit; black 1 leaves 0 and 2 at distance 2
    assert verdict("tree_coloring", "1", k=1, **path).correct
    assert reward("tree_coloring", "0", k=1, **path) == pytest.approx(0.5**2)
    assert reward("tree_coloring", "0, 1", k=1, **path) == -0.5
    from verirl.envs.graphs.tree_choices import _best_profit, _profit

    rng = random.Random(5)
    for edges in _trees(5, 9):
        data = {
            "n": 9,
            "k": rng.randint(1, 8),
            "edges": [[u, v, rng.randint(1, 9)] for u, v in edges],
        }
        brute = max(_profit(data, set(bs)) for bs in itertools.combinations(range(9), data["k"]))
        assert _best_profit(data) == brute


def test_tree_even_partitioning() -> None:
    data = {"n": 4, "k": 2, "edges": [[1, 2], [2, 3], [3, 4]]}
    assert verdict("tree_even_partitioning", "1 2; 3 4", **data).correct
    assert verdict("tree_even_partitioning", "4 3; 2 1", **data).correct
    assert reward("tree_even_partitioning", "1 3; 2 4", **data) == 0.0
    assert reward("tree_even_partitioning", "1 2 3; 4", **data) == -0.5
    assert reward("tree_even_partitioning", "1 2; 3 3", **data) == -0.5


def test_tree_maximum_visited_vertex() -> None:
    star = {"n": 4, "m": 3, "edges": [[0, 1], [0, 2], [0, 3]]}  # min(4, 1 + 1 + 1) = 3
    assert verdict("tree_maximum_visited_vertex", "1, 0, 2", **star).correct
    assert reward("tree_maximum_visited_vertex", "1, 0, 1", **star) == pytest.approx((2 / 3) ** 3)
    assert reward("tree_maximum_visited_vertex", "2, 3", **star) == -0.5
    assert reward("tree_maximum_visited_vertex", "1, 0, 2, 0", **star) == -0.5  # 4 moves
    from verirl.envs.graphs.tree_choices import _max_visited

    for edges in _trees(8, 7):
        adj = adjacency(7, edges)
        for m in range(1, 12):  # breadth-first search over (vertex, visited set)
            states = {(0, frozenset([0]))}
            best = 1
            for _ in range(m):
                states = {(w, vis | {w}) for v, vis in states for w in adj[v]}
                best = max(best, max(len(vis) for _, vis in states))
            assert _max_visited({"n": 7, "m": m, "edges": edges}) == best, (edges, m)


def test_weighted_binary_tree() -> None:
    scores = {"scores": [1, 2, 3]}  # best 6: root 0 over (root 1 over 2), and others
    for pre in ("0, 1, 2", "0, 2, 1", "2, 1, 0"):
        assert verdict("weighted_binary_tree", pre, **scores).correct, pre
    assert reward("weighted_binary_tree", "1, 0, 2", **scores) == pytest.approx((5 / 6) ** 5)
    assert reward("weighted_binary_tree", "1, 2, 0", **scores) == -0.5  # not a valid preorder
    assert reward("weighted_binary_tree", "0, 1", **scores) == -0.5


def test_tree_random_walk_expectation() -> None:
    path = {"n": 3, "edges": [[0, 1], [1, 2]], "u": 0, "v": 2}  # E0 = 1 + E1, E1 = 1 + E0/2
    assert verdict("tree_random_walk_expectation", "4", **path).correct
    assert reward("tree_random_walk_expectation", "3", **path) == 0.0
    star = {"n": 4, "edges": [[0, 1], [0, 2], [0, 3]], "u": 1, "v": 2}  # E0 = 5, E1 = 6
    assert verdict("tree_random_walk_expectation", "6", **star).correct


def test_pol_polarization() -> None:
    assert self_check(get_env("pol_polarization")).failures == []
    assert verdict("pol_polarization", "3", n=3, edges=[[0, 1], [1, 2]]).correct
    star = {"n": 4, "edges": [[0, 1], [0, 2], [0, 3]]}  # 1, 2 → 0 → 3: five pairs
    assert verdict("pol_polarization", "5", **star).correct
    assert reward("pol_polarization", "6", **star) == 0.0
    from verirl.envs.graphs.tree_counting import _polarization
    from verirl.envs.kit.graphs import random_tree

    env, rng = get_env("pol_polarization"), random.Random(14)
    for _ in range(40):  # the split formula against every orientation
        n = rng.randint(2, 9)
        edges = [list(e) for e in random_tree(rng, list(range(n)))]
        data = {"n": n, "edges": edges}
        assert env.solve(problem("pol_polarization", **data)) == str(_polarization(data))
