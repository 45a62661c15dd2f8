"""Hand-computed values for the SizedInteger families (kit/answers.py): permutation
counting, impartial games, bit counting, linear algebra, string counting, DP optimisation,
lattice geometry, grid tilings, digits and orders."""

from __future__ import annotations

from typing import Any

import pytest

from tests.envs.helpers import problem, verdict
from verirl.envs import get_env

CASES: list[tuple[str, dict[str, Any], int]] = [
    # permutation_counting
    ("descent_pattern_counting", {"pattern": "UD"}, 2),  # 132, 231
    ("descent_pattern_counting", {"pattern": "UDU"}, 5),  # the zigzag number E_4
    ("forbidden_position_permutations", {"n": 3, "forbidden": [[1, 1], [2, 2], [3, 3]]}, 2),
    ("no_adjacent_equal_arrangements", {"counts": [2, 1]}, 1),  # aba
    ("no_adjacent_equal_arrangements", {"counts": [2, 2]}, 2),  # abab, baba
    ("no_adjacent_equal_arrangements", {"counts": [1, 1, 1]}, 6),
    ("linear_extension_counting", {"n": 3, "before": [[0, 1]]}, 3),
    ("permutation_min_swaps", {"perm": [2, 3, 1]}, 2),
    ("permutation_order", {"perm": [2, 1, 4, 5, 3]}, 6),
    # games_impartial
    ("subtraction_game_grundy", {"options": [1, 2], "n": 4}, 1),  # n mod 3
    ("misere_nim_winning_moves", {"piles": [1, 1]}, 2),  # leave the opponent the last stone
    ("wythoff_winning_moves", {"a": 1, "b": 2}, 0),  # (1, 2) is a P-position
    ("wythoff_winning_moves", {"a": 2, "b": 2}, 3),  # to (1, 2), (2, 1) or (0, 0)
    ("kayles_winning_moves", {"rows": [3]}, 1),  # the middle pin, leaving 1 + 1
    ("staircase_nim_winning_moves", {"coins": [1, 0, 0]}, 1),  # the coin to the ground
    ("divisor_game_winning_moves", {"piles": [2]}, 1),  # take 1, leaving a dead pile
    # bits_counting
    ("popcount_range_sum", {"lo": 1, "hi": 3}, 4),
    ("k_ones_counting", {"n": 7, "k": 2}, 3),  # 3, 5, 6
    ("gray_code_rank", {"code": 6}, 4),  # 0, 1, 11, 10, 110
    ("range_bitwise_and", {"lo": 5, "hi": 7}, 4),
    ("zero_and_pairs_counting", {"values": [1, 2, 3]}, 1),
    ("or_subset_counting", {"values": [1, 2, 3], "target": 3}, 5),
    ("hamming_distance_sum", {"values": [1, 2, 3]}, 4),
    # linear_algebra
    ("matrix_determinant", {"m": [[1, 2], [3, 4]]}, -2),
    ("gf2_matrix_rank", {"m": [[1, 1], [1, 1]]}, 1),
    ("spanning_tree_count", {"n": 3, "edges": [[0, 1], [1, 2], [0, 2]]}, 3),
    (
        "spanning_tree_count",
        {"n": 4, "edges": [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]},
        16,  # Cayley: 4^2
    ),
    ("matrix_power_trace", {"a": [[1, 1], [1, 0]], "k": 5}, 11),  # the Lucas number L_5
    # string_counting
    ("distinct_subsequence_count", {"s": "aba"}, 6),  # a b ab aa ba aba
    ("distinct_substring_count", {"s": "aaa"}, 3),
    ("bracket_completion_counting", {"pattern": "????"}, 2),
    ("necklace_counting", {"counts": [2, 2]}, 2),  # aabb, abab
    ("palindromic_subsequence_count", {"s": "aab"}, 4),  # a, a, b, aa
    ("longest_palindromic_subsequence", {"s": "abca"}, 3),
    ("min_insertions_palindrome", {"s": "ab"}, 1),
    # dp_optimization
    ("matrix_chain_multiplication", {"dims": [10, 30, 5, 60]}, 4500),
    ("egg_drop", {"eggs": 2, "floors": 100}, 14),
    ("stone_merging", {"piles": [1, 2, 3]}, 9),
    ("rod_cutting", {"prices": [1, 5, 8, 9]}, 10),
    ("huffman_merge_cost", {"piles": [5, 5, 5, 5]}, 40),
    ("weighted_interval_scheduling", {"intervals": [[0, 3, 5], [2, 5, 6], [4, 7, 5]]}, 10),
    ("job_sequencing_deadlines", {"jobs": [[1, 10], [1, 20], [2, 5]]}, 25),
    # geometry_lattice
    ("polygon_interior_points", {"poly": [[0, 0], [4, 0], [4, 4], [0, 4]]}, 9),
    ("polygon_boundary_points", {"poly": [[0, 0], [4, 0], [4, 4], [0, 4]]}, 16),
    ("rectangle_union_area", {"rects": [[0, 0, 2, 2], [1, 1, 3, 3]]}, 7),
    ("manhattan_meeting_point", {"pts": [[0, 0], [2, 0], [0, 2]]}, 4),
    ("closest_pair_distance", {"pts": [[0, 0], [3, 4], [1, 1]]}, 2),
    ("collinear_triples", {"pts": [[0, 0], [1, 1], [2, 2], [0, 1]]}, 1),
    # grid_tilings
    ("domino_tiling_count", {"board": ["...", "..."]}, 3),
    ("grid_coloring_counting", {"rows": ["..", ".."], "k": 3}, 18),  # colourings of C4
    ("lights_out_min_presses", {"rows": ["111", "010", "000"]}, 1),
    ("rook_placement_counting", {"board": ["..", ".."], "k": 2}, 2),
    ("king_placement_counting", {"board": ["...", "...", "..."], "k": 2}, 16),  # 36 - 20
    # digits_orders
    ("non_increasing_digit_counting", {"n": 20}, 12),  # 1..9, 10, 11, 20
    ("digit_sum_counting", {"n": 20, "target": 2}, 3),  # 2, 11, 20
    ("palindrome_range_counting", {"lo": 1, "hi": 100}, 18),
    ("multiplicative_order", {"a": 2, "m": 7}, 3),
    ("lucas_binomial_mod", {"n": 10, "k": 3, "p": 7}, 1),  # 120 mod 7
    ("pisano_period", {"m": 10}, 60),
]


@pytest.mark.parametrize(("name", "data", "value"), CASES)
def test_hand_computed_value(name: str, data: dict[str, Any], value: int) -> None:
    env = get_env(name)
    assert env.solve(problem(name, **data)) == str(value)
    assert verdict(name, str(value), **data).correct
    wrong = verdict(name, str(value + 1), **data)
    assert not wrong.correct and wrong.reward < 1.0


def test_gaussian_elimination_substitutes_the_answer() -> None:
    data = {"a": [[1, 1], [1, -1]], "b": [3, 1]}
    assert verdict("gaussian_elimination", "2, 1", **data).correct
    assert verdict("gaussian_elimination", "x1 = 2, x2 = 1", **data).correct
    assert verdict("gaussian_elimination", "x2 = 1, x1 = 2", **data).correct
    half = verdict("gaussian_elimination", "3, 0", **data)  # the first equation only
    assert not half.correct and 0 < half.reward < 1
    assert verdict("gaussian_elimination", "2", **data).reward == -0.5
