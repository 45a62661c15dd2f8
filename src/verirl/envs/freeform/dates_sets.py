"""Free-form environments with structured answers: calendar dates and unordered sets.

See :mod:`verirl.envs.freeform.conversions` for the family's conventions (``equivalent_forms``,
``wrong_forms``, RLVE rewards).
"""

from __future__ import annotations

import datetime as dt
import math
import random

from verirl.envs.base import ENVIRONMENTS, Instance, graded, invalid
from verirl.envs.freeform.conversions import FreeFormEnvironment
from verirl.envs.kit.numbers import is_prime
from verirl.envs.kit.wording import plural
from verirl.envs.reading.surface_forms import (
    FormError,
    number_to_words,
    parse_date,
    parse_number,
    render_date,
    split_items,
)
from verirl.types import Problem, Verdict

# ---- dates ----------------------------------------------------------------------------------
_DATE_STYLES = ("long", "iso", "day_first", "abbrev", "ordinal", "weekday", "us_numeric", "dotted")


@ENVIRONMENTS.register("date_offset")
class DateOffset(FreeFormEnvironment):
    """The date a number of days (or weeks and days) before/after a given date; accepted in
    any common date spelling (ISO, ``April 17, 2021``, ``17 April 2021``, ``Apr 17th``,
    ``17.04.2021``, unambiguous ``04/17/2021``), with a weekday if it is the right one."""

    size_measure = "offset in days"
    difficulty_scales = (
        "offset up to 5 + 10·d² days (at most 20000); 'before' from d = 2, weeks from d = 3"
    )

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        start = dt.date(1950, 1, 1) + dt.timedelta(days=rng.randint(0, 365 * 100))
        span = min(20000, 5 + 10 * difficulty**2)
        days = rng.randint(1, span)
        direction = "before" if difficulty >= 2 and rng.random() < 0.5 else "after"
        if difficulty >= 3 and rng.random() < 0.5 and days >= 7:
            weeks, rest = divmod(days, 7)
            amount = plural(weeks, "week") + (f" and {plural(rest, 'day')}" if rest else "")
        else:
            amount = f"{days} days" if days > 1 else "1 day"
        prompt = f"What date is {amount} {direction} {render_date(start, 'long')}?"
        data = {"start": start.isoformat(), "days": days, "direction": direction}
        sign = -1 if direction == "before" else 1
        return Instance(prompt, render_date(start + dt.timedelta(days=sign * days), "long"), data)

    def _target(self, problem: Problem) -> dt.date:
        d = problem.data
        sign = -1 if d["direction"] == "before" else 1
        start = dt.date.fromisoformat(d["start"]).toordinal()
        return dt.date.fromordinal(start + sign * int(d["days"]))

    def check(self, problem: Problem, answer: str) -> Verdict:
        try:
            date, weekday = parse_date(answer)
        except FormError:
            return invalid("could not read a date from the answer")
        gold = self._target(problem)
        if weekday is not None and weekday != date.weekday():
            return graded(0.0, False, "the weekday does not match the date")
        gap = abs((date - gold).days)
        detail = "correct" if gap == 0 else "wrong date"
        return graded(max(0.0, 1.0 - gap / 31) ** 2, gap == 0, detail)

    def solve(self, problem: Problem) -> str:
        return render_date(self._target(problem), "long")

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        gold = self._target(problem)
        wrong = gold + dt.timedelta(days=rng.choice([-7, -2, -1, 1, 2, 7, 30, 365]))
        return render_date(wrong, rng.choice(["long", "iso", "day_first"]))

    def equivalent_forms(self, problem: Problem) -> list[str]:
        gold = self._target(problem)
        styles = [s for s in _DATE_STYLES if s != "us_numeric" or gold.day > 12]
        return list(dict.fromkeys(render_date(gold, s) for s in ["long", *styles]))

    def size(self, problem: Problem) -> float:
        return float(problem.data["days"])


# ---- unordered sets and lists ----------------------------------------------------------------
@ENVIRONMENTS.register("unordered_set")
class UnorderedSet(FreeFormEnvironment):
    """A set of integers (divisors, primes in a range, integer roots, multiples in a range),
    in any order and list spelling: ``{1, 2, 4}``, ``4, 2 and 1``, ``x = 1 or x = 2``."""

    size_measure = "set size plus digits of its largest element"
    difficulty_scales = "numbers up to ~(3 + d)² · 6 (divisors), ranges and root spread grow with d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        kind = rng.choice(["divisors", "primes", "roots", "multiples"])
        reach = 3 + difficulty
        if kind == "divisors":
            n = rng.randint(2, 6 * reach * reach)
            prompt = f"List all positive divisors of {n}."
            data: dict = {"kind": kind, "n": n}
        elif kind == "primes":
            lo = rng.randint(0, 10 * reach)
            hi = lo + 10 + rng.randint(0, 4 * reach)
            while not any(is_prime(k) for k in range(lo, hi + 1)):
                hi += 5
            prompt = f"List all prime numbers between {lo} and {hi} (inclusive)."
            data = {"kind": kind, "lo": lo, "hi": hi}
        elif kind == "roots":
            degree = min(5, 2 + difficulty // 4)
            roots = rng.sample(range(-reach, reach + 1), degree)
            coeffs = [1]
            for r in roots:  # multiply by (x - r)
                coeffs = [a - r * b for a, b in zip([*coeffs, 0], [0, *coeffs], strict=True)]
            prompt = f"Find all real solutions of {_poly_text(coeffs)} = 0."
            data = {"kind": kind, "coeffs": coeffs}
        else:
            k = rng.randint(2, 3 + difficulty // 2)
            lo = rng.randint(0, 10 * reach)
            hi = lo + k * rng.randint(2, min(25, 2 + difficulty))
            prompt = f"List all multiples of {k} between {lo} and {hi} (inclusive)."
            data = {"kind": kind, "k": k, "lo": lo, "hi": hi}
        return Instance(prompt, ", ".join(map(str, sorted(self._members(data)))), data)

    @staticmethod
    def _members(data: dict) -> set[int]:
        kind = data["kind"]
        if kind == "divisors":
            n = int(data["n"])
            return {d for k in range(1, math.isqrt(n) + 1) if n % k == 0 for d in (k, n // k)}
        if kind == "primes":
            return {k for k in range(int(data["lo"]), int(data["hi"]) + 1) if is_prime(k)}
        if kind == "roots":
            coeffs = [int(c) for c in data["coeffs"]]
            roots = set()
            while len(coeffs) > 1 and coeffs[-1] == 0:  # x divides the polynomial
                roots.add(0)
                coeffs = coeffs[:-1]
            c0 = abs(coeffs[-1])  # integer roots divide the constant term
            small = [k for k in range(1, math.isqrt(c0) + 1) if c0 % k == 0]
            cands = {s * d for k in small for d in (k, c0 // k) for s in (1, -1)}
            return roots | {r for r in cands if _horner(coeffs, r) == 0}
        k, lo, hi = int(data["k"]), int(data["lo"]), int(data["hi"])
        return set(range(-(-lo // k) * k, hi + 1, k))

    def check(self, problem: Problem, answer: str) -> Verdict:
        try:
            values = [parse_number(item) for item in split_items(answer)]
        except FormError:
            return invalid("could not read a list of numbers from the answer")
        if any(v.denominator != 1 for v in values):
            return graded(0.0, False, "every element should be an integer")
        got = {int(v) for v in values}
        gold = self._members(dict(problem.data))
        if len(got) != len(values):
            return graded(0.0, False, "the list repeats an element")
        jaccard = len(got & gold) / len(got | gold)
        return graded(jaccard**3, got == gold, "correct" if got == gold else "not the right set")

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, sorted(self._members(dict(problem.data)))))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        gold = sorted(self._members(dict(problem.data)))
        if len(gold) > 1 and rng.random() < 0.5:
            gold.remove(rng.choice(gold))
        else:
            extra = max(gold) + rng.randint(1, 3)
            while extra in gold:
                extra += 1
            gold.append(extra)
        rng.shuffle(gold)
        return ", ".join(map(str, gold))

    def equivalent_forms(self, problem: Problem) -> list[str]:
        gold = sorted(self._members(dict(problem.data)))
        items = [str(v) for v in gold]
        rev = items[::-1]
        forms = [
            ", ".join(items),
            ", ".join(rev),
            "\\{" + ", ".join(items) + "\\}",
            "[" + ", ".join(rev) + "]",
            "; ".join(items),
        ]
        if len(items) > 1:
            forms.append(", ".join(items[:-1]) + " and " + items[-1])
        if problem.data["kind"] == "roots":
            forms.append(" or ".join(f"x = {v}" for v in items))
        if max(abs(v) for v in gold) < 100:
            forms.append(", ".join(number_to_words(v) for v in gold))
        return list(dict.fromkeys(forms))

    def size(self, problem: Problem) -> float:
        gold = self._members(dict(problem.data))
        return float(len(gold) + max(len(str(v)) for v in gold))


def _horner(coeffs: list[int], x: int) -> int:
    acc = 0
    for c in coeffs:
        acc = acc * x + c
    return acc


def _poly_text(coeffs: list[int]) -> str:
    """``[1, -3, 2]`` → ``x^2 - 3x + 2`` (highest degree first)."""
    n = len(coeffs) - 1
    out = ""
    for i, c in enumerate(coeffs):
        if c == 0:
            continue
        p = n - i
        mag = abs(c)
        body = ("" if mag == 1 and p > 0 else str(mag)) + ("x" if p >= 1 else "")
        body += f"^{p}" if p >= 2 else ""
        out += ("-" if c < 0 else "") + body if not out else (" - " if c < 0 else " + ") + body
    return out or "0"
