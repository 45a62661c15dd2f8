"""Number theory: gcd and lcm, residues, primes, factorisation, divisors, bases, CRT.

Rewards: counts and values (gcd, lcm, divisor count, φ, digit sum) get RLVE's (min/max)^β
with β = 10; residues modulo m (a power, an inverse) are right or wrong, since a residue close
in value is no closer to being right, and one outside ``[0, m)`` is invalid. Where several
answers are valid the verifier checks constraints: prime factors in any order or in ``p^k``
form (product and primality checked), any non-negative solution of a congruence system.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    IntegerAnswer,
    graded,
    invalid,
    optimum_verdict,
    parse_int,
    satisfied_reward,
    sequence_reward,
    wrong_format,
)
from verirl.envs.kit.answers import ResidueAnswer
from verirl.envs.kit.numbers import decimal_digits, factorize, first_primes, is_prime
from verirl.envs.reading.normalize import strip_delimiters
from verirl.types import Problem, Verdict


def _smooth_number(rng: random.Random, difficulty: int) -> tuple[list[int], list[int]]:
    """Distinct small primes and their exponents: 2 + d//6 primes among the first
    7 + d//6 + d//3, exponents 1..3 + d//8."""
    k = 2 + difficulty // 6
    primes = sorted(rng.sample(first_primes(k + 5 + difficulty // 3), k))
    return primes, [rng.randint(1, 3 + difficulty // 8) for _ in primes]


def _listing(numbers: list[int]) -> str:
    words = [str(x) for x in numbers]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


@ENVIRONMENTS.register("gcd")
class Gcd(IntegerAnswer):
    size_measure = "digits of the numbers"
    difficulty_scales = "digits of the common factor and cofactors: 1 + d//4; 2 + d//10 numbers"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        hi = 10 ** (1 + difficulty // 4)
        g = rng.randint(1, hi)
        numbers = [g * rng.randint(1, hi) for _ in range(2 + difficulty // 10)]
        prompt = f"Find the greatest common divisor of {_listing(numbers)}."
        return Instance(prompt, str(math.gcd(*numbers)), {"numbers": numbers})

    def solve_int(self, problem: Problem) -> int:
        g = 0
        for x in problem.data["numbers"]:  # Euclid's algorithm
            a, b = g, x
            while b:
                a, b = b, a % b
            g = a
        return g

    def size(self, problem: Problem) -> float:
        return decimal_digits(*problem.data["numbers"])


@ENVIRONMENTS.register("lcm")
class Lcm(IntegerAnswer):
    size_measure = "digits of the numbers"
    difficulty_scales = "2 + d//8 numbers, each at most 6 + 4d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        numbers = [rng.randint(2, 6 + 4 * difficulty) for _ in range(2 + difficulty // 8)]
        prompt = f"Find the least common multiple of {_listing(numbers)}."
        return Instance(prompt, str(math.lcm(*numbers)), {"numbers": numbers})

    def solve_int(self, problem: Problem) -> int:
        exponents: dict[int, int] = {}  # highest power of each prime
        for x in problem.data["numbers"]:
            for p, e in Counter(factorize(x)).items():
                exponents[p] = max(exponents.get(p, 0), e)
        return math.prod(p**e for p, e in exponents.items())

    def size(self, problem: Problem) -> float:
        return decimal_digits(*problem.data["numbers"])

    def problem_space(self, difficulty: int) -> int | None:
        space = (5 + 4 * difficulty) ** (2 + difficulty // 8)
        return space if space < 1000 else None


@ENVIRONMENTS.register("modular_power")
class ModularPower(ResidueAnswer):
    difficulty_scales = "modulus ≤ 10 + 10^(1 + d//4), exponent ≤ 4 + 3d², base ≤ 5 + 10^(d//4)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        m = rng.randint(5, 10 + 10 ** (1 + difficulty // 4))
        a = rng.randint(2, 5 + 10 ** (difficulty // 4))
        b = rng.randint(2, 4 + 3 * difficulty * difficulty)
        prompt = (
            f"Compute {a}^{b} mod {m}, that is, the remainder when {a} raised to the power {b} "
            f"is divided by {m}. Give an integer from 0 to {m - 1}."
        )
        return Instance(prompt, str(pow(a, b, m)), {"base": a, "exponent": b, "modulus": m})

    def residue(self, problem: Problem) -> int:
        a, b, m = (problem.data[k] for k in ("base", "exponent", "modulus"))
        result, a = 1 % m, a % m  # square and multiply
        while b:
            if b & 1:
                result = result * a % m
            a, b = a * a % m, b >> 1
        return result


@ENVIRONMENTS.register("modular_inverse")
class ModularInverse(ResidueAnswer):
    difficulty_scales = "modulus up to 10 + 10^(1 + d//4)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        m = rng.randint(5, 10 + 10 ** (1 + difficulty // 4))
        a = rng.randint(2, m - 1)
        while math.gcd(a, m) != 1:
            a = rng.randint(2, m - 1)
        prompt = (
            f"Find the modular inverse of {a} modulo {m}: the integer x with 0 <= x < {m} such "
            f"that {a} * x leaves remainder 1 when divided by {m}."
        )
        return Instance(prompt, str(pow(a, -1, m)), {"a": a, "modulus": m})

    answer_names = ("x",)

    def surface_forms(self, problem: Problem) -> list[str]:
        x, m = self.solve(problem), problem.data["modulus"]
        return [*super().surface_forms(problem), f"x = {x}", f"x \\equiv {x} \\pmod{{{m}}}"]

    def near_misses(self, problem: Problem) -> list[str]:
        x, m = self.solve(problem), problem.data["modulus"]
        return [*super().near_misses(problem), f"x \\equiv {x} \\pmod{{{m + 1}}}", f"y = {x}"]

    def residue(self, problem: Problem) -> int:
        a, m = problem.data["a"], problem.data["modulus"]
        r0, r1, x0, x1 = m, a % m, 0, 1  # extended Euclid on (m, a)
        while r1:
            q = r0 // r1
            r0, r1, x0, x1 = r1, r0 - q * r1, x1, x0 - q * x1
        return x0 % m

    def is_right(self, problem: Problem, value: int) -> bool:
        return problem.data["a"] * value % problem.data["modulus"] == 1

    def problem_space(self, difficulty: int) -> int | None:
        top = 10 + 10 ** (1 + difficulty // 4)
        if top > 200:
            return None
        return sum(1 for m in range(5, top + 1) for a in range(2, m) if math.gcd(a, m) == 1)


@ENVIRONMENTS.register("prime_factorization")
class PrimeFactorization(Environment):
    size_measure = "digits of n"
    answer_kind = "integer_set"
    difficulty_scales = "2 + d//4 or 3 + d//4 prime factors, each at most 23 + 6d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        pool = [p for p in range(2, 24 + 6 * difficulty) if is_prime(p)]
        count = 2 + difficulty // 4 + rng.randint(0, 1)
        factors = sorted(rng.choice(pool) for _ in range(count))
        n = math.prod(factors)
        prompt = (
            f"Write {n} as a product of prime numbers. List every prime factor as many times as "
            "it divides the number, as a comma-separated list in any order (for example, 12 "
            "is 2, 2, 3); the form 2^2, 3 is also accepted."
        )
        return Instance(prompt, ", ".join(map(str, factors)), {"n": n})

    def check(self, problem: Problem, answer: str) -> Verdict:
        factors = _parse_factors(answer)
        n = problem.data["n"]
        if any(not 2 <= p <= n for p in factors):
            return invalid("every factor must be a prime between 2 and the number")
        if not all(is_prime(p) for p in factors):
            return invalid("a listed factor is not a prime")
        ok = math.prod(factors) == n
        gold = Counter(factorize(n))
        common = sum((Counter(factors) & gold).values())
        score = satisfied_reward(common, max(len(factors), gold.total()))
        return graded(score, ok, "correct" if ok else "the product of the primes is not the number")

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, factorize(problem.data["n"])))

    def size(self, problem: Problem) -> float:
        return decimal_digits(problem.data["n"])


def _parse_factors(text: str) -> list[int]:
    """``"2, 2, 3"``, ``"2 * 2 * 3"``, ``"2^2 \\times 3"`` or ``"12 = 2^{2} 3"`` → [2, 2, 3]."""
    t = strip_delimiters(text.rpartition("=")[2].strip())  # [2, 7], \\{2, 7\\}, (2, 7)
    t = t.replace("{", "").replace("}", "")
    tokens = [x for x in re.split(r"(?:\\times|\\cdot|\band\b|[,*×·;\s])+", t) if x]
    if not tokens or len(tokens) > 200:
        raise ValueError("expected a list of primes")
    out: list[int] = []
    for tok in tokens:
        base, _, exp = tok.partition("^")
        k = parse_int(exp) if exp else 1
        if not 1 <= k <= 400 - len(out):
            raise ValueError("exponent out of range")
        out.extend([parse_int(base)] * k)
    return out


class _SmoothNumberCount(IntegerAnswer):
    """A function of a number built from small prime powers."""

    difficulty_scales = "2 + d//6 primes of the first 7 + d//6 + d//3, exponents ≤ 3 + d//8"

    def size(self, problem: Problem) -> float:
        return decimal_digits(problem.data["n"])


@ENVIRONMENTS.register("divisor_count")
class DivisorCount(_SmoothNumberCount):
    size_measure = "digits of n"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        primes, exps = _smooth_number(rng, difficulty)
        n = math.prod(p**e for p, e in zip(primes, exps, strict=True))
        prompt = f"How many positive divisors does {n} have (counting 1 and {n} itself)?"
        return Instance(prompt, str(math.prod(e + 1 for e in exps)), {"n": n})

    def solve_int(self, problem: Problem) -> int:
        return math.prod(e + 1 for e in Counter(factorize(problem.data["n"])).values())


@ENVIRONMENTS.register("euler_totient")
class EulerTotient(_SmoothNumberCount):
    size_measure = "digits of n"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        primes, exps = _smooth_number(rng, difficulty)
        n = math.prod(p**e for p, e in zip(primes, exps, strict=True))
        phi = math.prod(p ** (e - 1) * (p - 1) for p, e in zip(primes, exps, strict=True))
        prompt = (
            f"Compute Euler's totient φ({n}): how many integers k with 1 <= k <= {n} satisfy "
            f"gcd(k, {n}) = 1?"
        )
        return Instance(prompt, str(phi), {"n": n})

    def solve_int(self, problem: Problem) -> int:
        n = problem.data["n"]
        phi = n
        for p in Counter(factorize(n)):  # φ(n) = n ∏ (1 - 1/p)
            phi -= phi // p
        return phi


@ENVIRONMENTS.register("next_prime")
class NextPrime(Environment):
    size_measure = "digits of N"
    answer_kind = "integer"
    difficulty_scales = "N up to 20·10^(d//3)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(2, 20 * 10 ** (difficulty // 3))
        p = next(q for q in range(n + 1, 2 * n + 1) if is_prime(q))
        return Instance(f"What is the smallest prime number greater than {n}?", str(p), {"n": n})

    def check(self, problem: Problem, answer: str) -> Verdict:
        """A prime above N earns (gold gap / answer gap)^5, the gap measured from N."""
        value = parse_int(answer)
        n = problem.data["n"]
        if value <= n:
            return invalid("the answer must be greater than the given number")
        if value > 2 * n + 2:  # Bertrand: a prime lies in (n, 2n]; skip huge primality tests
            return graded(0.0, False, "far above the smallest prime greater than the number")
        if not is_prime(value):
            return invalid("the answer is not a prime")
        gold = int(self.solve(problem))
        worse = "a smaller prime above the number exists"
        return optimum_verdict(value - n, gold - n, worse, minimise=True)

    def solve(self, problem: Problem) -> str:
        p = problem.data["n"] + 1
        while not is_prime(p):
            p += 1
        return str(p)

    def size(self, problem: Problem) -> float:
        return decimal_digits(problem.data["n"])

    def problem_space(self, difficulty: int) -> int | None:
        space = 20 * 10 ** (difficulty // 3) - 1
        return space if space < 1000 else None


_BASE_DIGITS = "0123456789ABCDEF"


def _to_base(n: int, base: int) -> str:
    out = ""
    while n:
        n, r = divmod(n, base)
        out = _BASE_DIGITS[r] + out
    return out or "0"


@ENVIRONMENTS.register("base_conversion")
class BaseConversion(Environment):
    difficulty_scales = (
        "value up to 2^(5 + d); bases: 10 to one of 2..9 for d < 3, common pairs for d < 6, any "
        "of 2..16 after"
    )
    _COMMON = ((10, 2), (2, 10), (10, 8), (8, 10), (10, 16), (16, 10))
    size_measure = "digits of the value in the source base"

    def surface_forms(self, problem: Problem) -> list[str]:
        gold, base = self.solve(problem), problem.data["to_base"]
        return [gold, f"{gold}.", f"${gold}$", f"{gold}_{{{base}}}", f"{gold.lower()}", f"0{gold}"]

    def near_misses(self, problem: Problem) -> list[str]:
        gold, base = self.solve(problem), problem.data["to_base"]
        out = [*super().near_misses(problem), f"{gold}_{{{base + 1}}}"]
        if len(gold) >= 3:  # a multi-digit group after a space: two numbers, never merged
            out += [f"{gold[:1]} {gold[1:]}", f"{gold[:1]}, {gold[1:]}"]
        return out

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(2, 2 ** (5 + difficulty))
        if difficulty < 3:
            src, dst = 10, rng.randint(2, 9)
        elif difficulty < 6:
            src, dst = rng.choice(self._COMMON)
        else:
            src, dst = rng.sample(range(2, 17), 2)
        prompt = (
            f"Convert the base-{src} number {_to_base(n, src)} to base {dst}. Write the result "
            f"with the digits 0-9 and then A-F for the digit values 10-15, without a prefix or "
            "a subscript."
        )
        return Instance(prompt, _to_base(n, dst), {"n": n, "from_base": src, "to_base": dst})

    def check(self, problem: Problem, answer: str) -> Verdict:
        """Digit-wise credit (β = 5) when the length is right; leading zeros are ignored."""
        t = answer.strip().upper()
        m = re.fullmatch(r"(.*?)\s*_\s*\{?\s*(\d+)\s*\}?", t)
        if m:  # a subscript naming the base: accepted when it is the asked base
            if int(m.group(2)) != problem.data["to_base"]:
                return invalid("the subscript names another base than the one asked for")
            t = m.group(1)
        if re.search(r"\w\s*[\s,;]\s*\w", t):
            if not re.fullmatch(r"\w(?:\s+\w)*", t):  # "1 0 1 0": digits spelled one by one
                return invalid("write one number, without spaces between its digits")
            t = t.replace(" ", "")
        if not t or len(t) > 500 or not t.isalnum() or not t.isascii():
            return wrong_format("expected the digits of a number")
        if any(c not in _BASE_DIGITS[: problem.data["to_base"]] for c in t):
            return invalid("the answer uses a digit that the target base does not have")
        t = t.lstrip("0") or "0"
        gold = self.solve(problem)
        ok = t == gold
        score = sequence_reward(list(t), list(gold)) if len(t) == len(gold) else 0.0
        return graded(score, ok, "correct" if ok else "the converted number is not right")

    def solve(self, problem: Problem) -> str:
        digits = []
        n, base = problem.data["n"], problem.data["to_base"]
        while n:
            digits.append(_BASE_DIGITS[n % base])
            n //= base
        return "".join(reversed(digits)) or "0"

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"].bit_length())


@ENVIRONMENTS.register("digit_sum")
class DigitSum(IntegerAnswer):
    size_measure = "digits of the number"
    difficulty_scales = "digits of the number: 3 + 2d"
    size_key = "number"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        digits = str(rng.randint(1, 9)) + "".join(
            str(rng.randint(0, 9)) for _ in range(2 + 2 * difficulty)
        )
        prompt = f"What is the sum of the decimal digits of {digits}?"
        return Instance(prompt, str(sum(map(int, digits))), {"number": digits})

    def solve_int(self, problem: Problem) -> int:
        n, total = int(problem.data["number"]), 0
        while n:
            n, r = divmod(n, 10)
            total += r
        return total


@ENVIRONMENTS.register("chinese_remainder")
class ChineseRemainder(Environment):
    difficulty_scales = "2 + d//6 congruences with pairwise coprime moduli below 9 + 4d"
    answer_kind = "integer"
    answer_names = ("x",)
    size_measure = "decimal digits of the moduli and residues"

    @staticmethod
    def _period(problem: Problem) -> int:
        """The product of the (coprime) moduli: ``x ≡ r (mod period)`` is the solution set."""
        return math.prod(problem.data["moduli"])

    def surface_forms(self, problem: Problem) -> list[str]:
        x, m = self.solve(problem), self._period(problem)
        forms = [*super().surface_forms(problem), f"x = {x}", f"x \\equiv {x} \\pmod{{{m}}}"]
        return [*forms, f"x \\equiv {x} \\pmod {m}", f"x ≡ {x} (mod {m})"]

    def near_misses(self, problem: Problem) -> list[str]:
        x, m = self.solve(problem), self._period(problem)
        return [*super().near_misses(problem), f"x \\equiv {x} \\pmod{{{2 * m}}}"]

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        candidates = list(range(2, 9 + 4 * difficulty))
        rng.shuffle(candidates)
        moduli: list[int] = []
        for c in candidates:
            if all(math.gcd(c, m) == 1 for m in moduli):
                moduli.append(c)
                if len(moduli) == 2 + difficulty // 6:
                    break
        x = rng.randint(0, math.prod(moduli) - 1)
        residues = [x % m for m in moduli]
        lines = "\n".join(f"x ≡ {r} (mod {m})" for r, m in zip(residues, moduli, strict=True))
        prompt = (
            "Find a non-negative integer x that satisfies all of these congruences:\n"
            f"{lines}\nAny non-negative solution is accepted."
        )
        return Instance(prompt, str(x), {"moduli": moduli, "residues": residues})

    def check(self, problem: Problem, answer: str) -> Verdict:
        x = parse_int(answer, self.answer_names, self._period(problem))
        if x < 0:
            return invalid("x must be non-negative")
        pairs = list(zip(problem.data["residues"], problem.data["moduli"], strict=True))
        sat = sum(1 for r, m in pairs if x % m == r)
        ok = sat == len(pairs)
        detail = "correct" if ok else f"x satisfies {sat} of the {len(pairs)} congruences"
        return graded(satisfied_reward(sat, len(pairs)), ok, detail)

    def solve(self, problem: Problem) -> str:
        x, step = 0, 1  # sieve: step through solutions of the congruences so far
        for r, m in zip(problem.data["residues"], problem.data["moduli"], strict=True):
            while x % m != r:
                x += step
            step *= m
        return str(x)

    def size(self, problem: Problem) -> float:
        return float(
            len(problem.data["moduli"]) + decimal_digits(math.prod(problem.data["moduli"]))
        )
