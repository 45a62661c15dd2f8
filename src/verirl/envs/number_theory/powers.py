"""Number theory, powers and towers: power cycles, nested binary powers, concatenation mod M,
towers of 2, 0/1 multiples, sums of distinct powers, Ackermann values, recurrence sums.

RLVE-Gym rows PowerCycle, PowerNest, PrefixConcatenation, SelfPowerSequenceMOD,
SmallestBinaryMultiple, SubsetSumSequence, RecursiveFunction and
RecursiveSequenceSumConstruction (Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning
for Language Models with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A).

Residues and exact values are right or wrong (RLVE's binary reward); answers that are one of
several valid choices (a multiple of the period, a 0/1 multiple, a set of indices) are checked
against the constraints and scored by the row's ratio rule.
"""

from __future__ import annotations

import math
import random

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    count_reward,
    graded,
    invalid,
    parse_int,
    parse_int_list,
)
from verirl.envs.kit.numbers import factorize
from verirl.types import Problem, Verdict

TAGS = ("rlve", "number_theory")


def _binary(ok: bool, wrong: str) -> Verdict:
    return graded(0.0, ok, "correct" if ok else wrong)


def multiplicative_order(a: int, m: int) -> int:
    """The order of ``a`` modulo ``m`` (gcd(a, m) = 1), by reducing φ(m) prime by prime."""
    if m == 1:
        return 1
    phi = m
    for p in set(factorize(m)):
        phi -= phi // p
    order = phi
    for p in set(factorize(phi)):
        while order % p == 0 and pow(a, order // p, m) == 1:
            order //= p
    return order


# ---- PowerCycle -----------------------------------------------------------------------------
@ENVIRONMENTS.register("power_cycle")
class PowerCycle(Environment):
    """The eventual period of the last K digits of n, n², n³, ...; a multiple of the period
    is a valid but weaker answer: reward period/answer (RLVE's gold/answer)."""

    tags = TAGS
    answer_kind = "integer"
    difficulty_scales = "K = 1 + d//5 last digits (at most 6); n has 1 + d//3 digits"
    size_measure = "K, the number of digits whose cycle is asked (the period grows like 10^K)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        k = min(6, 1 + difficulty // 5)
        n = rng.randint(2, 10 ** (1 + difficulty // 3) + 8)
        mod = 10**k
        period = 1  # for i ≥ k: the 2-part and 5-part cycle independently
        for p in (2, 5):
            if n % p:
                period = math.lcm(period, multiplicative_order(n % p**k, p**k))
        noun = "digit" if k == 1 else f"{k} digits"
        prompt = (
            f"Consider the powers {n}^1, {n}^2, {n}^3, ... and look only at their last {noun} "
            f"(the value modulo {mod}). This sequence is eventually periodic. Find its period: "
            f"the smallest positive integer L such that {n}^(i + L) and {n}^i have the same last "
            f"{noun} for every sufficiently large i."
        )
        return Instance(prompt, str(period), {"n": n, "k": k})

    def _period(self, problem: Problem) -> int:
        n, k = problem.data["n"], problem.data["k"]
        mod = 10**k
        start = pow(n, k, mod)  # from i = k on the sequence is purely periodic
        x, steps = start * n % mod, 1
        while x != start:
            x, steps = x * n % mod, steps + 1
        return steps

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)
        n, k = problem.data["n"], problem.data["k"]
        if value <= 0:
            return invalid("the period is a positive integer")
        if value.bit_length() > 200 or pow(n, k + value, 10**k) != pow(n, k, 10**k):
            return graded(0.0, False, "that is not a period of the sequence")
        gold = self._period(problem)
        return graded(
            gold / value,
            value == gold,
            "correct" if value == gold else "a period, not the smallest",
        )

    def solve(self, problem: Problem) -> str:
        return str(self._period(problem))

    def size(self, problem: Problem) -> float:
        return float(problem.data["k"])

    def problem_space(self, difficulty: int) -> int | None:
        return min(10**9, 10 ** (1 + difficulty // 3) + 7)


# ---- PowerNest -----------------------------------------------------------------------------
def _nest(n: int) -> str:
    """n as a sum of powers of 2, exponents written the same way: 2 = 2, 1 = 2(0)."""
    terms = []
    for e in range(n.bit_length() - 1, -1, -1):
        if n >> e & 1:
            terms.append("2" if e == 1 else "2(0)" if e == 0 else f"2({_nest(e)})")
    return "+".join(terms)


class _NestParser:
    """Reads ``expr := term ('+' term)*``, ``term := '2' | '2(' expr ')'`` and ``'0'`` as a
    whole expression inside parentheses; bounded in length and depth."""

    def __init__(self, text: str) -> None:
        self.t, self.i = text, 0

    def expr(self, depth: int) -> None:
        if depth > 40:
            raise ValueError("nested too deep")
        if self.t.startswith("0)", self.i) and depth > 0:
            self.i += 1
            return
        self.term(depth)
        while self.i < len(self.t) and self.t[self.i] == "+":
            self.i += 1
            self.term(depth)

    def term(self, depth: int) -> None:
        if self.i >= len(self.t) or self.t[self.i] != "2":
            raise ValueError("expected 2")
        self.i += 1
        if self.i < len(self.t) and self.t[self.i] == "(":
            self.i += 1
            self.expr(depth + 1)
            if self.i >= len(self.t) or self.t[self.i] != ")":
                raise ValueError("expected )")
            self.i += 1


@ENVIRONMENTS.register("power_nest")
class PowerNest(Environment):
    """Write n as a sum of powers of 2 whose exponents are written the same way (NOIP's
    "power" problem): one canonical string, binary reward."""

    tags = TAGS
    unique_answer = True
    difficulty_scales = "n up to 4·2^d (at most 2^40)"
    size_measure = "bits of n"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(
            max(2, 2 ** min(40, 2 + difficulty) // 2), 2 ** min(40, 2 + difficulty) + 40
        )
        prompt = (
            f"You are given the positive integer {n}. Every positive integer can be written as a "
            "sum of distinct powers of 2, and the exponents can themselves be written the same "
            "way. Write 2^1 as 2, 2^0 as 2(0), and 2^e for any other exponent e as 2(...), with "
            "the representation of e inside the parentheses; list the terms from the largest "
            "power to the smallest, joined by +. For example, 137 = 2^7 + 2^3 + 2^0 is written "
            "2(2(2)+2+2(0))+2(2+2(0))+2(0). Give the representation of "
            f"{n}, with no spaces."
        )
        return Instance(prompt, _nest(n), {"n": n})

    def check(self, problem: Problem, answer: str) -> Verdict:
        text = "".join(answer.split())
        if len(text) > 20_000:
            return invalid("the representation is far too long")
        parser = _NestParser(text)
        try:
            parser.expr(0)
        except (ValueError, IndexError):
            return invalid("not a sum of terms 2, 2(0) and 2(...) joined by +")
        if parser.i != len(text):
            return invalid("not a sum of terms 2, 2(0) and 2(...) joined by +")
        return _binary(text == self.solve(problem), "the representation is not right")

    def solve(self, problem: Problem) -> str:
        def rep(x: int) -> str:  # recursive halving instead of bit scanning
            powers, e = [], 0
            while x:
                if x % 2:
                    powers.append(e)
                x, e = x // 2, e + 1
            return "+".join(
                "2(0)" if p == 0 else "2" if p == 1 else f"2({rep(p)})" for p in reversed(powers)
            )

        return rep(problem.data["n"])

    def count_answers(self, problem: Problem, limit: int = 2) -> int | None:
        return 1  # the canonical form is defined uniquely by the rules in the prompt

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer + "+2(0)" if not answer.endswith("2(0)") else answer[: -len("+2(0)")] or "2"

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"].bit_length())

    def problem_space(self, difficulty: int) -> int | None:
        top = 2 ** min(40, 2 + difficulty)
        return min(10**9, top + 40 - max(2, top // 2) + 1)


# ---- PrefixConcatenation ------------------------------------------------------------------
@ENVIRONMENTS.register("prefix_concatenation")
class PrefixConcatenation(Environment):
    """Concatenate(n) = 123...n modulo M."""

    tags = TAGS
    answer_kind = "integer"
    difficulty_scales = "n up to 64·2^d (at most 10^12); M up to 10^(2 + d//5)"
    size_measure = "digits of n"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(5, min(10**12, 64 * 2**difficulty))
        m = rng.randint(2, 10 ** (2 + difficulty // 5))
        # per block of equal digit length L, x -> x·10^L + i is a 3×3 affine map on (x, i, 1)
        x, length = 0, 1
        while 10 ** (length - 1) <= n:
            lo, hi = 10 ** (length - 1), min(n, 10**length - 1)
            mat = [[10**length % m, 1 % m, 0], [0, 1 % m, 1 % m], [0, 0, 1 % m]]
            p = _mat_pow(mat, hi - lo + 1, m)
            vec = (x, lo % m, 1 % m)
            x = sum(p[0][j] * vec[j] for j in range(3)) % m
            length += 1
        prompt = (
            "Define Concatenate(n) as the number formed by writing all positive integers from 1 "
            f"to n one after another (for example, Concatenate(12) = 123456789101112). Compute "
            f"Concatenate({n}) mod {m}."
        )
        return Instance(prompt, str(x), {"n": n, "modulus": m})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)
        if not 0 <= value < problem.data["modulus"]:
            return invalid("the answer must be a remainder, between 0 and the modulus minus 1")
        return _binary(value == int(self.solve(problem)), "the remainder is not right")

    def solve(self, problem: Problem) -> str:
        """Per digit length, fold the block by doubling: (B^c, Σ B^t, Σ t·B^t) for c items."""
        n, m = problem.data["n"], problem.data["modulus"]
        x, length = 0, 1
        while 10 ** (length - 1) <= n:
            lo, hi = 10 ** (length - 1), min(n, 10**length - 1)
            b = 10**length % m
            pw, s0, s1 = _fold(b, hi - lo + 1, m)
            # x·B^c + Σ_{t<c} (lo + t)·B^(c-1-t) = x·B^c + lo·Σ B^u + Σ (c-1-u)·B^u
            c = hi - lo + 1
            x = (x * pw + lo * s0 + (c - 1) * s0 - s1) % m
            length += 1
        return str(x)

    def size(self, problem: Problem) -> float:
        return float(len(str(problem.data["n"])))


def _mat_pow(a: list[list[int]], e: int, m: int) -> list[list[int]]:
    size = len(a)
    result = [[int(i == j) % m for j in range(size)] for i in range(size)]
    while e:
        if e & 1:
            result = _mat_mul(result, a, m)
        a, e = _mat_mul(a, a, m), e >> 1
    return result


def _mat_mul(a: list[list[int]], b: list[list[int]], m: int) -> list[list[int]]:
    return [
        [sum(a[i][k] * b[k][j] for k in range(len(b))) % m for j in range(len(b[0]))]
        for i in range(len(a))
    ]


def _fold(b: int, c: int, m: int) -> tuple[int, int, int]:
    """(b^c, Σ_{u<c} b^u, Σ_{u<c} u·b^u) mod m by splitting c in halves."""
    if c == 0:
        return 1 % m, 0, 0
    if c % 2:
        pw, s0, s1 = _fold(b, c - 1, m)  # append the term u = c - 1
        return pw * b % m, (s0 + pw) % m, (s1 + (c - 1) * pw) % m
    pw, s0, s1 = _fold(b, c // 2, m)
    h = c // 2  # second half: u = h + v, b^u = b^h·b^v
    return pw * pw % m, (s0 + pw * s0) % m, (s1 + pw * (s1 + h * s0)) % m


# ---- SelfPowerSequenceMOD ------------------------------------------------------------------
@ENVIRONMENTS.register("self_power_sequence_mod")
class SelfPowerSequenceMod(Environment):
    """a[0] = 1, a[n] = 2^a[n-1]; a[N] mod M."""

    tags = TAGS
    answer_kind = "integer"
    difficulty_scales = "N up to 3 + d; M up to 16·2^d (at most 10^9)"
    size_measure = "N + digits of M"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(1, 3 + difficulty)
        m = rng.randint(2, min(10**9, 16 * 2**difficulty))
        prompt = (
            "Define a[0] = 1 and a[n] = 2^(a[n-1]) for n ≥ 1, so a[1] = 2, a[2] = 4, a[3] = 16, "
            f"a[4] = 65536, and so on. Compute a[{n}] mod {m}."
        )
        return Instance(prompt, str(_tower_mod(n, m)), {"n": n, "modulus": m})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)
        if not 0 <= value < problem.data["modulus"]:
            return invalid("the answer must be a remainder, between 0 and the modulus minus 1")
        return _binary(value == int(self.solve(problem)), "the remainder is not right")

    def solve(self, problem: Problem) -> str:
        """Exact tower while it fits (a[5] has 65537 bits), then a[6] = 2^a[5] mod M by
        square-and-multiply; beyond, Euler's theorem in its general form."""
        n, m = problem.data["n"], problem.data["modulus"]
        if n <= 6:
            a = 1
            for _ in range(min(n, 5)):
                a = 2**a
            return str(pow(2, a, m) if n == 6 else a % m)
        return str(_tower_mod(n, m))

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"] + len(str(problem.data["modulus"])))

    def problem_space(self, difficulty: int) -> int | None:
        return (3 + difficulty) * (min(10**9, 16 * 2**difficulty) - 1)


def _tower_mod(n: int, m: int) -> int:
    """a[n] mod m: exact while a[n-1] is known (a[0..4]), else the general form of Euler's
    theorem 2^e ≡ 2^(e mod φ(m) + φ(m)) (mod m), valid since e = a[n-1] ≥ 2^16 > log2 m."""
    small = (1, 2, 4, 16, 65536)
    if m == 1:
        return 0
    if n < len(small):
        return small[n] % m
    if n - 1 < len(small):
        return pow(2, small[n - 1], m)
    phi = m
    for p in set(factorize(m)):
        phi -= phi // p
    return pow(2, _tower_mod(n - 1, phi) + phi, m)


# ---- SmallestBinaryMultiple ----------------------------------------------------------------
@ENVIRONMENTS.register("smallest_binary_multiple")
class SmallestBinaryMultiple(Environment):
    """The smallest B ≥ 1 with A·B written only with digits 0 and 1; a larger valid B earns
    (gold/answer)^5."""

    tags = TAGS
    answer_kind = "integer"
    difficulty_scales = "A up to 10 + 3d (at most 100)"
    size_measure = "A (the remainder search space)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        a = rng.randint(2, min(100, 10 + 3 * difficulty))
        multiple = _smallest_01_multiple(a)
        prompt = (
            f"Find the smallest positive integer B such that the product {a} × B contains only the "
            "digits 0 and 1 in its decimal representation."
        )
        return Instance(prompt, str(multiple // a), {"a": a})

    def check(self, problem: Problem, answer: str) -> Verdict:
        b = parse_int(answer)
        a = problem.data["a"]
        if b <= 0 or b.bit_length() > 400 or set(str(a * b)) - {"0", "1"}:
            return invalid(f"{a} × B must be a positive number written with only 0s and 1s")
        gold = _smallest_01_multiple(a) // a  # BFS; solve() counts through 0/1 numbers instead
        return graded((gold / b) ** 5, b == gold, "correct" if b == gold else "a smaller B exists")

    def solve(self, problem: Problem) -> str:
        a, k = problem.data["a"], 1
        while int(bin(k)[2:]) % a:  # the 0/1 numbers in increasing order
            k += 1
        return str(int(bin(k)[2:]) // a)

    def size(self, problem: Problem) -> float:
        return float(problem.data["a"])

    def problem_space(self, difficulty: int) -> int | None:
        return min(10**9, min(100, 10 + 3 * difficulty) - 1)


def _smallest_01_multiple(a: int) -> int:
    """Breadth-first search over remainders modulo a, appending 0 before 1: the first number
    to reach remainder 0 is the smallest positive multiple of a written with 0s and 1s."""
    parent: dict[int, tuple[int, str]] = {1 % a: (-1, "1")}
    queue, head = [1 % a], 0
    while 0 not in parent:
        r = queue[head]
        head += 1
        for digit in "01":
            nr = (r * 10 + int(digit)) % a
            if nr not in parent:
                parent[nr] = (r, digit)
                queue.append(nr)
    digits, r = [], 0
    while r != -1:
        r, digit = parent[r]
        digits.append(digit)
    return int("".join(reversed(digits)))


# ---- SubsetSumSequence -------------------------------------------------------------------
@ENVIRONMENTS.register("subset_sum_sequence")
class SubsetSumSequence(Environment):
    """The N-th smallest sum of distinct powers of K; (min/max)^2 credit."""

    tags = TAGS
    answer_kind = "integer"
    difficulty_scales = "N up to 3·2^d (at most 10^9); K up to 2 + d (at most 20)"
    size_measure = "bits of N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(1, min(10**9, 3 * 2**difficulty) + 5)
        k = rng.randint(3, min(20, 3 + difficulty))
        value, power, rest = 0, 1, n
        while rest:  # bit t of N selects K^t
            value += power * (rest % 2)
            rest //= 2
            power *= k
        shown = ", ".join(str(x) for x in sorted(_first_sums(k, 6))[:6])
        prompt = (
            f"Consider all powers of {k} (1, {k}, {k}^2, ...) and all finite sums of distinct "
            f"powers of {k}. Sorted in increasing order they begin {shown}, ... What is the "
            f"{_ordinal(n)} number in this sequence (counting from 1)?"
        )
        return Instance(prompt, str(value), {"n": n, "k": k})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)
        gold = int(self.solve(problem))
        return graded(count_reward(value, gold, 2.0), value == gold, "the number is not right")

    def solve(self, problem: Problem) -> str:
        return str(int(bin(problem.data["n"])[2:], problem.data["k"]))

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"].bit_length())

    def problem_space(self, difficulty: int) -> int | None:
        return (min(10**9, 3 * 2**difficulty) + 5) * (min(20, 3 + difficulty) - 2)


def _first_sums(k: int, count: int) -> list[int]:
    return [int(bin(i)[2:], k) for i in range(1, count + 1)]


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# ---- RecursiveFunction ---------------------------------------------------------------------
@ENVIRONMENTS.register("recursive_function")
class RecursiveFunction(Environment):
    """The Ackermann function f(m, n) for m ≤ 3; binary reward."""

    tags = TAGS
    answer_kind = "integer"
    difficulty_scales = (
        "m up to min(3, 1 + d//3); n up to 3 + 5d (m ≤ 2) or 2 + d//3 (m = 3, at most 12)"
    )
    size_measure = "the value f(m, n) (number of recursive steps grows with it)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        m = rng.randint(0, min(3, 1 + difficulty // 3))
        n = (
            rng.randint(0, 3 + 5 * difficulty)
            if m < 3
            else rng.randint(0, min(12, 2 + difficulty // 3))
        )
        prompt = (
            "Define a function f(m, n) on non-negative integers as follows:\n"
            "1. If m = 0, then f(m, n) = n + 1.\n"
            "2. If m > 0 and n = 0, then f(m, n) = f(m - 1, 1).\n"
            "3. If m > 0 and n > 0, then f(m, n) = f(m - 1, f(m, n - 1)).\n"
            f"Compute f({m}, {n})."
        )
        return Instance(prompt, str(_ackermann_table(m, n)), {"m": m, "n": n})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)
        return _binary(value == int(self.solve(problem)), "the value is not right")

    def solve(self, problem: Problem) -> str:
        m, n = problem.data["m"], problem.data["n"]
        closed = (n + 1, n + 2, 2 * n + 3, 2 ** (n + 3) - 3)  # the known closed forms, m ≤ 3
        return str(closed[m])

    def size(self, problem: Problem) -> float:
        return float(_ackermann_table(problem.data["m"], problem.data["n"]))

    def problem_space(self, difficulty: int) -> int | None:
        top_m = min(3, 1 + difficulty // 3)
        return min(3, top_m + 1) * (4 + 5 * difficulty) + (top_m == 3) * (
            min(12, 2 + difficulty // 3) + 1
        )


def _ackermann_table(m: int, n: int) -> int:
    """f(m, n) from the recursion itself: row ``level`` is the list f(level, 0), f(level, 1),
    ..., extended on demand from row ``level - 1`` (rule 2 then rule 3)."""
    rows: dict[int, list[int]] = {}

    def get(level: int, x: int) -> int:
        if level == 0:
            return x + 1
        row = rows.setdefault(level, [])
        while len(row) <= x:
            row.append(get(level - 1, row[-1] if row else 1))
        return row[x]

    return get(m, n)


# ---- RecursiveSequenceSumConstruction ------------------------------------------------------
@ENVIRONMENTS.register("recursive_sequence_sum_construction")
class RecursiveSequenceSumConstruction(Environment):
    """Distinct indices n ≥ 1 whose terms F(n) = A·F(n-1) + B sum to a target; binary."""

    tags = TAGS
    answer_kind = "integer_set"
    difficulty_scales = "indices up to N = 4 + d; A in 2..16, B up to 16384, F(0) up to 128"
    size_measure = "N, the largest usable index"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        f0, a, b = rng.randint(1, 128), rng.randint(2, 16), rng.randint(0, 16384)
        terms = [f0]
        for _ in range(n):
            terms.append(a * terms[-1] + b)
        chosen = sorted(rng.sample(range(1, n + 1), rng.randint(1, n)))
        target = sum(terms[i] for i in chosen)
        prompt = (
            f"Define a sequence F by F(0) = {f0} and F(n) = {a} × F(n - 1) + {b} for every integer "
            f"n ≥ 1. Find distinct indices n1, n2, ..., nk (k ≥ 1), each between 1 and {n} "
            f"(F(0) cannot be used), such that F(n1) + F(n2) + ... + F(nk) = {target}. Give the "
            "indices separated by commas."
        )
        data = {"n": n, "f0": f0, "a": a, "b": b, "target": target}
        return Instance(prompt, ", ".join(map(str, chosen)), data)

    def _terms(self, problem: Problem) -> list[int]:
        d = problem.data
        terms = [d["f0"]]
        for _ in range(d["n"]):
            terms.append(d["a"] * terms[-1] + d["b"])
        return terms

    def check(self, problem: Problem, answer: str) -> Verdict:
        indices = parse_int_list(answer)
        n = problem.data["n"]
        if not indices or len(indices) > n or len(set(indices)) != len(indices):
            return invalid("give at least one index, each index at most once")
        if any(not 1 <= i <= n for i in indices):
            return invalid(f"every index must be between 1 and {n}")
        terms = self._terms(problem)
        return _binary(
            sum(terms[i] for i in indices) == problem.data["target"],
            "the terms do not sum to the target",
        )

    def solve(self, problem: Problem) -> str:
        """Greedy from the top: each term exceeds the sum of all earlier ones (A ≥ 2)."""
        terms, rest, out = self._terms(problem), problem.data["target"], []
        for i in range(problem.data["n"], 0, -1):
            if terms[i] <= rest:
                rest -= terms[i]
                out.append(i)
        return ", ".join(map(str, sorted(out)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        items = parse_int_list(answer)
        if len(items) > 1:
            return ", ".join(map(str, items[1:]))
        return str(items[0] % problem.data["n"] + 1)

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])
