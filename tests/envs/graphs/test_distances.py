"""The graphs_distances family (graphs/distances.py): the k-th shortest walk, adding or
changing one tree edge to reach a diameter, the patrol; hand-computed instances and brute force."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import get_env
from verirl.envs.selfcheck import self_check

NAMES = ["wyc", "tree_add_one_edge_diameter"]


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    assert self_check(get_env(name)).failures == []


def test_wyc_kth_walk() -> None:
    # 1 -> 2 (1), 2 -> 1 (2): weights 1, 2, 3, 3, 4, 5, ...
    data = {"n": 2, "edges": [[1, 2, 1], [2, 1, 2]]}
    assert [get_env("wyc").solve(problem("wyc", k=k, **data)) for k in range(1, 6)] == [
        "1",
        "2",
        "3",
        "3",
        "4",
    ]
    assert reward("wyc", "4", k=4, **data) == pytest.approx(0.75**10)
    import heapq

    from verirl.envs.graphs.distances import _walks_by_weight

    rng = random.Random(12)
    for _ in range(10):  # pop walks from a heap in order of weight
        n = rng.randint(2, 4)
        edges = [
            [u, v, rng.randint(1, 3)]
            for u, v in itertools.permutations(range(1, n + 1), 2)
            if rng.random() < 0.6
        ]
        if not edges:
            continue
        heap = [(w, v) for _, v, w in edges]
        heapq.heapify(heap)
        weights = []
        while heap and len(weights) < 40:
            w, v = heapq.heappop(heap)
            weights.append(w)
            for a, b, c in edges:
                if a == v:
                    heapq.heappush(heap, (w + c, b))
        cumulative = _walks_by_weight({"n": n, "edges": edges})
        for k, w in enumerate(weights, start=1):
            assert get_env("wyc").solve(problem("wyc", n=n, edges=edges, k=k)) == str(w)
            assert next(x for x, c in enumerate(cumulative) if c >= k) == w


def test_tree_add_one_edge_diameter() -> None:
    path = {"n": 5, "edges": [[1, 2], [2, 3], [3, 4], [4, 5]]}  # only 1 - 5 closes a C5
    assert verdict("tree_add_one_edge_diameter", "1, 5", **path).correct
    assert reward("tree_add_one_edge_diameter", "2, 4", **path) == pytest.approx((2 / 3) ** 5)
    assert reward("tree_add_one_edge_diameter", "1, 2", **path) == -0.5
    assert reward("tree_add_one_edge_diameter", "1, 1", **path) == -0.5


def test_patrol() -> None:
    assert self_check(get_env("patrol")).failures == []
    # a new road 1 - 4 closes the whole path: every road once, plus the new one
    assert verdict("patrol", "4", n=4, edges=[[1, 2], [2, 3], [3, 4]]).correct
    star = {"n": 4, "edges": [[1, 2], [1, 3], [1, 4]]}  # leaf to leaf: 2·3 − 2 + 1
    assert verdict("patrol", "5", **star).correct
    assert reward("patrol", "6", **star) == 0.0


def test_tree_change_one_edge_diameter() -> None:
    name = "tree_change_one_edge_diameter"
    assert self_check(get_env(name)).failures == []
    star = {"n": 4, "edges": [[1, 2], [1, 3], [1, 4]]}  # diameter 2; at most 3 (path), at least 2
    assert verdict(name, "1 2 2 3; 1 2 2 1", **star).correct  # 2 hangs under 3: path 2-3-1-4
    # keeping the star for the "large" part: (2/3)^5 there, full credit for the small one
    assert reward(name, "1 2 1 2; 1 2 1 2", **star) == pytest.approx(((2 / 3) ** 5 + 1) / 2)
    assert reward(name, "1 2 3 4; 1 2 1 2", **star) == -0.5  # 2 is cut off: not a tree
    assert reward(name, "2 3 1 2; 1 2 1 2", **star) == -0.5  # 2 - 3 is no edge
    assert reward(name, "1 2 2 3", **star) == -0.5
    from verirl.envs.graphs.distances import _diameter_range, _moves
    from verirl.envs.kit.graphs import random_tree

    rng = random.Random(15)
    for _ in range(30):  # the split formulas against every edge swap
        n = rng.randint(3, 9)
        edges = [sorted([u + 1, v + 1]) for u, v in random_tree(rng, list(range(n)))]
        values = [m[4] for m in _moves({"n": n, "edges": edges})]
        assert _diameter_range({"n": n, "edges": edges}) == (max(values), min(values)), edges
