"""Answer extraction's brace matcher (reading/answers.py), the one both answer extraction
and normalisation use, against a brute-force reading of the same rule."""

from __future__ import annotations

import random

from verirl.envs.reading.answers import matching_brace


def _brute(text: str, start: int) -> int | None:
    """The first ``}`` after ``start`` at which the unescaped braces since ``start - 1``
    balance (``\\{`` and ``\\}`` are skipped as units)."""
    depth, i = 1, start
    while i < len(text):
        if text.startswith(("\\{", "\\}"), i):
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i
        i += 1
    return None


def test_matching_brace_by_hand() -> None:
    text = "\\boxed{\\frac{1}{2}} tail"
    assert matching_brace(text, len("\\boxed{")) == text.index("} tail")
    assert matching_brace("{a\\}b}", 1) == 5  # the escaped brace does not close it
    assert matching_brace("{a{b}", 1) is None  # never closed
    assert matching_brace("{}", 1) == 1


def test_matching_brace_against_brute_force() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        text = "{" + "".join(rng.choice("{}\\ab") for _ in range(rng.randint(0, 14)))
        assert matching_brace(text, 1) == _brute(text, 1), text
