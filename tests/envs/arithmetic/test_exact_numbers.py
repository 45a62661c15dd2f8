"""Exact numbers (arithmetic/exact_numbers.py): integer roots and the smallest enclosing
circle's squared radius as a fraction; hand-computed instances."""

from __future__ import annotations

import pytest

from tests.envs.helpers import reward, verdict
from verirl.envs import get_env
from verirl.envs.selfcheck import self_check

NAMES = ["root_extraction", "smallest_circle"]


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    assert self_check(get_env(name)).failures == []


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
