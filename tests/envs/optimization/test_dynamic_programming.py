"""Dynamic-programming optimisation (optimization/dynamic_programming.py): hand-computed
values of its SizedInteger environments (kit/answers.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.envs.helpers import assert_hand_computed

CASES: list[tuple[str, dict[str, Any], int]] = [
    ("matrix_chain_multiplication", {"dims": [10, 30, 5, 60]}, 4500),
    ("egg_drop", {"eggs": 2, "floors": 100}, 14),
    ("stone_merging", {"piles": [1, 2, 3]}, 9),
    ("rod_cutting", {"prices": [1, 5, 8, 9]}, 10),
    ("huffman_merge_cost", {"piles": [5, 5, 5, 5]}, 40),
    ("weighted_interval_scheduling", {"intervals": [[0, 3, 5], [2, 5, 6], [4, 7, 5]]}, 10),
    ("job_sequencing_deadlines", {"jobs": [[1, 10], [1, 20], [2, 5]]}, 25),
]


@pytest.mark.parametrize(("name", "data", "value"), CASES)
def test_hand_computed_value(name: str, data: dict[str, Any], value: int) -> None:
    assert_hand_computed(name, data, value)
