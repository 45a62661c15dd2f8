"""Permutation counting (counting/permutations.py): hand-computed values of its
SizedInteger environments (kit/answers.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.envs.helpers import assert_hand_computed

CASES: list[tuple[str, dict[str, Any], int]] = [
    ("descent_pattern_counting", {"pattern": "UD"}, 2),  # 132, 231
    ("descent_pattern_counting", {"pattern": "UDU"}, 5),  # the zigzag number E_4
    ("forbidden_position_permutations", {"n": 3, "forbidden": [[1, 1], [2, 2], [3, 3]]}, 2),
    ("no_adjacent_equal_arrangements", {"counts": [2, 1]}, 1),  # aba
    ("no_adjacent_equal_arrangements", {"counts": [2, 2]}, 2),  # abab, baba
    ("no_adjacent_equal_arrangements", {"counts": [1, 1, 1]}, 6),
    ("linear_extension_counting", {"n": 3, "before": [[0, 1]]}, 3),
    ("permutation_min_swaps", {"perm": [2, 3, 1]}, 2),
    ("permutation_order", {"perm": [2, 1, 4, 5, 3]}, 6),
]


@pytest.mark.parametrize(("name", "data", "value"), CASES)
def test_hand_computed_value(name: str, data: dict[str, Any], value: int) -> None:
    assert_hand_computed(name, data, value)
