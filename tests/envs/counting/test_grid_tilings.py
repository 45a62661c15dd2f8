"""Grid tilings (counting/grid_tilings.py): hand-computed values of its
SizedInteger environments (kit/answers.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.envs.helpers import assert_hand_computed

CASES: list[tuple[str, dict[str, Any], int]] = [
    ("domino_tiling_count", {"board": ["...", "..."]}, 3),
    ("grid_coloring_counting", {"rows": ["..", ".."], "k": 3}, 18),  # colourings of C4
    ("lights_out_min_presses", {"rows": ["111", "010", "000"]}, 1),
    ("rook_placement_counting", {"board": ["..", ".."], "k": 2}, 2),
    ("king_placement_counting", {"board": ["...", "...", "..."], "k": 2}, 16),  # 36 - 20
]


@pytest.mark.parametrize(("name", "data", "value"), CASES)
def test_hand_computed_value(name: str, data: dict[str, Any], value: int) -> None:
    assert_hand_computed(name, data, value)
