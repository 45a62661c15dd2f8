"""Symbolic calculus with sympy: derivatives, antiderivatives, limits, definite integrals.

Answers are read by the safe parser of :mod:`verirl.envs.reading.symbolic_parser` (no
``eval``, bounded powers, capped length), so ``3x^2``, ``3*x**2`` and ``\\frac{6x^2}{2}`` are
all the same answer.
A derivative must equal sympy's derivative as a function; an antiderivative is checked by
differentiating it (any constant allowed, ``+ C`` included); numbers must match exactly. These
are binary tasks in RLVE (Differentiate, Integral); the definite integral also gets the numeric
(min/max)^10 partial credit. Algebra tasks are in :mod:`verirl.envs.algebra.polynomials`.
"""

from __future__ import annotations

import random
from typing import ClassVar

import sympy

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    count_reward,
    graded,
)
from verirl.envs.reading.symbolic_parser import (
    TRUSTED,
    equivalent,
    limits_for,
    parse_expression,
    parse_number,
    plain,
    rhs_of_equation,
    to_complex,
)
from verirl.types import Problem, Verdict

X = sympy.Symbol("x")


def trusted(text: str) -> sympy.Expr:
    """Parse an expression stored by a generator (our own text, generous limits)."""
    return parse_expression(text, ("x",), TRUSTED)


def _nonzero(rng: random.Random, bound: int) -> int:
    return rng.choice([v for v in range(-bound, bound + 1) if v])


def random_function(
    rng: random.Random, difficulty: int, powers: tuple[int, int] | None = None
) -> sympy.Expr:
    """A sum of 2 + d//3 terms; monomials first, then trig/exp (d >= 3), logs and products
    (d >= 6), chain-rule terms and powers (d >= 9), quotients (d >= 12). ``powers`` is the
    range of the monomials' exponents (default 0 to 2 + d//4)."""
    d = difficulty
    kinds = ["mono", "mono"]
    kinds += ["trig", "exp"] if d >= 3 else []
    kinds += ["log", "product"] if d >= 6 else []
    kinds += ["chain", "power"] if d >= 9 else []
    kinds += ["quotient"] if d >= 12 else []
    c_max, a_max = 3 + d // 2, 1 + d // 5
    k_min, k_max = powers or (0, 2 + d // 4)
    while True:
        terms = []
        for _ in range(2 + d // 3):
            kind, c, a = rng.choice(kinds), _nonzero(rng, c_max), _nonzero(rng, a_max)
            trig = rng.choice([sympy.sin, sympy.cos])
            if kind == "mono":
                terms.append(c * X ** rng.randint(k_min, k_max))
            elif kind == "trig":
                terms.append(c * trig(a * X))
            elif kind == "exp":
                terms.append(c * sympy.exp(a * X))
            elif kind == "log":
                terms.append(c * sympy.log(X))
            elif kind == "product":
                terms.append(c * X ** rng.randint(1, 2) * rng.choice([trig, sympy.exp])(a * X))
            elif kind == "chain":
                inner = a * X**2 + rng.randint(0, 3)
                terms.append(c * rng.choice([trig, sympy.exp])(inner))
            elif kind == "power":
                terms.append((a * X + _nonzero(rng, 3)) ** rng.randint(2, 2 + d // 10))
            else:
                terms.append((a * X + rng.randint(-3, 3)) / (X**2 + rng.randint(1, 4)))
        f = sympy.Add(*terms)
        if f.has(X) and sympy.diff(f, X) != 0:
            return f


class _FunctionEnv(Environment):
    """Answer = an expression in x."""

    size_key = "function"

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return f"{answer} + x"  # changes the function (and its derivative) by a non-constant


@ENVIRONMENTS.register("derivative")
class Derivative(_FunctionEnv):
    """f'(x) in any equivalent form; binary."""

    size_measure = "length of the function"
    tags = ("symbolic",)
    difficulty_scales = "terms: 2 + d//3; coefficients up to 3 + d//2; term kinds grow with d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        f = random_function(rng, difficulty)
        prompt = (
            f"Let f(x) = {plain(f)}.\nCompute the derivative f'(x). Give it as an expression "
            "in x (use * for multiplication and ^ for powers, e.g. 6*x^2 + cos(x))."
        )
        return Instance(prompt, plain(sympy.diff(f, X)), {"function": sympy.sstr(f)})

    def check(self, problem: Problem, answer: str) -> Verdict:
        gold = sympy.diff(trusted(problem.data["function"]), X)
        value = parse_expression(rhs_of_equation(answer), ("x",), limits_for(sympy.sstr(gold)))
        ok = equivalent(value, gold)
        return graded(0.0, ok, "correct" if ok else "that is not the derivative")

    def solve(self, problem: Problem) -> str:
        return plain(sympy.diff(trusted(problem.data["function"]), X))


@ENVIRONMENTS.register("antiderivative")
class Antiderivative(_FunctionEnv):
    """Any antiderivative, checked by differentiation; binary."""

    size_measure = "length of the integrand"
    tags = ("symbolic",)
    difficulty_scales = (
        "terms of the hidden antiderivative: 2 + d//3 (monomials of degree 1 to 4 + d//4); "
        "term kinds grow with d"
    )

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        # no constant monomials (they vanish from f) and higher powers than the derivative's
        big_f = random_function(rng, difficulty, powers=(1, 4 + difficulty // 4))
        f = sympy.diff(big_f, X)
        prompt = (
            f"Let f(x) = {plain(f)}.\nFind an antiderivative F(x), i.e. a function with "
            "F'(x) = f(x) (any constant of integration is fine). Give F(x) as an expression "
            "in x (use * for multiplication and ^ for powers)."
        )
        return Instance(prompt, plain(big_f), {"function": sympy.sstr(f)})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_expression(
            rhs_of_equation(answer), ("x", "C", "c", "K"), limits_for(problem.data["function"])
        )
        # ln|u| has derivative u'/u on either sign of u: drop the bars before differentiating
        value = value.replace(
            lambda e: e.func == sympy.log and e.args[0].func == sympy.Abs,
            lambda e: sympy.log(e.args[0].args[0]),
        )
        ok = equivalent(sympy.diff(value, X), trusted(problem.data["function"]))
        return graded(0.0, ok, "correct" if ok else "its derivative is not f(x)")

    def solve(self, problem: Problem) -> str:
        return plain(sympy.integrate(trusted(problem.data["function"]), X))


def _random_poly(rng: random.Random, degree: int, bound: int) -> sympy.Expr:
    coeffs = [_nonzero(rng, bound)] + [rng.randint(-bound, bound) for _ in range(degree)]
    return sympy.Add(*(c * X ** (degree - i) for i, c in enumerate(coeffs)))


class _NumberEnv(Environment):
    """Answer = one exact number."""

    partial: ClassVar[bool] = False  # also give (min/max)^10 credit to near misses

    def gold(self, problem: Problem) -> sympy.Rational:
        """The exact value, computed quickly for the verifier."""
        raise NotImplementedError

    def reference(self, problem: Problem) -> sympy.Rational:
        """The exact value by a second, independent route (sympy's general solver)."""
        raise NotImplementedError

    def check(self, problem: Problem, answer: str) -> Verdict:
        gold = self.gold(problem)
        value = parse_number(answer, limits_for(sympy.sstr(gold), ()))
        ok = bool(value == gold)
        approx = to_complex(value)
        score = 0.0
        if self.partial and approx is not None and abs(approx.imag) < 1e-12:
            score = count_reward(approx.real, float(gold), 10.0)
        return graded(score, ok, "correct" if ok else "that is not the value")

    def solve(self, problem: Problem) -> str:
        return sympy.sstr(self.reference(problem))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return sympy.sstr(self.gold(problem) + rng.choice([-2, -1, 1, 2]))

    def size(self, problem: Problem) -> float:
        return float(len(problem.prompt))


@ENVIRONMENTS.register("limit")
class RationalLimit(_NumberEnv):
    """Limit of a rational function (removable 0/0 or at infinity); exact, binary."""

    tags = ("symbolic",)
    difficulty_scales = (
        "factor degrees up to 1 + d//6; a third of the seeds x -> infinity (degrees 2 + d//4, "
        "equal degrees or a non-constant numerator of lower degree); double zeros from d = 6"
    )
    size_measure = "prompt length (degrees and coefficients of the rational function)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        d = difficulty
        bound = 2 + d // 4
        if rng.random() < 1 / 3:  # x -> oo with deg P <= deg Q, both at least 1
            dq = rng.randint(1, 2 + d // 4)
            dp = dq if dq == 1 or rng.random() < 0.7 else rng.randint(1, dq - 1)
            num, den, point = _random_poly(rng, dp, bound), _random_poly(rng, dq, bound), "oo"
        else:  # a removable 0/0 at x = a
            a = rng.randint(-bound, bound)
            m = 2 if d >= 6 and rng.random() < 0.5 else 1
            p1 = _random_poly(rng, rng.randint(0, 1 + d // 6), bound)
            q1 = _random_poly(rng, rng.randint(0, 1 + d // 6), bound)
            while q1.subs(X, a) == 0:
                q1 += 1
            num = sympy.expand((X - a) ** m * p1)
            den = sympy.expand((X - a) ** m * q1)
            point = str(a)
        data = {"numerator": sympy.sstr(num), "denominator": sympy.sstr(den), "point": point}
        where = "x -> infinity" if point == "oo" else f"x -> {point}"
        prompt = (
            f"Compute the limit as {where} of ({plain(num)}) / ({plain(den)}).\nGive the exact "
            "value as an integer or a fraction."
        )
        return Instance(prompt, sympy.sstr(_limit_value(data)), data)

    def gold(self, problem: Problem) -> sympy.Rational:
        return _limit_value(dict(problem.data))

    def reference(self, problem: Problem) -> sympy.Rational:
        d = problem.data
        point = sympy.oo if d["point"] == "oo" else sympy.Integer(d["point"])
        return sympy.limit(trusted(d["numerator"]) / trusted(d["denominator"]), X, point)


def _limit_value(data: dict[str, str]) -> sympy.Rational:
    """The limit by cancelling the common factor / comparing leading terms."""
    num = sympy.Poly(trusted(data["numerator"]), X)
    den = sympy.Poly(trusted(data["denominator"]), X)
    if data["point"] == "oo":
        if num.degree() < den.degree():
            return sympy.Integer(0)
        return sympy.Rational(num.LC(), den.LC())
    quotient = sympy.cancel(num.as_expr() / den.as_expr())
    return sympy.Rational(quotient.subs(X, int(data["point"])))


@ENVIRONMENTS.register("definite_integral")
class DefiniteIntegral(_NumberEnv):
    """Definite integral of a polynomial; exact, with (min/max)^10 credit."""

    tags = ("symbolic",)
    difficulty_scales = "polynomial degree: 1 + d//3; coefficients up to 3 + d//2; bounds widen"
    size_measure = "length of the integrand plus the width of the interval"
    partial = True

    def size(self, problem: Problem) -> float:
        d = problem.data
        return float(len(d["integrand"]) + abs(d["upper"] - d["lower"]))

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        d = difficulty
        p = _random_poly(rng, 1 + d // 3, 3 + d // 2)
        a, b = sorted(rng.sample(range(-(1 + d // 4), 3 + d // 4), 2))
        data = {"integrand": sympy.sstr(p), "lower": a, "upper": b}
        prompt = (
            f"Compute the definite integral of f(x) = {plain(p)} from x = {a} to x = {b}.\n"
            "Give the exact value as an integer or a fraction."
        )
        return Instance(prompt, sympy.sstr(_poly_integral(data)), data)

    def gold(self, problem: Problem) -> sympy.Rational:
        return _poly_integral(dict(problem.data))

    def reference(self, problem: Problem) -> sympy.Rational:
        d = problem.data
        return sympy.integrate(trusted(d["integrand"]), (X, d["lower"], d["upper"]))


def _poly_integral(data: dict) -> sympy.Rational:
    """F(b) - F(a) with F the term-by-term antiderivative of the polynomial."""
    antiderivative = sympy.Poly(trusted(data["integrand"]), X).integrate()
    return sympy.Rational(antiderivative.eval(data["upper"]) - antiderivative.eval(data["lower"]))
