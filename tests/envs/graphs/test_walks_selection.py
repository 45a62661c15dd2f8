"""Graph environments from RLVE rows (walk counting, constructions, vertex choices):
hand-computed instances, brute-force cross-checks, and the self-check."""

from __future__ import annotations

import itertools
import math

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.selfcheck import self_check

WALKS = env_names(family="graphs_walks")
SELECTION = env_names(family="graphs_selection")


def test_families_are_registered() -> None:
    assert len(WALKS) == 6 and len(SELECTION) == 5


@pytest.mark.parametrize("name", WALKS + SELECTION)
def test_self_check(name: str) -> None:
    assert self_check(get_env(name)).failures == []


def test_triangles_and_non_backtracking_walks() -> None:
    k4 = [list(e) for e in itertools.combinations(range(4), 2)]
    assert verdict("three_vertex_cycle_counting", "4", n=4, edges=k4).correct
    assert reward("three_vertex_cycle_counting", "3", n=4, edges=k4) == pytest.approx(0.75**10)
    triangle = {"n": 3, "edges": [[0, 1], [1, 2], [0, 2]]}
    name = "path_no_going_back_counting"
    assert verdict(name, "2", t=3, s=0, e=0, **triangle).correct  # both directions round
    assert verdict(name, "0", t=2, s=0, e=0, **triangle).correct  # 0 → 1 → 0 goes back
    assert verdict(name, "1", n=3, edges=[[0, 1], [1, 2]], t=2, s=0, e=2).correct
    assert reward(name, "3", t=3, s=0, e=0, **triangle) == 0.0


def test_pythagorean_independent_sets() -> None:
    name = "pythagorean_graph_independent_set_counting"
    assert verdict(name, "6", h=[3, 4, 5]).correct  # only 3² + 4² = 5²
    assert verdict(name, "5", h=[5, 12, 9]).correct  # path 5 – 12 – 9 (169, 225)
    assert reward(name, "7", h=[3, 4, 5]) == 0.0


def test_sum_spanning_tree_gcd() -> None:
    edges = [[0, 1, 4], [1, 2, 6], [0, 2, 8]]  # trees {4,6}: 2, {4,8}: 4, {6,8}: 2
    assert verdict("sum_spanning_tree_gcd", "8", n=3, edges=edges).correct
    assert reward("sum_spanning_tree_gcd", "6", n=3, edges=edges) == 0.0
    edges = [[0, 1, 6], [1, 2, 4], [2, 3, 9], [0, 3, 3], [0, 2, 12], [1, 3, 2]]  # K4
    brute = sum(
        math.gcd(*(w for _, _, w in tree))
        for tree in itertools.combinations(edges, 3)
        if len({v for u, x, _ in tree for v in (u, x)}) == 4 and _acyclic(tree)
    )
    env = get_env("sum_spanning_tree_gcd")
    assert env.solve(problem("sum_spanning_tree_gcd", n=4, edges=edges)) == str(brute)


def _acyclic(tree: tuple[list[int], ...]) -> bool:
    parent = list(range(4))

    def find(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    for u, v, _ in tree:
        if find(u) == find(v):
            return False
        parent[find(u)] = find(v)
    return True


def test_shortest_path_count_construction() -> None:
    name = "shortest_path_count_construction"
    assert verdict(name, "(1, 3), (3, 2), (1, 4), (4, 2)", k=2).correct
    assert reward(name, "(1, 3), (3, 2), (1, 4), (4, 2)", k=3) == pytest.approx((2 / 3) ** 10)
    assert reward(name, "(1, 1)", k=1) == -0.5
    assert reward(name, "(1, 2), (2, 1)", k=1) == -0.5  # the same edge twice
    assert reward(name, "(1, 3)", k=1) == 0.0  # 2 unreachable: zero paths
    from verirl.envs.graphs.walks import _construct

    for k in [*list(range(1, 300)), 10**8, 2**26 + 1]:
        assert verdict(name, _construct(k), k=k).correct, k


def test_power_shortcut() -> None:
    data = {"n": 4, "arcs": [[0, 1], [1, 2], [2, 3]], "max_j": 1}  # jumps of 1 or 2 arcs
    assert verdict("power_shortcut", "0, 2, 3", **data).correct
    assert verdict("power_shortcut", "0, 1, 3", **data).correct
    assert reward("power_shortcut", "0, 1, 2, 3", **data) == pytest.approx((2 / 3) ** 5)
    assert reward("power_shortcut", "0, 3", **data) == -0.5  # three arcs is no power of 2
    assert reward("power_shortcut", "1, 3", **data) == -0.5


def test_spy_network() -> None:
    data = {"n": 3, "arcs": [[0, 1], [1, 2]], "cost": [5, 2, 0]}
    assert verdict("spy_network", "0", **data).correct
    assert reward("spy_network", "0, 1", **data) == pytest.approx((5 / 7) ** 3)
    assert reward("spy_network", "1", **data) == -0.5  # spy 0 is never revealed
    assert reward("spy_network", "2, 0", **data) == -0.5  # spy 2 has no price


def test_vertex_k_center_and_tournament() -> None:
    path = {"n": 3, "k": 1, "edges": [[0, 1, 1], [1, 2, 1]]}
    assert verdict("vertex_k_center", "1", **path).correct
    assert reward("vertex_k_center", "0", **path) == pytest.approx(0.5**5)
    assert reward("vertex_k_center", "0, 1", **path) == -0.5
    arcs = {"n": 3, "arcs": [[0, 1], [1, 2], [0, 2]]}
    assert verdict("tournament_longest_path", "0, 1, 2", **arcs).correct
    assert reward("tournament_longest_path", "0, 2", **arcs) == pytest.approx((2 / 3) ** 5)
    assert reward("tournament_longest_path", "2, 1", **arcs) == -0.5


def test_prime_graph_colouring() -> None:
    name = "prime_graph_minimum_chromatic_number"
    # 1^2 = 3 and 1^3 = 2 are prime, 2^3 = 1 is not: two colours
    assert verdict(name, "1, 2, 2", n=3).correct
    assert reward(name, "1, 2, 3", n=3) == pytest.approx((2 / 3) ** 5)
    assert reward(name, "1, 1, 2", n=3) == -0.5
    assert verdict(name, "2, 3, 4, 1, 2, 3", n=6).correct  # v mod 4; {1, 3, 4, 6} is a K4
    from verirl.envs.graphs.selection import _chromatic

    for n in range(1, 12):  # brute force over all colourings with fewer colours
        best = next(
            k
            for k in range(1, 5)
            if any(
                all(
                    cs[u - 1] != cs[v - 1]
                    for u, v in itertools.combinations(range(1, n + 1), 2)
                    if _prime(u ^ v)
                )
                for cs in itertools.product(range(k), repeat=n)
            )
        )
        assert _chromatic(n) == best, n


def _prime(x: int) -> bool:
    return x > 1 and all(x % p for p in range(2, x))


def test_subgraph_isomorphism() -> None:
    data = {"n1": 2, "n2": 3, "g1": [[0, 1]], "g2": [[0, 1], [1, 2]]}
    assert verdict("subgraph_isomorphism", "1, 2", **data).correct
    assert reward("subgraph_isomorphism", "0, 2", **data) == 0.0
    assert reward("subgraph_isomorphism", "1, 1", **data) == -0.5
    assert reward("subgraph_isomorphism", "1, 2, 0", **data) == -0.5
