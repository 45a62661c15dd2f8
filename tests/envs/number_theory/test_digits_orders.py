"""Digits and orders (number_theory/digits_orders.py): hand-computed values of its
SizedInteger environments (kit/answers.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.envs.helpers import assert_hand_computed

CASES: list[tuple[str, dict[str, Any], int]] = [
    ("non_increasing_digit_counting", {"n": 20}, 12),  # 1..9, 10, 11, 20
    ("digit_sum_counting", {"n": 20, "target": 2}, 3),  # 2, 11, 20
    ("palindrome_range_counting", {"lo": 1, "hi": 100}, 18),
    ("multiplicative_order", {"a": 2, "m": 7}, 3),
    ("lucas_binomial_mod", {"n": 10, "k": 3, "p": 7}, 1),  # 120 mod 7
    ("pisano_period", {"m": 10}, 60),
]


@pytest.mark.parametrize(("name", "data", "value"), CASES)
def test_hand_computed_value(name: str, data: dict[str, Any], value: int) -> None:
    assert_hand_computed(name, data, value)
