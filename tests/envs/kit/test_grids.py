"""The grid helpers families share (kit/grids.py): the two grid readers and the writers."""

from __future__ import annotations

import pytest

from verirl.envs.kit.grids import grid_lines, matrix_text, parse_matrix, read_grid
from verirl.envs.reading.normalize import InvalidAnswer


def test_read_grid_forms() -> None:
    want = [[0, 1], [1, 0]]
    for text in (
        "01\n10",
        "0 1\n1 0",
        "0110",
        "[[0, 1], [1, 0]]",
        "0 & 1 \\\\ 1 & 0",
        "$01\\\\10$",
    ):
        assert read_grid(text, 2, 2, single_digits=True) == want, text
    assert read_grid("10 2\n3 4", 2, 2, single_digits=False) == [[10, 2], [3, 4]]
    with pytest.raises(InvalidAnswer):
        read_grid("01\n10\n11", 2, 2, single_digits=True)
    with pytest.raises(InvalidAnswer):
        read_grid("012", 2, 2, single_digits=True)
    with pytest.raises(InvalidAnswer):
        read_grid("0110", 2, 2, single_digits=False)  # digit strings only with single_digits
    with pytest.raises(ValueError):
        read_grid("0x\n10", 2, 2, single_digits=True)


def test_parse_matrix() -> None:
    expected = [[1, 2], [3, 4]]
    for text in ("1 2; 3 4", "1 2\n3 4", "[[1, 2], [3, 4]]", "1 & 2 \\\\ 3 & 4"):
        assert parse_matrix(text) == expected
    assert parse_matrix("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}") == expected
    assert parse_matrix("1 2 3; 4") == [[1, 2, 3], [4]]  # the shape is the caller's to check
    with pytest.raises(InvalidAnswer):
        parse_matrix("1;" * 1001)


def test_writers_round_trip_through_the_readers() -> None:
    grid = [[1, 0, 12], [3, 4, 5]]
    assert grid_lines(grid) == "1 0 12\n3 4 5"
    assert grid_lines([[0, 1], [1, 0]], "") == "01\n10"
    assert matrix_text(grid) == "1 0 12; 3 4 5"
    assert parse_matrix(matrix_text(grid)) == grid
    assert parse_matrix(grid_lines(grid)) == grid
    assert read_grid(grid_lines(grid), 2, 3, single_digits=False) == grid
