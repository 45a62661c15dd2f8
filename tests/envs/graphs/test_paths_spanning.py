"""Hand-computed verifier examples for the graph environments (graphs.py, graphs_structure.py)."""

from __future__ import annotations

import networkx as nx
import pytest

from tests.envs.helpers import problem as _problem
from tests.envs.helpers import scored
from verirl.envs import get_env
from verirl.envs.kit.graphs import parse_pairs, parse_vertices, to_graph
from verirl.types import Problem


def _reward(env: str, problem: Problem, answer: str) -> tuple[float, bool]:
    return scored(env, problem, answer, lead="so ")


# A square 0-1-3-2-0 of weight-1 edges plus a heavy diagonal 0-3 (weight 5).
SQUARE = [[0, 1, 1], [1, 3, 1], [0, 2, 1], [2, 3, 1], [0, 3, 5]]


def test_vertex_and_pair_parsing() -> None:
    assert parse_vertices("0 -> 2 -> 3") == [0, 2, 3]
    assert parse_vertices("[0, 2, 3]") == [0, 2, 3]
    assert parse_vertices("0-2-3") == [0, 2, 3]
    assert parse_pairs("(0, 1), (2, 3)") == [(0, 1), (2, 3)]
    assert parse_pairs("0-1, 2-3") == [(0, 1), (2, 3)]
    with pytest.raises(ValueError):
        parse_vertices("zero, one")
    with pytest.raises(ValueError):
        parse_pairs("0-1, 2")


def test_shortest_path_accepts_every_shortest_path() -> None:
    p = _problem("shortest_path", n=4, edges=SQUARE, source=0, target=3)
    assert _reward("shortest_path", p, "0, 1, 3") == (1.0, True)
    assert _reward("shortest_path", p, "0 -> 2 -> 3") == (1.0, True)
    # the direct edge weighs 5 against the optimum 2: (2/5)^5
    reward, correct = _reward("shortest_path", p, "0, 3")
    assert not correct and reward == pytest.approx(0.4**5)


def test_shortest_path_invalid_and_unparsable() -> None:
    p = _problem("shortest_path", n=4, edges=SQUARE, source=0, target=3)
    assert _reward("shortest_path", p, "0, 1, 2, 3")[0] == -0.5  # 1-2 is not an edge
    assert _reward("shortest_path", p, "0, 1")[0] == -0.5  # does not reach the target
    assert _reward("shortest_path", p, "0, 7, 3")[0] == -0.5  # unknown vertex
    assert _reward("shortest_path", p, "zero to three")[0] == -1.0
    assert get_env("shortest_path").verify(p, "0, 1, 3").reward == -1.0  # no box


def test_shortest_path_length_counts() -> None:
    p = _problem("shortest_path_length", n=4, edges=SQUARE, source=0, target=3)
    assert _reward("shortest_path_length", p, "2") == (1.0, True)
    reward, correct = _reward("shortest_path_length", p, "3")
    assert not correct and reward == pytest.approx((2 / 3) ** 10)
    assert _reward("shortest_path_length", p, "two")[0] == -1.0


# MST weight 4, reached by two different trees.
TWO_MSTS = [[0, 1, 1], [1, 2, 2], [0, 2, 2], [2, 3, 1], [1, 3, 3]]


def test_minimum_spanning_tree_accepts_any_minimum_tree() -> None:
    p = _problem("minimum_spanning_tree", n=4, edges=TWO_MSTS)
    assert _reward("minimum_spanning_tree", p, "0-1, 2-3, 1-2") == (1.0, True)
    assert _reward("minimum_spanning_tree", p, "(0, 1), (3, 2), (0, 2)") == (1.0, True)
    reward, correct = _reward("minimum_spanning_tree", p, "0-1, 2-3, 1-3")  # weight 5
    assert not correct and reward == pytest.approx(0.8**5)


def test_minimum_spanning_tree_invalid_answers() -> None:
    p = _problem("minimum_spanning_tree", n=4, edges=TWO_MSTS)
    assert _reward("minimum_spanning_tree", p, "0-1, 1-2, 0-2")[0] == -0.5  # a cycle
    assert _reward("minimum_spanning_tree", p, "0-1, 2-3, 0-3")[0] == -0.5  # 0-3 no edge
    assert _reward("minimum_spanning_tree", p, "0-1, 2-3")[0] == -0.5  # too few edges
    assert _reward("minimum_spanning_tree", p, "0-1, 2")[0] == -1.0


def test_mst_weight_and_tree_diameter() -> None:
    p = _problem("mst_weight", n=4, edges=TWO_MSTS)
    assert _reward("mst_weight", p, "4") == (1.0, True)
    assert _reward("mst_weight", p, "5")[0] == pytest.approx(0.8**10)
    tree = _problem("tree_diameter", n=4, edges=[[0, 1, 3], [1, 2, 4], [1, 3, 10]])
    assert _reward("tree_diameter", tree, "14") == (1.0, True)  # 2-1-3: 4 + 10
    assert _reward("tree_diameter", tree, "7")[0] == pytest.approx(0.5**10)


def test_connected_components() -> None:
    p = _problem("connected_components", n=5, edges=[[0, 1, 1], [2, 3, 1]])
    assert _reward("connected_components", p, "3") == (1.0, True)  # {0,1}, {2,3}, {4}
    assert _reward("connected_components", p, "2")[0] == pytest.approx((2 / 3) ** 10)


def test_topological_sort_accepts_any_valid_order() -> None:
    p = _problem("topological_sort", n=4, edges=[[0, 1, 1], [0, 2, 1], [1, 3, 1], [2, 3, 1]])
    assert _reward("topological_sort", p, "0, 1, 2, 3") == (1.0, True)
    assert _reward("topological_sort", p, "0, 2, 1, 3") == (1.0, True)
    reward, correct = _reward("topological_sort", p, "1, 0, 2, 3")  # 0->1 backwards: 3/4
    assert not correct and reward == pytest.approx(0.75**5)
    assert _reward("topological_sort", p, "0, 1, 2")[0] == -0.5
    assert _reward("topological_sort", p, "0, 1, 1, 3")[0] == -0.5


def test_two_coloring_accepts_both_colourings() -> None:
    p = _problem("two_coloring", n=4, edges=[[0, 1, 1], [1, 2, 1], [2, 3, 1]])
    assert _reward("two_coloring", p, "0, 1, 0, 1") == (1.0, True)
    assert _reward("two_coloring", p, "1, 0, 1, 0") == (1.0, True)
    reward, correct = _reward("two_coloring", p, "0, 0, 1, 1")  # only 1-2 is proper: 1/3
    assert not correct and reward == pytest.approx((1 / 3) ** 5)
    assert _reward("two_coloring", p, "0, 1, 2, 1")[0] == -0.5  # colour 2 does not exist
    assert _reward("two_coloring", p, "0, 1, 0")[0] == -0.5


def test_graph_coloring_with_three_colours() -> None:
    # a triangle 0-1-2 with a pendant 3 on vertex 2
    p = _problem("graph_coloring", n=4, k=3, edges=[[0, 1, 1], [1, 2, 1], [0, 2, 1], [2, 3, 1]])
    assert _reward("graph_coloring", p, "0, 1, 2, 0") == (1.0, True)
    assert _reward("graph_coloring", p, "2, 0, 1, 2") == (1.0, True)
    reward, correct = _reward("graph_coloring", p, "0, 0, 1, 2")  # 0-1 clash: 3/4
    assert not correct and reward == pytest.approx(0.75**5)
    assert _reward("graph_coloring", p, "0, 1, 3, 0")[0] == -0.5


def test_max_matching() -> None:
    p = _problem("max_matching", n=4, edges=[[0, 1, 1], [1, 2, 1], [2, 3, 1]])
    assert _reward("max_matching", p, "0-1, 2-3") == (1.0, True)
    reward, correct = _reward("max_matching", p, "1-2")  # size 1 of 2: (1/2)^5
    assert not correct and reward == pytest.approx(0.5**5)
    assert _reward("max_matching", p, "0-1, 1-2")[0] == -0.5  # shares vertex 1
    assert _reward("max_matching", p, "0-2")[0] == -0.5  # not an edge


def test_find_cycle_accepts_any_cycle_and_rotation() -> None:
    arcs = [[0, 1, 1], [1, 2, 1], [2, 0, 1], [2, 3, 1], [3, 1, 1]]
    p = _problem("find_cycle", n=4, edges=arcs)
    assert _reward("find_cycle", p, "0, 1, 2") == (1.0, True)
    assert _reward("find_cycle", p, "1, 2, 3") == (1.0, True)  # another cycle
    assert _reward("find_cycle", p, "2, 0, 1") == (1.0, True)  # a rotation
    assert _reward("find_cycle", p, "0, 1, 2, 0") == (1.0, True)  # closing vertex repeated
    assert _reward("find_cycle", p, "0, 2, 1") == (0.0, False)  # reversed: no arc exists
    reward, _ = _reward("find_cycle", p, "0, 1, 3")  # only 0->1 exists: 1/3
    assert reward == pytest.approx((1 / 3) ** 5)
    assert _reward("find_cycle", p, "0, 1, 1, 2")[0] == -0.5
    assert _reward("find_cycle", p, "0")[0] == -0.5


def test_generated_answers_verify_and_feedback_hides_them() -> None:
    for name in ("shortest_path", "minimum_spanning_tree", "topological_sort", "max_matching"):
        env = get_env(name)
        problem = env.generate(6, 3)
        assert env.verify(problem, f"\\boxed{{{problem.answer}}}").correct
        wrong = env.verify(problem, "\\boxed{0}")
        assert not wrong.correct and problem.answer not in wrong.detail


def test_shortest_path_is_never_just_the_direct_edge() -> None:
    """73% of d = 0 problems once had the direct edge as the answer; now the shortest path
    always has two edges or more (a direct edge may exist and be the longer way)."""
    for name in ("shortest_path", "shortest_path_length"):
        env = get_env(name)
        for d in (0, 1, 4):
            for seed in range(60):
                p = env.generate(d, seed)
                g = to_graph(p.data)
                path = nx.dijkstra_path(g, p.data["source"], p.data["target"])
                assert len(path) >= 3, (name, d, seed)


def test_two_of_draws_what_sample_draws() -> None:
    """graph_coloring's generator replaced ``rng.sample(range(n), 2)`` by ``_two_of``: the
    same pair from the same random state, below and above sample's pool/set threshold."""
    import random

    from verirl.envs.graphs.structure import _two_of

    for n in (2, 3, 5, 20, 21, 22, 40, 200):
        a, b = random.Random(f"two/{n}"), random.Random(f"two/{n}")
        for _ in range(300):
            assert _two_of(a, n) == tuple(b.sample(range(n), 2))
        assert a.random() == b.random()  # and left the generator in the same state
