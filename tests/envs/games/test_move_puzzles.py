"""Move puzzles (games/move_puzzles.py): rotations of 2 × 2 blocks, whack-a-mole hammers and
Tetris Attack swaps; hand-computed instances and brute force."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import get_env
from verirl.envs.selfcheck import self_check

NAMES = ["twiddle_puzzle", "whack_a_mole"]


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    assert self_check(get_env(name)).failures == []


def test_twiddle_puzzle() -> None:
    data = {
        "start": [[1, 2, 0], [3, 4, 0], [0, 0, 0]],
        "target": [[3, 1, 0], [4, 2, 0], [0, 0, 0]],
        "moves": 1,
    }
    assert verdict("twiddle_puzzle", "(0, 0)", **data).correct
    assert reward("twiddle_puzzle", "(0, 1)", **data) == pytest.approx((4 / 9) ** 5)
    assert reward("twiddle_puzzle", "(0, 0), (0, 0)", **data) == -0.5  # over the limit
    assert reward("twiddle_puzzle", "(2, 0)", **data) == -0.5


def test_whack_a_mole() -> None:
    assert verdict("whack_a_mole", "1", grid=[[1, 1], [1, 1]]).correct
    assert verdict("whack_a_mole", "5", grid=[[1, 2], [1, 1]]).correct  # only 1 × 1 works
    assert reward("whack_a_mole", "2", grid=[[1, 1], [1, 1]]) == 0.0
    env, rng = get_env("whack_a_mole"), random.Random(11)
    for _ in range(25):  # brute force over hit counts 0..2 per anchor, for every hammer
        grid = [[rng.randint(0, 2) for _ in range(3)] for _ in range(2)]
        if not any(map(any, grid)):
            continue
        best = None
        for r, c in itertools.product((1, 2), (1, 2, 3)):
            anchors = [(i, j) for i in range(2 - r + 1) for j in range(3 - c + 1)]
            for counts in itertools.product(range(3), repeat=len(anchors)):
                cover = [[0] * 3 for _ in range(2)]
                for (i, j), h in zip(anchors, counts, strict=True):
                    for a in range(i, i + r):
                        for b in range(j, j + c):
                            cover[a][b] += h
                if cover == grid and (best is None or sum(counts) < best):
                    best = sum(counts)
        assert env.solve(problem("whack_a_mole", grid=grid)) == str(best), grid


def test_tetris_attack() -> None:
    assert self_check(get_env("tetris_attack")).failures == []
    data = {"a": [0, 1, 0, 1]}  # one swap at 0 (or 1, or 2) makes a pair, the rest follows
    assert verdict("tetris_attack", "0", **data).correct
    assert verdict("tetris_attack", "2", **data).correct
    assert reward("tetris_attack", "0, 0", **data) == -0.5  # the array is already empty
    data = {"a": [0, 1, 2, 0, 1, 2]}
    assert verdict("tetris_attack", "2, 1, 0", **data).correct  # 0 up twice: 0 0 1 2 1 2 ...
    assert reward("tetris_attack", "3", **data) == -0.5  # not cleared
    from collections import deque

    from verirl.envs.games.move_puzzles import _settle, _tetris_greedy

    rng = random.Random(13)
    for _ in range(60):  # the greedy count against breadth-first search over arrays
        n = rng.randint(2, 5)
        a = list(range(n)) * 2
        rng.shuffle(a)
        start = tuple(_settle(a))
        dist = {start: 0}
        queue = deque([start])
        while queue:
            s = queue.popleft()
            if not s:
                break
            for i in range(len(s) - 1):
                t = list(s)
                t[i], t[i + 1] = t[i + 1], t[i]
                key = tuple(_settle(t))
                if key not in dist:
                    dist[key] = dist[s] + 1
                    queue.append(key)
        assert len(_tetris_greedy(a)) == dist[()], a
