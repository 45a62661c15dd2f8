"""Lattice geometry (geometry/lattice.py): hand-computed values of its
SizedInteger environments (kit/answers.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.envs.helpers import assert_hand_computed

CASES: list[tuple[str, dict[str, Any], int]] = [
    ("polygon_interior_points", {"poly": [[0, 0], [4, 0], [4, 4], [0, 4]]}, 9),
    ("polygon_boundary_points", {"poly": [[0, 0], [4, 0], [4, 4], [0, 4]]}, 16),
    ("rectangle_union_area", {"rects": [[0, 0, 2, 2], [1, 1, 3, 3]]}, 7),
    ("manhattan_meeting_point", {"pts": [[0, 0], [2, 0], [0, 2]]}, 4),
    ("closest_pair_distance", {"pts": [[0, 0], [3, 4], [1, 1]]}, 2),
    ("collinear_triples", {"pts": [[0, 0], [1, 1], [2, 2], [0, 1]]}, 1),
]


@pytest.mark.parametrize(("name", "data", "value"), CASES)
def test_hand_computed_value(name: str, data: dict[str, Any], value: int) -> None:
    assert_hand_computed(name, data, value)
