"""The shared expression reader's two passes: the shape pass refuses hostile text before sympy
is called, and the two passes together decide exactly as the sympy pass alone does."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from verirl.envs.reading import symbolic_parser
from verirl.envs.reading.expression_values import SHAPES
from verirl.envs.reading.symbolic_parser import (
    TRUSTED,
    Limits,
    ParseError,
    SizeError,
    check_size,
    latex_to_plain,
    limits_for,
    parse_expression,
)


class _NoSympy:
    """Stands in for the sympy pass: any use of it fails the test."""

    exact = True

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the sympy pass ran ({name})")


@pytest.fixture
def no_sympy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(symbolic_parser, "SYMPY", _NoSympy())


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('12Redirect "x" Print nat.27x^2 + 4x - 1Admitted.27x^2 + 4x - 1', ParseError),
        ("((((99^{99})^{99})^{99})^{99})", SizeError),
        ("((x+1)^{10})^{10}", SizeError),
        ("(x+1)^{66}(x-1)^{66}", SizeError),
        ("9^9^9^9", SizeError),
        ("+".join(f"x^{k % 20}" for k in range(400)), SizeError),
        ("(" * 40 + "x" + ")" * 40, SizeError),
        ("x^2 + 3x +", ParseError),
        ("\\sin^{-1}(x)", ParseError),
        ("x" * 30, SizeError),  # degree 30 past 24
    ],
)
def test_hostile_text_is_refused_before_sympy_is_called(
    no_sympy: None, text: str, error: type[Exception]
) -> None:
    limits = Limits(max_degree=24, max_digits=200)
    with pytest.raises(error):
        check_size(text, ("x",), limits)
    with pytest.raises(error):
        parse_expression(text, ("x",), limits)


def test_a_readable_answer_is_bounded_without_sympy(no_sympy: None) -> None:
    # digits: 24x^3 is 2 + 1*3, a sum adds one to its larger side, a division adds the 2
    assert check_size("\\frac{24x^{3} - 8x + 10}{2}", ("x",)) == (3, 8)
    assert check_size("(x+1)^3 (x-2)", ("x",)) == (4, 2 * 3 + 2)


def test_shape_values_are_exact_rationals_or_unknown() -> None:
    assert SHAPES.power(Fraction(2), Fraction(10)) == 1024
    assert SHAPES.power(Fraction(1, 2), Fraction(-3)) == 8
    assert SHAPES.power(Fraction(4), Fraction(1, 2)) is None  # sympy's 2: left unknown
    assert SHAPES.power(Fraction(0), Fraction(-1)) is None  # sympy's zoo
    assert SHAPES.div(Fraction(1), Fraction(0)) is None
    assert SHAPES.func("sqrt", Fraction(4)) is None
    assert SHAPES.positive_integer(Fraction(2)) is True
    assert SHAPES.positive_integer(Fraction(-1)) is False
    assert SHAPES.positive_integer(None) is None


@pytest.mark.parametrize(
    "text",
    [
        "x^{\\sqrt{4}}",  # sympy knows the exponent is 2; the shape pass cannot
        "2^{\\sqrt{4}} x^{24}",  # a smaller shape bound than the transcendental atom's
        "x^{x-x}",  # sympy's 0
        "x^{e^0}",
        "99^{\\sqrt{99^{98}}}",  # sympy's 99^49: an exponent too large, refused there
        "\\sin^{\\sqrt{4}}(x)",
        "\\sin^{x-x-1}(x)",  # a power sympy finds negative: refused there
        "2^x + 3^x",
    ],
)
def test_unknown_values_are_left_to_the_sympy_pass(text: str) -> None:
    limits = Limits(max_degree=24)
    assert _outcome(lambda: parse_expression(text, ("x",), limits)) == _outcome(
        lambda: _sympy_only(text, limits)
    )


def test_token_and_juxtaposition_limits() -> None:
    with pytest.raises(SizeError, match="tokens"):
        check_size("+".join(["x"] * 30), ("x",), Limits(max_tokens=40))
    with pytest.raises(SizeError, match="side by side"):
        check_size("2x(x+1)(x-1)", ("x",), Limits(max_juxtaposed=3))
    assert check_size("2x(x+1)", ("x",), Limits(max_juxtaposed=3)) == (2, 4)
    # an explicit product starts a new run: 2x, then 3x(x+1)
    assert check_size("2x \\cdot 3x (x+1)", ("x",), Limits(max_juxtaposed=3)) == (3, 6)
    assert TRUSTED.max_tokens >= TRUSTED.max_length  # a reference is never cut short


# ---- the two passes decide as the sympy pass alone -----------------------------------------
def _sympy_only(text: str, limits: Limits) -> sympy.Expr:
    """The single pass the reader used to be: build with sympy, check as it goes."""
    tokens = symbolic_parser._tokens(latex_to_plain(text), ("x",))
    if not tokens:
        raise ParseError("empty")
    if len(tokens) > limits.max_tokens:
        raise SizeError("tokens")
    expr: sympy.Expr = (
        symbolic_parser._Parser(tokens, ("x",), limits, symbolic_parser.SYMPY).parse().expr
    )
    return expr


def _outcome(call: Any) -> Any:
    try:
        return ("value", call())
    except ParseError as exc:
        return ("refused", type(exc).__name__)


_PIECES = st.sampled_from(
    [
        "x", "2", "9", "12", "0", ".5", "+", "-", "*", "/", "^", "^{", "}", "(", ")", "{",
        "\\sqrt{4}", "\\sqrt{x}", "e", "pi", "sin", "x-x", "^{20}", "^{-1}", "^{1/2}", "99^{99}",
        "(x+1)", "\\frac{1}{2}", "1/0", "0^{-1}", " ",
    ]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=14).map("".join))
def test_the_two_passes_decide_as_the_sympy_pass(text: str) -> None:
    limits = Limits(max_degree=24, max_digits=60, max_exponent=40, max_terms=400)
    got = _outcome(lambda: parse_expression(text, ("x",), limits))
    want = _outcome(lambda: _sympy_only(text, limits))
    assert got == want, text
    if got[0] == "value":
        assert check_size(text, ("x",), limits) == _bounds(text, limits)


def _bounds(text: str, limits: Limits) -> tuple[int, int]:
    tokens = symbolic_parser._tokens(latex_to_plain(text), ("x",))
    node = symbolic_parser._Parser(tokens, ("x",), limits, symbolic_parser.SYMPY).parse()
    return node.degree, node.digits


def test_reference_limits_are_unchanged() -> None:
    assert limits_for("3*x^2 + 2*x + 1") == Limits(
        max_length=2000, max_degree=24, max_digits=200, max_exponent=100
    )
