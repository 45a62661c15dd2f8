"""Free-form algebra: equivalent expressions (``12x^3-4x+5`` = ``5 - 4x + 12*x**3``).

Expressions are read with the ANTLR LaTeX parser of ``latex2sympy2_extended`` (model text is
never evaluated as Python), after guards against inputs that would make sympy or the parser
slow: at most 200 characters, only ``\\frac``/``\\cdot``/``\\times``/``\\sqrt`` commands, no
factorials, exponents of at most two digits and never nested, text inside the grammar and
size bounds of the shared reader (:func:`~verirl.envs.reading.symbolic_parser.check_size`,
which calls no sympy on text it refuses), only + − × ÷ and powers in the parsed tree, and an
estimated degree of at most 200. Equivalence is exact: the difference of two
polynomials expands to 0 (a rational difference cancels to 0); other expressions must agree
at seven fixed rational points.
"""

from __future__ import annotations

import math
import random
import re
from fractions import Fraction
from typing import Any

from verirl.envs.base import ENVIRONMENTS, Instance, graded, invalid
from verirl.envs.freeform.conversions import FreeFormEnvironment
from verirl.envs.reading.answers import matching_brace
from verirl.envs.reading.surface_forms import MAX_CHARS, FormError, clean
from verirl.envs.reading.symbolic_parser import Limits, ParseError, SizeError, check_size
from verirl.types import Problem, Verdict

_LHS = re.compile(
    r"^(?:y|y'|f'\(x\)|f'|f\^\{?\\prime\}?\(x\)|\\frac\{dy\}\{dx\}|dy/dx|\\frac\{d\}\{dx\}.*)$"
)
_COMMANDS = {"frac", "dfrac", "tfrac", "cdot", "times", "sqrt"}
MAX_DEGREE = 200
# The ANTLR parser's work grows with brackets and with factors side by side: its start rule
# weighs sets, intervals and tuples at every bracket (about 0.1 s a level: 30 nested
# parentheses took 13 s) and each juxtaposition is predicted with full-context lookahead
# (199 x's in a row: 0.3 s). Its input is kept near the envelope of real answers: the
# longest generated one has 46 tokens, one bracket level and two factors side by side.
MAX_BRACKETS = 3
READABLE = Limits(
    max_length=MAX_CHARS,
    max_degree=MAX_DEGREE,
    max_exponent=99,
    max_tokens=120,
    max_juxtaposed=4,
)


def parse_expression(text: str, variables: tuple[str, ...] = ("x",)) -> Any:
    """A sympy expression in ``variables`` from LaTeX or plain math (``12x^3-4x+5``,
    ``12*x**3 - 4*x + 5``, ``y = 2x + 3``, ``f'(x) = …``). Raises :class:`FormError` on
    anything unreadable, unsafe (see the module docstring) or with other free symbols."""
    import sympy

    t = clean(text).replace("**", "^")
    if t.count("=") == 1:
        lhs, rhs = (s.strip() for s in t.split("="))
        if not _LHS.match(lhs.replace(" ", "")):
            raise FormError("only 'y = …' or a derivative on the left of '=' is accepted")
        t = rhs
    if "!" in t or not set(re.findall(r"\\([a-zA-Z]+)", t)) <= _COMMANDS:
        raise FormError("unsupported notation in the expression")
    _check_exponents(t)
    _check_brackets(t)
    try:  # the shared reader's grammar and bounds, checked before sympy or ANTLR runs
        # (on lowercase text: latex2sympy reads every symbol in lowercase, 4X as 4x)
        check_size(t.lower(), variables, READABLE)
    except SizeError as exc:
        raise FormError(f"expression too large: {exc}") from exc
    except ParseError as exc:
        # Outside the grammar of the shared reader: not an expression in x. Handed to the
        # ANTLR parser, such text cost up to a second (its prediction over unknown words,
        # e.g. '12Redirect "x" Print nat.27x^2'), and no correct spelling needs it.
        raise FormError(f"not a readable expression: {exc}") from exc
    from latex2sympy2_extended import latex2sympy  # imported on the first readable answer

    try:
        expr = latex2sympy(t)
    except Exception as exc:  # the ANTLR parser raises plain Exceptions
        raise FormError("not a readable expression") from exc
    if not isinstance(expr, sympy.Expr):
        raise FormError("not an expression")
    if not {s.name for s in expr.free_symbols} <= set(variables):
        raise FormError("unexpected symbols in the expression")
    if _degree_bound(expr) > MAX_DEGREE:
        raise FormError("expression degree too large")
    return expr


def _check_exponents(t: str) -> None:
    if t.count("^") > 12:
        raise FormError("too many powers")
    for m in re.finditer(r"\^", t):
        rest = t[m.end() :].lstrip()
        if rest.startswith("{"):
            close = matching_brace(rest, 1)
            group = rest[1:close] if close is not None else rest
        elif rest.startswith("("):
            close = rest.find(")")
            group = rest[1:close] if close >= 0 else rest
        else:
            group = rest[:1]
        if "^" in group or any(len(d) > 2 for d in re.findall(r"\d+", group)):
            raise FormError("exponent too large or nested")


def _check_brackets(t: str) -> None:
    depth = deepest = 0
    for ch in t:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    if deepest > MAX_BRACKETS:
        raise FormError(f"brackets nested deeper than {MAX_BRACKETS} levels")


def _degree_bound(expr: Any) -> float:
    """An upper bound of the total degree without expanding; refuses non-arithmetic nodes."""
    import sympy

    if isinstance(expr, sympy.Symbol):
        return 1
    if isinstance(expr, sympy.Number):
        if not expr.is_finite:  # oo, zoo, nan: not an answer (and slow to compare against)
            raise FormError("infinite or undefined values are not accepted")
        return 0
    if isinstance(expr, sympy.Add):
        return max(_degree_bound(a) for a in expr.args)
    if isinstance(expr, sympy.Mul):
        return sum(_degree_bound(a) for a in expr.args)
    if isinstance(expr, sympy.Pow):
        exp = expr.exp
        if not isinstance(exp, sympy.Rational) or abs(exp.p) > 99 or exp.q > 2:
            raise FormError("only small integer or half-integer powers are accepted")
        return _degree_bound(expr.base) * abs(float(exp))
    raise FormError("only arithmetic expressions are accepted")


def expressions_equal(a: Any, b: Any, variables: tuple[str, ...] = ("x",)) -> bool:
    """Exact equivalence of two parsed expressions (see the module docstring)."""
    import sympy

    syms = [sympy.Symbol(v) for v in variables]
    diff = a - b
    if len(syms) == 1 and diff.is_polynomial(*syms):
        # A nonzero polynomial of degree ≤ D has at most D roots, so it is zero iff it vanishes
        # at D + 1 integers — exact, and fast: expanding or building a Poly of a nested power
        # such as ((x+1)^10)^10 takes tens of seconds, substituting integers milliseconds.
        bound = int(_degree_bound(diff))
        return all(diff.subs(syms[0], k) == 0 for k in range(bound + 1))
    if diff.is_polynomial(*syms):
        expanded = sympy.expand(diff)
        if expanded == 0:
            return True
        return all(abs(float(c)) < 1e-9 for c in sympy.Poly(expanded, *syms).coeffs())
    if diff.is_rational_function(*syms):
        return bool(sympy.cancel(diff) == 0)
    for k in range(7):
        point = {s: sympy.Rational(3 + 2 * k + i, 7 + k) for i, s in enumerate(syms)}
        value = complex(diff.evalf(subs=point))
        if abs(value) > 1e-9 * (1 + abs(complex(a.evalf(subs=point)))):
            return False
    return True


# ---- polynomial spellings ----------------------------------------------------------------------
def poly_string(coeffs: list[Fraction], style: str = "latex") -> str:
    """Polynomial with ``coeffs[k]`` the coefficient of x^k, spelled in ``style``:
    ``latex`` 12x^3 - 4x + 5 · ``braced`` 12x^{3} - 4x + 5 · ``python`` 12*x**3 - 4*x + 5 ·
    ``cdot`` 12 \\cdot x^3 - 4 \\cdot x + 5 · ``ascending`` 5 - 4x + 12x^3."""
    degrees = [k for k in range(len(coeffs)) if coeffs[k] != 0]
    if not degrees:
        return "0"
    order = degrees if style == "ascending" else degrees[::-1]
    out = ""
    for k in order:
        c = Fraction(coeffs[k])
        mag = abs(c)
        if mag.denominator != 1:
            num = (
                f"{mag.numerator}/{mag.denominator}"
                if style == "python"
                else (f"\\frac{{{mag.numerator}}}{{{mag.denominator}}}")
            )
        else:
            num = str(mag.numerator)
        power = {"braced": "^{%d}", "python": "**%d"}.get(style, "^%d") % k if k >= 2 else ""
        if k == 0:
            term = num
        else:
            times = {"python": "*", "cdot": " \\cdot "}.get(style, "")
            term = ("" if mag == 1 else num + times) + "x" + power
        if not out:
            out = ("-" if c < 0 else "") + term
        else:
            out += (" - " if c < 0 else " + ") + term
    return out


def _fractions(values: list[Any]) -> list[Fraction]:
    return [Fraction(str(v)) for v in values]


@ENVIRONMENTS.register("equivalent_expression")
class EquivalentExpression(FreeFormEnvironment):
    """Differentiate a polynomial, or solve a linear equation for y; any equivalent
    expression is accepted (term order, ``*``/``**`` or LaTeX, a common factor pulled out,
    ``y =`` / ``f'(x) =`` in front)."""

    size_measure = "coefficients and their digits"
    difficulty_scales = (
        "derivative degree 2 + d // 3 (at most 8), coefficients up to 3 + 2·d (at most 99); "
        "solving for y from d = 2, fractional coefficients from d = 5"
    )

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        import sympy

        top = min(99, 3 + 2 * difficulty)
        x = sympy.Symbol("x")
        if difficulty >= 2 and rng.random() < 0.5:
            a = rng.randint(2, min(20, 2 + difficulty))
            b, c = (
                rng.choice([-1, 1]) * rng.randint(1, top),
                rng.choice([-1, 1]) * rng.randint(1, top),
            )
            if difficulty < 5:
                b, c = a * b, a * c
            lhs = f"{a}y {'-' if b < 0 else '+'} {abs(b)}x"
            prompt = f"Solve {lhs} = {c} for y."
            data = {"kind": "solve_y", "a": a, "b": b, "c": c}
            y = sympy.Rational(c, a) - sympy.Rational(b, a) * x
            coeffs = [Fraction(str(sympy.Poly(y, x).coeff_monomial(x**k))) for k in range(2)]
        else:
            degree = min(8, 2 + difficulty // 3)
            f = [rng.randint(-top, top) for _ in range(degree)] + [rng.randint(1, top)]
            prompt = (
                f"Find the derivative of f(x) = {poly_string(_fractions(f))} with respect to x."
            )
            data = {"kind": "derivative", "coeffs": f}
            poly = sympy.Poly(sympy.diff(sum(c * x**k for k, c in enumerate(f)), x), x)
            coeffs = [Fraction(str(c)) for c in reversed(poly.all_coeffs())]
        return Instance(prompt, poly_string(coeffs), data)

    def _coeffs(self, problem: Problem) -> list[Fraction]:
        """The answer's coefficients (x^0 first), from the data by hand: power rule, or
        y = c/a − (b/a)·x."""
        d = problem.data
        if d["kind"] == "solve_y":
            a, b, c = int(d["a"]), int(d["b"]), int(d["c"])
            return [Fraction(c, a), Fraction(-b, a)]
        f = [int(v) for v in d["coeffs"]]
        return [Fraction(k * f[k]) for k in range(1, len(f))]

    def check(self, problem: Problem, answer: str) -> Verdict:
        try:
            expr = parse_expression(answer)
            ok = expressions_equal(expr, self._gold(problem))
        except FormError:
            return invalid("could not read an expression in x from the answer")
        return graded(0.0, ok, "correct" if ok else "not equivalent to the right expression")

    def _gold(self, problem: Problem) -> Any:
        import sympy

        x = sympy.Symbol("x")
        return sum(
            sympy.Rational(c.numerator, c.denominator) * x**k
            for k, c in enumerate(self._coeffs(problem))
        )

    def solve(self, problem: Problem) -> str:
        return poly_string(self._coeffs(problem))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        coeffs = self._coeffs(problem)
        k = rng.randrange(len(coeffs))
        coeffs[k] += rng.choice([-2, -1, 1, 2])
        return poly_string(coeffs, rng.choice(["latex", "python", "ascending"]))

    def equivalent_forms(self, problem: Problem) -> list[str]:
        coeffs = self._coeffs(problem)
        forms = [poly_string(coeffs, s) for s in ("latex", "braced", "python", "cdot", "ascending")]
        prefix = "y = " if problem.data["kind"] == "solve_y" else "f'(x) = "
        forms.append(prefix + forms[0])
        nums = [c for c in coeffs if c != 0]
        if all(c.denominator == 1 for c in nums):
            g = math.gcd(*(int(c) for c in nums))
            if g > 1:
                forms.append(f"{g}({poly_string([c / g for c in coeffs])})")
            forms.append(f"\\frac{{{poly_string([2 * c for c in coeffs])}}}{{2}}")
        else:
            den = math.lcm(*(c.denominator for c in nums))
            forms.append(f"\\frac{{{poly_string([c * den for c in coeffs])}}}{{{den}}}")
        return list(dict.fromkeys(forms))

    def size(self, problem: Problem) -> float:
        coeffs = self._coeffs(problem)
        return float(len(coeffs) + sum(len(str(abs(c))) for c in coeffs))
