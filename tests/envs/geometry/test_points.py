"""The ``geometry`` family (geometry_points.py): hand-computed verdicts, hull cross-checks
and the self-check."""

from __future__ import annotations

import random

import pytest

from tests.envs.helpers import reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.geometry.points import gift_wrapping_area, monotone_chain, twice_area
from verirl.envs.selfcheck import self_check

NAMES = ["largest_convex_polygon", "largest_rectangle_among_points"]


def test_family_is_registered() -> None:
    assert set(NAMES) <= set(env_names(family="geometry"))


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_hulls_agree() -> None:
    rng = random.Random(10)
    for _ in range(200):
        pts = list({(rng.randint(0, 8), rng.randint(0, 8)) for _ in range(rng.randint(3, 12))})
        hull = monotone_chain(pts)
        if len(hull) >= 3:
            assert twice_area([pts[i] for i in hull]) == gift_wrapping_area(pts)


def test_largest_convex_polygon() -> None:
    data = {"points": [[0, 0], [4, 0], [4, 4], [0, 4], [2, 2], [2, 0]]}
    assert verdict("largest_convex_polygon", "0 1 2 3", **data).correct
    assert verdict("largest_convex_polygon", "3 2 1 0", **data).correct  # clockwise
    assert reward("largest_convex_polygon", "0 1 2", **data) == pytest.approx(0.5**5)
    assert reward("largest_convex_polygon", "0 5 1 2 3", **data) == -0.5  # a straight angle
    assert reward("largest_convex_polygon", "0 2 1 3", **data) == -0.5  # crossing
    star = {"points": [[0, 3], [3, 1], [2, -3], [-2, -3], [-3, 1]]}
    assert verdict("largest_convex_polygon", "0 1 2 3 4", **star).correct
    assert reward("largest_convex_polygon", "0 2 4 1 3", **star) == -0.5  # a pentagram


def test_largest_rectangle_among_points() -> None:
    data = {"points": [[0, 0], [0, 2], [3, 0], [3, 2], [1, 0], [1, 2]]}
    name = "largest_rectangle_among_points"
    assert verdict(name, "0 1 2 3", **data).correct  # 3 × 2
    assert reward(name, "0 1 4 5", **data) == pytest.approx((2 / 6) ** 5)
    assert reward(name, "0 1 2 4", **data) == -0.5
    assert reward(name, "0 1 2", **data) == -0.5
