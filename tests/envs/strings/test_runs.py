"""String runs (strings/runs.py): the Post correspondence permutation; hand-computed
instances."""

from __future__ import annotations

import pytest

from tests.envs.helpers import reward, verdict
from verirl.envs import get_env
from verirl.envs.selfcheck import self_check

NAMES = ["pcp_permutation"]


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    assert self_check(get_env(name)).failures == []


def test_pcp_permutation() -> None:
    data = {"a": ["ab", "a"], "b": ["a", "ba"]}  # 0, 1: aba = aba
    assert verdict("pcp_permutation", "0, 1", **data).correct
    assert reward("pcp_permutation", "1, 0", **data) == pytest.approx((1 / 3) ** 10)  # aab/baa
    assert reward("pcp_permutation", "0", **data) == -0.5
