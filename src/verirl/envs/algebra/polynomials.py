"""Symbolic algebra with sympy: polynomial roots, linear systems, expanding and factoring.

Every answer is read with the safe parser of :mod:`verirl.envs.reading.symbolic_parser` and
checked by substitution or exact polynomial arithmetic, not by string comparison: roots in any
order and any exact form (``3/2``, ``1.5``, ``\\frac{3}{2}``), factors in any order and grouping.
Partial credit: roots and equations earn (satisfied/all)^5; an expansion earns the share of
right coefficients^5; a factorisation the share of its degree in irreducible factors^5.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction

import sympy

from verirl.envs.algebra.calculus import X, trusted
from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    satisfied_reward,
    satisfied_verdict,
)
from verirl.envs.reading.normalize import split_items
from verirl.envs.reading.symbolic_parser import (
    ParseError,
    equivalent,
    limits_for,
    parse_expression,
    parse_number,
    plain,
    rhs_of_equation,
)
from verirl.types import Problem, Verdict


def _nonzero(rng: random.Random, bound: int) -> int:
    return rng.choice([v for v in range(-bound, bound + 1) if v])


def _split_list(text: str) -> list[str]:
    """The items of a list answer through
    :func:`verirl.envs.reading.normalize.split_items`: one outer ``\\{ \\}`` / ``{ }`` /
    ``[ ]`` / ``( )``, separators ``,`` ``;`` ``and`` ``or``."""
    parts = split_items(text[:20_000], whitespace=False)
    if not parts:
        raise ParseError("empty list")
    return parts


_ROOT_NAME = re.compile(r"^x(?:_\{?\d+\}?)?\s*=\s*")


# ---- roots ---------------------------------------------------------------------------------
def _horner(coeffs: list[int], value: Fraction) -> Fraction:
    out = Fraction(0)
    for c in coeffs:
        out = out * value + c
    return out


@ENVIRONMENTS.register("polynomial_roots")
class PolynomialRoots(Environment):
    """All distinct real roots in any order, checked by substitution."""

    size_measure = "number of coefficients"
    tags = ("symbolic",)
    difficulty_scales = (
        "distinct roots: 2 + d//4 in [-(10 + d//4), 10 + d//4]; a fractional root from d = 8; "
        "a root-free quadratic factor and double roots later"
    )
    size_key = "coeffs"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        d = difficulty
        bound = 10 + d // 4
        roots = [sympy.Integer(r) for r in rng.sample(range(-bound, bound + 1), 2 + d // 4)]
        if d >= 8:
            q = rng.choice([2, 3])
            p = rng.choice([v for v in range(-2 * bound, 2 * bound) if v % q])
            roots[0] = sympy.Rational(p, q)
        factors = [r.q * X - r.p for r in roots]
        if d >= 10 and rng.random() < 0.3:
            factors.append(factors[-1])  # a double root
        if d >= 6 and rng.random() < 0.5:
            factors.append(X**2 + rng.randint(1, 2 + d // 4))  # no real roots
        poly = sympy.Poly(sympy.Mul(*factors), X)
        coeffs = [int(c) for c in poly.all_coeffs()]
        prompt = (
            f"Find all real solutions x of {plain(poly.as_expr())} = 0.\nGive each distinct "
            "real solution once, as integers or fractions, separated by commas."
        )
        answer = ", ".join(sympy.sstr(r) for r in sorted(set(roots)))
        return Instance(prompt, answer, {"coeffs": coeffs})

    def check(self, problem: Problem, answer: str) -> Verdict:
        coeffs = problem.data["coeffs"]
        limits = limits_for(str(max(abs(c) for c in coeffs)), ())
        values = {parse_number(_ROOT_NAME.sub("", p), limits) for p in _split_list(answer)}
        hits = sum(
            1
            for v in values
            if v.is_Rational and _horner(coeffs, Fraction(int(v.p), int(v.q))) == 0
        )
        wrong = len(values) - hits
        total = len(self._roots(problem))
        ok = hits == total and wrong == 0
        detail = "correct"
        if not ok:
            detail = f"{wrong} of the values are not roots" if wrong else "some roots are missing"
        return graded(satisfied_reward(hits, total + wrong, 5.0), ok, detail)

    @staticmethod
    def _roots(problem: Problem) -> list[sympy.Rational]:
        poly = sympy.Poly(problem.data["coeffs"], X)
        return sorted(set(poly.real_roots()))

    def solve(self, problem: Problem) -> str:
        return ", ".join(sympy.sstr(r) for r in self._roots(problem))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        roots = self._roots(problem)
        extra = max(roots) + 1 if roots else sympy.Integer(0)
        return ", ".join(sympy.sstr(r) for r in [*roots, extra])  # a value that is no root

    def surface_forms(self, problem: Problem) -> list[str]:
        roots = [sympy.sstr(r) for r in self._roots(problem)]
        latex = [sympy.latex(r) for r in self._roots(problem)]
        body, rev = ", ".join(roots), ", ".join(reversed(roots))
        return [
            body,
            rev,
            f"\\{{{body}\\}}",
            f"{{{body}}}",
            f"[{rev}]",
            f"({body})",
            "; ".join(roots),
            ", ".join(latex),
            ", ".join(f"x = {r}" for r in roots),
            " or ".join(f"x = {r}" for r in roots),
            f"{body}.",
        ]

    def near_misses(self, problem: Problem) -> list[str]:
        roots = self._roots(problem)
        out = super().near_misses(problem)
        if len(roots) >= 2:
            out.append(", ".join(sympy.sstr(r) for r in roots[1:]))  # a root missing
        flipped = [r for r in roots if -r not in roots]
        if flipped:
            out.append(", ".join(sympy.sstr(-r if r == flipped[0] else r) for r in roots))
        return out


# ---- linear systems ------------------------------------------------------------------------
def _names(n: int) -> list[str]:
    return ["x", "y", "z"][:n] if n <= 3 else [f"x{i}" for i in range(1, n + 1)]


def _equation(row: list[int], names: list[str], rhs: int) -> str:
    text = ""
    for c, v in zip(row, names, strict=True):
        if c == 0:
            continue
        sign = "-" if c < 0 else "+"
        mag = "" if abs(c) == 1 else f"{abs(c)}*"
        text += f" {sign} {mag}{v}" if text else f"{'-' if c < 0 else ''}{mag}{v}"
    return f"{text} = {rhs}"


@ENVIRONMENTS.register("linear_system")
class LinearSystem(Environment):
    """The solution of a square linear system; (equations satisfied/all)^5 credit."""

    size_measure = "entries of the coefficient matrix"
    tags = ("symbolic",)
    difficulty_scales = "unknowns: 2 + d//4; coefficients up to 2 + d//3; solution up to 3 + d//2"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        d = difficulty
        n, c_max, s_max = 2 + d // 4, 2 + d // 3, 3 + d // 2
        while True:
            rows = [[rng.randint(-c_max, c_max) for _ in range(n)] for _ in range(n)]
            if sympy.Matrix(rows).det() != 0:
                break
        solution = [rng.randint(-s_max, s_max) for _ in range(n)]
        rhs = [sum(a * s for a, s in zip(row, solution, strict=True)) for row in rows]
        names = _names(n)
        eqs = "\n".join(_equation(row, names, b) for row, b in zip(rows, rhs, strict=True))
        prompt = (
            f"Solve the system of linear equations:\n{eqs}\n\nGive the solution in the form "
            f"{', '.join(f'{v} = ...' for v in names)} (exact values)."
        )
        answer = ", ".join(f"{v} = {s}" for v, s in zip(names, solution, strict=True))
        return Instance(prompt, answer, {"rows": rows, "rhs": rhs})

    def check(self, problem: Problem, answer: str) -> Verdict:
        rows, rhs = problem.data["rows"], problem.data["rhs"]
        names = _names(len(rows))
        parts = _split_list(answer)
        limits = limits_for(str(max(abs(v) for row in rows for v in [*row, *rhs])), ())
        if "=" in answer:
            values: dict[str, sympy.Expr] = {}
            for part in parts:
                if part.count("=") != 1:
                    raise ParseError("expected name = value")
                name, value = (s.strip() for s in part.split("="))
                if name not in names:
                    return invalid(f"{name[:20]} is not one of the unknowns")
                values[name] = parse_number(value, limits)
            if len(values) != len(names):
                return invalid("give a value for every unknown")
            got = [values[v] for v in names]
        else:
            got = [parse_number(p, limits) for p in parts]
            if len(got) != len(names):
                return invalid(f"expected {len(names)} values")
        good = sum(
            1
            for row, b in zip(rows, rhs, strict=True)
            if sympy.expand(sum(a * v for a, v in zip(row, got, strict=True)) - b) == 0
        )
        return satisfied_verdict(good, len(rows), "equations are not satisfied")

    def solve(self, problem: Problem) -> str:
        rows, rhs = problem.data["rows"], problem.data["rhs"]
        sol = sympy.Matrix(rows).LUsolve(sympy.Matrix(rhs))
        return ", ".join(
            f"{v} = {sympy.sstr(s)}" for v, s in zip(_names(len(rows)), sol, strict=True)
        )

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        first, *rest = answer.split(", ")
        name, value = first.split(" = ")
        return ", ".join([f"{name} = {sympy.sstr(sympy.Rational(value) + 1)}", *rest])

    def surface_forms(self, problem: Problem) -> list[str]:
        pairs = [part.split(" = ") for part in self.solve(problem).split(", ")]
        values = [v for _, v in pairs]
        return [
            ", ".join(f"{n} = {v}" for n, v in pairs),
            ", ".join(f"{n}={v}" for n, v in reversed(pairs)),
            "; ".join(f"{n} = {v}" for n, v in pairs),
            " and ".join(f"{n} = {v}" for n, v in pairs),
            f"({', '.join(values)})",
            ", ".join(values),
            f"\\left({', '.join(values)}\\right)",
            f"({', '.join(values)}).",
        ]

    def near_misses(self, problem: Problem) -> list[str]:
        pairs = [part.split(" = ") for part in self.solve(problem).split(", ")]
        values = [v for _, v in pairs]
        out = super().near_misses(problem)
        if len(set(values)) > 1:
            out.append(f"({', '.join(reversed(values))})")  # positions swapped
        out.append(f"({', '.join([*values, '0'])})")  # one value too many
        return out

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["rows"]) ** 2)


# ---- expanding and factoring ---------------------------------------------------------------
def _parse_polynomial(answer: str, reference: str) -> sympy.Expr | None:
    expr = parse_expression(rhs_of_equation(answer), ("x",), limits_for(reference))
    return expr if expr.is_polynomial(X) else None


@ENVIRONMENTS.register("polynomial_expand")
class PolynomialExpand(Environment):
    """The expanded product; (right coefficients/all)^5, halved if not expanded."""

    size_measure = "length of the product"
    tags = ("symbolic",)
    difficulty_scales = "factors: 2 + d//4; factor degree up to 2 from d = 6; coefficients 7 + d//3"
    size_key = "product"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        d = difficulty
        bound = 7 + d // 3
        factors = []
        for _ in range(2 + d // 4):
            degree = 1 if d < 6 else rng.randint(1, 2)
            lead = 1 if d < 3 else rng.randint(1, bound)
            rest = [rng.randint(-bound, bound) for _ in range(degree - 1)] + [_nonzero(rng, bound)]
            factors.append(sympy.Add(*(c * X ** (degree - i) for i, c in enumerate([lead, *rest]))))
        product = "*".join(f"({plain(f)})" for f in factors)
        prompt = (
            f"Expand the product {product} into a polynomial in x written as a sum of terms "
            "(use * for multiplication and ^ for powers, e.g. 2*x^2 - 3*x + 1)."
        )
        return Instance(prompt, plain(sympy.expand(sympy.Mul(*factors))), {"product": product})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = _parse_polynomial(answer, problem.data["product"])
        if value is None:
            return invalid("the answer is not a polynomial in x")
        gold = sympy.Poly(trusted(problem.data["product"]), X)
        mine = sympy.Poly(value, X)
        top = max(gold.degree(), mine.degree())
        # nth(k) is coeff_monomial(X**k) for a Poly in X alone, without building a Monomial
        good = sum(1 for k in range(top + 1) if gold.nth(k) == mine.nth(k))
        score = satisfied_reward(good, top + 1, 5.0)
        if good == top + 1 and sympy.expand(value) != value:
            return graded(0.5 * score, False, "equal, but not fully expanded")
        ok = good == top + 1
        return graded(score, ok, "correct" if ok else f"{top + 1 - good} coefficients are wrong")

    def solve(self, problem: Problem) -> str:
        return plain(sympy.Poly(trusted(problem.data["product"]), X).as_expr())

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return problem.data["product"]  # the same polynomial, not expanded


@ENVIRONMENTS.register("polynomial_factor")
class PolynomialFactor(Environment):
    """Complete factorisation over Q; (degree in irreducible factors/all)^5."""

    size_measure = "length of the polynomial"
    tags = ("symbolic",)
    difficulty_scales = (
        "linear factors: 2 + d//4 with leading coefficients up to 1 + d//6 and constants up to "
        "10 + d//4; a constant from d = 5; an irreducible quadratic factor from d = 8"
    )
    size_key = "polynomial"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        d = difficulty
        bound = 10 + d // 4
        factors = [
            rng.randint(1, 1 + d // 6) * X - rng.randint(-bound, bound) for _ in range(2 + d // 4)
        ]
        if d >= 5:
            factors.append(sympy.Integer(rng.choice([1, 2, 3])))
        if d >= 8 and rng.random() < 0.5:
            factors.append(X**2 + rng.randint(1, 3 + d // 4))
        poly = sympy.expand(sympy.Mul(*factors))
        prompt = (
            f"Factor completely over the rational numbers: {plain(poly)}.\nWrite it as a "
            "product of irreducible factors, e.g. 2*(x - 1)^2*(3*x + 4)."
        )
        return Instance(prompt, plain(sympy.factor(poly)), {"polynomial": sympy.sstr(poly)})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = _parse_polynomial(answer, problem.data["polynomial"])
        if value is None:
            return invalid("the answer is not a polynomial in x")
        if not equivalent(value, trusted(problem.data["polynomial"])):
            return graded(0.0, False, "the product is not equal to the polynomial")
        total = irreducible = 0
        for factor in sympy.Mul.make_args(value):
            base, exponent = factor.as_base_exp()
            if not base.has(X):
                continue
            poly = sympy.Poly(base, X)
            total += poly.degree() * int(exponent)
            if poly.is_irreducible:
                irreducible += poly.degree() * int(exponent)
        ok = irreducible == total
        return graded(
            satisfied_reward(irreducible, total, 5.0),
            ok,
            "correct" if ok else "equal, but some factors can be factored further",
        )

    def solve(self, problem: Problem) -> str:
        return plain(sympy.factor(trusted(problem.data["polynomial"])))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return plain(sympy.expand(trusted(problem.data["polynomial"])))  # not factored
