"""Array scans, string runs and sequence constructions from RLVE rows: hand-computed
instances, brute-force cross-checks, and the self-check."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.selfcheck import self_check

ARRAYS = env_names(family="arrays_scans")
STRINGS = env_names(family="strings_runs")
BUILDS = env_names(family="constructions_sequences")


def test_families_are_registered() -> None:
    assert (len(ARRAYS), len(STRINGS), len(BUILDS)) == (7, 5, 6)


@pytest.mark.parametrize("name", ARRAYS + STRINGS + BUILDS)
def test_self_check(name: str) -> None:
    assert self_check(get_env(name)).failures == []


def test_sliding_window_and_spiral() -> None:
    assert verdict("sliding_window", "1, 1, 1, 1", a=[3, 1, 4, 1, 5], k=2).correct
    assert verdict("sliding_window", "4, 3", a=[5, 4, 3], k=2).correct
    assert reward("sliding_window", "4, 4", a=[5, 4, 3], k=2) == pytest.approx(0.5**10)
    assert reward("sliding_window", "4", a=[5, 4, 3], k=2) == -0.5
    assert verdict("spiral_matrix", "1, 2, 4, 3", matrix=[[1, 2], [3, 4]]).correct
    assert verdict("spiral_matrix", "1, 2, 3, 6, 5, 4", matrix=[[1, 2, 3], [4, 5, 6]]).correct
    assert reward("spiral_matrix", "1, 2, 3, 4", matrix=[[1, 2], [3, 4]]) == pytest.approx(0.5**5)


def test_single_stack_sorting() -> None:
    data = {"output": [1, 0, 2]}
    assert verdict("single_stack_sorting", "push, push, pop, pop, push, pop", **data).correct
    assert verdict("single_stack_sorting", "Push Push Pop Pop Push Pop", **data).correct
    # output 0 1 2: four of six operations agree with the forced sequence
    got = reward("single_stack_sorting", "push, pop, push, pop, push, pop", **data)
    assert got == pytest.approx((4 / 6) ** 10)
    assert reward("single_stack_sorting", "pop, push, push, pop, push, pop", **data) == -0.5
    assert reward("single_stack_sorting", "push, pull", **data) == -1.0


def test_salesman_fatigue() -> None:
    data = {"s": [1, 2, 3], "a": [3, 2, 1]}  # X=1: 2·3+1; X=2: 2·3+3+1; X=3: 2·3+6
    assert verdict("salesman_fatigue", "7, 10, 12", **data).correct
    assert reward("salesman_fatigue", "7, 9, 12", **data) == pytest.approx((2 / 3) ** 5)
    env, rng = get_env("salesman_fatigue"), random.Random(2)
    for _ in range(20):
        s = sorted(rng.randint(1, 9) for _ in range(6))
        a = [rng.randint(1, 9) for _ in range(6)]
        brute = [
            max(
                2 * max(s[i] for i in pick) + sum(a[i] for i in pick)
                for pick in itertools.combinations(range(6), x)
            )
            for x in range(1, 7)
        ]
        assert env.solve(problem("salesman_fatigue", s=s, a=a)) == ", ".join(map(str, brute))


def test_weighted_lis_and_wil() -> None:
    data = {"a": [1, 3, 2, 4], "b": [1, 5, 5, 1]}  # 0 1 3 or 0 2 3 weigh 7
    assert verdict("weighted_lis", "0, 2, 3", **data).correct
    assert verdict("weighted_lis", "0, 1, 3", **data).correct
    assert reward("weighted_lis", "1, 3", **data) == pytest.approx((6 / 7) ** 5)
    assert reward("weighted_lis", "1, 2", **data) == -0.5
    wil = {"a": [1, 2, 3, 4], "d": 1, "p": 3}  # [1..3]: 6 − 3 = 3 fits, [1..4]: 10 − 4 does not
    assert verdict("wil", "1, 3", **wil).correct
    assert reward("wil", "1, 2", **wil) == pytest.approx((2 / 3) ** 5)
    assert reward("wil", "2, 4", **wil) == -0.5


def test_salad_bar_and_secret_cow_code() -> None:
    assert verdict("salad_bar", "2, 3", s="jppj").correct
    assert reward("salad_bar", "2, 2", s="jppj") == pytest.approx(0.5**5)
    assert reward("salad_bar", "1, 2", s="jppj") == -0.5  # the prefix j has more j than p
    assert verdict("salad_bar", "1, 4", s="ppjp").correct
    # abc → abccab → abccabbabcca
    assert verdict("secret_cow_code", "b", s="abc", n=7).correct
    assert verdict("secret_cow_code", "C", s="abc", n=10).correct
    assert reward("secret_cow_code", "a", s="abc", n=10) == 0.0
    assert reward("secret_cow_code", "bc", s="abc", n=10) == -1.0
    from verirl.envs.strings.runs import _cow_letter

    text = "xyzw"
    while len(text) < 5000:
        text += text[-1] + text[:-1]
    assert all(_cow_letter("xyzw", n) == text[n - 1] for n in range(1, 5001))


def test_prefixuffix() -> None:
    assert verdict("prefixuffix", "2", s="abcab").correct
    assert verdict("prefixuffix", "2", s="abba").correct  # ab and ba
    assert verdict("prefixuffix", "0", s="aab").correct
    assert reward("prefixuffix", "1", s="abba") == 0.0


def test_shortest_unicolor_substring() -> None:
    data = {"s": "0000", "k": 1}  # one flip: the best longest run is 2
    assert verdict("shortest_unicolor_substring", "0100", **data).correct
    assert verdict("shortest_unicolor_substring", "0010", **data).correct
    assert reward("shortest_unicolor_substring", "1000", **data) == pytest.approx((2 / 3) ** 5)
    assert reward("shortest_unicolor_substring", "0110", **data) == -0.5  # two flips
    assert reward("shortest_unicolor_substring", "000", **data) == -0.5
    from verirl.envs.strings.runs import _best_run, _longest_run

    rng = random.Random(4)
    for _ in range(40):  # the run formula against every choice of flips
        s = "".join(rng.choice("0001") for _ in range(9))
        k = rng.randint(1, 3)
        brute = min(
            _longest_run(
                "".join(("1" if c == "0" else "0") if i in flips else c for i, c in enumerate(s))
            )
            for f in range(k + 1)
            for flips in map(set, itertools.combinations(range(9), f))
        )
        assert _best_run(s, k) == brute, (s, k)


def test_squ_squarks_and_prefix_permutations() -> None:
    sums = {"sums": [3, 4, 5], "n": 3}
    assert verdict("squ_squarks", "1, 2, 3", **sums).correct
    assert reward("squ_squarks", "1, 2, 4", **sums) == pytest.approx(0.5**5)  # {3,5} of {3,4,5,6}
    assert reward("squ_squarks", "1, 1, 3", **sums) == -0.5
    assert verdict("prefix_sum_mod_distinct_permutation", "4, 1, 2, 3", n=4).correct
    got = reward("prefix_sum_mod_distinct_permutation", "1, 2, 3, 4", n=4)
    assert got == pytest.approx(0.75**10)  # residues 1 3 2 2
    assert verdict("prefix_product_mod_distinct_permutation", "1, 2, 4, 3, 5", n=5).correct
    got = reward("prefix_product_mod_distinct_permutation", "1, 2, 3, 4, 5", n=5)
    assert got == pytest.approx(0.8**10)  # products 1 2 1 4 0
    assert reward("prefix_product_mod_distinct_permutation", "1, 2, 3, 4", n=5) == -0.5


def test_range_four_sequence_construction() -> None:
    data = {"n": 3, "forbidden": [[0, 0]], "fixed": [[0, 0]]}
    assert verdict("range_four_sequence_construction", "0, 1, 0", **data).correct
    got = reward("range_four_sequence_construction", "0, 0, 1", **data)
    assert got == pytest.approx((2 / 3) ** 5)
    assert reward("range_four_sequence_construction", "0, 4, 1", **data) == -0.5


def test_polynomials() -> None:
    data = {"p": [1, 2, 0, 1], "q": [1, 0, 1]}  # x³ + 2x + 1 = x(x² + 1) + x + 1
    assert verdict("polynomial_remainder", "1, 1", **data).correct
    assert reward("polynomial_remainder", "1, 2", **data) == pytest.approx(0.5**10)
    assert reward("polynomial_remainder", "1", **data) == -0.5
    pts = {"xs": [0, 1, 2], "ys": [1, 6, 17]}  # 1 + 2x + 3x²
    assert verdict("polynomial_interpolation", "1, 2, 3", **pts).correct
    assert reward("polynomial_interpolation", "1, 2, 4", **pts) == pytest.approx((2 / 3) ** 10)
