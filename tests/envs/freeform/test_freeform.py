"""Free-form environments: the surface-form parsers and each verifier's accepted spellings."""

from __future__ import annotations

import datetime as dt
import random
from fractions import Fraction
from typing import Any

import pytest

from verirl.envs import env_names, get_env
from verirl.envs.freeform.conversions import FreeFormEnvironment
from verirl.envs.freeform.expressions import expressions_equal, parse_expression, poly_string
from verirl.envs.reading.surface_forms import (
    FormError,
    number_to_words,
    parse_date,
    parse_number,
    parse_quantity,
    render_number,
    repeating_decimal,
    split_items,
)
from verirl.types import Problem

FREEFORM = env_names(family="freeform")


def test_at_least_five_freeform_environments_are_registered() -> None:
    assert set(FREEFORM) >= {
        "unit_conversion",
        "fraction_forms",
        "number_words",
        "date_offset",
        "unordered_set",
        "equivalent_expression",
    }
    for name in FREEFORM:
        assert isinstance(get_env(name), FreeFormEnvironment)


# ---- parsers ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("4", 4), ("four", 4), ("4.0", 4), ("400%", 4), ("400\\%", 4), ("$4$", 4),
        ("\\text{four}", 4), ("\\frac{8}{2}", 4), ("\\dfrac82", 4), ("8/2", 4),
        ("2,500", 2500), ("2 500", 2500), ("2\\,500", 2500), ("2.5e3", 2500),
        ("2.5 \\times 10^{3}", 2500), ("two thousand five hundred", 2500),
        ("-3.", -3), ("\u22123", -3), ("minus five", -5), ("negative five", -5),
        ("two point five", Fraction(5, 2)), ("three quarters", Fraction(3, 4)),
        ("five eighths", Fraction(5, 8)), ("a half", Fraction(1, 2)),
        ("one and a half", Fraction(3, 2)), ("1 1/2", Fraction(3, 2)),
        ("1\\frac{1}{2}", Fraction(3, 2)), ("0.\\overline{3}", Fraction(1, 3)),
        ("0.1\\overline{6}", Fraction(1, 6)), ("62.5 percent", Fraction(5, 8)),
        ("one hundred and five", 105), ("forty-two", 42), ("forty two", 42),
        ("a hundred", 100), ("one million two hundred thousand", 1_200_000),
    ],
)  # fmt: skip
def test_parse_number_spellings(text: str, value: Fraction | int) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize(
    "text",
    ["", "1 2", "four five", "five hundred hundred", "thousand", "1,2", "3 apples", "x",
     "1/0", "three quarter", "9" * 300, "1e999"],
)  # fmt: skip
def test_parse_number_refuses(text: str) -> None:
    with pytest.raises(FormError):
        parse_number(text)


def test_renderings_round_trip() -> None:
    for x in (Fraction(2500), Fraction(5, 8), Fraction(-3, 2), Fraction(7, 1000), Fraction(0)):
        for style in ("plain", "thousands", "sci", "e", "words", "fraction", "latex", "percent"):
            s = render_number(x, style)
            if s is not None:
                assert parse_number(s) == x, (x, style, s)
    assert repeating_decimal(Fraction(1, 7)) == "0.\\overline{142857}"
    assert repeating_decimal(Fraction(1, 4)) is None
    assert number_to_words(801, british_and=True) == "eight hundred and one"
    assert number_to_words(-42) == "minus forty-two"


def test_parse_quantity_units() -> None:
    syn = {"m": "m", "meters": "m", "metres": "m", "km": "km", "mm": "mm"}
    assert parse_quantity("2,500 meters", syn) == (2500, "m")
    assert parse_quantity("2500\\,\\text{m}", syn) == (2500, "m")
    assert parse_quantity("2500m", syn) == (2500, "m")
    assert parse_quantity("2.5 km", syn) == (Fraction(5, 2), "km")
    assert parse_quantity("2500", syn) == (2500, None)
    with pytest.raises(FormError):
        parse_quantity("5 cm", syn)


@pytest.mark.parametrize(
    "text",
    ["April 17, 2021", "2021-04-17", "17 April 2021", "Apr. 17th 2021", "the 17th of April, 2021",
     "Saturday, April 17, 2021", "Sat 17 Apr 2021", "17.04.2021", "4/17/2021", "17/4/2021"],
)  # fmt: skip
def test_parse_date_spellings(text: str) -> None:
    assert parse_date(text)[0] == dt.date(2021, 4, 17)


def test_parse_date_refuses_ambiguity_and_impossible_dates() -> None:
    with pytest.raises(FormError, match="ambiguous"):
        parse_date("4/5/2021")
    with pytest.raises(FormError):
        parse_date("February 30, 2021")
    assert parse_date("Friday, April 17, 2021") == (dt.date(2021, 4, 17), 4)  # weekday kept


@pytest.mark.parametrize(
    ("text", "items"),
    [("{3, 1, 2}", ["3", "1", "2"]), ("\\{1,2\\}", ["1", "2"]), ("x = 2 or x = 3", ["2", "3"]),
     ("1, 2 and 3", ["1", "2", "3"]), ("[1; 2]", ["1", "2"]), ("x_1=2, x_{2}=3", ["2", "3"]),
     ("\\left\\{ 2, 3\\right\\}", ["2", "3"])],
)  # fmt: skip
def test_split_items(text: str, items: list[str]) -> None:
    assert split_items(text) == items


def test_expressions_are_parsed_safely_and_compared_exactly() -> None:
    gold = parse_expression("12x^3-4x+5")
    same_forms = [
        "5 - 4x + 12x^{3}",
        "12*x**3 - 4*x + 5",
        "f'(x) = 12x^3 - 4x + 5",
        "4(3x^3 - x) + 5",
        "\\frac{24x^3 - 8x + 10}{2}",
        "12 \\cdot x^3 - 4x + 5",
    ]
    for same in same_forms:
        assert expressions_equal(parse_expression(same), gold), same
    assert not expressions_equal(parse_expression("12x^3-4x+6"), gold)
    assert expressions_equal(parse_expression("\\frac{x^2-1}{x-1}"), parse_expression("x+1"))
    for unsafe in ("x^{9^{9}}", "x^{100}", "99999999!", "z + 1", "\\int x dx", "((x+1)^{99})^{99}",
                   "x = 3", "y"):  # fmt: skip
        with pytest.raises(FormError):
            parse_expression(unsafe)
    assert poly_string([Fraction(5), Fraction(-4), Fraction(0), Fraction(12)]) == "12x^3 - 4x + 5"
    assert poly_string([Fraction(3, 2), Fraction(-1)], "python") == "-x + 3/2"


# ---- verifiers on hand-made problems ---------------------------------------------------------
def _problem(env: str, answer: str, **data: Any) -> Problem:
    return Problem(env=env, difficulty=0, seed=0, prompt="q", answer=answer, data=data)


def _ok(problem: Problem, answer: str) -> bool:
    return get_env(problem.env).verify(problem, f"\\boxed{{{answer}}}").correct


def test_unit_conversion_accepts_spellings_and_refuses_other_units() -> None:
    p = _problem("unit_conversion", "2500", dimension="length", value="2.5", **{"from": "km"},
                 to="m", places=None)  # fmt: skip
    for a in ("2500", "2500 m", "2,500 meters", "2500.0 metres", "2.5 \\times 10^{3} m",
              "two thousand five hundred meters"):  # fmt: skip
        assert _ok(p, a), a
    assert not _ok(p, "2.5 km")  # right quantity, not the asked unit
    assert not _ok(p, "250")
    v = get_env("unit_conversion").verify(p, "\\boxed{banana}")
    assert v.reward == -0.5 and not v.correct
    # 1 lb = 0.45359237 kg → asked to 2 places: anything within ±0.005 of the exact value
    lb = _problem("unit_conversion", "0.45", dimension="mass", value="1", **{"from": "lb"},
                  to="kg", places=2)  # fmt: skip
    assert _ok(lb, "0.45") and _ok(lb, "0.4536 kg") and not _ok(lb, "0.46")
    c = _problem("unit_conversion", "77", dimension="temperature", value="25", **{"from": "C"},
                 to="F", places=None)  # fmt: skip
    assert _ok(c, "77 °F") and _ok(c, "77^\\circ F") and _ok(c, "77 degrees Fahrenheit")
    assert not _ok(c, "77 K")


def test_fraction_forms_accepts_fractions_decimals_percentages() -> None:
    p = _problem("fraction_forms", "5/8", kind="sum", terms=[3, 8, 1, 4], op="+")  # 3/8 + 1/4
    for a in ("5/8", "\\frac{5}{8}", "10/16", "0.625", "62.5\\%", "five eighths", "0.6250"):
        assert _ok(p, a), a
    assert not _ok(p, "0.62") and not _ok(p, "5/7")
    third = _problem("fraction_forms", "1/3", kind="fraction_of", terms=[1, 3])
    # non-terminating: ≥ 3 written decimals within the last place
    for a in ("1/3", "0.\\overline{3}", "0.333", "0.3333", "33.33\\%", "one third"):
        assert _ok(third, a), a
    for a in ("0.33", "0.3", "0.334", "0.332"):
        assert not _ok(third, a), a


def test_number_words_accepts_digits_and_words() -> None:
    p = _problem("number_words", "801", a=712, b=89, op="plus")
    for a in ("801", "eight hundred one", "eight hundred and one", "801.0", "8.01e2"):
        assert _ok(p, a), a
    assert not _ok(p, "eight hundred two") and not _ok(p, "800")


def test_date_offset_checks_the_weekday() -> None:
    p = _problem("date_offset", "April 17, 2021", start="2021-03-03", days=45, direction="after")
    for a in ("April 17, 2021", "2021-04-17", "Saturday, 17 April 2021", "04/17/2021"):
        assert _ok(p, a), a
    assert not _ok(p, "Friday, April 17, 2021")  # 17 April 2021 was a Saturday
    assert not _ok(p, "April 18, 2021")
    assert get_env("date_offset").verify(p, "\\boxed{4/5/2021}").reward == -0.5  # ambiguous


def test_unordered_set_ignores_order_and_refuses_repeats() -> None:
    p = _problem("unordered_set", "2, 3", kind="roots", coeffs=[1, -5, 6])  # x^2 - 5x + 6
    for a in ("2, 3", "3, 2", "\\{3, 2\\}", "x = 2 or x = 3", "two and three", "[3; 2]"):
        assert _ok(p, a), a
    assert not _ok(p, "2, 3, 3") and not _ok(p, "2") and not _ok(p, "2, 3, 4")
    zero = _problem("unordered_set", "-1, 0, 1", kind="roots", coeffs=[1, 0, -1, 0])  # x³ − x
    assert get_env("unordered_set").solve(zero) == "-1, 0, 1"
    partial = get_env("unordered_set").verify(p, "\\boxed{2}")
    assert 0 < partial.reward < 1  # Jaccard (1/2)³ = 0.125
    assert partial.reward == pytest.approx(0.125)


def test_equivalent_expression_derivative() -> None:
    # f = 5 + 0x − 2x² + 4x³ … stored as coefficients x^0 first: f' = 12x² − 4x
    p = _problem("equivalent_expression", "12x^2 - 4x", kind="derivative", coeffs=[5, 0, -2, 4])
    assert get_env("equivalent_expression").solve(p) == "12x^2 - 4x"
    for a in ("12x^2 - 4x", "-4x + 12x^2", "4x(3x - 1)", "12*x**2-4*x", "f'(x) = 12x^{2} - 4x"):
        assert _ok(p, a), a
    assert not _ok(p, "12x^2 + 4x")
    y = _problem("equivalent_expression", "-2x + 3", kind="solve_y", a=2, b=4, c=6)
    assert _ok(y, "y = 3 - 2x") and _ok(y, "\\frac{6 - 4x}{2}") and not _ok(y, "2x + 3")


# ---- every environment's own spellings ---------------------------------------------------------
@pytest.mark.parametrize("name", FREEFORM)
def test_equivalent_forms_pass_and_wrong_forms_fail(name: str) -> None:
    env = get_env(name)
    assert isinstance(env, FreeFormEnvironment)
    rng = random.Random(name)
    for difficulty in (0, 3, 8):
        for seed in range(2):
            problem = env.generate(difficulty, seed)
            forms = env.equivalent_forms(problem)
            assert forms[0] == env.solve(problem) == problem.answer
            assert len(set(forms)) >= 4, forms
            for form in forms:
                assert env.verify(problem, f"so \\boxed{{{form}}}").correct, (problem, form)
            wrong = env.wrong_forms(problem, rng)
            assert wrong
            for w in wrong:
                v = env.verify(problem, f"so \\boxed{{{w}}}")
                assert not v.correct and v.reward < 1.0, (problem, w)
