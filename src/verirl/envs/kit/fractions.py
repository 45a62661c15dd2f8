"""Exact fractions families share: reading a fraction answer and writing one."""

from __future__ import annotations

import re
from fractions import Fraction

from verirl.envs.base import parse_int

_FRACTION = re.compile(r"^\\frac\{([^{}]+)\}\{([^{}]+)\}$")


def parse_fraction(text: str) -> Fraction:
    """``p/q``, ``\\frac{p}{q}`` (or ``\\dfrac``), a terminating decimal or an integer, with
    ``$`` and spaces ignored; ``ValueError`` when it is none of them, ``q = 0`` included."""
    t = text.strip().strip("$").replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    t = t.replace(" ", "").rstrip(".")
    if len(t) > 200:
        raise ValueError("answer too long")
    if re.fullmatch(r"[+-]?\d{1,100}\.\d{1,100}", t):
        return Fraction(t)  # a terminating decimal is exact too
    m = _FRACTION.match(t)
    if m:
        num, den = m.group(1), m.group(2)
    elif t.count("/") == 1:
        num, den = t.split("/")
    else:
        return Fraction(parse_int(t))
    p, q = parse_int(num), parse_int(den)
    if q == 0:
        raise ValueError("zero denominator")
    return Fraction(p, q)


def fraction_text(x: Fraction) -> str:
    """``x`` in lowest terms as ``p/q``, or as an integer when its denominator is 1."""
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
