"""Numbers, part 1: how integers are written — negative bases, signed Fibonacci sums, the next
palindrome, and the prime-step distance between integers.

Rows NegativeBase, MinimumFibonacciRepresentation, NextPalindromic and ODLDistance of the RLVE
catalogue (Zeng et al., *RLVE: Scaling Up Reinforcement Learning for Language Models with
Adaptive Verifiable Environments*, arXiv:2511.07317). Rewards follow the rows: digit-wise match
for a representation, exact for a minimum count, (gold/answer)^5 for a palindrome above the
bound (any palindrome above it is valid, the smallest is correct), element-wise match^5 for a
list of distances. Verifiers recompute the value from the answer (a base −R numeral is
evaluated, a palindrome is checked) rather than comparing strings only.
"""

from __future__ import annotations

import functools
import math
import random
import re
from collections import Counter

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    optimum_verdict,
    parse_int,
    parse_int_list,
    sequence_reward,
)
from verirl.envs.kit.size_ladder import grown
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict

TAGS = ("rlve", "numbers")


def _prime_factor_count(n: int) -> int:
    """Ω(n): the number of prime factors of ``n`` counted with multiplicity (trial division)."""
    count, p = 0, 2
    while p * p <= n:
        while n % p == 0:
            n //= p
            count += 1
        p += 1
    return count + (1 if n > 1 else 0)


# ---- negative base ------------------------------------------------------------------------
def to_negative_base(n: int, r: int) -> str:
    """The base ``-r`` numeral of ``n`` (digits 0..r-1, no leading zeros; "0" for zero)."""
    if n == 0:
        return "0"
    digits = []
    while n != 0:
        n, rem = divmod(n, -r)
        if rem < 0:
            n, rem = n + 1, rem + r
        digits.append(str(rem))
    return "".join(reversed(digits))


def from_negative_base(digits: str, r: int) -> int:
    value = 0
    for ch in digits:
        value = value * (-r) + int(ch)
    return value


@ENVIRONMENTS.register("negative_base")
class NegativeBase(Environment):
    """Write an integer in base −R (2 ≤ R ≤ 10). Reward: the share of digit positions (aligned
    at the least significant digit) that match the unique numeral, correct when the numeral's
    value is the integer."""

    tags = TAGS
    difficulty_scales = "|N| up to 4·2^d; base −R with R in 2..min(10, 2 + d//3)"
    size_measure = "digits of |N| plus the base R"

    def problem_space(self, difficulty: int) -> int | None:
        return (8 * 2**difficulty + 1) * (min(10, 2 + difficulty // 3) - 1)

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        limit = 4 * 2**difficulty
        n = rng.randint(-limit, limit)
        r = rng.randint(2, min(10, 2 + difficulty // 3))
        prompt = (
            f"In the negative base -{r} system, an integer is written with the digits "
            f"{'0 and 1' if r == 2 else f'0 to {r - 1}'}; "
            f"a numeral d_k ... d_1 d_0 stands for the sum of d_i * (-{r})^i. Every integer has "
            "exactly one such numeral without leading zeros (zero is written 0). For example, "
            f"in base -2, the number 2 is written 110 because 4 - 2 = 2.\n\nWrite {n} in base "
            f"-{r}. Give the digits from the most significant to the least significant, with "
            "no separators (for example 1101)."
        )
        return Instance(prompt, to_negative_base(n, r), {"n": n, "base": r})

    def check(self, problem: Problem, answer: str) -> Verdict:
        r, n = problem.data["base"], problem.data["n"]
        text = normalize.clean(answer).replace(" ", "")
        if not text or len(text) > 200 or not re.fullmatch(r"\d+", text):
            return invalid("the answer must be a string of digits")
        if any(int(ch) >= r for ch in text):
            return invalid(f"base -{r} digits are 0 to {r - 1}")
        digits = text.lstrip("0") or "0"
        if from_negative_base(digits, r) == n:
            return graded(1.0, True)
        gold = to_negative_base(n, r)
        width = max(len(gold), len(digits))
        hits = sum(1 for a, b in zip(gold.zfill(width), digits.zfill(width), strict=True) if a == b)
        return graded(hits / width, False, "that numeral has a different value")

    def solve(self, problem: Problem) -> str:
        # Independent of the divmod construction: find digits by the balanced search.
        n, r = problem.data["n"], problem.data["base"]
        digits: list[int] = []
        rest, place = n, 1  # invariant: n = value(digits so far) + rest, rest divisible by place
        while rest != 0:
            d = (rest // place) % r
            digits.append(d)
            rest -= d * place
            place *= -r
        return "".join(map(str, reversed(digits))) or "0"

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        r = problem.data["base"]
        last = (int(answer[-1]) + 1) % r
        return answer[:-1] + str(last)

    def size(self, problem: Problem) -> float:
        return float(len(str(abs(problem.data["n"]))) + problem.data["base"])


# ---- signed Fibonacci sums -----------------------------------------------------------------
def _fibs_up_to(limit: int) -> list[int]:
    fibs = [1, 2]
    while fibs[-1] <= limit:
        fibs.append(fibs[-1] + fibs[-2])
    return fibs


def fewest_fibonacci_terms(k: int) -> int:
    """The fewest Fibonacci numbers (each added or subtracted) with sum ``k`` ≥ 1: if ``k`` is
    not one, an optimal sum uses the Fibonacci number just below or just above ``k``."""
    fibs = _fibs_up_to(2 * k + 2)
    fib_set = set(fibs)

    @functools.cache
    def best(n: int) -> int:
        if n == 0:
            return 0
        if n in fib_set:
            return 1
        below = max(f for f in fibs if f < n)
        above = min(f for f in fibs if f > n)
        return 1 + min(best(n - below), best(above - n))

    return best(k)


@ENVIRONMENTS.register("minimum_fibonacci_representation")
class MinimumFibonacciRepresentation(Environment):
    """The fewest Fibonacci numbers, each added or subtracted, whose signed sum is K. Binary
    reward (RLVE row MinimumFibonacciRepresentation)."""

    tags = TAGS
    difficulty_scales = "K up to 15·1.5^d"
    size_measure = "the value K"
    answer_kind = "integer"

    def problem_space(self, difficulty: int) -> int | None:
        top = int(15 * 1.5**difficulty)
        return top - max(1, top // 3) + 1

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        k = rng.randint(max(1, int(15 * 1.5**difficulty) // 3), int(15 * 1.5**difficulty))
        prompt = (
            "Define the Fibonacci numbers as F_1 = 1, F_2 = 2 and F_n = F_(n-1) + F_(n-2) for "
            "n > 2 (so 1, 2, 3, 5, 8, 13, ...). We want to write a positive integer K as a sum "
            "of terms, each term being a Fibonacci number with a plus or a minus sign; the same "
            "Fibonacci number may be used more than once. For example, 10 = 8 + 2 uses two "
            f"terms and 7 = 8 - 1 uses two terms.\n\nWhat is the smallest number of terms needed "
            f"for K = {k}? Give the number as a single integer."
        )
        return Instance(prompt, str(fewest_fibonacci_terms(k)), {"k": k})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)
        if value < 1:
            return invalid("the number of terms is a positive integer")
        ok = value == fewest_fibonacci_terms(problem.data["k"])
        return graded(0.0, ok, "correct" if ok else "that is not the fewest number of terms")

    def solve(self, problem: Problem) -> str:
        return str(fewest_fibonacci_terms(problem.data["k"]))

    def size(self, problem: Problem) -> float:
        return float(problem.data["k"])


# ---- next palindrome ----------------------------------------------------------------------
def next_palindrome(n: int) -> int:
    """The smallest palindromic number greater than ``n`` ≥ 0 (mirror the left half; if that
    is not larger, increment the left half and mirror again)."""
    s = str(n + 1)
    length = len(s)
    half = s[: (length + 1) // 2]
    candidate = int(half + half[: length // 2][::-1])
    if candidate >= n + 1:
        return candidate
    bumped = str(int(half) + 1)
    if len(bumped) > len(half):  # 99..9 → 10..01
        return 10**length + 1
    return int(bumped + bumped[: length // 2][::-1])


@ENVIRONMENTS.register("next_palindromic")
class NextPalindromic(Environment):
    """The smallest palindromic number greater than N. Any palindrome above N is a valid
    answer with (gold/answer)^5 credit; one at most N, or not a palindrome, is invalid."""

    tags = TAGS
    difficulty_scales = "digits of N: 2, then int(1.1·digits + 1) per level (at most 1000)"
    size_measure = "digits of N"
    answer_kind = "integer"

    def problem_space(self, difficulty: int) -> int | None:
        return 90 if difficulty == 0 else None

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        digits = grown(2, difficulty, 1000)
        kind = rng.random()
        if kind < 0.1:
            n = 10**digits - 1  # all nines
        elif kind < 0.3:  # a palindrome itself, or just below one
            left = str(rng.randint(10 ** ((digits + 1) // 2 - 1), 10 ** ((digits + 1) // 2) - 1))
            n = int(left + left[: digits // 2][::-1]) - rng.randint(0, 1)
        else:
            n = rng.randint(10 ** (digits - 1), 10**digits - 1)
        prompt = (
            f"Find the smallest palindromic number that is greater than {n}. A palindromic "
            "number reads the same forwards and backwards in decimal (for example 7, 44 or "
            "12321). Give the number as a single integer."
        )
        return Instance(prompt, str(next_palindrome(n)), {"n": n})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)
        if value <= problem.data["n"]:
            return invalid("the number must be greater than the given one")
        if str(value) != str(value)[::-1]:
            return invalid("that number is not a palindrome")
        best = next_palindrome(problem.data["n"])
        return optimum_verdict(value, best, "a smaller palindrome is larger than it", minimise=True)

    def solve(self, problem: Problem) -> str:
        # Independent: walk the palindromes of the same length upwards from the mirrored
        # prefix of N (at most a few candidates), else the smallest longer palindrome.
        n = problem.data["n"]
        s = str(n)
        half_len = (len(s) + 1) // 2
        start = int(s[:half_len])
        for left in range(start, start + 3):
            ls = str(left)
            if len(ls) > half_len:
                break
            cand = int(ls + ls[: len(s) // 2][::-1])
            if cand > n:
                return str(cand)
        return str(10 ** len(s) + 1)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return str(int(answer) + 1)  # N has 2+ digits, so p + 1 is no palindrome

    def size(self, problem: Problem) -> float:
        return float(len(str(problem.data["n"])))


# ---- prime-step distance -----------------------------------------------------------------
def prime_step_distance(a: int, b: int) -> int:
    """Fewest multiplications/divisions by a prime turning ``a`` into ``b``: every prime factor
    of a/g and of b/g, with g = gcd(a, b), costs one step."""
    g = math.gcd(a, b)
    return _prime_factor_count(a // g) + _prime_factor_count(b // g)


@ENVIRONMENTS.register("odl_distance")
class OdlDistance(Environment):
    """For each number of a list, the smallest prime-step distance to another number of the
    list (a step multiplies by a prime or divides by a prime factor). Reward: element-wise
    match^5 (RLVE row ODLDistance); a list of the wrong length is invalid."""

    tags = TAGS
    difficulty_scales = "N = 3 + d numbers in 1..20·(d + 2)"
    size_measure = "length N of the list"
    answer_kind = "integer_list"
    size_key = "values"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        values = [rng.randint(1, 20 * (difficulty + 2)) for _ in range(n)]
        listing = ", ".join(f"A[{i}] = {v}" for i, v in enumerate(values))
        prompt = (
            "Define an operation on a positive integer as either multiplying it by a prime "
            "number, or dividing it by a prime number (only if it is divisible by that prime). "
            "The distance d(x, y) is the smallest number of operations turning x into y (for "
            "example d(12, 18) = 2: 12 / 2 = 6, 6 * 3 = 18).\n\n"
            f"You are given {n} numbers: {listing}.\nFor every index i, find the smallest "
            "distance d(A[i], A[j]) over all indices j ≠ i (equal numbers have distance 0). "
            f"Give the {n} distances in index order, separated by spaces."
        )
        return Instance(prompt, " ".join(map(str, self._distances(values))), {"values": values})

    @staticmethod
    def _distances(values: list[int]) -> list[int]:
        return [
            min(prime_step_distance(a, b) for j, b in enumerate(values) if j != i)
            for i, a in enumerate(values)
        ]

    def check(self, problem: Problem, answer: str) -> Verdict:
        got = parse_int_list(answer)
        values = problem.data["values"]
        if len(got) != len(values):
            return invalid(f"give exactly {len(values)} distances")
        # Distances by factor multisets (independent of the gcd formula used in generation).
        factors = [Counter(_factor_list(v)) for v in values]
        gold = [
            min(sum(((fa - fb) + (fb - fa)).values()) for j, fb in enumerate(factors) if j != i)
            for i, fa in enumerate(factors)
        ]
        ok = got == gold
        return graded(sequence_reward(got, gold, 5.0), ok, "some distances are not right")

    def solve(self, problem: Problem) -> str:
        return " ".join(map(str, self._distances(problem.data["values"])))


def _factor_list(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out
