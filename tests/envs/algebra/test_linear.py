"""Linear algebra (algebra/linear.py): hand-computed values of its
SizedInteger environments (kit/answers.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.envs.helpers import assert_hand_computed, verdict

CASES: list[tuple[str, dict[str, Any], int]] = [
    ("matrix_determinant", {"m": [[1, 2], [3, 4]]}, -2),
    ("gf2_matrix_rank", {"m": [[1, 1], [1, 1]]}, 1),
    ("spanning_tree_count", {"n": 3, "edges": [[0, 1], [1, 2], [0, 2]]}, 3),
    (
        "spanning_tree_count",
        {"n": 4, "edges": [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]},
        16,  # Cayley: 4^2
    ),
    ("matrix_power_trace", {"a": [[1, 1], [1, 0]], "k": 5}, 11),  # the Lucas number L_5
]


@pytest.mark.parametrize(("name", "data", "value"), CASES)
def test_hand_computed_value(name: str, data: dict[str, Any], value: int) -> None:
    assert_hand_computed(name, data, value)


def test_gaussian_elimination_substitutes_the_answer() -> None:
    data = {"a": [[1, 1], [1, -1]], "b": [3, 1]}
    assert verdict("gaussian_elimination", "2, 1", **data).correct
    assert verdict("gaussian_elimination", "x1 = 2, x2 = 1", **data).correct
    assert verdict("gaussian_elimination", "x2 = 1, x1 = 2", **data).correct
    half = verdict("gaussian_elimination", "3, 0", **data)  # the first equation only
    assert not half.correct and 0 < half.reward < 1
    assert verdict("gaussian_elimination", "2", **data).reward == -0.5
