"""String environments: verifiers on hand-computed instances, and brute-force cross-checks."""

from __future__ import annotations

import itertools

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env


def test_family_is_registered() -> None:
    assert len(env_names(family="strings")) == 9


def test_reverse_string() -> None:
    for text in ("cba", "CBA", "c b a", '"cba"'):
        assert verdict("reverse_string", text, word="abc").correct
    # c matches, a and b are swapped: (1/3)^5
    assert reward("reverse_string", "cab", word="abc") == pytest.approx((1 / 3) ** 5)
    assert reward("reverse_string", "cb", word="abc") == -0.5
    assert reward("reverse_string", "c1a", word="abc") == -1.0


def test_count_letter() -> None:
    assert verdict("count_letter", "3", word="banana", letter="a").correct
    assert reward("count_letter", "2", word="banana", letter="a") == pytest.approx((2 / 3) ** 10)


def test_yes_no_questions() -> None:
    assert verdict("palindrome_check", "Yes", word="abba").correct
    assert verdict("palindrome_check", "true.", word="abba").correct
    assert verdict("palindrome_check", "no", word="abca").correct
    assert reward("palindrome_check", "no", word="abba") == 0.0
    assert reward("palindrome_check", "maybe", word="abba") == -1.0
    assert verdict("anagram_check", "yes", first="listen", second="silent").correct
    assert verdict("anagram_check", "no", first="abc", second="abd").correct
    assert verdict("anagram_check", "no", first="aab", second="abb").correct


def test_longest_palindromic_substring_accepts_any_longest() -> None:
    data = {"word": "abaxcdc"}  # "aba" and "cdc" are both longest
    assert verdict("longest_palindromic_substring", "aba", **data).correct
    assert verdict("longest_palindromic_substring", "cdc", **data).correct
    assert reward("longest_palindromic_substring", "x", **data) == pytest.approx((1 / 3) ** 5)
    assert reward("longest_palindromic_substring", "ab", **data) == -0.5  # not a palindrome
    assert reward("longest_palindromic_substring", "aca", **data) == -0.5  # not a substring
    assert reward("longest_palindromic_substring", "", **data) == -0.5
    assert reward("longest_palindromic_substring", "a1a", **data) == -1.0


def test_longest_palindrome_solver_matches_brute_force() -> None:
    env = get_env("longest_palindromic_substring")
    for n in range(1, 9):
        for word in map("".join, itertools.product("ab", repeat=n)):
            brute = max(
                j - i for i in range(n) for j in range(i + 1, n + 1) if word[i:j] == word[i:j][::-1]
            )
            assert len(env.solve(problem(env.name, word=word))) == brute, word


def test_caesar_decode() -> None:
    data = {"cipher": "ifmmp xpsme", "shift": 1}
    assert verdict("caesar_decode", "hello world", **data).correct
    assert verdict("caesar_decode", "Hello   World", **data).correct
    assert reward("caesar_decode", "hello worle", **data) == pytest.approx((10 / 11) ** 5)
    assert reward("caesar_decode", "hello", **data) == -0.5
    assert reward("caesar_decode", "hello w0rld", **data) == -1.0
    assert verdict("caesar_decode", "xyz", cipher="abc", shift=3).correct  # wraps around


def test_edit_distance() -> None:
    assert verdict("edit_distance", "3", first="kitten", second="sitting").correct
    assert reward("edit_distance", "4", first="kitten", second="sitting") == pytest.approx(
        (3 / 4) ** 10
    )
    # insert x, y, z in front and delete c
    assert verdict("edit_distance", "4", first="abc", second="xyzab").correct


def test_run_length_encode() -> None:
    data = {"word": "aaabcc"}
    for text in ("a3b1c2", "a3 b1 c2", "A3B1C2", "a3, b1, c2"):
        assert verdict("run_length_encode", text, **data).correct
    assert reward("run_length_encode", "a3b2c2", **data) == pytest.approx((2 / 3) ** 5)
    assert reward("run_length_encode", "a3b1", **data) == 0.0  # wrong number of runs
    assert reward("run_length_encode", "a2a1b1c2", **data) == -0.5  # runs not maximal
    assert reward("run_length_encode", "a3b0c2", **data) == -0.5
    assert reward("run_length_encode", "abc", **data) == -1.0
    assert reward("run_length_encode", "3a1b2c", **data) == -1.0


def test_run_length_decode() -> None:
    assert verdict("run_length_decode", "aaabcc", code="a3b1c2").correct
    assert reward("run_length_decode", "aaabbc", code="a3b1c2") == pytest.approx((5 / 6) ** 5)
    assert reward("run_length_decode", "aabcc", code="a3b1c2") == -0.5
    assert verdict("run_length_decode", "b" * 12, code="b12").correct
