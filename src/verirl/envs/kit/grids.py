"""Grid helpers families share: reading a grid or matrix of integers from an answer, and
writing one row per line or as ``1 2; 3 4``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from verirl.envs.base import parse_int_list
from verirl.envs.reading import normalize
from verirl.envs.reading.normalize import InvalidAnswer

_ROW_SPLIT = re.compile(r"\\\\|;|\n")
_ENV = re.compile(r"\\(?:begin|end)\{[pbvBV]?matrix\}|\\left|\\right|\\[()\[\]]")


def parse_matrix(text: str, max_cells: int = 40_000) -> list[list[int]]:
    """Rows of integers: ``1 2; 3 4`` / ``1 2\\n3 4`` / ``\\begin{pmatrix}1 & 2 \\\\ 3 & 4
    \\end{pmatrix}`` / ``[[1, 2], [3, 4]]``. The rows may differ in length (the caller checks
    the shape)."""
    t = _ENV.sub("", normalize.clean(text)).replace("&", " ")
    t = t.strip()
    if t.startswith("[[") or t.startswith("[ ["):
        t = t.strip("[] ").replace("],", ";").replace("] ,", ";").replace("[", "").replace("]", "")
    rows = [r for r in _ROW_SPLIT.split(t) if r.strip()]
    if len(rows) > 1000 or len(t) > 10 * max_cells:
        raise normalize.InvalidAnswer("the matrix is far too large")
    return [parse_int_list(r) for r in rows]


def read_grid(text: str, rows: int, cols: int, single_digits: bool) -> list[list[int]]:
    """A ``rows × cols`` grid of integers from the answer text.

    Accepted: one row per line (``0110``), cells separated by spaces, commas, ``&`` or ``;``,
    LaTeX ``\\\\`` line breaks and matrix environments, or all cells row after row. With
    ``single_digits`` a row may be written as one digit string. Raises ``ValueError`` (wrong
    format) for text that is not numbers and :class:`InvalidAnswer` for a wrong shape.
    """
    t = normalize.clean(text)
    t = re.sub(r"\\(?:begin|end)\{[a-zA-Z*]*\}", " ", t)
    t = re.sub(r"\\\\|&|,|;|\[|\]|\(|\)|\{|\}", " ", t)
    tokens = t.split()
    if any(not re.fullmatch(r"-?\d+", tok) for tok in tokens):
        raise ValueError("the grid must contain only numbers")
    if len(tokens) > rows * cols:
        raise InvalidAnswer(f"the grid must have {rows} rows and {cols} columns")
    if single_digits and len(tokens) == rows and all(len(tok) == cols for tok in tokens):
        return [[int(ch) for ch in tok] for tok in tokens]
    if single_digits and len(tokens) == 1 and len(tokens[0]) == rows * cols:
        return [[int(ch) for ch in tokens[0][r * cols : (r + 1) * cols]] for r in range(rows)]
    if len(tokens) == rows * cols and all(len(tok) <= 6 for tok in tokens):
        return [[int(tokens[r * cols + c]) for c in range(cols)] for r in range(rows)]
    raise InvalidAnswer(f"the grid must have {rows} rows and {cols} columns")


def grid_lines(grid: Sequence[Sequence[Any]], sep: str = " ") -> str:
    """One row per line, its cells joined by ``sep`` (``""`` for a grid of digits)."""
    return "\n".join(sep.join(map(str, row)) for row in grid)


def matrix_text(grid: Sequence[Sequence[Any]]) -> str:
    """A matrix on one line: cells by spaces, rows by ``"; "`` (``1 2; 3 4``)."""
    return "; ".join(" ".join(map(str, row)) for row in grid)
