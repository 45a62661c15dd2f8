"""Hand-computed verifier examples for the NP-complete environments."""

from __future__ import annotations

import pytest

from tests.envs.helpers import problem as _problem
from tests.envs.helpers import scored as _reward
from verirl.envs import get_env
from verirl.envs.optimization.np_complete import dpll, subset_with_sum

# ---- SAT -----------------------------------------------------------------------------------
# (x1 OR x2) AND (NOT x1 OR x3) AND (NOT x2 OR NOT x3): satisfied by 1,0,1 and by 0,1,0
CLAUSES = [[1, 2], [-1, 3], [-2, -3]]


def test_sat_accepts_every_satisfying_assignment() -> None:
    p = _problem("sat", n=3, clauses=CLAUSES)
    assert _reward("sat", p, "1, 0, 1") == (1.0, True)
    assert _reward("sat", p, "0, 1, 0") == (1.0, True)
    assert _reward("sat", p, "x1=true, x2=false, x3=true") == (1.0, True)
    reward, correct = _reward("sat", p, "x1 = 1, x2 = 1, x3 = 1")  # third clause false
    assert not correct and reward == pytest.approx((2 / 3) ** 5)
    assert _reward("sat", p, "1, 0")[0] == -0.5
    assert _reward("sat", p, "x1=1, x2=0")[0] == -0.5
    assert _reward("sat", p, "yes")[0] == -1.0


def test_dpll() -> None:
    found = dpll(CLAUSES, 3)
    assert found is not None
    assert all(any((lit > 0) == found[abs(lit)] for lit in c) for c in CLAUSES)
    assert dpll([[1], [-1]], 1) is None
    assert dpll([[1, 2], [-1, 2], [1, -2], [-1, -2]], 2) is None


# ---- numbers -------------------------------------------------------------------------------
def test_subset_sum() -> None:
    p = _problem("subset_sum", values=[3, 5, 7, 2], target=10)
    assert _reward("subset_sum", p, "3, 7") == (1.0, True)
    assert _reward("subset_sum", p, "3, 5, 2") == (1.0, True)
    assert _reward("subset_sum", p, "3 + 7 = 10") == (1.0, True)
    reward, correct = _reward("subset_sum", p, "5, 7")  # sums to 12
    assert not correct and reward == pytest.approx((10 / 12) ** 10)
    assert _reward("subset_sum", p, "7, 7")[0] == -0.5  # 7 is there once
    assert _reward("subset_sum", p, "11")[0] == -0.5
    assert _reward("subset_sum", p, "three, seven")[0] == -1.0
    assert subset_with_sum([3, 5, 7, 2], 10) is not None
    assert subset_with_sum([4, 6], 5) is None


def test_number_partition() -> None:
    p = _problem("number_partition", values=[1, 2, 3, 4])
    assert _reward("number_partition", p, "1, 4") == (1.0, True)
    assert _reward("number_partition", p, "2, 3") == (1.0, True)
    reward, correct = _reward("number_partition", p, "1, 2")  # 3 against 7
    assert not correct and reward == pytest.approx((3 / 7) ** 10)
    assert _reward("number_partition", p, "5")[0] == -0.5


def test_knapsack() -> None:
    p = _problem("knapsack", weights=[2, 3, 4, 5], values=[3, 4, 5, 6], capacity=5)
    assert _reward("knapsack", p, "0, 1") == (1.0, True)  # weight 5, value 7
    reward, correct = _reward("knapsack", p, "3")  # value 6 of 7
    assert not correct and reward == pytest.approx((6 / 7) ** 5)
    assert _reward("knapsack", p, "1, 3")[0] == -0.5  # weight 8 > 5
    assert _reward("knapsack", p, "0, 0")[0] == -0.5
    assert _reward("knapsack", p, "4")[0] == -0.5
    tie = _problem("knapsack", weights=[1, 1, 2], values=[2, 2, 4], capacity=2)
    assert _reward("knapsack", tie, "0, 1") == (1.0, True)
    assert _reward("knapsack", tie, "2") == (1.0, True)


# ---- graphs --------------------------------------------------------------------------------
def test_vertex_cover() -> None:
    edges = [[0, 1, 1], [0, 2, 1], [0, 3, 1], [2, 3, 1]]
    p = _problem("vertex_cover", n=4, k=2, edges=edges)
    assert _reward("vertex_cover", p, "0, 2") == (1.0, True)
    assert _reward("vertex_cover", p, "3, 0") == (1.0, True)
    reward, correct = _reward("vertex_cover", p, "1, 2")  # 0-3 uncovered: 3/4
    assert not correct and reward == pytest.approx(0.75**5)
    assert _reward("vertex_cover", p, "0, 1, 2")[0] == -0.5  # more than k
    assert _reward("vertex_cover", p, "0, 0")[0] == -0.5
    assert _reward("vertex_cover", p, "7")[0] == -0.5


def test_hamiltonian_path() -> None:
    p = _problem("hamiltonian_path", n=4, edges=[[0, 1, 1], [1, 2, 1], [2, 3, 1], [0, 2, 1]])
    assert _reward("hamiltonian_path", p, "0, 1, 2, 3") == (1.0, True)
    assert _reward("hamiltonian_path", p, "1, 0, 2, 3") == (1.0, True)
    assert _reward("hamiltonian_path", p, "3 -> 2 -> 1 -> 0") == (1.0, True)
    reward, correct = _reward("hamiltonian_path", p, "0, 1, 3, 2")  # 1-3 missing: 2/3
    assert not correct and reward == pytest.approx((2 / 3) ** 5)
    assert _reward("hamiltonian_path", p, "0, 1, 2")[0] == -0.5
    assert _reward("hamiltonian_path", p, "0, 1, 2, 2")[0] == -0.5


def test_clique_and_independent_set() -> None:
    edges = [[0, 1, 1], [0, 2, 1], [1, 2, 1], [1, 3, 1], [2, 3, 1]]
    p = _problem("clique", n=5, k=3, edges=edges)
    assert _reward("clique", p, "0, 1, 2") == (1.0, True)
    assert _reward("clique", p, "3, 2, 1") == (1.0, True)
    reward, correct = _reward("clique", p, "0, 1, 3")  # 0-3 missing: 2/3
    assert not correct and reward == pytest.approx((2 / 3) ** 5)
    assert _reward("clique", p, "0, 1")[0] == -0.5
    path = _problem("independent_set", n=4, k=2, edges=[[0, 1, 1], [1, 2, 1], [2, 3, 1]])
    for answer in ("0, 2", "0, 3", "1, 3"):
        assert _reward("independent_set", path, answer) == (1.0, True)
    assert _reward("independent_set", path, "0, 1") == (0.0, False)


# ---- set systems ---------------------------------------------------------------------------
SETS = [[1, 2], [3, 4], [1, 3], [2, 4], [1, 2, 3]]


def test_set_cover() -> None:
    p = _problem("set_cover", u=4, k=2, sets=SETS)
    assert _reward("set_cover", p, "S1, S2") == (1.0, True)
    assert _reward("set_cover", p, "S3, S4") == (1.0, True)
    assert _reward("set_cover", p, "5, 2") == (1.0, True)  # S5 ∪ S2, labels without "S"
    reward, correct = _reward("set_cover", p, "S1, S3")  # 4 uncovered: 3/4
    assert not correct and reward == pytest.approx(0.75**5)
    assert _reward("set_cover", p, "S1, S2, S3")[0] == -0.5  # more than k sets
    assert _reward("set_cover", p, "S6")[0] == -0.5


def test_exact_cover() -> None:
    p = _problem("exact_cover", u=4, sets=SETS)
    assert _reward("exact_cover", p, "S1, S2") == (1.0, True)
    assert _reward("exact_cover", p, "S4, S3") == (1.0, True)
    # S5 and S2 cover 3 twice: only 1, 2 and 4 exactly once -> 3/4
    reward, correct = _reward("exact_cover", p, "S5, S2")
    assert not correct and reward == pytest.approx(0.75**5)
    reward, _ = _reward("exact_cover", p, "S1, S3")  # 1 twice, 4 never: 2/4
    assert reward == pytest.approx(0.5**5)
    assert _reward("exact_cover", p, "S1, S1")[0] == -0.5


def test_planted_and_solver_answers_both_verify() -> None:
    for name in ("sat", "vertex_cover", "hamiltonian_path", "set_cover", "exact_cover"):
        env = get_env(name)
        for seed in range(3):
            problem = env.generate(8, seed)
            assert env.verify(problem, f"\\boxed{{{problem.answer}}}").correct
            assert env.verify(problem, f"\\boxed{{{env.solve(problem)}}}").correct
