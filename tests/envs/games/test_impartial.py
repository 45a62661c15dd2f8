"""Impartial games (games/impartial.py): hand-computed values of its
SizedInteger environments (kit/answers.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.envs.helpers import assert_hand_computed

CASES: list[tuple[str, dict[str, Any], int]] = [
    ("subtraction_game_grundy", {"options": [1, 2], "n": 4}, 1),  # n mod 3
    ("misere_nim_winning_moves", {"piles": [1, 1]}, 2),  # leave the opponent the last stone
    ("wythoff_winning_moves", {"a": 1, "b": 2}, 0),  # (1, 2) is a P-position
    ("wythoff_winning_moves", {"a": 2, "b": 2}, 3),  # to (1, 2), (2, 1) or (0, 0)
    ("kayles_winning_moves", {"rows": [3]}, 1),  # the middle pin, leaving 1 + 1
    ("staircase_nim_winning_moves", {"coins": [1, 0, 0]}, 1),  # the coin to the ground
    ("divisor_game_winning_moves", {"piles": [2]}, 1),  # take 1, leaving a dead pile
]


@pytest.mark.parametrize(("name", "data", "value"), CASES)
def test_hand_computed_value(name: str, data: dict[str, Any], value: int) -> None:
    assert_hand_computed(name, data, value)
