"""The second batch of RLVE rows (random walk, task batches, subsequence reversal, exact
roots and circles, rotation and hammer puzzles): hand-computed instances and brute force."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import get_env
from verirl.envs.selfcheck import self_check

NAMES = [
    "tree_random_walk_expectation",
    "task_arrangement",
    "subsequence_reversal_lnds",
    "root_extraction",
    "smallest_circle",
    "twiddle_puzzle",
    "whack_a_mole",
]


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    assert self_check(get_env(name)).failures == []


def test_tree_random_walk_expectation() -> None:
    path = {"n": 3, "edges": [[0, 1], [1, 2]], "u": 0, "v": 2}  # E0 = 1 + E1, E1 = 1 + E0/2
    assert verdict("tree_random_walk_expectation", "4", **path).correct
    assert reward("tree_random_walk_expectation", "3", **path) == 0.0
    star = {"n": 4, "edges": [[0, 1], [0, 2], [0, 3]], "u": 1, "v": 2}  # E0 = 5, E1 = 6
    assert verdict("tree_random_walk_expectation", "6", **star).correct


def test_task_arrangement() -> None:
    data = {"t": [1, 1], "f": [1, 1], "s": 2}  # one batch: 4·2 = 8; two: 3 + 6 = 9
    assert verdict("task_arrangement", "2", **data).correct
    assert reward("task_arrangement", "1, 2", **data) == pytest.approx((8 / 9) ** 3)
    assert reward("task_arrangement", "1", **data) == -0.5
    assert reward("task_arrangement", "2, 2", **data) == -0.5
    from verirl.envs.optimization.scheduling import _batch_cost, _batches

    rng = random.Random(6)
    for _ in range(20):
        d = {"t": [rng.randint(1, 9) for _ in range(7)], "f": [rng.randint(1, 9) for _ in range(7)]}
        d["s"] = rng.randint(1, 15)
        brute = min(
            _batch_cost(d, [*cuts, 7])
            for k in range(7)
            for cuts in itertools.combinations(range(1, 7), k)
        )
        assert _batch_cost(d, _batches(d)) == brute


def test_subsequence_reversal_lnds() -> None:
    assert verdict("subsequence_reversal_lnds", "2", a=[3, 1, 2]).correct
    assert verdict("subsequence_reversal_lnds", "3", a=[3, 2, 1]).correct  # reverse everything
    assert reward("subsequence_reversal_lnds", "3", a=[3, 1, 2]) == 0.0
    env = get_env("subsequence_reversal_lnds")
    from verirl.envs.arrays.scans import _reversal_dp

    rng = random.Random(8)
    for _ in range(60):  # the interval DP against trying every subsequence
        a = [rng.randint(1, 4) for _ in range(rng.randint(1, 9))]
        assert str(_reversal_dp(a)) == env.solve(problem("subsequence_reversal_lnds", a=a)), a


def test_root_extraction() -> None:
    assert verdict("root_extraction", "4", n=17, k=2).correct
    assert reward("root_extraction", "5", n=17, k=2) == pytest.approx(0.25)
    assert verdict("root_extraction", "10", n=1000, k=3).correct
    assert verdict("root_extraction", "9", n=999, k=3).correct


def test_smallest_circle() -> None:
    assert verdict("smallest_circle", "1", points=[[0, 0], [2, 0], [1, 1]]).correct
    right = {"points": [[0, 0], [4, 0], [0, 3]]}  # the hypotenuse is a diameter: (5/2)²
    for text in ("25/4", "\\frac{25}{4}", "6.25", "50/8"):
        assert verdict("smallest_circle", text, **right).correct, text
    acute = {"points": [[0, 0], [2, 0], [1, 2]]}  # circumcentre (1, 3/4)
    assert verdict("smallest_circle", "25/16", **acute).correct
    assert reward("smallest_circle", "2", **acute) == pytest.approx((25 / 32) ** 10)
    assert reward("smallest_circle", "1/0", **acute) == -1.0


def test_twiddle_puzzle() -> None:
    data = {
        "start": [[1, 2, 0], [3, 4, 0], [0, 0, 0]],
        "target": [[3, 1, 0], [4, 2, 0], [0, 0, 0]],
        "moves": 1,
    }
    assert verdict("twiddle_puzzle", "(0, 0)", **data).correct
    assert reward("twiddle_puzzle", "(0, 1)", **data) == pytest.approx((4 / 9) ** 5)
    assert reward("twiddle_puzzle", "(0, 0), (0, 0)", **data) == -0.5  # over the limit
    assert reward("twiddle_puzzle", "(2, 0)", **data) == -0.5


def test_whack_a_mole() -> None:
    assert verdict("whack_a_mole", "1", grid=[[1, 1], [1, 1]]).correct
    assert verdict("whack_a_mole", "5", grid=[[1, 2], [1, 1]]).correct  # only 1 × 1 works
    assert reward("whack_a_mole", "2", grid=[[1, 1], [1, 1]]) == 0.0
    env, rng = get_env("whack_a_mole"), random.Random(11)
    for _ in range(25):  # brute force over hit counts 0..2 per anchor, for every hammer
        grid = [[rng.randint(0, 2) for _ in range(3)] for _ in range(2)]
        if not any(map(any, grid)):
            continue
        best = None
        for r, c in itertools.product((1, 2), (1, 2, 3)):
            anchors = [(i, j) for i in range(2 - r + 1) for j in range(3 - c + 1)]
            for counts in itertools.product(range(3), repeat=len(anchors)):
                cover = [[0] * 3 for _ in range(2)]
                for (i, j), h in zip(anchors, counts, strict=True):
                    for a in range(i, i + r):
                        for b in range(j, j + c):
                            cover[a][b] += h
                if cover == grid and (best is None or sum(counts) < best):
                    best = sum(counts)
        assert env.solve(problem("whack_a_mole", grid=grid)) == str(best), grid


@pytest.mark.parametrize("name", ["wyc", "tree_add_one_edge_diameter", "pcp_permutation"])
def test_self_check_third_batch(name: str) -> None:
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


def test_pcp_permutation() -> None:
    data = {"a": ["ab", "a"], "b": ["a", "ba"]}  # 0, 1: aba = aba
    assert verdict("pcp_permutation", "0, 1", **data).correct
    assert reward("pcp_permutation", "1, 0", **data) == pytest.approx((1 / 3) ** 10)  # aab/baa
    assert reward("pcp_permutation", "0", **data) == -0.5


def test_tetris_attack() -> None:
    assert self_check(get_env("tetris_attack")).failures == []
    data = {"a": [0, 1, 0, 1]}  # one swap at 0 (or 1, or 2) makes a pair, the rest follows
    assert verdict("tetris_attack", "0", **data).correct
    assert verdict("tetris_attack", "2", **data).correct
    assert reward("tetris_attack", "0, 0", **data) == -0.5  # the array is already empty
    data = {"a": [0, 1, 2, 0, 1, 2]}
    assert verdict("tetris_attack", "2, 1, 0", **data).correct  # 0 up twice: 0 0 1 2 1 2 ...
    assert reward("tetris_attack", "3", **data) == -0.5  # not cleared
    from collections import deque

    from verirl.envs.games.move_puzzles import _settle, _tetris_greedy

    rng = random.Random(13)
    for _ in range(60):  # the greedy count against breadth-first search over arrays
        n = rng.randint(2, 5)
        a = list(range(n)) * 2
        rng.shuffle(a)
        start = tuple(_settle(a))
        dist = {start: 0}
        queue = deque([start])
        while queue:
            s = queue.popleft()
            if not s:
                break
            for i in range(len(s) - 1):
                t = list(s)
                t[i], t[i + 1] = t[i + 1], t[i]
                key = tuple(_settle(t))
                if key not in dist:
                    dist[key] = dist[s] + 1
                    queue.append(key)
        assert len(_tetris_greedy(a)) == dist[()], a


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


def test_segment_tree_sorting_counting() -> None:
    name = "segment_tree_sorting_counting"
    assert self_check(get_env(name)).failures == []
    assert verdict(name, "1", a=[1, 2, 3, 4], n=2).correct  # only the empty sequence
    # 3 4 1 2: swap the halves (type 2) alone, or swap 1↔3 and 2↔4 ... only type 2 works
    assert verdict(name, "1", a=[3, 4, 1, 2], n=2).correct
    # 2 1 4 3 needs both pairs swapped by type 1, which can be used once: impossible
    assert verdict(name, "0", a=[2, 1, 4, 3], n=2).correct
    # 4 3 1 2? type 1 swaps 4 and 3 → 3 4 1 2, then type 2; or type 2 first → 1 2 4 3, then 4↔3
    assert verdict(name, "2", a=[4, 3, 1, 2], n=2).correct
    assert reward(name, "1", a=[4, 3, 1, 2], n=2) == pytest.approx(0.5**10)
    from verirl.envs.counting.operations import _level_count

    env, rng = get_env(name), random.Random(16)
    for _ in range(4):  # N = 4 against the direct search over sequences
        p = env.generate(20, rng.randrange(10**6))
        assert env.solve(p) == str(_level_count(p.data["a"], p.data["n"]))
