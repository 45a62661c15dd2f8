"""The ``intervals`` family (intervals_scheduling.py): hand-computed verdicts with exact
partial credit, brute-force cross-checks and the self-check."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.arrays.interval_addition import best_minimum
from verirl.envs.arrays.interval_scheduling import _king_max, _land_cost
from verirl.envs.selfcheck import self_check

NAMES = [
    "minimum_interval_coverage",
    "minimum_chromatic_number_segment_overlap",
    "maximum_point_segment_matching",
    "king_sorting",
    "land_acquisition",
    "kos_dicing",
]


def test_family_is_registered() -> None:
    assert set(NAMES) <= set(env_names(family="intervals"))


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_minimum_interval_coverage() -> None:
    data = {"intervals": [[3, 6, 5], [1, 2, 3], [4, 4, 6], [1, 6, 12]], "m": 6}
    assert verdict("minimum_interval_coverage", "0 1", **data).correct
    assert reward("minimum_interval_coverage", "3", **data) == pytest.approx((8 / 12) ** 5)
    assert reward("minimum_interval_coverage", "0", **data) == -0.5  # 1 and 2 uncovered
    assert reward("minimum_interval_coverage", "0 0 1", **data) == -0.5


def test_minimum_chromatic_number_segment_overlap() -> None:
    data = {"intervals": [[0, 2], [1, 3], [3, 5]]}  # at most two segments share a point
    name = "minimum_chromatic_number_segment_overlap"
    assert verdict(name, "0 1 0", **data).correct
    assert reward(name, "0 1 2", **data) == pytest.approx((2 / 3) ** 5)
    assert reward(name, "0 0 1", **data) == -0.5  # [0, 2] and [1, 3] overlap


def test_maximum_point_segment_matching() -> None:
    data = {"points": [1, 1], "intervals": [[0, 2], [5, 7]]}
    name = "maximum_point_segment_matching"
    assert verdict(name, "(0, 0)", **data).correct
    assert verdict(name, "(1, 0)", **data).correct
    assert reward(name, "(0, 1)", **data) == -0.5  # [5, 7] does not contain 1
    assert reward(name, "(0, 0), (1, 0)", **data) == -0.5  # segment 0 twice
    data = {"points": [1, 6, 6], "intervals": [[0, 2], [5, 7], [6, 6]]}
    assert reward(name, "(0, 0), (1, 1)", **data) == pytest.approx((2 / 3) ** 5)


def test_king_sorting() -> None:
    data = {"pairs": [[5, 1], [1, 1], [3, 5]]}
    # 1 then 2: rewards 5 // 1 = 5 and 5 // 5 = 1; 2 then 1: 5 // 5 = 1 and 15 // 1 = 15
    assert verdict("king_sorting", "1 2", **data).correct
    assert reward("king_sorting", "2 1", **data) == pytest.approx((5 / 15) ** 5)
    assert reward("king_sorting", "1", **data) == -0.5
    env = get_env("king_sorting")
    rng = random.Random(8)
    for _ in range(60):
        pairs = [[rng.randint(1, 6), rng.randint(1, 6)] for _ in range(rng.randint(2, 6))]
        brute = min(_king_max(pairs, list(o)) for o in itertools.permutations(range(1, len(pairs))))
        order = list(map(int, env._exchange(pairs).split()))
        assert _king_max(pairs, order) == brute


def test_land_acquisition() -> None:
    data = {"items": [[8, 2], [7, 8], [3, 7], [4, 4]]}  # one group: 8 × 8 = 64
    assert verdict("land_acquisition", "0 0 0 0", **data).correct
    assert reward("land_acquisition", "0 1 1 1", **data) == pytest.approx((64 / 72) ** 5)
    assert reward("land_acquisition", "0 0 0", **data) == -0.5
    env = get_env("land_acquisition")
    rng = random.Random(9)
    for _ in range(30):
        items = [[rng.randint(1, 9), rng.randint(1, 9)] for _ in range(rng.randint(1, 6))]
        p = problem("land_acquisition", items=items)
        brute_labels = list(map(int, env.solve(p).split()))  # set-partition brute force
        assert _land_cost(items, brute_labels) == env._hull_dp(items)[0]


def test_kos_dicing() -> None:
    data = {"n": 3, "games": [[1, 2], [0, 1], [1, 0], [2, 0]]}  # 4 rounds, 3 players: 2
    assert verdict("kos_dicing", "1 0 1 2", **data).correct
    assert reward("kos_dicing", "1 1 1 2", **data) == 0.0  # player 1 wins three
    assert reward("kos_dicing", "0 0 1 2", **data) == -0.5  # 0 did not play round 0


def test_max_minimum_after_interval_addition() -> None:
    name = "max_minimum_after_interval_addition"
    report = self_check(get_env(name))
    assert not report.failures, report.failures
    data = {"values": [1, 5, 1], "intervals": [[0, 0], [2, 2], [0, 2]], "k": 1, "add": 2}
    assert verdict(name, "2", **data).correct  # 3 7 3
    assert reward(name, "0", **data) == pytest.approx((1 / 3) ** 5)  # 3 5 1
    assert reward(name, "0 2", **data) == -0.5
    assert reward(name, "3", **data) == -0.5
    rng = random.Random(14)
    for _ in range(80):
        n = rng.randint(1, 6)
        values = [rng.randint(1, 6) for _ in range(n)]
        intervals = [sorted(rng.choices(range(n), k=2)) for _ in range(rng.randint(1, 5))]
        k, add = rng.randint(1, len(intervals)), rng.randint(1, 2)
        brute = max(
            min(
                v + add * sum(intervals[i][0] <= pos <= intervals[i][1] for i in chosen)
                for pos, v in enumerate(values)
            )
            for chosen in itertools.combinations(range(len(intervals)), k)
        )
        assert best_minimum(values, intervals, k, add) == brute
