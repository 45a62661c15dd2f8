"""Sorting and searching environments: verifiers on hand-computed instances."""

from __future__ import annotations

import random

import pytest

from tests.envs.helpers import reward, verdict
from verirl.envs import env_names
from verirl.envs.arrays.sorting import _merge_count, ordinal


def test_family_is_registered() -> None:
    assert len(env_names(family="sorting_searching")) == 9


def test_sort_list() -> None:
    data = {"values": [3, 1, 2, 1], "descending": False}
    for text in ("1, 1, 2, 3", "[1,1,2,3]", "1 1 2 3"):
        assert verdict("sort_list", text, **data).correct
    assert reward("sort_list", "1, 2, 1, 3", **data) == pytest.approx((2 / 4) ** 5)
    assert reward("sort_list", "1, 2, 3", **data) == -0.5  # a number dropped
    assert reward("sort_list", "1, 1, 2, 4", **data) == -0.5  # not the given numbers
    assert reward("sort_list", "one, two", **data) == -1.0
    down = {"values": [3, 1, 2], "descending": True}
    assert verdict("sort_list", "3, 2, 1", **down).correct
    assert reward("sort_list", "1, 2, 3", **down) == pytest.approx((1 / 3) ** 5)


def test_merge_sorted_lists() -> None:
    data = {"lists": [[1, 4], [2, 3, 3]]}
    assert verdict("merge_sorted_lists", "1, 2, 3, 3, 4", **data).correct
    assert reward("merge_sorted_lists", "1, 2, 3, 4, 3", **data) == pytest.approx((3 / 5) ** 5)
    assert reward("merge_sorted_lists", "1, 2, 3, 4", **data) == -0.5


def test_stable_sort_by_key_keeps_ties_in_order() -> None:
    data = {"names": ["Bo", "Al", "Cy", "Di"], "scores": [2, 1, 1, 0]}
    assert verdict("stable_sort_by_key", "Di, Al, Cy, Bo", **data).correct
    assert verdict("stable_sort_by_key", "di al cy bo", **data).correct
    # sorted by score but not stable: Cy and Al swapped
    assert reward("stable_sort_by_key", "Di, Cy, Al, Bo", **data) == pytest.approx(0.5**5)
    assert reward("stable_sort_by_key", "Di, Al, Cy", **data) == -0.5
    assert reward("stable_sort_by_key", "Di, Al, Cy, Ed", **data) == -0.5


def test_kth_smallest_and_median_score_the_rank() -> None:
    data = {"values": [5, 1, 3, 3, 9], "k": 4}  # sorted: 1 3 3 5 9
    assert verdict("kth_smallest", "5", **data).correct
    # 3 sits at ranks 2 and 3; the nearest to 4 is 3
    assert reward("kth_smallest", "3", **data) == pytest.approx((3 / 4) ** 10)
    assert reward("kth_smallest", "7", **data) == -0.5
    med = {"values": [7, 1, 4], "k": 2}
    assert verdict("median", "4", **med).correct
    assert reward("median", "7", **med) == pytest.approx((2 / 3) ** 10)
    assert [ordinal(k) for k in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st",
        "2nd",
        "3rd",
        "4th",
        "11th",
        "12th",
        "13th",
        "21st",
        "22nd",
        "101st",
        "111th",
    ]


def test_top_k_largest_accepts_any_order() -> None:
    data = {"values": [5, 9, 5, 1], "k": 3}  # top three: 9, 5, 5
    for text in ("9, 5, 5", "5, 9, 5", "5 5 9"):
        assert verdict("top_k_largest", text, **data).correct
    assert reward("top_k_largest", "9, 5, 1", **data) == pytest.approx((2 / 3) ** 5)
    assert reward("top_k_largest", "9, 9, 5", **data) == -0.5  # 9 occurs once
    assert reward("top_k_largest", "9, 5", **data) == -0.5  # wrong count
    assert reward("top_k_largest", "9, 5, 7", **data) == -0.5  # 7 is not in the list


def test_search_insert_position() -> None:
    data = {"values": [2, 4, 6, 8]}
    assert verdict("search_insert_position", "2", target=5, **data).correct
    assert verdict("search_insert_position", "1", target=4, **data).correct
    assert verdict("search_insert_position", "4", target=9, **data).correct
    assert reward("search_insert_position", "1", target=5, **data) == pytest.approx(0.5**10)
    assert reward("search_insert_position", "1", target=0, **data) == 0.0
    assert reward("search_insert_position", "5", target=5, **data) == -0.5


def test_count_inversions() -> None:
    assert verdict("count_inversions", "2", values=[3, 1, 2]).correct
    assert reward("count_inversions", "1", values=[3, 1, 2]) == pytest.approx(0.5**10)
    rng = random.Random(0)
    for n in range(1, 30):
        v = rng.sample(range(100), n)
        brute = sum(1 for i in range(n) for j in range(i + 1, n) if v[i] > v[j])
        assert _merge_count(v) == (sorted(v), brute)


def test_pair_with_sum_accepts_any_valid_pair() -> None:
    data = {"values": [1, 4, 6, 3], "target": 7}  # 1 + 6 and 4 + 3
    for text in ("0, 2", "2, 0", "1, 3", "(3, 1)"):
        assert verdict("pair_with_sum", text, **data).correct
    assert reward("pair_with_sum", "0, 1", **data) == 0.0
    assert reward("pair_with_sum", "0, 0", **data) == -0.5
    assert reward("pair_with_sum", "0, 9", **data) == -0.5
    assert reward("pair_with_sum", "2", **data) == -0.5
    assert reward("pair_with_sum", "i, j", **data) == -1.0
