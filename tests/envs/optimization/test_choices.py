"""Optimisation environments (optimization_choices.py): hand-computed optima, ratio credit
for worse choices, invalid choices, the fast optimum against exhaustive search, and the
self-check."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import ENVIRONMENTS, env_names, get_env
from verirl.envs.optimization.choices import _max_assignment
from verirl.envs.selfcheck import self_check

NAMES = [
    n
    for n in env_names(family="optimization")
    if ENVIRONMENTS.get(n).part.__module__.endswith(".optimization.choices")
]


def test_family_is_registered() -> None:
    assert len(NAMES) == 6


def test_hungarian_matches_brute_force() -> None:
    rng = random.Random(0)
    for _ in range(200):
        n = rng.randint(1, 5)
        w = [[rng.randint(-20, 20) for _ in range(n)] for _ in range(n)]
        p = _max_assignment(w)
        best = max(sum(w[i][q[i]] for i in range(n)) for q in itertools.permutations(range(n)))
        assert sorted(p) == list(range(n)) and sum(w[i][p[i]] for i in range(n)) == best


def test_bezout_identity() -> None:
    a = {"a": [6, 10]}
    assert verdict("bezout_identity", "2, -1", **a).correct  # 12 - 10 = 2 = gcd
    assert reward("bezout_identity", "-1, 1", **a) == pytest.approx(0.5**5)  # S = 4
    assert reward("bezout_identity", "0, 0", **a) == -0.5
    assert reward("bezout_identity", "5, -3", **a) == -0.5  # S = 0
    assert reward("bezout_identity", "1", **a) == -0.5
    data = {"a": [-12, 18, 27]}
    assert verdict(
        "bezout_identity", get_env("bezout_identity").solve(problem("x", **data)), **data
    )


def test_axis_kcenter() -> None:
    data = {"xs": [0, 1, 10, 11], "k": 2}
    assert verdict("axis_kcenter", "0, 2", **data).correct
    assert verdict("axis_kcenter", "\\{3, 1\\}", **data).correct
    assert reward("axis_kcenter", "0, 1", **data) == pytest.approx(0.1**5)  # radius 10
    assert reward("axis_kcenter", "0, 0", **data) == -0.5
    assert reward("axis_kcenter", "0, 4", **data) == -0.5


def test_fractional_programming() -> None:
    data = {"a": [1, 5, 3], "b": [1, 2, 3], "k": 2}  # ratios 2, 1, 8/5
    assert verdict("fractional_programming", "0, 1", **data).correct
    assert reward("fractional_programming", "1, 2", **data) == pytest.approx(0.8**5)
    assert reward("fractional_programming", "1", **data) == -0.5
    assert get_env("fractional_programming").solve(problem("x", **data)) == "0, 1"


def test_fractional_matching() -> None:
    name = "fractional_programming_bipartite_graph_matching"
    data = {"a": [[1, 5], [5, 1]], "b": [[1, 1], [1, 1]]}
    assert verdict(name, "1, 0", **data).correct
    assert reward(name, "0, 1", **data) == pytest.approx(0.2**5)
    assert reward(name, "1, 1", **data) == -0.5


def test_discrete_logarithm() -> None:
    data = {"a": 2, "b": 4, "m": 7}  # powers of 2 mod 7: 1, 2, 4, 1, ...
    assert verdict("discrete_logarithm", "2", **data).correct
    assert verdict("discrete_logarithm", "y = 2", **data).correct
    assert reward("discrete_logarithm", "5", **data) == pytest.approx(0.25)  # (3/6)^2
    assert reward("discrete_logarithm", "3", **data) == 0.0
    assert reward("discrete_logarithm", "-1", **data) == -0.5
    assert verdict("discrete_logarithm", "0", a=3, b=8, m=7).correct  # 8 ≡ 1


def test_hur_warehouse_store() -> None:
    data = {"a": [3, 0, 2], "b": [2, 2, 2]}
    assert verdict("hur_warehouse_store", "1, 3", **data).correct
    assert reward("hur_warehouse_store", "1", **data) == pytest.approx(0.5**5)
    assert reward("hur_warehouse_store", "2", **data) == pytest.approx(0.5**5)
    assert reward("hur_warehouse_store", "1, 2", **data) == -0.5  # stock runs out on day 2
    assert reward("hur_warehouse_store", "1, 1", **data) == -0.5


@pytest.mark.parametrize("name", NAMES)
def test_optimum_matches_exhaustive_search(name: str) -> None:
    env = get_env(name)
    for d in (0, 2, 5, 8):
        for seed in range(6):
            p = env.generate(d, seed)
            assert env.verify(p, f"\\boxed{{{env.solve(p)}}}").correct, (d, seed)
            assert env.verify(p, f"\\boxed{{{p.answer}}}").correct, (d, seed)


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures
