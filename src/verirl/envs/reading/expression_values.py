"""What the expression parser computes at each node: a sympy expression, or only a shape.

:mod:`verirl.envs.reading.symbolic_parser` reads an answer with one grammar and two value
domains. Its first pass, over :data:`SHAPES`, builds nothing in sympy: a node's value is its
exact rational value when the node is a rational constant (``3/4``, ``2^{10}``) and ``None``
otherwise, so the pass costs microseconds per token whatever the text is. It checks every
size bound the second pass checks (length, nesting, degree, digits, expansion terms), and
rejects text outside the grammar, before sympy is called. Only text it accepts is read again
over :data:`SYMPY`, which builds the expression.

A shape value can be ``None`` where sympy would know a rational (``\\sqrt{4}``, ``x - x``,
``e^0``); those unknowns are the only place the passes can differ, and the first pass then
errs on the lenient side and says so (``exact`` is False), see ``_Parser.raised``.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import sympy

FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    "sin": sympy.sin,
    "cos": sympy.cos,
    "tan": sympy.tan,
    "exp": sympy.exp,
    "log": sympy.log,
    "ln": sympy.log,
    "sqrt": sympy.sqrt,
    "abs": sympy.Abs,
}


class SympyValues:
    """Nodes are sympy expressions (the second pass: what the parser returns)."""

    exact = True

    def number(self, text: str) -> Any:
        return sympy.Rational(text)

    def symbol(self, name: str) -> Any:
        return sympy.Symbol(name)

    def const(self, name: str) -> Any:
        return sympy.pi if name == "pi" else sympy.E

    def add(self, a: Any, b: Any) -> Any:
        return a + b

    def sub(self, a: Any, b: Any) -> Any:
        return a - b

    def mul(self, a: Any, b: Any) -> Any:
        return a * b

    def div(self, a: Any, b: Any) -> Any:
        return a / b

    def neg(self, a: Any) -> Any:
        return -a

    def power(self, base: Any, exponent: Any) -> Any:
        return base**exponent

    def func(self, name: str, arg: Any) -> Any:
        return FUNCTIONS[name](arg)

    def rational(self, value: Any) -> tuple[int, int] | None:
        """``(p, q)`` of a rational value, ``None`` for anything else."""
        return (int(value.p), int(value.q)) if value.is_Rational else None

    def positive_integer(self, value: Any) -> bool | None:
        return bool(value.is_Integer and value > 0)


class ShapeValues:
    """Nodes are exact rational constants (``Fraction``) or ``None`` (not a rational constant,
    or not known to be one): the first pass, which calls no sympy."""

    exact = False

    def number(self, text: str) -> Fraction:
        return Fraction(text)

    def symbol(self, name: str) -> None:
        return None

    def const(self, name: str) -> None:
        return None

    def add(self, a: Fraction | None, b: Fraction | None) -> Fraction | None:
        return None if a is None or b is None else a + b

    def sub(self, a: Fraction | None, b: Fraction | None) -> Fraction | None:
        return None if a is None or b is None else a - b

    def mul(self, a: Fraction | None, b: Fraction | None) -> Fraction | None:
        return None if a is None or b is None else a * b

    def div(self, a: Fraction | None, b: Fraction | None) -> Fraction | None:
        if a is None or not b:  # b unknown, or 0 (sympy's zoo: not a rational)
            return None
        return a / b

    def neg(self, a: Fraction | None) -> Fraction | None:
        return None if a is None else -a

    def power(self, base: Fraction | None, exponent: Fraction | None) -> Fraction | None:
        # Only called with an exponent the parser has bounded. A fractional power of a
        # rational may be rational (4^{1/2}); left unknown. 0 to a negative power is zoo.
        if base is None or exponent is None or exponent.denominator != 1:
            return None
        if base == 0 and exponent < 0:
            return None
        return base ** int(exponent)

    def func(self, name: str, arg: Fraction | None) -> None:
        return None  # sqrt(4) is 2 in sympy: unknown here

    def rational(self, value: Fraction | None) -> tuple[int, int] | None:
        return None if value is None else (value.numerator, value.denominator)

    def positive_integer(self, value: Fraction | None) -> bool | None:
        """``None``: not known here."""
        return None if value is None else value.denominator == 1 and value > 0


SYMPY = SympyValues()
SHAPES = ShapeValues()
