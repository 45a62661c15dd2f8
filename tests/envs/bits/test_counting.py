"""Bit counting (bits/counting.py): hand-computed values of its
SizedInteger environments (kit/answers.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.envs.helpers import assert_hand_computed

CASES: list[tuple[str, dict[str, Any], int]] = [
    ("popcount_range_sum", {"lo": 1, "hi": 3}, 4),
    ("k_ones_counting", {"n": 7, "k": 2}, 3),  # 3, 5, 6
    ("gray_code_rank", {"code": 6}, 4),  # 0, 1, 11, 10, 110
    ("range_bitwise_and", {"lo": 5, "hi": 7}, 4),
    ("zero_and_pairs_counting", {"values": [1, 2, 3]}, 1),
    ("or_subset_counting", {"values": [1, 2, 3], "target": 3}, 5),
    ("hamming_distance_sum", {"values": [1, 2, 3]}, 4),
]


@pytest.mark.parametrize(("name", "data", "value"), CASES)
def test_hand_computed_value(name: str, data: dict[str, Any], value: int) -> None:
    assert_hand_computed(name, data, value)
