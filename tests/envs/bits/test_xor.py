"""The ``xor`` family (bits_xor.py): hand-computed verdicts and brute-force cross-checks."""

from __future__ import annotations

import itertools
import random
from functools import reduce

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.bits.xor import max_xor
from verirl.envs.selfcheck import self_check

NAMES = ["max_xor_set", "min_xor_pair", "max_xor_path", "max_tree_xor_path"]


def test_family_is_registered() -> None:
    assert {*NAMES, "new_nim_game"} <= set(env_names(family="xor"))


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_max_xor_matches_brute_force() -> None:
    rng = random.Random(5)
    for _ in range(200):
        values = [rng.randint(0, 63) for _ in range(rng.randint(1, 8))]
        brute = max(
            reduce(lambda a, b: a ^ b, c, 0)
            for r in range(len(values) + 1)
            for c in itertools.combinations(values, r)
        )
        assert max_xor(values) == brute


def test_max_xor_set() -> None:
    data = {"values": [1, 3, 1]}
    assert verdict("max_xor_set", "1", **data).correct
    assert verdict("max_xor_set", "0 1 2", **data).correct  # 1 ^ 3 ^ 1 = 3 too
    assert verdict("max_xor_set", "\\{2, 1, 0\\}", **data).correct
    assert reward("max_xor_set", "0", **data) == pytest.approx((1 / 3) ** 5)
    assert reward("max_xor_set", "0 0", **data) == -0.5
    assert reward("max_xor_set", "3", **data) == -0.5


def test_min_xor_pair() -> None:
    data = {"values": [6, 12, 15]}  # 6^12 = 10, 6^15 = 9, 12^15 = 3
    assert verdict("min_xor_pair", "1 2", **data).correct
    assert verdict("min_xor_pair", "2, 1", **data).correct
    assert reward("min_xor_pair", "0 2", **data) == pytest.approx((3 / 9) ** 5)
    assert reward("min_xor_pair", "1 1", **data) == -0.5


def test_max_xor_path() -> None:
    # 0→3 directly is 6; the cycles 0-2-3 (4^1^6 = 3) and 2-1-3 (6^6^1 = 1) span {0..3},
    # so the best walk value is 6 ^ 1 = 7.
    data = {"n": 4, "edges": [[0, 2, 4], [1, 2, 6], [0, 3, 6], [3, 2, 1], [1, 3, 6]]}
    assert verdict("max_xor_path", "7", **data).correct
    assert reward("max_xor_path", "6", **data) == 0.0


def test_max_tree_xor_path() -> None:
    # XOR from 0: vertex 1 → 2, 2 → 0, 3 → 2 ^ 7 = 5; best pair 1, 3 with 2 ^ 5 = 7
    data = {"n": 4, "edges": [[0, 1, 2], [2, 0, 0], [3, 1, 7]]}
    assert verdict("max_tree_xor_path", "1 3", **data).correct
    assert reward("max_tree_xor_path", "0 3", **data) == pytest.approx((5 / 7) ** 5)
    assert reward("max_tree_xor_path", "1 4", **data) == -0.5
    assert reward("max_tree_xor_path", "1", **data) == -0.5


def test_new_nim_game() -> None:
    report = self_check(get_env("new_nim_game"))
    assert not report.failures, report.failures
    data = {"heaps": [4, 4, 7]}  # 4 ^ 4 = 0: one of the 4s must go
    assert verdict("new_nim_game", "1", **data).correct
    assert verdict("new_nim_game", "0", **data).correct
    assert reward("new_nim_game", "0 2", **data) == pytest.approx((4 / 11) ** 3)
    assert reward("new_nim_game", "2", **data) == -0.5  # 4 and 4 are left
    assert reward("new_nim_game", "0 1 2", **data) == -0.5  # nothing left
    rng = random.Random(7)
    env = get_env("new_nim_game")
    for _ in range(60):
        heaps = [rng.randint(1, 15) for _ in range(rng.randint(2, 7))]
        p = problem("new_nim_game", heaps=heaps)
        answer = env.solve(p)  # brute force over kept sets; the verifier's optimum is greedy
        if answer:
            assert env.check(p, answer).correct
