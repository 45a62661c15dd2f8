"""The fraction helpers families share (kit/fractions.py)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from verirl.envs.kit.fractions import fraction_text, parse_fraction


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3/4", Fraction(3, 4)),
        ("\\frac{3}{4}", Fraction(3, 4)),
        ("$\\dfrac{6}{8}$", Fraction(3, 4)),
        (" -3 / 4 ", Fraction(-3, 4)),
        ("0.75", Fraction(3, 4)),
        ("7", Fraction(7)),
        ("7.", Fraction(7)),
    ],
)
def test_parse_fraction_reads_the_written_forms(text: str, value: Fraction) -> None:
    assert parse_fraction(text) == value


@pytest.mark.parametrize("text", ["1/0", "\\frac{1}{0}", "1/2/3", "one half", "1" * 201])
def test_parse_fraction_rejects_what_is_not_one(text: str) -> None:
    with pytest.raises(ValueError):
        parse_fraction(text)


def test_fraction_text_round_trips_in_lowest_terms() -> None:
    assert fraction_text(Fraction(6, 8)) == "3/4"
    assert fraction_text(Fraction(-10, 5)) == "-2"
    for x in (Fraction(1, 3), Fraction(-7, 9), Fraction(12), Fraction(0)):
        assert parse_fraction(fraction_text(x)) == x
