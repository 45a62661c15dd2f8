"""Array scans (arrays/scans.py): the longest non-decreasing subsequence after reversing one
subsequence; hand-computed instances and the interval DP against brute force."""

from __future__ import annotations

import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import get_env
from verirl.envs.selfcheck import self_check

NAMES = ["subsequence_reversal_lnds"]


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    assert self_check(get_env(name)).failures == []


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
