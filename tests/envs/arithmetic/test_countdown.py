"""Countdown environments (countdown_expressions.py): the bounded expression reader, exact and
closest targets, invalid expressions, and the self-check."""

from __future__ import annotations

from fractions import Fraction

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import ENVIRONMENTS, env_names, get_env
from verirl.envs.arithmetic.countdown import evaluate, pairwise_search, reachable, tokenize
from verirl.envs.reading.normalize import InvalidAnswer
from verirl.envs.selfcheck import self_check

NAMES = [
    n
    for n in env_names(family="countdown")
    if ENVIRONMENTS.get(n).part.__module__.endswith(".arithmetic.countdown")
]


def test_family_is_registered() -> None:
    assert len(NAMES) == 2


def test_expression_reader() -> None:
    assert evaluate(tokenize("(2 + 3) \\times 4")) == (Fraction(20), [2, 3, 4])
    assert evaluate(tokenize("8 ÷ 3 - 1 = 5/3"))[0] == Fraction(5, 3)
    assert evaluate(tokenize("2 * 3 + 4"))[0] == 10  # precedence
    assert evaluate(tokenize("10 - 4 - 3"))[0] == 3  # left to right
    for bad in ("-2 + 3", "2 +", "(2 + 3", "2 3", "4 / (3 - 3)"):
        with pytest.raises(InvalidAnswer):
            evaluate(tokenize(bad))
    with pytest.raises(ValueError):
        tokenize("2 ** x")
    with pytest.raises(InvalidAnswer):
        tokenize("+".join(["1"] * 300))


def test_countdown_equal() -> None:
    data = {"numbers": [2, 3, 4], "target": 20}
    assert verdict("countdown_equal", "(2 + 3) * 4", **data).correct
    assert verdict("countdown_equal", "4 \\times (3 + 2) = 20", **data).correct
    assert reward("countdown_equal", "2 * 3 + 4", **data) == 0.0
    assert reward("countdown_equal", "(2 + 3) * 4 * 1", **data) == -0.5  # 1 is not given
    assert reward("countdown_equal", "(2 + 3) * 4 * 4", **data) == -0.5  # 4 used twice
    assert reward("countdown_equal", "(2 + 3)", **data) == -0.5  # 4 unused
    assert reward("countdown_equal", "-2 + 3 * 4", **data) == -0.5
    # exact fractions midway: 5 · (5 − 1/5) = 24
    assert verdict("countdown_equal", "5 * (5 - 1 / 5)", numbers=[1, 5, 5, 5], target=24)
    solved = get_env("countdown_equal").solve(
        problem("countdown_equal", numbers=[1, 5, 5, 5], target=24)
    )
    assert verdict("countdown_equal", solved, numbers=[1, 5, 5, 5], target=24).correct


def test_countdown_close() -> None:
    # reachable from 2 and 3: 5, 6, ±1, 2/3, 3/2; the closest to 10 is 6
    data = {"numbers": [2, 3], "target": 10, "best_gap": "4", "exact": False}
    assert verdict("countdown_close", "2 * 3", **data).correct
    assert reward("countdown_close", "2 + 3", **data) == pytest.approx(5 / 6)
    assert reward("countdown_close", "3 - 2", **data) == pytest.approx(5 / 10)
    assert reward("countdown_close", "2 * 5", **data) == -0.5
    assert get_env("countdown_close").solve(problem("countdown_close", **data)) == "2 * 3"


def test_subset_dp_agrees_with_pairwise_search() -> None:
    for numbers, target in (([1, 2, 3, 4], 37), ([7, 7, 2], 100), ([9, 4, 6, 1], 211)):
        best = min(abs(v - target) for v in reachable(numbers))
        assert pairwise_search(numbers, target, False)[0] == best


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures
