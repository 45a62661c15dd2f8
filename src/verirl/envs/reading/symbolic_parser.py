"""Safe reading of model answers as sympy expressions, and equivalence checks.

Model text never reaches ``eval``/``sympify``. A small recursive-descent parser builds the
expression node by node from a whitelist: numbers, the problem's variables, ``+ - * / ^ **``,
parentheses, implicit multiplication (``2x``, ``x(x+1)``), the functions sin, cos, tan, exp,
log/ln, sqrt, abs and the constants pi and e. Light LaTeX (``\\frac``, ``\\sqrt``, ``\\cdot``,
``\\left(``, braces) is rewritten first. Every power is bounded *before* it is built — each
node carries an upper bound on its polynomial degree and on the digits of its exact numbers —
so ``9^9^9`` or ``((10^40)^100)^100`` is rejected at once instead of hanging. Input length and
nesting depth are capped too. The grammar and every bound are checked by a first pass that
calls no sympy (:mod:`~verirl.envs.reading.expression_values`): hostile text is refused in
microseconds per token, and sympy builds only what passed.

Equivalence is decided exactly (``together`` + ``expand``) for rational functions with rational
coefficients, and otherwise by complex floating-point evaluation at fixed points, with every
overflow caught; neither can hang on a parsed (bounded) expression.
"""

from __future__ import annotations

import cmath
import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from verirl.envs.reading.expression_values import (
    FUNCTIONS,
    SHAPES,
    SYMPY,
    ShapeValues,
    SympyValues,
)


class ParseError(ValueError):
    """The text is not an expression this parser accepts (→ wrong format)."""


class SizeError(ParseError):
    """The text is an expression, but one past the size :class:`Limits` (too long, too deep,
    too high a degree, too many digits, too large an exponent): it is refused before sympy
    builds anything that large."""


@dataclass(frozen=True)
class Limits:
    """Bounds on what an answer may contain (all checked before anything is computed)."""

    max_length: int = 1000
    max_degree: int = 60
    max_digits: int = 300
    max_exponent: int = 100
    max_nesting: int = 30
    # Terms a full expansion may have to form at one node (a product of sums multiplies their
    # term counts; ``(a_1 + ... + a_t)^k`` has C(t+k-1, k) multinomial terms). This is what
    # makes ``expand`` slow: ``((x+1)^6)^10`` has degree 60 but forms 8008 terms (~1 s).
    max_terms: int = 2000
    # Tokens in the text, and factors written side by side in one product (``2x(x+1)`` has
    # three). Generous by default; a guard in front of a parser whose work grows with them
    # (the ANTLR LaTeX parser predicts every juxtaposition with full-context lookahead) sets
    # them tight.
    max_tokens: int = 100_000
    max_juxtaposed: int = 100_000


@dataclass(frozen=True)
class _Node:
    expr: Any  # a sympy expression; in the shape pass a ``Fraction`` or None
    degree: int  # upper bound on the polynomial degree
    digits: int  # upper bound on the decimal digits of exact numbers
    terms: int = 1  # upper bound on the terms of its expansion (after collecting)


# ---- LaTeX rewriting ---------------------------------------------------------------------
def _group(t: str, i: int) -> tuple[str, int]:
    """The brace group (or single character) starting at ``t[i]``, and the index after it."""
    while i < len(t) and t[i] == " ":
        i += 1
    if i >= len(t):
        raise ParseError("\\frac/\\sqrt without an argument")
    if t[i] != "{":
        return t[i], i + 1
    depth = 0
    for j in range(i, len(t)):
        depth += {"{": 1, "}": -1}.get(t[j], 0)
        if depth == 0:
            return t[i + 1 : j], j + 1
    raise ParseError("unbalanced braces")


def latex_to_plain(text: str) -> str:
    """Rewrite the common LaTeX of math answers into plain infix text."""
    t = text
    if re.search(r"\\sqrt\s*\[", t):
        raise ParseError("only square roots are supported")
    for token in ("\\left", "\\right", "\\,", "\\;", "\\!", "\\:", "\\ ", "\\displaystyle", "$"):
        t = t.replace(token, " ")
    for token in ("\\cdot", "\\times", "·", "×"):
        t = t.replace(token, "*")
    t = t.replace("−", "-").replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    t = t.replace("\\lvert", "|").replace("\\rvert", "|").replace("\\vert", "|")
    t = re.sub(r"\|([^|]*)\|", r" abs(\1) ", t)  # |x| -> abs(x), not nested
    for _ in range(200):
        pos = t.find("\\frac")
        if pos < 0:
            break
        num, i = _group(t, pos + 5)
        den, j = _group(t, i)
        t = f"{t[:pos]}(({num})/({den})){t[j:]}"
    t = re.sub(r"\\(sin|cos|tan|exp|ln|log|sqrt|pi)(?![A-Za-z])", r" \1 ", t)
    if "\\" in t:
        raise ParseError("unsupported LaTeX command")
    return t.replace("{", "(").replace("}", ")").replace("[", "(").replace("]", ")")


# ---- tokens ------------------------------------------------------------------------------
_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*|\.\d+)|([A-Za-z]+)|(\*\*|[-+*/^()]))")


def _tokens(text: str, variables: Sequence[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos, text = 0, text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ParseError(f"unexpected character {text[pos]!r}")
        pos = m.end()
        number, word, op = m.groups()
        if number is not None:
            out.append(("num", number))
        elif op is not None:
            out.append(("op", "^" if op == "**" else op))
        else:
            out.extend(_word_tokens(word, variables))
    return out


def _word_tokens(word: str, variables: Sequence[str]) -> list[tuple[str, str]]:
    if word in variables:
        return [("var", word)]
    if word in FUNCTIONS:
        return [("func", word)]
    if word in ("pi", "e", "E"):
        return [("const", word)]
    for name in sorted(FUNCTIONS, key=len, reverse=True):  # "sinx" -> sin x
        if word.startswith(name) and len(word) > len(name):
            return [("func", name), *_word_tokens(word[len(name) :], variables)]
    if all(ch in variables or ch == "e" for ch in word):  # "xy" -> x*y, "ex" -> e*x
        return [("var", ch) if ch in variables else ("const", ch) for ch in word]
    raise ParseError(f"unknown name {word[:20]!r}")


# ---- recursive-descent parser ------------------------------------------------------------
class _Parser:
    """Recursive descent over ``tokens``, checking every size bound *before* a node is built;
    ``values`` says what a node holds (see :mod:`~verirl.envs.reading.expression_values`).

    Where the shape pass meets a value it cannot know it takes the lenient side (bounds no
    larger than the sympy pass's, no refusal) and notes it: ``unknown_exponents`` (a power's
    bounds) or ``unknown_function_powers`` (``sin^{...}``, which may be refused)."""

    def __init__(
        self,
        tokens: list[tuple[str, str]],
        variables: Sequence[str],
        limits: Limits,
        values: SympyValues | ShapeValues,
    ):
        self.tokens, self.pos, self.limits, self.values = tokens, 0, limits, values
        self.symbols = {v: values.symbol(v) for v in variables}
        self.n_vars = max(1, len(variables))
        self.unknown_exponents = False
        self.unknown_function_powers = False

    def parse(self) -> _Node:
        node = self.expression(0)
        if self.pos != len(self.tokens):
            raise ParseError("unexpected text after the expression")
        return node

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise ParseError("the expression ends too early")
        self.pos += 1
        return tok

    def check(self, degree: int, digits: int, work: int = 1) -> int:
        """Refuse a node whose bounds exceed the limits (called *before* building it);
        ``work`` is how many terms expanding it forms. Returns its term bound after
        collecting (at most the number of monomials of its degree)."""
        if work > self.limits.max_terms:
            raise SizeError(
                f"expanding the expression would form more than {self.limits.max_terms} terms"
            )
        if degree > self.limits.max_degree:
            raise SizeError(f"the expression's degree may exceed {self.limits.max_degree}")
        if digits > self.limits.max_digits:
            raise SizeError(f"the expression's numbers may exceed {self.limits.max_digits} digits")
        return min(work, math.comb(degree + self.n_vars, self.n_vars))

    def expression(self, depth: int) -> _Node:
        node = self.term(depth)
        while self.peek() in (("op", "+"), ("op", "-")):
            sign = self.take()[1]
            rhs = self.term(depth)
            degree, digits = max(node.degree, rhs.degree), max(node.digits, rhs.digits) + 1
            terms = self.check(degree, digits, node.terms + rhs.terms)
            combine = self.values.add if sign == "+" else self.values.sub
            node = _Node(combine(node.expr, rhs.expr), degree, digits, terms)
        return node

    def term(self, depth: int) -> _Node:
        node = self.unary(depth)
        side_by_side = 1  # factors multiplied without an operator so far
        while True:
            tok = self.peek()
            if tok in (("op", "*"), ("op", "/")):
                self.take()
                rhs = self.unary(depth)
                divide, side_by_side = tok == ("op", "/"), 1
            elif tok is not None and (
                tok[0] in ("num", "var", "func", "const") or tok == ("op", "(")
            ):
                if tok[0] == "num" and self.tokens[self.pos - 1][0] == "num":
                    raise ParseError("two numbers in a row")
                side_by_side += 1
                if side_by_side > self.limits.max_juxtaposed:
                    raise SizeError(f"more than {self.limits.max_juxtaposed} factors side by side")
                rhs, divide = self.power(depth), False  # implicit multiplication
            else:
                return node
            degree, digits = node.degree + rhs.degree, node.digits + rhs.digits
            terms = self.check(degree, digits, node.terms * rhs.terms)
            combine = self.values.div if divide else self.values.mul
            node = _Node(combine(node.expr, rhs.expr), degree, digits, terms)

    def unary(self, depth: int) -> _Node:
        if self.peek() in (("op", "+"), ("op", "-")):
            sign = self.take()[1]
            inner = self.unary(depth + 1)
            if sign == "+":
                return inner
            return _Node(self.values.neg(inner.expr), inner.degree, inner.digits, inner.terms)
        return self.power(depth)

    def power(self, depth: int) -> _Node:
        base = self.atom(depth)
        if self.peek() != ("op", "^"):
            return base
        self.take()
        return self.raised(base, self.unary(depth + 1))

    def raised(self, base: _Node, exponent: _Node) -> _Node:
        """``base ^ exponent``, refused before it is built when it would be too large."""
        rational = self.values.rational(exponent.expr)
        if rational is None and not self.values.exact:
            # The shape pass cannot tell a rational exponent sympy would find (\sqrt{4},
            # x - x) from a transcendental one: it refuses nothing and keeps bounds no larger
            # than either reading's (degree base*p or 1, digits base*p or 1, terms >= 1).
            self.unknown_exponents = True
            return _Node(None, min(1, base.degree), min(1, base.digits), 1)
        if rational is not None:
            p, q = abs(rational[0]), rational[1]
            if p > self.limits.max_exponent or q > self.limits.max_exponent:
                raise SizeError(f"an exponent is larger than {self.limits.max_exponent}")
            degree, digits = base.degree * max(p, 1), base.digits * max(p, 1)
            work = math.comb(base.terms + p - 1, p) if q == 1 and p > 0 else 1
            terms = self.check(degree, digits, work)  # before ``**``: 99^99^99 is eager
            expr = self.values.power(base.expr, exponent.expr)
            return _Node(expr, degree, digits, terms if q == 1 else 1)
        if exponent.degree > self.limits.max_exponent:
            raise SizeError(f"an exponent is larger than {self.limits.max_exponent}")
        if exponent.digits > self.limits.max_digits or base.digits > self.limits.max_digits:
            raise SizeError("the expression is too large")
        # e^(2x), 2^x: a transcendental atom
        return _Node(self.values.power(base.expr, exponent.expr), 1, 1)

    def atom(self, depth: int) -> _Node:
        if depth > self.limits.max_nesting:
            raise SizeError(f"nested deeper than {self.limits.max_nesting} levels")
        kind, text = self.take()
        if kind == "num":
            digits = len(text.replace(".", ""))
            if digits > self.limits.max_digits:
                raise SizeError(f"a number is longer than {self.limits.max_digits} digits")
            return _Node(self.values.number(text), 0, digits)
        if kind == "var":
            return _Node(self.symbols[text], 1, 1)
        if kind == "const":
            return _Node(self.values.const(text), 0, 1)
        if (kind, text) == ("op", "("):
            node = self.expression(depth + 1)
            if self.take() != ("op", ")"):
                raise ParseError("missing ')'")
            return node
        if kind == "func":
            power = None
            if self.peek() == ("op", "^"):  # sin^2(x) = sin(x)^2; "sin^-1" is refused
                self.take()
                power = self.atom(depth + 1)
                positive = self.values.positive_integer(power.expr)
                if positive is None:
                    self.unknown_function_powers = True  # leave it to the sympy pass
                elif not positive:
                    raise ParseError("sin^-1 style inverse functions are not supported")
            if self.peek() == ("op", "("):
                self.take()
                arg = self.expression(depth + 1)
                if self.take() != ("op", ")"):
                    raise ParseError("missing ')'")
            else:
                arg = self.power(depth + 1)  # "sin x"
            node = _Node(self.values.func(text, arg.expr), 1, max(1, arg.digits))
            return node if power is None else self.raised(node, power)
        raise ParseError(f"unexpected {text!r}")


def _parse_node(text: str, variables: Sequence[str], limits: Limits) -> _Node:
    if limits is TRUSTED and isinstance(text, str):
        return _trusted_node(text, tuple(variables))
    return _read(text, variables, limits)


@functools.lru_cache(maxsize=512)
def _trusted_node(text: str, variables: tuple[str, ...]) -> _Node:
    """The parse of text we generated (a reference answer or a problem's expression), kept:
    a verifier reads the same reference for :func:`limits_for` and for the comparison, and
    parsing is pure (the node and its sympy expression are immutable)."""
    return _read(text, variables, TRUSTED)


def _read(text: str, variables: Sequence[str], limits: Limits, build: bool = True) -> _Node:
    """Read ``text`` in two passes over its tokens: the shape pass (no sympy) checks the
    grammar and every bound, and the sympy pass builds the expression only for text the shape
    pass accepted. ``build=False`` returns the shape pass's node (bounds, no expression) when
    it knew every value.

    The two passes decide alike: on exact values they take the same steps, and where the
    shape pass did not know a value (see :class:`_Parser`) its bounds are no larger than the
    sympy pass's. So its refusal stands when it knew every value, and a :class:`SizeError`
    stands after unknown exponents only (the sympy pass refuses a size at that point or
    earlier); any other refusal, or text it accepted, is read by the sympy pass, which
    decides as the single pass always did."""
    if not isinstance(text, str):
        raise ParseError("the answer is not text")
    if len(text) > limits.max_length:
        raise SizeError(f"the answer is longer than {limits.max_length} characters")
    tokens = _tokens(latex_to_plain(text), variables)
    if not tokens:
        raise ParseError("empty expression")
    if len(tokens) > limits.max_tokens:
        raise SizeError(f"the answer has more than {limits.max_tokens} tokens")
    shape = _Parser(tokens, variables, limits, SHAPES)
    try:
        node = shape.parse()
    except SizeError:
        if not shape.unknown_function_powers:
            raise
    except ParseError:
        if not (shape.unknown_exponents or shape.unknown_function_powers):
            raise
    else:
        if not build and not (shape.unknown_exponents or shape.unknown_function_powers):
            return node
    return _Parser(tokens, variables, limits, SYMPY).parse()


def parse_expression(
    text: str, variables: Sequence[str] = ("x",), limits: Limits | None = None
) -> sympy.Expr:
    """Parse ``text`` (plain or light-LaTeX math) into a sympy expression, safely.

    ``variables`` are the single names allowed as symbols (others are rejected). Raises
    :class:`ParseError` for anything outside the grammar or the size ``limits`` — decided
    before sympy builds anything, for all but a few exponents only sympy can evaluate.
    """
    expr: sympy.Expr = _parse_node(text, variables, limits or Limits()).expr
    return expr


def check_size(
    text: str, variables: Sequence[str] = ("x",), limits: Limits | None = None
) -> tuple[int, int]:
    """Bounds ``(degree, digits)`` of ``text`` read by this parser, checked against
    ``limits`` before any node is built: raises :class:`SizeError` for an expression past
    them (``((((99^{99})^{99})^{99})^{99})`` fails at the second power, in microseconds) and
    :class:`ParseError` for text outside the grammar. Most text is judged by the shape pass
    alone, without sympy.

    Other parsers (e.g. the ANTLR LaTeX parser, which evaluates powers of numbers eagerly) run
    it as a guard first: an expression it bounds has integers of at most ``max_digits``
    digits and a polynomial degree of at most ``max_degree``, so building and expanding it
    stays cheap."""
    limits = limits or Limits()
    if limits is TRUSTED:
        node = _parse_node(text, variables, limits)
    else:
        node = _read(text, variables, limits, build=False)
    return node.degree, node.digits


TRUSTED = Limits(
    max_length=200_000,
    max_degree=100_000,
    max_digits=100_000,
    max_exponent=10_000,
    max_tokens=200_000,
    max_juxtaposed=200_000,
)


def limits_for(reference: str, variables: Sequence[str] = ("x",)) -> Limits:
    """Answer limits scaled to a reference answer (text we generated): twice its degree and
    digit bounds, with floors that leave room for any reasonable equivalent form."""
    node = _parse_node(reference, variables, TRUSTED)
    return Limits(
        max_length=max(2000, 4 * len(reference)),
        max_degree=max(24, 2 * node.degree),
        max_digits=max(200, 2 * node.digits),
        max_exponent=max(100, 2 * node.degree),
    )


def parse_number(text: str, limits: Limits | None = None) -> sympy.Expr:
    """A finite constant (``3/2``, ``-\\frac{7}{3}``, ``0.25``, ``2\\sqrt{2}``); ``x = 3``
    style prefixes are dropped."""
    t = text.split("=")[-1]
    value = parse_expression(t, (), limits)
    if not value.is_number or value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        raise ParseError("not a finite number")
    return value


def rhs_of_equation(text: str) -> str:
    """``"f'(x) = 2x"`` → ``"2x"``: the part after the last ``=``."""
    return text.split("=")[-1]


# ---- equivalence -------------------------------------------------------------------------
# Sample points over the whole real line: negative, fractional and larger magnitudes, so
# that |x|, sqrt(x^2) or log(x^2)/2 are told apart from x or log(x) wherever the reference
# is defined (a check at positive points only accepted -4|x| for -4x).
_POINTS = (0.31, -0.67, 1.13, -1.42, 0.89, -2.37, 2.71, -0.23, 3.6, -3.1, 1.97, -1.19)


def _evaluate(expr: sympy.Expr, env: dict[sympy.Symbol, complex]) -> complex:
    """Complex floating-point value of a parsed expression (raises on anything unknown)."""
    if expr.is_Symbol:
        return env[expr]
    if expr.is_Rational:
        return complex(int(expr.p) / int(expr.q))
    if expr.is_Float:
        return complex(float(expr))
    if expr is sympy.pi:
        return complex(math.pi)
    if expr is sympy.E:
        return complex(math.e)
    if expr is sympy.I:
        return 1j
    args = [_evaluate(a, env) for a in expr.args]
    if expr.is_Add:
        return sum(args, 0j)
    if expr.is_Mul:
        out = 1 + 0j
        for a in args:
            out *= a
        return out
    if expr.is_Pow:
        return args[0] ** args[1]
    funcs = {
        sympy.sin: cmath.sin,
        sympy.cos: cmath.cos,
        sympy.tan: cmath.tan,
        sympy.exp: cmath.exp,
        sympy.log: cmath.log,
        sympy.Abs: lambda z: complex(abs(z)),
    }
    if expr.func in funcs:
        return funcs[expr.func](*args)
    raise ValueError(f"cannot evaluate {expr.func}")


def to_complex(expr: sympy.Expr) -> complex | None:
    """The value of a constant expression as a complex float, or ``None`` (overflow, ...)."""
    try:
        value = _evaluate(expr, {})
    except (ArithmeticError, ValueError, KeyError, TypeError):
        return None
    return value if cmath.isfinite(value) else None


def numerically_equal(a: sympy.Expr, b: sympy.Expr, variables: Sequence[str]) -> bool:
    """``a`` equals the reference ``b`` at every sample point of ``b``'s real domain (points
    where ``b`` is finite and real), to a relative 1e-9, with at least three such points.

    The points cover negative and non-integer values; a point where ``b`` is defined but
    ``a`` is not (or is not real) is a disagreement, so an answer defined on a smaller
    domain than the reference is not equivalent.
    """
    symbols = [sympy.Symbol(v) for v in variables]
    agreed = 0
    for k, point in enumerate(_POINTS):
        env = {s: complex(point + 0.37 * i * (-1) ** (i + k)) for i, s in enumerate(symbols)}
        try:
            vb = _evaluate(b, env)
        except (ArithmeticError, ValueError, KeyError, TypeError):
            continue
        if not cmath.isfinite(vb) or abs(vb.imag) > 1e-9 * max(1.0, abs(vb)):
            continue  # outside the reference's real domain
        try:
            va = _evaluate(a, env)
        except (ArithmeticError, ValueError, KeyError, TypeError):
            return False
        if not cmath.isfinite(va) or abs(va - vb) > 1e-9 * max(1.0, abs(va), abs(vb)):
            return False
        agreed += 1
    return agreed >= 3


def equivalent(a: sympy.Expr, b: sympy.Expr, variables: Sequence[str] = ("x",)) -> bool:
    """Whether two parsed expressions are the same function of ``variables``."""
    symbols = [sympy.Symbol(v) for v in variables]
    diff = a - b
    if diff.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return False
    if diff == 0:
        return True
    if diff.free_symbols - set(symbols):
        return False
    if diff.is_rational_function(*symbols):
        numerator, _ = sympy.fraction(sympy.together(diff))
        if sympy.expand(numerator) == 0:
            return True
        if _rational_coefficients(diff):
            return False  # exact arithmetic over Q(x) is decisive
    return numerically_equal(a, b, variables)


def _rational_coefficients(expr: sympy.Expr) -> bool:
    """No irrational constants: no functions, no pi/e/i, only integer powers."""
    return (
        not expr.atoms(sympy.Function)
        and not expr.has(sympy.pi, sympy.E, sympy.I)
        and all(p.exp.is_Integer for p in expr.atoms(sympy.Pow))
    )


def plain(expr: sympy.Expr) -> str:
    """A sympy expression as plain text with ``^`` for powers (for prompts and answers)."""
    fast = _integer_polynomial_text(expr)
    if fast is not None:
        return fast
    return sympy.sstr(expr).replace("**", "^")


def _integer_polynomial_text(expr: sympy.Expr) -> str | None:
    """``sympy.sstr(expr)`` with ``^`` for a sum of integer multiples of powers of one symbol
    (``3*x^2 - x + 5``), written without sympy's printer; ``None`` for anything else.

    The printer orders an ``Add``'s terms by ``as_ordered_terms`` (which evaluates each term
    numerically to sort it) and was most of the generation time of the polynomial
    environments. For one symbol and integer coefficients its order is by descending degree,
    the constant last, and each term prints as ``c*x**k`` with ``c = ±1`` dropped; the sign of
    every term after the first becomes the ``+``/``-`` between terms, except that a positive
    constant plus one negative term prints constant first (``1 - x``). Checked equal to
    ``sympy.sstr`` on random polynomials in ``tests/envs/test_symbolic.py``."""
    if not isinstance(expr, sympy.Add):
        return None
    symbol: sympy.Symbol | None = None
    terms: list[tuple[int, int]] = []
    for term in expr.args:
        coeff, rest = term.as_coeff_Mul()
        if not coeff.is_Integer:
            return None
        if rest is sympy.S.One:
            degree = 0
        elif rest.is_Symbol:
            degree, base = 1, rest
        elif rest.is_Pow and rest.base.is_Symbol and rest.exp.is_Integer and rest.exp > 1:
            degree, base = int(rest.exp), rest.base
        else:
            return None
        if degree:
            if symbol is None:
                symbol = base
            elif base != symbol:
                return None
        terms.append((degree, int(coeff)))
    if symbol is None or len({d for d, _ in terms}) != len(terms):
        return None
    name = symbol.name
    ordered = sorted(terms, reverse=True)
    if len(ordered) == 2 and ordered[1][0] == 0 and ordered[1][1] > 0 and ordered[0][1] < 0:
        ordered.reverse()  # as_ordered_terms' special case: ``1 - x``, not ``-x + 1``
    out: list[str] = []
    for degree, coeff in ordered:
        if degree == 0:
            text = str(coeff)
        else:
            power = name if degree == 1 else f"{name}^{degree}"
            text = power if coeff == 1 else f"-{power}" if coeff == -1 else f"{coeff}*{power}"
        if not out:
            out.append(text)
        elif text.startswith("-"):
            out.append(f"- {text[1:]}")
        else:
            out.append(f"+ {text}")
    return " ".join(out)
