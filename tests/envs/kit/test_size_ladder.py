"""RLVE's size ladder (kit/size_ladder.py)."""

from __future__ import annotations

from verirl.envs.kit.size_ladder import grown


def test_ladder_values_by_hand() -> None:
    # 3 -> int(4.3) = 4 -> int(5.4) = 5 -> int(6.5) = 6 -> int(7.6) = 7 -> int(8.7) = 8
    assert [grown(3, d) for d in range(6)] == [3, 4, 5, 6, 7, 8]
    assert grown(10, 1) == 12  # int(11 + 1)


def test_ladder_stops_at_the_cap() -> None:
    assert grown(3, 100, cap=40) == 40
    assert grown(3, 100) == 200
    assert all(grown(2, d, 60) <= grown(2, d + 1, 60) for d in range(80))
