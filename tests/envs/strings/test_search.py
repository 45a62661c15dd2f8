"""The ``string_search`` family (strings_search.py): hand-computed verdicts, brute-force
cross-checks and the self-check."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.envs.helpers import reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.selfcheck import self_check
from verirl.envs.strings.search import kth_subsequence, least_rotation, occurrences

NAMES = [
    "kth_subsequence",
    "minimal_cyclic_shift",
    "min_nonsubstring",
    "longest_double_palindrome",
    "longest_repeated_palindrome",
    "max_weight_palindromic_substring",
]


def test_family_is_registered() -> None:
    assert set(NAMES) <= set(env_names(family="string_search"))


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_kth_subsequence() -> None:
    # aab: a, aa, aab, ab, b
    assert verdict("kth_subsequence", "ab", text="aab", k=4).correct
    assert verdict("kth_subsequence", "$ab$", text="aab", k=4).correct
    assert reward("kth_subsequence", "aab", text="aab", k=4) == 0.0
    assert reward("kth_subsequence", "a1", text="aab", k=4) == -0.5
    rng = random.Random(2)
    for _ in range(30):
        text = "".join(rng.choice("abc") for _ in range(rng.randint(1, 8)))
        subs = sorted(
            {"".join(c) for r in range(1, len(text) + 1) for c in itertools.combinations(text, r)}
        )
        assert [kth_subsequence(text, k) for k in range(1, len(subs) + 1)] == subs


def test_minimal_cyclic_shift() -> None:
    assert verdict("minimal_cyclic_shift", "0011", text="1001").correct
    assert reward("minimal_cyclic_shift", "0110", text="1001") == pytest.approx(0.5**10)
    assert reward("minimal_cyclic_shift", "001", text="1001") == -0.5
    for bits in itertools.product("01", repeat=9):
        text = "".join(bits)
        assert least_rotation(text) == min(text[i:] + text[:i] for i in range(len(text)))


def test_min_nonsubstring() -> None:
    assert verdict("min_nonsubstring", "aa", text="abb").correct
    assert reward("min_nonsubstring", "ba", text="abb") == 0.0  # absent, but not the smallest
    assert reward("min_nonsubstring", "ab", text="abb") == 0.0  # occurs in A
    assert reward("min_nonsubstring", "c", text="abb") == -0.5


def test_longest_double_palindrome() -> None:
    data = {"text": "bbbab"}  # bb + bab
    assert verdict("longest_double_palindrome", "0 4", **data).correct
    assert reward("longest_double_palindrome", "1 4", **data) == pytest.approx(0.8**5)
    assert reward("longest_double_palindrome", "0 0", **data) == -0.5
    assert reward("longest_double_palindrome", "2 4", **data) == -0.5  # bab: no split


def test_longest_repeated_palindrome() -> None:
    data = {"text": "abacaba"}  # aba occurs at 0 and 4
    assert verdict("longest_repeated_palindrome", "aba", **data).correct
    assert reward("longest_repeated_palindrome", "a", **data) == pytest.approx((1 / 3) ** 5)
    assert reward("longest_repeated_palindrome", "aca", **data) == -0.5  # occurs once
    assert reward("longest_repeated_palindrome", "ab", **data) == -0.5
    assert occurrences("aaaa", "aa") == 3


def test_max_weight_palindromic_substring() -> None:
    data = {"text": "baa"}  # a: 1 × 2, aa: 2 × 1, b: 1 × 1
    assert verdict("max_weight_palindromic_substring", "a", **data).correct
    assert verdict("max_weight_palindromic_substring", "aa", **data).correct
    assert reward("max_weight_palindromic_substring", "b", **data) == pytest.approx(0.5**5)
    assert reward("max_weight_palindromic_substring", "ba", **data) == -0.5
