"""Free-form answer environments: correct answers with many surface forms.

These are the tasks CER (Xiao et al. 2026) targets: the reference is one string, but ``4``,
``four``, ``4.0`` and ``400\\%`` are all right. Each environment has a rule-based verifier that
compares *values* (via :mod:`verirl.envs.reading.surface_forms`), so it can serve as the evaluation
judge while training with exact match, VeriFree or CER, and can measure how those rewards
agree with it. Besides the environment protocol each one offers

- ``equivalent_forms(problem)``: correct answers in different spellings (canonical first), all
  accepted by the verifier — used by the tests and by ``bench/cer_auroc.py``;
- ``wrong_forms(problem, rng)``: plausible wrong answers, spelled like the correct ones.

Family ``freeform``: ``unit_conversion``, ``fraction_forms``, ``number_words`` (numbers, here),
``date_offset``, ``unordered_set`` (:mod:`verirl.envs.freeform.dates_sets`) and
``equivalent_expression`` (:mod:`verirl.envs.freeform.expressions`).
Rewards follow RLVE: −0.5 for an unreadable answer, partial credit in [0, 1) for a wrong
value, 1 for a correct one.
"""

from __future__ import annotations

import math
import random
from abc import abstractmethod
from fractions import Fraction
from typing import Any

from verirl.envs.base import ENVIRONMENTS, Environment, Instance, count_reward, graded, invalid
from verirl.envs.kit.fractions import fraction_text
from verirl.envs.reading.surface_forms import (
    FormError,
    clean,
    decimal_string,
    number_to_words,
    parse_number,
    parse_quantity,
    render_number,
)
from verirl.types import Problem, Verdict


class FreeFormEnvironment(Environment):
    """Base of the free-form family (see the module docstring)."""

    tags = ("freeform",)

    @abstractmethod
    def equivalent_forms(self, problem: Problem) -> list[str]:
        """Distinct correct answers in different spellings, canonical (``solve``) first."""

    def surface_forms(self, problem: Problem) -> list[str]:
        return self.equivalent_forms(problem)

    def near_misses(self, problem: Problem) -> list[str]:
        rng = random.Random(f"verirl/{self.name}/near-miss/{problem.difficulty}/{problem.seed}")
        return [*super().near_misses(problem), *self.wrong_forms(problem, rng)]

    def wrong_forms(self, problem: Problem, rng: random.Random, n: int = 3) -> list[str]:
        """``n`` distinct wrong answers (``corrupt`` in varied spellings by default)."""
        out: list[str] = []
        for _ in range(20 * n):
            w = self.corrupt(problem, self.solve(problem), rng)
            if w not in out:
                out.append(w)
            if len(out) == n:
                break
        return out


def _number_verdict(value: Fraction, gold: Fraction, tolerance: Fraction = Fraction(0)) -> Verdict:
    ok = abs(value - gold) <= tolerance
    score = count_reward(float(value), float(gold), beta=10.0)
    return graded(score, ok, "correct" if ok else "the value is not right")


# ---- units and conversions -------------------------------------------------------------------
# unit key → (factor to the dimension's base unit, spellings; the first is the display symbol,
# the second the plural name used in prompts)
_F = Fraction
UNITS: dict[str, dict[str, tuple[Fraction, tuple[str, ...]]]] = {
    "length": {
        "mm": (_F(1, 1000), ("mm", "millimeters", "millimeter", "millimetres", "millimetre")),
        "cm": (_F(1, 100), ("cm", "centimeters", "centimeter", "centimetres", "centimetre")),
        "m": (_F(1), ("m", "meters", "meter", "metres", "metre")),
        "km": (_F(1000), ("km", "kilometers", "kilometer", "kilometres", "kilometre")),
        "in": (_F(127, 5000), ("in", "inches", "inch")),
        "ft": (_F(381, 1250), ("ft", "feet", "foot")),
        "mi": (_F(201168, 125), ("mi", "miles", "mile")),
    },
    "mass": {
        "mg": (_F(1, 1000), ("mg", "milligrams", "milligram")),
        "g": (_F(1), ("g", "grams", "gram")),
        "kg": (_F(1000), ("kg", "kilograms", "kilogram", "kilos")),
        "lb": (_F(45359237, 100000), ("lb", "pounds", "pound", "lbs")),
        "oz": (_F(45359237, 1600000), ("oz", "ounces", "ounce")),
    },
    "time": {
        "s": (_F(1), ("s", "seconds", "second", "sec", "secs")),
        "min": (_F(60), ("min", "minutes", "minute", "mins")),
        "h": (_F(3600), ("h", "hours", "hour", "hr", "hrs")),
        "day": (_F(86400), ("d", "days", "day")),
    },
    "volume": {
        "mL": (_F(1), ("mL", "milliliters", "milliliter", "millilitres", "millilitre")),
        "cL": (_F(10), ("cL", "centiliters", "centiliter", "centilitres", "centilitre")),
        "L": (_F(1000), ("L", "liters", "liter", "litres", "litre")),
    },
    "speed": {
        "m/s": (_F(1), ("m/s", "meters per second", "metres per second")),
        "km/h": (_F(5, 18), ("km/h", "kilometers per hour", "kilometres per hour", "kph")),
        "mph": (_F(1397, 3125), ("mph", "miles per hour", "mi/h")),
    },
    "temperature": {  # affine: handled by _to_base / _from_base
        "C": (_F(1), ("°C", "degrees Celsius", "Celsius", "C")),
        "F": (_F(1), ("°F", "degrees Fahrenheit", "Fahrenheit", "F")),
        "K": (_F(1), ("K", "kelvins", "kelvin")),
    },
}
# which (dimension, from, to) conversions appear from which difficulty on
_CONVERSIONS = [
    (0, "length", ("m", "km", "cm", "mm")),
    (0, "mass", ("g", "kg", "mg")),
    (2, "time", ("s", "min", "h", "day")),
    (3, "volume", ("mL", "cL", "L")),
    (4, "length", ("in", "cm", "ft", "m", "mi", "km")),
    (4, "mass", ("lb", "kg", "oz", "g")),
    (5, "speed", ("m/s", "km/h", "mph")),
    (6, "temperature", ("C", "F", "K")),
]


def _to_base(dim: str, unit: str, x: Fraction) -> Fraction:
    if dim == "temperature":  # base: kelvin
        return {"C": x + _F(27315, 100), "F": (x - 32) * _F(5, 9) + _F(27315, 100), "K": x}[unit]
    return x * UNITS[dim][unit][0]


def _from_base(dim: str, unit: str, x: Fraction) -> Fraction:
    if dim == "temperature":
        c = x - _F(27315, 100)
        return {"C": c, "F": c * _F(9, 5) + 32, "K": x}[unit]
    return x / UNITS[dim][unit][0]


def _degrees(text: str) -> str:
    for mark in ("^{\\circ}", "^\\circ", "\\circ", "\\degree", "°"):
        text = text.replace(mark, "°")
    return text.replace("° ", "°")


@ENVIRONMENTS.register("unit_conversion")
class UnitConversion(FreeFormEnvironment):
    """Convert a quantity to another unit; any spelling of the number, with or without the
    asked unit (``2500``, ``2,500 meters``, ``2.5 \\times 10^{3} m``, ``two thousand five
    hundred m``). An answer in another unit is refused (the task asks for one unit).
    Non-terminating (or > 4-decimal) results are asked rounded to 2 decimals; any answer
    within that rounding is accepted."""

    size_measure = "digits of the value plus the unit family's rank"
    difficulty_scales = (
        "unit families unlock with difficulty (metric → time → volume → imperial → speed → "
        "temperature); value digits 1 + d // 3, decimals from d = 3"
    )

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        options = [(dim, units) for level, dim, units in _CONVERSIONS if level <= difficulty]
        dim, units = rng.choice(options)
        src, dst = rng.sample(units, 2)
        digits = 1 + difficulty // 3
        value = _F(rng.randint(1, 10**digits - 1))
        if difficulty >= 3 and rng.random() < 0.5:
            value /= 10 ** rng.randint(1, min(3, difficulty // 3))
        exact = _from_base(dim, dst, _to_base(dim, src, value))
        places = None if _places(exact) is not None else 2
        while places is not None and places < 10 and abs(exact) * 10**places < 10:
            places += 1  # keep two significant digits: never ask for a value rounded to 0
        name_src, name_dst = UNITS[dim][src][1][1], UNITS[dim][dst][1][1]
        if value == 1:
            name_src = _singular(name_src)
        prompt = f"Convert {decimal_string(value)} {name_src} to {name_dst}."
        if places is not None:
            prompt += f" Round to {places} decimal places."
        data: dict[str, Any] = {
            "dimension": dim,
            "value": decimal_string(value),
            "from": src,
            "to": dst,
        }
        data["places"] = places
        return Instance(prompt, _render_rounded(exact, places), data)

    def _exact(self, problem: Problem) -> Fraction:
        d = problem.data
        base = _to_base(d["dimension"], d["from"], Fraction(d["value"]))
        return _from_base(d["dimension"], d["to"], base)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        synonyms = {s: key for key, (_, names) in UNITS[d["dimension"]].items() for s in names}
        try:
            value, unit = parse_quantity(_degrees(clean(answer)), synonyms)
        except FormError:
            return invalid("could not read a number (with an optional unit) from the answer")
        if unit is not None and unit != d["to"]:
            return graded(0.0, False, "give the value in the unit the question asks for")
        places = d.get("places")
        if places is None:
            return _number_verdict(value, self._exact(problem))
        # Rounded to ``places`` or finer: the answer must be the exact value correctly
        # rounded at its own precision (0.4536 for 0.45359... is right; 0.004 for 0.000004
        # is not, although it is within the asked rounding's ±0.005).
        own = next((k for k in range(13) if (value * 10**k).denominator == 1), places)
        tol = Fraction(1, 2 * 10 ** max(places, own))
        return _number_verdict(value, self._exact(problem), tol)

    def solve(self, problem: Problem) -> str:
        return _render_rounded(self._exact(problem), problem.data.get("places"))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        d = problem.data
        exact = self._exact(problem)
        factor = UNITS[d["dimension"]][d["from"]][0] / UNITS[d["dimension"]][d["to"]][0]
        choices = [exact * 10, exact / 10, exact + 1, exact - 1]
        if d["dimension"] != "temperature" and factor not in (0, 1):
            choices.append(Fraction(d["value"]) / factor)  # the conversion inverted
        wrong = rng.choice([c for c in choices if abs(c - exact) > Fraction(1, 100)])
        return _render_rounded(wrong, 2 if _places(wrong) is None else None)

    def equivalent_forms(self, problem: Problem) -> list[str]:
        d = problem.data
        gold = self.solve(problem)
        value = Fraction(gold)
        symbol, plural = UNITS[d["dimension"]][d["to"]][1][:2]
        styles = ["plain", "thousands", "trailing_zero", "sci", "words"]
        numbers = [s for s in (render_number(value, st) for st in styles) if s is not None]
        forms = [gold, f"{gold} {symbol}", f"{gold} {plural}", f"{gold}\\,\\text{{{symbol}}}"]
        forms += [f"{n} {plural}" for n in numbers[1:]]
        return list(dict.fromkeys(forms))

    def near_misses(self, problem: Problem) -> list[str]:
        """Plus, when the prompt asks for rounding, a value with more decimals (not rounded)
        and one rounded the wrong way."""
        out = super().near_misses(problem)
        places = problem.data.get("places")
        if places is not None:
            exact = self._exact(problem)
            finer = round(exact, places) + Fraction(1, 10 ** (places + 1))
            if abs(finer - exact) > Fraction(1, 2 * 10 ** (places + 1)):  # wrong extra digit
                out.append(decimal_string(finer) or str(finer))
            out.append(_render_rounded(round(exact, places) + Fraction(1, 10**places), places))
        return out

    def size(self, problem: Problem) -> float:
        d = problem.data
        return float(len(d["value"]) + [c[1] for c in _CONVERSIONS].index(d["dimension"]))


def _singular(plural: str) -> str:
    """``"kilometers per hour"`` → ``"kilometer per hour"`` (prompts say "1 kilometer")."""
    first, _, rest = plural.partition(" ")
    first = {"feet": "foot", "inches": "inch"}.get(first, first.removesuffix("s"))
    return f"{first} {rest}".strip()


def _places(x: Fraction) -> int | None:
    """Decimal places of ``x`` if it terminates within 4, else ``None``."""
    s = decimal_string(x, max_places=4)
    if s is None:
        return None
    return len(s.partition(".")[2])


def _render_rounded(x: Fraction, places: int | None) -> str:
    return decimal_string(x if places is None else round(x, places)) or str(x)


# ---- fractions, decimals, percentages -------------------------------------------------------
@ENVIRONMENTS.register("fraction_forms")
class FractionForms(FreeFormEnvironment):
    """A rational result (fraction of, sum/difference of fractions, percent of) accepted as a
    fraction (reduced or not, ``a/b`` or ``\\frac{a}{b}``), a decimal, a percentage, a mixed
    number, words (``five eighths``) or a repeating decimal; a non-terminating value also as a
    decimal (or percentage) with at least 3 decimal places of the value, rounded or truncated
    (1/3: ``0.333``, ``0.3333``, ``33.33%``; not ``0.33`` or ``0.334``)."""

    size_measure = "digits of the terms"
    difficulty_scales = "denominators up to 4 + 2·d (at most 999); three question types"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = min(999, 4 + 2 * difficulty)
        kind = rng.choice(["fraction_of", "sum", "percent_of"])
        if kind == "fraction_of":
            whole = rng.randint(2, top * 3)
            part = rng.randint(1, whole - 1)
            prompt = f"What fraction of {whole} is {part}? Give the value as a number."
            data = {"kind": kind, "terms": [part, whole]}
        elif kind == "sum":
            p, q = rng.randint(1, top), rng.randint(2, top)
            r, s = rng.randint(1, top), rng.randint(2, top)
            op = rng.choice(["+", "-"]) if difficulty >= 2 else "+"
            prompt = f"Compute {p}/{q} {op} {r}/{s}. Give the value as a number."
            data = {"kind": kind, "terms": [p, q, r, s], "op": op}
        else:
            easy = [5, 10, 12.5, 15, 20, 25, 40, 50, 75]
            pct = rng.choice(easy) if difficulty < 4 else rng.randint(1, 199)
            base = rng.randint(1, 10 * top)
            prompt = f"What is {pct}% of {base}?"
            data = {"kind": kind, "terms": [str(pct), base]}
        value = self._value(data)
        return Instance(prompt, fraction_text(value), data)

    @staticmethod
    def _value(data: dict) -> Fraction:
        t = data["terms"]
        if data["kind"] == "fraction_of":
            return Fraction(int(t[0]), int(t[1]))
        if data["kind"] == "sum":
            left, right = Fraction(int(t[0]), int(t[1])), Fraction(int(t[2]), int(t[3]))
            return left + right if data["op"] == "+" else left - right
        return Fraction(t[0]) * int(t[1]) / 100

    def check(self, problem: Problem, answer: str) -> Verdict:
        try:
            value = parse_number(answer)
        except FormError:
            return invalid("could not read a number from the answer")
        gold = self._value(dict(problem.data))
        if value != gold and decimal_string(gold) is None:
            step = _written_precision(answer)
            if step is not None and step <= Fraction(1, 1000):
                rounded = round(gold / step) * step  # no ties: gold does not terminate
                truncated = Fraction(math.trunc(gold / step)) * step
                if value in (rounded, truncated):
                    return _number_verdict(value, value)
        return _number_verdict(value, gold)

    def solve(self, problem: Problem) -> str:
        d = problem.data
        t = d["terms"]
        if d["kind"] == "fraction_of":
            g = math.gcd(int(t[0]), int(t[1]))
            return fraction_text(Fraction(int(t[0]) // g, int(t[1]) // g))
        if d["kind"] == "sum":
            p, q, r, s = (int(v) for v in t)
            num = p * s + r * q if d["op"] == "+" else p * s - r * q
            return fraction_text(Fraction(num, q * s))
        return fraction_text(Fraction(t[0]) * Fraction(int(t[1]), 100))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        gold = self._value(dict(problem.data))
        inverse = 1 / gold if gold else gold + 1
        bumped = Fraction(gold.numerator + 1, gold.denominator)
        wrong = rng.choice(
            [gold + Fraction(1, max(2, gold.denominator)), gold * 2, inverse, gold - 1, bumped]
        )
        if wrong == gold:
            wrong = gold + 1
        style = rng.choice(["fraction", "plain", "percent" if abs(wrong) <= 1 else "latex"])
        return render_number(wrong, style) or fraction_text(wrong)

    def equivalent_forms(self, problem: Problem) -> list[str]:
        gold = self._value(dict(problem.data))
        styles = [
            "fraction",
            "latex",
            "dfrac",
            "unreduced",
            "plain",
            "percent",
            "mixed",
            "fraction_words",
            "repeating",
            "rounded4",
            "trailing_zero",
            "words",
        ]
        if abs(gold) > 1:  # 4128% for 41.28 is equal but nobody writes it
            styles.remove("percent")
        forms = [self.solve(problem)] + [render_number(gold, s) for s in styles]
        return list(dict.fromkeys(f for f in forms if f is not None))

    def size(self, problem: Problem) -> float:
        return float(sum(len(str(t)) for t in problem.data["terms"]))


def _written_precision(answer: str) -> Fraction | None:
    """The last written decimal place of a plain decimal (or percent) answer: ``0.333`` →
    1/1000, ``33.33%`` → 1/10000; ``None`` for other spellings."""
    t = clean(answer).replace(" ", "")
    scale = Fraction(1)
    for suffix in ("\\%", "%"):
        if t.endswith(suffix):
            t, scale = t[: -len(suffix)], Fraction(1, 100)
            break
    whole, dot, frac = t.lstrip("+-").partition(".")
    if not dot or not frac.isdigit() or not (whole == "" or whole.isdigit()):
        return None
    return scale / 10 ** len(frac)


# ---- numbers in words -------------------------------------------------------------------------
@ENVIRONMENTS.register("number_words")
class NumberWords(FreeFormEnvironment):
    """Arithmetic posed in words (``seven hundred twelve plus eighty-nine``); the integer
    answer is accepted in digits (with separators, ``.0``, scientific notation) or words."""

    size_measure = "digits of the operands"
    difficulty_scales = (
        "operands up to 10^(1 + d // 2) (at most 10^12); minus from d = 2, times from d = 4"
    )

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        digits = min(12, 1 + difficulty // 2)
        ops = ["plus"] + (["minus"] if difficulty >= 2 else [])
        ops += ["times"] if difficulty >= 4 else []
        op = rng.choice(ops)
        a = rng.randint(0, 10**digits - 1)
        b = rng.randint(0, 10**digits - 1) if op != "times" else rng.randint(2, 99)
        hyphen = rng.random() < 0.7
        prompt = (
            f"What is {number_to_words(a, hyphen)} {op} {number_to_words(b, hyphen)}? "
            "Answer with a number."
        )
        value = a + b if op == "plus" else a - b if op == "minus" else a * b
        return Instance(prompt, str(value), {"a": a, "b": b, "op": op})

    def _value(self, problem: Problem) -> int:
        a, b, op = int(problem.data["a"]), int(problem.data["b"]), problem.data["op"]
        return a + b if op == "plus" else a - b if op == "minus" else a * b

    def check(self, problem: Problem, answer: str) -> Verdict:
        try:
            value = parse_number(answer)
        except FormError:
            return invalid("could not read a number from the answer")
        return _number_verdict(value, Fraction(self._value(problem)))

    def solve(self, problem: Problem) -> str:
        return str(self._value(problem))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        gold = self._value(problem)
        wrong = gold + rng.choice([-10, -2, -1, 1, 2, 10, 100])
        return rng.choice([str(wrong), number_to_words(wrong)])

    def equivalent_forms(self, problem: Problem) -> list[str]:
        gold = self._value(problem)
        x = Fraction(gold)
        words = number_to_words(gold)
        forms: list[str | None] = [
            str(gold),
            words,
            number_to_words(gold, hyphen=False),
            number_to_words(gold, british_and=True),
            words.capitalize(),
            f"{gold}.00",
        ]
        forms += [render_number(x, s) for s in ("thousands", "trailing_zero", "sci")]
        return list(dict.fromkeys(f for f in forms if f is not None))

    def size(self, problem: Problem) -> float:
        return float(len(str(problem.data["a"])) + len(str(problem.data["b"])))

    def problem_space(self, difficulty: int) -> int | None:
        return 100 if difficulty < 2 else None  # one-digit sums
