"""The ``graph_optimization`` family (graphs_trees_paths.py, graphs_covers_flows.py):
hand-computed verdicts with exact partial credit, and the self-check."""

from __future__ import annotations

import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.graphs.covers_flows import count_minimum_spanning_trees
from verirl.envs.selfcheck import self_check

TREES_PATHS = [
    "longest_path",
    "maximum_weight_matching",
    "maximum_independent_set_tree",
    "min_cost_tree_coverage",
    "minimum_directed_spanning_tree",
    "minimum_ratio_path",
]


@pytest.mark.parametrize("name", TREES_PATHS)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_longest_path() -> None:
    edges = [[1, 2, 10], [0, 2, 5], [1, 0, 7], [3, 0, 7], [3, 1, 8], [3, 2, 10]]
    data = {"n": 4, "edges": edges}  # 3 -> 1 -> 0 -> 2 weighs 8 + 7 + 5 = 20
    assert verdict("longest_path", "3 1 0 2", **data).correct
    assert verdict("longest_path", "3 -> 1 -> 0 -> 2", **data).correct
    assert reward("longest_path", "3 1 2", **data) == pytest.approx(0.9**5)
    assert reward("longest_path", "3 2 1", **data) == -0.5  # no arc 2 -> 1
    assert reward("longest_path", "3 1 3", **data) == -0.5


def test_maximum_weight_matching() -> None:
    edges = [[1, 3, 2], [1, 4, 8], [1, 0, 7], [0, 4, 8], [0, 3, 10], [4, 3, 2], [0, 2, 6]]
    data = {"n": 5, "edges": edges}  # 0-3 + 1-4 = 18
    assert verdict("maximum_weight_matching", "0-3, 1-4", **data).correct
    assert verdict("maximum_weight_matching", "(4, 1), (3, 0)", **data).correct
    assert reward("maximum_weight_matching", "0-4, 1-3", **data) == pytest.approx((10 / 18) ** 5)
    assert reward("maximum_weight_matching", "0-3, 0-4", **data) == -0.5
    assert reward("maximum_weight_matching", "2-3", **data) == -0.5


def test_tree_independent_set_and_cover() -> None:
    data = {"n": 4, "edges": [[2, 3, 1], [0, 3, 1], [1, 2, 1]], "weights": [1, 3, 6, 9]}
    assert verdict("maximum_independent_set_tree", "1 3", **data).correct  # 3 + 9
    assert reward("maximum_independent_set_tree", "2 0", **data) == pytest.approx((7 / 12) ** 3)
    assert reward("maximum_independent_set_tree", "2 3", **data) == -0.5
    cover = {"n": 3, "edges": [[0, 2, 1], [1, 2, 1]], "weights": [5, 5, 7]}
    assert verdict("min_cost_tree_coverage", "2", **cover).correct
    assert reward("min_cost_tree_coverage", "0 1", **cover) == pytest.approx((7 / 10) ** 3)
    assert reward("min_cost_tree_coverage", "0", **cover) == -0.5


def test_minimum_directed_spanning_tree() -> None:
    data = {"n": 3, "root": 0, "edges": [[0, 1, 5], [0, 2, 1], [2, 1, 1], [1, 2, 1]]}
    name = "minimum_directed_spanning_tree"
    assert verdict(name, "2 0", **data).correct  # 0 -> 2 -> 1, weight 2
    assert reward(name, "0 0", **data) == pytest.approx((2 / 6) ** 5)
    assert reward(name, "2 1", **data) == -0.5  # 1 and 2 point at each other
    assert reward(name, "1 0", **data) == -0.5  # no arc 1 -> 1
    assert reward(name, "2", **data) == -0.5


def test_minimum_ratio_path() -> None:
    data = {"n": 3, "edges": [[0, 1, 2], [1, 2, 4], [0, 2, 3]], "source": 0, "target": 2}
    assert verdict("minimum_ratio_path", "0 2", **data).correct  # one edge: ratio 1
    assert reward("minimum_ratio_path", "0 1 2", **data) == pytest.approx(0.5**5)
    assert reward("minimum_ratio_path", "0 1", **data) == -0.5
    assert reward("minimum_ratio_path", "0 3 2", **data) == -0.5


COVERS_FLOWS = [
    "min_path_cover_dag",
    "minimum_spanning_tree_counting",
    "mixed_graph_eulerian_circuit",
    "minimum_dominating_set",
    "minimum_crossing_edges_graph_partition",
    "minimum_chromatic_number",
]


def test_family_is_registered() -> None:
    names = [*TREES_PATHS, *COVERS_FLOWS, *STEINER_FLOW, "minimum_harmonious_chromatic_number"]
    assert set(names) <= set(env_names(family="graph_optimization"))


@pytest.mark.parametrize("name", COVERS_FLOWS)
def test_self_check_covers_flows(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_min_path_cover_dag() -> None:
    edges = [[1, 2, 1], [1, 3, 1], [1, 4, 1], [2, 4, 1], [3, 4, 1]]
    data = {"n": 4, "edges": edges}  # 2 and 3 cannot share a path: two paths
    assert verdict("min_path_cover_dag", "1 2 4; 3", **data).correct
    assert verdict("min_path_cover_dag", "2\n1 3 4", **data).correct
    assert reward("min_path_cover_dag", "1; 2; 3; 4", **data) == pytest.approx(0.5**5)
    assert reward("min_path_cover_dag", "1 2 4", **data) == -0.5  # 3 is not covered
    assert reward("min_path_cover_dag", "1 4 2; 3", **data) == -0.5  # no arc 4 -> 2


def test_minimum_spanning_tree_counting() -> None:
    square = [[0, 1, 1], [1, 2, 1], [2, 3, 1], [3, 0, 1], [0, 2, 5]]
    data = {"n": 4, "edges": square}  # any three of the four light edges
    assert verdict("minimum_spanning_tree_counting", "4", **data).correct
    assert reward("minimum_spanning_tree_counting", "3", **data) == 0.0
    assert count_minimum_spanning_trees(4, [[0, 1, 1], [1, 2, 1], [0, 2, 1], [2, 3, 2]]) == 3
    env = get_env("minimum_spanning_tree_counting")
    rng = random.Random(4)
    for _ in range(30):
        n = rng.randint(2, 6)
        pairs = [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < 0.7]
        pairs += [(i, i + 1) for i in range(n - 1) if (i, i + 1) not in pairs]
        edges = [[u, v, rng.randint(1, 2)] for u, v in pairs]
        p = problem("minimum_spanning_tree_counting", n=n, edges=edges)
        assert int(env.solve(p)) == count_minimum_spanning_trees(n, edges)  # brute force


def test_mixed_graph_eulerian_circuit() -> None:
    data = {"n": 3, "directed": [[0, 1]], "undirected": [[2, 0], [2, 1]]}
    assert verdict("mixed_graph_eulerian_circuit", "2 1", **data).correct  # 0->1->2->0
    # 0 -> 2 and 1 -> 2: only vertex 1 is balanced
    assert reward("mixed_graph_eulerian_circuit", "0 1", **data) == pytest.approx((1 / 3) ** 10)
    assert reward("mixed_graph_eulerian_circuit", "3 1", **data) == -0.5
    assert reward("mixed_graph_eulerian_circuit", "2", **data) == -0.5


def test_minimum_dominating_set() -> None:
    data = {"n": 4, "edges": [[0, 1, 1], [1, 2, 1], [2, 3, 1], [3, 0, 1]]}
    assert verdict("minimum_dominating_set", "0 2", **data).correct
    assert verdict("minimum_dominating_set", "0 1", **data).correct
    assert reward("minimum_dominating_set", "0 1 2", **data) == pytest.approx((2 / 3) ** 5)
    assert reward("minimum_dominating_set", "0", **data) == -0.5  # 2 is not dominated


def test_minimum_crossing_edges_graph_partition() -> None:
    edges = [[1, 2, 1], [0, 2, 1], [1, 0, 1], [1, 3, 1], [2, 3, 1]]
    data = {"n": 4, "edges": edges}  # {0, 1} and {0, 2} cut 3 edges, {0, 3} cuts 4
    name = "minimum_crossing_edges_graph_partition"
    assert verdict(name, "0 1", **data).correct
    assert verdict(name, "2 3", **data).correct  # the other half of {0, 1}
    assert reward(name, "0 3", **data) == pytest.approx(0.75**5)
    assert reward(name, "0", **data) == -0.5


def test_minimum_chromatic_number() -> None:
    data = {"n": 4, "edges": [[0, 1, 1], [1, 2, 1], [0, 2, 1], [2, 3, 1]], "k": 3}
    assert verdict("minimum_chromatic_number", "0 1 2 0", **data).correct
    assert reward("minimum_chromatic_number", "0 1 2 3", **data) == pytest.approx(0.75**5)
    assert reward("minimum_chromatic_number", "0 0 1 2", **data) == -0.5


STEINER_FLOW = ["minimum_steiner_tree", "minimum_cost_maximum_flow"]


@pytest.mark.parametrize("name", STEINER_FLOW)
def test_self_check_steiner_flow(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_minimum_steiner_tree() -> None:
    edges = [[2, 1, 2], [3, 0, 8], [0, 1, 5], [4, 3, 3], [3, 2, 6], [3, 1, 7]]
    data = {"n": 5, "edges": edges, "terminals": [1, 2, 4]}  # 1-2, 2-3, 3-4 weighs 11
    assert verdict("minimum_steiner_tree", "1-2, 2-3, 3-4", **data).correct
    assert reward("minimum_steiner_tree", "1-3, 3-4, 1-2", **data) == pytest.approx((11 / 12) ** 5)
    assert reward("minimum_steiner_tree", "1-2, 3-4", **data) == -0.5  # 4 is cut off
    assert reward("minimum_steiner_tree", "1-4, 1-2", **data) == -0.5  # no edge 1-4
    rng = random.Random(12)
    env = get_env("minimum_steiner_tree")
    for seed in range(20):
        p = env.generate(rng.randint(0, 12), seed)
        found = env.solve(p)  # exhaustive over Steiner vertex sets
        assert env.check(p, found).correct


def test_minimum_cost_maximum_flow() -> None:
    arcs = [[0, 2, 4, 6], [1, 2, 4, 6], [0, 1, 5, 5], [2, 3, 4, 9], [2, 1, 2, 6], [1, 3, 4, 9]]
    data = {"n": 4, "edges": arcs}  # value 8: 4 along 0-2-3, 4 along 0-1-3, cost 116
    name = "minimum_cost_maximum_flow"
    assert verdict(name, "4 0 4 4 0 4", **data).correct
    assert reward(name, "3 1 5 4 0 4", **data) == pytest.approx((116 / 121) ** 5)
    assert reward(name, "4 0 0 4 0 0", **data) == pytest.approx(0.5 * 0.5**5)
    assert reward(name, "5 0 4 4 0 4", **data) == -0.5  # above capacity
    assert reward(name, "4 0 4 3 0 4", **data) == -0.5  # vertex 2 does not balance


def test_minimum_harmonious_chromatic_number() -> None:
    name = "minimum_harmonious_chromatic_number"
    report = self_check(get_env(name))
    assert not report.failures, report.failures
    # a path 0-1-2-3: colours 0 1 2 0 repeat no pair ({0,1}, {1,2}, {0,2}); 2 colours cannot
    data = {"n": 4, "edges": [[0, 1, 1], [1, 2, 1], [2, 3, 1]]}
    assert verdict(name, "0 1 2 0", **data).correct
    assert reward(name, "0 1 2 3", **data) == pytest.approx(0.75**5)
    assert reward(name, "0 1 0 1", **data) == -0.5  # the pair {0, 1} on three edges
    assert reward(name, "0 0 1 2", **data) == -0.5  # edge 0-1 with one colour
    env = get_env(name)
    rng = random.Random(16)
    for _ in range(30):
        n = rng.randint(2, 6)
        pairs = {(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < 0.4}
        edges = [[u, v, 1] for u, v in sorted(pairs)]
        p = problem(name, n=n, edges=edges)
        assert env.check(p, env.solve(p)).correct  # every-colouring search agrees
