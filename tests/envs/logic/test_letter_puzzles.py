"""AdditionTable (puzzles_addition_table.py): a hand-made table, consistent and inconsistent
decodings, and the self-check."""

from __future__ import annotations

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import get_env
from verirl.envs.selfcheck import self_check

# base 3 with A = 0, B = 1, C = 2
TABLE = {
    "letters": ["A", "B", "C"],
    "table": [["A", "B", "C"], ["B", "C", "BA"], ["C", "BA", "BB"]],
}


def test_addition_table() -> None:
    assert verdict("addition_table", "0, 1, 2", **TABLE).correct
    assert verdict("addition_table", "A = 0, B = 1, C = 2", **TABLE).correct
    assert reward("addition_table", "1, 0, 2", **TABLE) == pytest.approx((1 / 3) ** 3)
    assert reward("addition_table", "2, 1, 0", **TABLE) == pytest.approx((1 / 3) ** 3)
    assert reward("addition_table", "0, 1, 1", **TABLE) == -0.5
    assert reward("addition_table", "0, 1", **TABLE) == -0.5
    assert get_env("addition_table").solve(problem("addition_table", **TABLE)) == "0, 1, 2"


def test_self_check() -> None:
    report = self_check(get_env("addition_table"))
    assert not report.failures, report.failures


# base 3, planted d = (2, 0, 1): d0 d1 + d2 = d0 d2, i.e. 6 + 1 = 7
CRYPT = {"n": 3, "terms": [[0, 1], [2], [0, 2]], "planted": [2, 0, 1]}


def test_cryptarithmetic() -> None:
    assert verdict("cryptarithmetic", "2, 0, 1", **CRYPT).correct
    # the addition only forces d[1] = 0: (1, 0, 2) gives 3 + 2 = 5 and is accepted too
    assert verdict("cryptarithmetic", "1, 0, 2", **CRYPT).correct
    assert verdict("cryptarithmetic", "d[0] = 2, d[1] = 0, d[2] = 1", **CRYPT).correct
    assert reward("cryptarithmetic", "0, 1, 2", **CRYPT) == 0.0
    assert reward("cryptarithmetic", "2, 1, 0", **CRYPT) == pytest.approx((1 / 3) ** 3)
    assert reward("cryptarithmetic", "2, 2, 1", **CRYPT) == -0.5
    assert get_env("cryptarithmetic").solve(problem("cryptarithmetic", **CRYPT)) == "1, 0, 2"


def test_cryptarithmetic_self_check() -> None:
    report = self_check(get_env("cryptarithmetic"))
    assert not report.failures, report.failures
