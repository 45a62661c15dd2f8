"""Difference-constraint environments (constraint_systems.py): hand-made systems, the
composite minimum-sum reward, and the self-check."""

from __future__ import annotations

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import ENVIRONMENTS, env_names, get_env
from verirl.envs.selfcheck import self_check

NAMES = [
    n
    for n in env_names(family="constraint_systems")
    if ENVIRONMENTS.get(n).part.__module__.endswith(".logic.difference_constraints")
]


def test_family_is_registered() -> None:
    assert len(NAMES) == 2


def test_difference_constraint_system() -> None:
    data = {"n": 3, "constraints": [[0, 1, 2], [1, 2, -1], [2, 0, 0]]}
    name = "difference_constraint_system"
    assert verdict(name, "1, 0, 1", **data).correct
    assert verdict(name, "x[0] = 6, x[1] = 5, x[2] = 6", **data).correct  # any solution
    assert reward(name, "0, 0, 0", **data) == pytest.approx((2 / 3) ** 5)
    assert reward(name, "1, 2", **data) == -0.5
    solved = get_env(name).solve(problem(name, **data))
    assert verdict(name, solved, **data).correct


def test_difference_constraint_system_dag() -> None:
    name = "difference_constraint_system_dag"
    data = {"n": 3, "relations": [[0, "<", 1], [1, "<=", 2], [2, "=", 1]]}
    assert verdict(name, "1, 2, 2", **data).correct
    assert reward(name, "1, 3, 3", **data) == pytest.approx(0.5 + 0.5 * (5 / 7) ** 5)
    assert reward(name, "2, 1, 1", **data) == pytest.approx(0.5 * (2 / 3) ** 5)
    assert reward(name, "0, 2, 2", **data) == -0.5
    assert get_env(name).solve(problem(name, **data)) == "1, 2, 2"
    chain = {"n": 4, "relations": [[0, "<", 1], [1, "<", 2], [3, "<=", 0], [0, "=", 3]]}
    assert get_env(name).solve(problem(name, **chain)) == "1, 2, 3, 1"


@pytest.mark.parametrize("name", NAMES)
def test_solver_agrees_with_the_verifier(name: str) -> None:
    env = get_env(name)
    for d in (0, 3, 7, 12, 20):
        for seed in range(6):
            p = env.generate(d, seed)
            assert env.verify(p, f"\\boxed{{{env.solve(p)}}}").correct, (d, seed)


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures
