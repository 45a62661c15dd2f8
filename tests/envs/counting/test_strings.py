"""String counting (counting/strings.py): hand-computed values of its
SizedInteger environments (kit/answers.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.envs.helpers import assert_hand_computed

CASES: list[tuple[str, dict[str, Any], int]] = [
    ("distinct_subsequence_count", {"s": "aba"}, 6),  # a b ab aa ba aba
    ("distinct_substring_count", {"s": "aaa"}, 3),
    ("bracket_completion_counting", {"pattern": "????"}, 2),
    ("necklace_counting", {"counts": [2, 2]}, 2),  # aabb, abab
    ("palindromic_subsequence_count", {"s": "aab"}, 4),  # a, a, b, aa
    ("longest_palindromic_subsequence", {"s": "abca"}, 3),
    ("min_insertions_palindrome", {"s": "ab"}, 1),
]


@pytest.mark.parametrize(("name", "data", "value"), CASES)
def test_hand_computed_value(name: str, data: dict[str, Any], value: int) -> None:
    assert_hand_computed(name, data, value)
