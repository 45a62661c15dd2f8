"""Counting operations (counting/operations.py): segment-tree sorting sequences; hand-computed
instances and the level count against direct search."""

from __future__ import annotations

import random

import pytest

from tests.envs.helpers import reward, verdict
from verirl.envs import get_env
from verirl.envs.selfcheck import self_check


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
