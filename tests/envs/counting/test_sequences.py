"""Sequence/permutation/string counting environments (counting_sequences.py): hand-computed
instances, a swap search for the InversionPair claim, fast counts against the solvers, and
the self-check."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import ENVIRONMENTS, env_names, get_env
from verirl.envs.selfcheck import self_check

NAMES = [
    n
    for n in env_names(family="sequence_counting")
    if ENVIRONMENTS.get(n).part.__module__.endswith(".counting.sequences")
]


def _solved(name: str, **data: object) -> int:
    return int(get_env(name).solve(problem(name, **data)))


def test_family_is_registered() -> None:
    assert len(NAMES) == 11


def test_anti_palindromic_substring_counting() -> None:
    # 0101: the three length-2 substrings (all mixed) and 0101 itself
    assert verdict("anti_palindromic_substring_counting", "4", s="0101", length=4).correct
    assert _solved("anti_palindromic_substring_counting", s="0101", length=4) == 4
    # 0011: 01 and 0011
    assert verdict("anti_palindromic_substring_counting", "2", s="0011", length=4).correct
    r = reward("anti_palindromic_substring_counting", "3", s="0101", length=4)
    assert r == pytest.approx(0.75**10)


def test_subarray_counts() -> None:
    # [2], [3], [2,3], [1,2,3] have mean >= 2
    assert verdict("bounded_mean_subarray_counting", "4", a=[1, 2, 3], k=2, n=3).correct
    assert _solved("bounded_mean_subarray_counting", a=[1, 2, 3], k=2, n=3) == 4
    assert reward("bounded_mean_subarray_counting", "5", a=[1, 2, 3], k=2, n=3) == pytest.approx(
        0.8**10
    )
    # B = 1 2 1 2: four singles and three pairs have sum <= 3
    data = {"a": [1, 2], "m": 2, "k": 3, "length": 4}
    assert verdict("bounded_subarray_counting", "7", **data).correct
    assert _solved("bounded_subarray_counting", **data) == 7
    assert reward("bounded_subarray_counting", "10", **data) == pytest.approx(0.7**10)


def test_bounded_interval_intersection() -> None:
    iv = [[0, 4], [2, 6], [3, 5]]
    # k = 1: every non-empty subset; k = 2: all but {[0,4],[3,5]} and the full set
    assert verdict("bounded_interval_intersection", "7", intervals=iv, k=1, n=3).correct
    assert verdict("bounded_interval_intersection", "5", intervals=iv, k=2, n=3).correct
    assert _solved("bounded_interval_intersection", intervals=iv, k=2, n=3) == 5
    r = reward("bounded_interval_intersection", "4", intervals=iv, k=2, n=3)
    assert r == pytest.approx(0.8**10)


def _fewest_swaps(a: list[int], b: list[int]) -> int:
    """Breadth-first search over adjacent swaps in A or B until ranks line up."""

    def aligned(x: tuple[int, ...], y: tuple[int, ...]) -> bool:
        return all(sorted(x).index(u) == sorted(y).index(v) for u, v in zip(x, y, strict=True))

    frontier, seen, depth = [(tuple(a), tuple(b))], {(tuple(a), tuple(b))}, 0
    while frontier:
        if any(aligned(x, y) for x, y in frontier):
            return depth
        nxt = []
        for x, y in frontier:
            for i in range(len(x) - 1):
                for state in (
                    ((*x[:i], x[i + 1], x[i], *x[i + 2 :]), y),
                    (x, (*y[:i], y[i + 1], y[i], *y[i + 2 :])),
                ):
                    if state not in seen:
                        seen.add(state)
                        nxt.append(state)
        frontier, depth = nxt, depth + 1
    raise AssertionError("unreachable")


def test_inversion_pair_matches_a_swap_search() -> None:
    assert verdict("inversion_pair", "2", a=[1, 2, 3], b=[3, 1, 2], n=3).correct
    assert reward("inversion_pair", "1", a=[1, 2, 3], b=[3, 1, 2], n=3) == pytest.approx(0.5**10)
    rng = random.Random(5)
    for _ in range(25):
        n = rng.randint(2, 5)
        a, b = rng.sample(range(1, 20), n), rng.sample(range(1, 20), n)
        fewest = _fewest_swaps(a, b)
        assert _solved("inversion_pair", a=a, b=b, n=n) == fewest
        assert verdict("inversion_pair", str(fewest), a=a, b=b, n=n).correct


def test_permutation_counts_are_binary() -> None:
    # Mahonian numbers: n = 3 gives 1 2 2 1, n = 4 gives 1 3 5 6 5 3 1
    assert verdict("inversion_pair_k_counting", "2", n=3, k=1).correct
    assert verdict("inversion_pair_k_counting", "5", n=4, k=2).correct
    assert _solved("inversion_pair_k_counting", n=4, k=3) == 6
    assert reward("inversion_pair_k_counting", "6", n=4, k=2) == 0.0
    brute = sum(
        1
        for p in itertools.permutations(range(5))
        if sum(p[i] > p[j] for i, j in itertools.combinations(range(5), 2)) == 4
    )
    assert verdict("inversion_pair_k_counting", str(brute), n=5, k=4).correct
    # heaps: n = 3 → 2, n = 4 → C(3,2) = 3, n = 5 → 5!/(5·3) = 8
    assert verdict("heap_counting", "2", n=3).correct
    assert verdict("heap_counting", "3", n=4).correct
    assert verdict("heap_counting", "8", n=5).correct
    assert _solved("heap_counting", n=5) == 8
    assert reward("heap_counting", "7", n=5) == 0.0


def test_cantor_expansion() -> None:
    assert verdict("cantor_expansion", "2", seq=[2, 1, 3], length=3).correct  # 123, 132
    assert verdict("cantor_expansion", "2", seq=[2, 1, 1], length=3).correct  # 112, 121
    assert verdict("cantor_expansion", "1", seq=[1, 2, 1], length=3).correct  # 112
    assert _solved("cantor_expansion", seq=[2, 1, 1], length=3) == 2
    assert reward("cantor_expansion", "3", seq=[2, 1, 1], length=3) == 0.0


def test_bit_equation_counting() -> None:
    tree = ["&", "x1", ["|", "x2", "x3"]]  # x1 = 1 and not x2 = x3 = 0
    assert verdict("bit_equation_counting", "3", tree=tree, n=3).correct
    assert _solved("bit_equation_counting", tree=tree, n=3) == 3
    assert verdict("bit_equation_counting", "2", tree=["^", "x1", "x2"], n=2).correct
    assert reward("bit_equation_counting", "4", tree=tree, n=3) == pytest.approx(0.75**10)


def test_expression_adding_parenthese_counting() -> None:
    # (2-3)*4 = -4, 2-(3*4) = -10
    data = {"nums": [2, 3, 4], "ops": ["-", "*"], "operands": 3}
    assert verdict("expression_adding_parenthese_counting", "2", **data).correct
    # 2*3-4*5: 10, -10, -14, -10, -34
    data4 = {"nums": [2, 3, 4, 5], "ops": ["*", "-", "*"], "operands": 4}
    assert verdict("expression_adding_parenthese_counting", "4", **data4).correct
    assert _solved("expression_adding_parenthese_counting", **data4) == 4
    assert reward("expression_adding_parenthese_counting", "5", **data4) == pytest.approx(0.8**10)


def test_grid_triangle_counting() -> None:
    assert verdict("grid_triangle_counting", "4", n=1, m=1, points=4).correct
    assert verdict("grid_triangle_counting", "18", n=2, m=1, points=6).correct  # 20 - 2 rows
    # 3×3 points: C(9,3) = 84 minus 3 rows, 3 columns, 2 diagonals
    assert verdict("grid_triangle_counting", "76", n=2, m=2, points=9).correct
    assert _solved("grid_triangle_counting", n=2, m=2, points=9) == 76
    assert reward("grid_triangle_counting", "84", n=2, m=2, points=9) == pytest.approx(
        (76 / 84) ** 10
    )


@pytest.mark.parametrize("name", NAMES)
def test_fast_count_matches_solver(name: str) -> None:
    env = get_env(name)
    for d in (0, 1, 3, 6, 9):
        for seed in range(5):
            p = env.generate(d, seed)
            assert env.solve(p) == p.answer, (d, seed)


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures
