"""Grid puzzles, constraint problems, scheduling and the splitting game (RLVE rows):
hand-computed instances, brute-force cross-checks, and the self-check."""

from __future__ import annotations

import functools
import itertools
import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.selfcheck import self_check

FAMILIES = ("puzzles_placement", "logic_constraints", "scheduling_orders", "games_splitting")
NAMES = [n for f in FAMILIES for n in env_names(family=f)]


def test_families_are_registered() -> None:
    assert [len(env_names(family=f)) for f in FAMILIES] == [4, 4, 6, 1]


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    assert self_check(get_env(name)).failures == []


SQUARE = "1 2 3; 2 3 1; 3 1 2"
COUNT_CLUES = {"left": [3, 2, 1], "right": [1, 2, 2], "top": [3, 2, 1], "bottom": [1, 2, 2]}
SUM_CLUES = {"left": [6, 5, 3], "right": [3, 4, 5], "top": [6, 5, 3], "bottom": [3, 4, 5]}


def test_skyscrapers() -> None:
    assert verdict("skyscraper_puzzle", SQUARE, n=3, clues=COUNT_CLUES).correct
    assert verdict("skyscraper_puzzle", "1 2 3 2 3 1 3 1 2", n=3, clues=COUNT_CLUES).correct
    # rows 2 and 3 swapped: the Latin rules hold, 6 of the 12 clues too
    swapped = "1 2 3; 3 1 2; 2 3 1"
    got = reward("skyscraper_puzzle", swapped, n=3, clues=COUNT_CLUES)
    assert got == pytest.approx((12 / 18) ** 10)
    assert reward("skyscraper_puzzle", "1 2 3; 2 3 1", n=3, clues=COUNT_CLUES) == -0.5
    assert reward("skyscraper_puzzle", "1 2 3; 2 3 1; 3 1 4", n=3, clues=COUNT_CLUES) == -0.5
    assert verdict("skyscraper_sum_puzzle", SQUARE, n=3, clues=SUM_CLUES).correct
    assert not verdict("skyscraper_sum_puzzle", swapped, n=3, clues=SUM_CLUES).correct


def test_star_battle() -> None:
    grid = ["....", "....", "....", "...."]
    assert verdict("star_battle", "2, 4, 1, 3", grid=grid).correct
    assert reward("star_battle", "1, 2, 3, 4", grid=grid) == 0.0  # diagonal neighbours
    assert reward("star_battle", "2, 4, 1", grid=grid) == -0.5
    assert reward("star_battle", "2, 4, 1, 3", grid=[".X..", "....", "....", "...."]) == -0.5


def test_survo() -> None:
    data = {"shown": [[0, -1], [-1, 3]], "rows": [1, 5], "cols": [2, 4]}
    assert verdict("survo_puzzle", "0 1; 2 3", **data).correct
    assert reward("survo_puzzle", "0 2; 1 3", **data) == 0.0  # rows 2, 4 and columns 1, 5
    assert reward("survo_puzzle", "1 0; 2 3", **data) == -0.5  # the given 0 moved
    data = {"shown": [[-1, -1], [2, 3]], "rows": [1, 5], "cols": [2, 4]}
    assert reward("survo_puzzle", "1 0; 2 3", **data) == pytest.approx(0.5**5)  # rows only


def test_two_sat_and_set_splitting() -> None:
    data = {"n": 2, "clauses": [[0, 1, 1, 1], [0, 0, 1, 0]]}  # (x0 ∨ x1), (¬x0 ∨ ¬x1)
    assert verdict("two_sat", "1, 0", **data).correct
    assert verdict("two_sat", "0, 1", **data).correct
    assert reward("two_sat", "1, 1", **data) == pytest.approx(0.5**10)
    assert reward("two_sat", "1, 2", **data) == -0.5
    split = {"n": 3, "subsets": [[0, 1], [1, 2]]}
    assert verdict("set_splitting", "1", **split).correct
    assert verdict("set_splitting", "0, 2", **split).correct
    assert reward("set_splitting", "0", **split) == pytest.approx(0.5**10)
    assert reward("set_splitting", "3", **split) == -0.5


def test_smallest_topological_order() -> None:
    name = "topological_sort_minimal_lexicographical_order"
    data = {"n": 3, "arcs": [[2, 0]]}
    assert verdict(name, "1, 2, 0", **data).correct
    assert reward(name, "2, 1, 0", **data) == pytest.approx((1 / 3) ** 5)  # valid, one match
    assert reward(name, "1, 0, 2", **data) == 0.0  # the arc is broken
    assert reward(name, "1, 2", **data) == -0.5


def test_round_table_assignment() -> None:
    data = {"sizes": [2, 1], "capacity": [1, 2]}
    assert verdict("round_table_assignment", "1 2; 2", **data).correct
    assert reward("round_table_assignment", "1 2; 1", **data) == pytest.approx(0.5**5)
    assert reward("round_table_assignment", "1 1; 2", **data) == -0.5
    assert reward("round_table_assignment", "1 2", **data) == -0.5


def test_pipeline_and_flowers() -> None:
    data = {"a": [3, 1], "b": [2, 4]}  # order 1, 0 ends at 7; order 0, 1 at 9
    assert verdict("pipeline_arrangement", "1, 0", **data).correct
    assert reward("pipeline_arrangement", "0, 1", **data) == pytest.approx((7 / 9) ** 5)
    assert reward("pipeline_arrangement", "1, 1", **data) == -0.5
    cows = {"t": [1, 2], "d": [3, 1]}  # 0 then 1: 1·2 = 2 eaten; 1 then 0: 3·4 = 12
    assert verdict("protecting_flowers", "0, 1", **cows).correct
    assert reward("protecting_flowers", "1, 0", **cows) == pytest.approx((2 / 12) ** 5)
    rng = random.Random(1)
    from verirl.envs.optimization.scheduling import _by_ratio, _eaten, _johnson, _makespan

    for _ in range(30):
        a, b = [rng.randint(1, 9) for _ in range(6)], [rng.randint(1, 9) for _ in range(6)]
        brute = min(_makespan(a, b, list(p)) for p in itertools.permutations(range(6)))
        assert _makespan(a, b, _johnson(a, b)) == brute
        brute = min(_eaten(a, b, list(p)) for p in itertools.permutations(range(6)))
        assert _eaten(a, b, _by_ratio(a, b)) == brute


def test_slo_elephants() -> None:
    data = {"c": [1, 5, 10], "start": [1, 0, 2], "target": [0, 1, 2]}
    assert verdict("slo_elephants", "(0, 1)", **data).correct
    assert verdict("slo_elephants", "(1, 0)", **data).correct
    # three swaps reach the target for 11 + 15 + 11
    assert reward("slo_elephants", "(0, 2), (1, 2), (0, 2)", **data) == pytest.approx((6 / 37) ** 5)
    assert reward("slo_elephants", "(0, 2)", **data) == -0.5
    from verirl.envs.optimization.scheduling import _cycle_cost

    heavy = {"c": [1, 50, 50, 50, 50], "start": [0, 2, 3, 4, 1], "target": [0, 1, 2, 3, 4]}
    assert _cycle_cost(heavy) == 255  # borrowing item 0: 200 + 50 + 5·1 beats 200 + 2·50
    env = get_env("slo_elephants")
    assert verdict("slo_elephants", env.solve(problem("slo_elephants", **heavy)), **heavy).correct


def test_slo_cycle_formula_matches_search() -> None:
    from verirl.envs.optimization.scheduling import _cycle_cost

    rng = random.Random(9)
    for _ in range(8):  # Dijkstra over all arrangements of 5 items
        c = [rng.randint(1, 9) for _ in range(5)]
        start, target = tuple(rng.sample(range(5), 5)), tuple(range(5))
        import heapq

        dist = {start: 0}
        heap = [(0, start)]
        while heap:
            d, line = heapq.heappop(heap)
            if line == target:
                break
            if d > dist[line]:
                continue
            for i, j in itertools.combinations(range(5), 2):
                nxt = list(line)
                nxt[i], nxt[j] = nxt[j], nxt[i]
                cost = d + c[line[i]] + c[line[j]]
                if cost < dist.get(tuple(nxt), 10**9):
                    dist[tuple(nxt)] = cost
                    heapq.heappush(heap, (cost, tuple(nxt)))
        data = {"c": c, "start": list(start), "target": list(target)}
        assert _cycle_cost(data) == dist[target], data


def test_warehouse_and_visible_lines() -> None:
    data = {"x": [1, 2], "p": [1, 1], "c": [10, 1]}  # {1}: 1 + 1·1; {0, 1}: 11
    assert verdict("warehouse_construction", "1", **data).correct
    assert reward("warehouse_construction", "0, 1", **data) == pytest.approx((2 / 11) ** 5)
    assert reward("warehouse_construction", "0", **data) == -0.5
    lines = {"lines": [[1, 0], [-1, 0], [0, 0]]}  # y = 0 only touches at the origin
    assert verdict("visible_line", "0, 1", **lines).correct
    assert reward("visible_line", "0, 1, 2", **lines) == pytest.approx((2 / 3) ** 5)
    assert verdict("visible_line", "0, 1, 2", lines=[[1, 0], [-1, 0], [0, 1]]).correct
    from verirl.envs.optimization.scheduling import _envelope

    env, rng = get_env("visible_line"), random.Random(3)
    for _ in range(40):
        ls = [[rng.randint(-4, 4), rng.randint(-4, 4)] for _ in range(7)]
        ls = [list(x) for x in dict.fromkeys(map(tuple, ls))]
        assert ", ".join(map(str, _envelope(ls))) == env.solve(problem("visible_line", lines=ls))


def test_splitting_game() -> None:
    # g = [2, 1, 0]; from bean in bottle 0, (0,1,1) and (0,2,2) reach XOR 0
    assert verdict("splitting_game", "2", beans=[1, 0, 0]).correct
    assert reward("splitting_game", "1", beans=[1, 0, 0]) == 0.0
    env, rng = get_env("splitting_game"), random.Random(5)
    for _ in range(10):
        beans = tuple(rng.randint(0, 2) for _ in range(4))

        @functools.cache
        def wins(state: tuple[int, ...]) -> bool:
            return any(not wins(nxt) for nxt in _moves(state))

        count = sum(1 for nxt in _moves(beans) if not wins(nxt))
        assert env.solve(problem("splitting_game", beans=list(beans))) == str(count), beans


def _moves(state: tuple[int, ...]) -> list[tuple[int, ...]]:
    out = []
    n = len(state)
    for i in range(n):
        if state[i]:
            for j in range(i + 1, n):
                for k in range(j, n):
                    s = list(state)
                    s[i] -= 1
                    s[j] += 1
                    s[k] += 1
                    out.append(tuple(s))
    return out


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
