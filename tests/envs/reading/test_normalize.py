"""Regression tests for the answer-normalisation layer (issue "Gym 2.0"): the correct forms
that were rejected and the wrong answers that were accepted, through the real environments."""

from __future__ import annotations

import dataclasses

import pytest

from tests.envs.helpers import problem as hand_made
from verirl.envs import get_env
from verirl.envs.reading.normalize import InvalidAnswer, parse_integer, parse_integers, split_items
from verirl.types import Problem


def _verify(name: str, problem: Problem, answer: str) -> tuple[float, bool]:
    v = get_env(name).verify(problem, f"\\boxed{{{answer}}}")
    return v.reward, v.correct


@pytest.mark.parametrize(
    "text", ["1\\,576", "1{,}576", "$1576$", "1576.", "\\text{1576}", "1,576", "١٥٧٦", "１５７６"]
)
def test_integer_forms_read_as_the_number(text: str) -> None:
    assert parse_integer(text) == 1576


@pytest.mark.parametrize("text", ["1, 0", "3, 298", "1 10", "1,57", "1; 576", "10 11"])
def test_a_separator_never_merges_numbers(text: str) -> None:
    with pytest.raises(InvalidAnswer):
        parse_integer(text)


def test_named_value_and_congruence() -> None:
    assert parse_integer("x = 16", ("x",)) == 16
    assert parse_integer("x \\equiv 16 \\pmod{20}", ("x",), 20) == 16
    with pytest.raises(InvalidAnswer):
        parse_integer("x \\equiv 16 \\pmod{21}", ("x",), 20)
    with pytest.raises(ValueError):
        parse_integer("y = 16", ("x",))


def test_collections() -> None:
    assert parse_integers("\\{0, 2, 4\\}") == [0, 2, 4]
    assert parse_integers("[2, 7]") == [2, 7]
    assert parse_integers("i = 0, j = 2", ("i", "j")) == [0, 2]
    assert parse_integers("j = 2, i = 0", ("i", "j")) == [0, 2]
    assert parse_integers("5 + 3", plus=True) == [5, 3]
    assert parse_integers("1 and 2") == [1, 2]
    assert split_items("\\{1\\,000, 2\\}") == ["1\\,000", "2"]


# Problems whose answer has four digits (the random ones at difficulty 6 may not: gcd and
# digit_sum rarely do), built from the data each verifier reads.
FOUR_DIGIT_PROBLEMS = {
    "addition": {"terms": [1000, 576]},  # 1576
    "multiplication": {"terms": [32, 48]},  # 1536
    "gcd": {"numbers": [3 * 1576, 5 * 1576]},  # 1576
    "digit_sum": {"number": "9" * 112},  # 1008
}


@pytest.mark.parametrize("name", sorted(FOUR_DIGIT_PROBLEMS))
def test_integer_envs_accept_latex_thousands_and_reject_split_digits(name: str) -> None:
    problem = hand_made(name, **FOUR_DIGIT_PROBLEMS[name])
    gold = int(get_env(name).solve(problem))
    assert 1000 <= gold < 10_000
    assert _verify(name, problem, f"{gold:,}".replace(",", "\\,"))[1]
    assert _verify(name, problem, f"{gold:,}".replace(",", "{,}"))[1]
    s = str(gold)
    reward, ok = _verify(name, problem, f"{s[0]}, {s[1:]}")
    assert not ok and reward == -0.5


def test_modular_answers_with_the_named_variable() -> None:
    for name in ("chinese_remainder", "modular_inverse"):
        env = get_env(name)
        p = env.generate(2, 0)
        x = env.solve(p)
        m = p.data["modulus"] if name == "modular_inverse" else p.data["moduli"][0]
        assert _verify(name, p, f"x = {x}")[1], name
        if name == "modular_inverse":
            assert _verify(name, p, f"x \\equiv {x} \\pmod{{{m}}}")[1]


def test_polynomial_roots_and_linear_system_delimiters() -> None:
    p = get_env("polynomial_roots").generate(2, 0)  # x^2 - 4x + 3 = 0
    roots = get_env("polynomial_roots").solve(p)
    for form in (f"\\{{{roots}\\}}", f"{{{roots}}}", f"[{roots}]", "x = 1 or x = 3"):
        if roots == "1, 3" or "x =" not in form:
            assert _verify("polynomial_roots", p, form)[1], form
    ls = get_env("linear_system")
    q = ls.generate(2, 0)
    values = [part.split(" = ")[1] for part in ls.solve(q).split(", ")]
    assert _verify("linear_system", q, f"({', '.join(values)})")[1]


def test_pair_coins_factors() -> None:
    env = get_env("pair_with_sum")
    p = env.generate(1, 0)
    i, j = env.solve(p).split(", ")
    assert _verify("pair_with_sum", p, f"i = {i}, j = {j}")[1]
    coins = get_env("coin_change_min_coins")
    q = coins.generate(1, 0)
    assert _verify("coin_change_min_coins", q, coins.solve(q).replace(", ", " + "))[1]
    pf = get_env("prime_factorization")
    r = pf.generate(1, 0)
    assert _verify("prime_factorization", r, f"[{pf.solve(r)}]")[1]


def test_base_conversion_does_not_merge_groups() -> None:
    env = get_env("base_conversion")
    p = dataclasses.replace(env.generate(0, 0), data={"n": 6, "from_base": 10, "to_base": 2})
    assert _verify("base_conversion", p, "110")[1]
    assert _verify("base_conversion", p, "1 1 0")[1]  # digits spelled one by one
    assert not _verify("base_conversion", p, "1 10")[1]
    assert not _verify("base_conversion", p, "11, 0")[1]


def test_derivative_is_checked_at_negative_points() -> None:
    env = get_env("derivative")
    p = env.generate(0, 0)
    p = dataclasses.replace(p, data={**p.data, "function": "-2*x^2"})
    assert _verify("derivative", p, "-4x")[1]
    for wrong in ("-4|x|", "-4\\sqrt{x^2}"):
        assert not _verify("derivative", p, wrong)[1], wrong


def test_unit_conversion_rounding() -> None:
    env = get_env("unit_conversion")
    zero = [s for s in range(500) if float(env.generate(0, s).answer) == 0]
    assert zero == [], "a conversion asked to be rounded to 0"
    mm = dataclasses.replace(
        env.generate(0, 0),
        data={"dimension": "length", "value": "4", "from": "mm", "to": "km", "places": 2},
    )
    assert not _verify("unit_conversion", mm, "0.004")[1]  # 4 mm is 0.000004 km
    assert not any(
        "Convert 1 grams" in env.generate(d, s).prompt for d in (0, 1) for s in range(300)
    )


def test_trailing_period_everywhere_it_can_be() -> None:
    for name in ("reverse_string", "sort_list", "hamiltonian_path", "sudoku", "limit"):
        env = get_env(name)
        p = env.generate(2, 0)
        assert env.verify(p, f"\\boxed{{{env.solve(p)}.}}").correct, name
