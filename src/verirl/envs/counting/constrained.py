"""Counting under constraints: subsets without doubles and triples, line-ups, binary strings
avoiding a pattern, partitions into distinct parts, palindromic partitions, numbers with a
palindromic substring, pairs of binary strings, range maxima over all arrays.

Rows NoDoubleTripleCounting, NoAdjacentGirlCounting, NotContainingStringCounting,
NumberPartitionCounting, PalindromePartitionCounting, PalindromicSubstringNumberCounting,
PairMoreOneCounting and MaxRMQExpectation of the RLVE catalogue (Zeng et al., *RLVE: Scaling
Up Reinforcement Learning for Language Models with Adaptive Verifiable Environments*,
arXiv:2511.07317).
Exact counts earn RLVE's (min/max)^10; counts asked modulo a number are right or wrong (a
residue close in value is no closer to right) and a residue outside [0, m) is invalid.
Each generator and verifier derive the count in two different ways (a closed form against a
dynamic programme, or two different recurrences); the tests add brute force on small cases.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from typing import ClassVar

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    IntegerAnswer,
    graded,
    invalid,
    parse_int,
)
from verirl.envs.kit.size_ladder import grown
from verirl.types import Problem, Verdict

TAGS = ("rlve", "counting")


class _Count(IntegerAnswer):
    tags = TAGS


class _CountModulo(Environment):
    """A count asked modulo ``data["modulus"]``: binary reward, out-of-range is invalid."""

    tags = TAGS
    answer_kind = "integer"

    def residue(self, problem: Problem) -> int:
        raise NotImplementedError

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)
        if not 0 <= value < problem.data["modulus"]:
            return invalid("give the remainder, between 0 and the modulus minus 1")
        ok = value == self.residue(problem)
        return graded(0.0, ok, "correct" if ok else "the remainder is not right")

    def solve(self, problem: Problem) -> str:
        return str(self.residue(problem))


# ---- subsets of 1..N without x together with 2x or 3x -------------------------------------
@functools.cache
def _grid_independent_sets(widths: tuple[int, ...]) -> int:
    """Independent sets of a staircase grid (row r has ``widths[r]`` cells; a cell is adjacent
    to its right neighbour and to the cell below), by a row-mask dynamic programme."""

    def masks(width: int) -> list[int]:
        return [m for m in range(1 << width) if m & (m >> 1) == 0]

    ways = {m: 1 for m in masks(widths[0])}
    for width in widths[1:]:
        nxt = {}
        for m in masks(width):
            nxt[m] = sum(c for prev, c in ways.items() if prev & m == 0)
        ways = nxt
    return sum(ways.values())


def _profile_count(cells: set[tuple[int, int]]) -> int:
    """Independent sets of the grid graph on ``cells`` (neighbours differ by one in one
    coordinate), cell by cell in row-major order keeping the last row's choices."""
    if not cells:
        return 1
    width = 1 + max(b for _, b in cells)
    ways: dict[tuple[int, ...], int] = {(0,) * width: 1}
    for a in range(1 + max(a for a, _ in cells)):
        for b in range(width):
            nxt: dict[tuple[int, ...], int] = {}
            for prof, c in ways.items():
                off = (*prof[:b], 0, *prof[b + 1 :])
                nxt[off] = nxt.get(off, 0) + c
                left = b > 0 and prof[b - 1]
                if (a, b) in cells and not prof[b] and not left:
                    on = (*prof[:b], 1, *prof[b + 1 :])
                    nxt[on] = nxt.get(on, 0) + c
            ways = nxt
    return sum(ways.values())


def no_double_triple_subsets(n: int) -> int:
    """Subsets of {1..n} with no x such that 2x or 3x is also chosen: the numbers split into
    independent grids {m·2^a·3^b} over m coprime to 6."""
    total = 1
    for m in range(1, n + 1):
        if m % 2 and m % 3:
            widths = []
            row = m
            while row <= n:
                width, cell = 0, row
                while cell <= n:
                    width, cell = width + 1, cell * 2
                widths.append(width)
                row *= 3
            total *= _grid_independent_sets(tuple(widths))
    return total


@ENVIRONMENTS.register("no_double_triple_counting")
class NoDoubleTripleCounting(_Count):
    """Subsets of {1..N} closed under no doubling or tripling; (min/max)^10 credit."""

    difficulty_scales = "N in 4 + 2d .. 10 + 3d"
    size_measure = "N (the size of the ground set)"

    def problem_space(self, difficulty: int) -> int | None:
        return 7 + difficulty

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(4 + 2 * difficulty, 10 + 3 * difficulty)
        prompt = (
            f"How many subsets of {{1, 2, ..., {n}}} (the empty set included) satisfy that "
            "whenever x is in the subset, neither 2 × x nor 3 × x is in the subset? Give the "
            "count as a single integer."
        )
        return Instance(prompt, str(no_double_triple_subsets(n)), {"n": n})

    def solve_int(self, problem: Problem) -> int:
        return no_double_triple_subsets(problem.data["n"])

    def solve(self, problem: Problem) -> str:
        # Independent: brute force over all subsets for small n; otherwise each chain
        # m·3^b·2^a is processed cell by cell (a broken-profile DP over the transposed grid,
        # rows = powers of 2), unlike the row-mask DP of the generator.
        n = problem.data["n"]
        if n <= 16:
            count = 0
            for mask in range(1 << n):
                ok = all(
                    not (mask >> (x - 1) & 1)
                    or all(not (mask >> (y - 1) & 1) for y in (2 * x, 3 * x) if y <= n)
                    for x in range(1, n + 1)
                )
                count += ok
            return str(count)
        total = 1
        for m in range(1, n + 1, 2):
            if m % 3 == 0:
                continue
            cells = [
                (a, b)
                for a in range(n.bit_length())
                for b in range(n.bit_length())
                if m * 2**a * 3**b <= n
            ]
            total *= _profile_count(set(cells))
        return str(total)

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


# ---- boys, girls and two teachers in a line ----------------------------------------------
def _people(count: int, noun: str) -> str:
    return f"1 {noun}" if count == 1 else f"{count} distinct {noun}s"


@ENVIRONMENTS.register("no_adjacent_girl_counting")
class NoAdjacentGirlCounting(_Count):
    """Line-ups of n boys, m girls and 2 teachers (all distinct) with no two girls adjacent and
    the teachers apart; (min/max)^10 credit."""

    difficulty_scales = "n, m up to 2, then int(1.1·x + 1) per level (at most 60)"
    size_measure = "n + m (people besides the teachers)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = grown(2, difficulty, 60)
        n, m = rng.randint(1, top), rng.randint(1, top)
        prompt = (
            f"Please count the number of ways to arrange {_people(n, 'boy')}, "
            f"{_people(m, 'girl')}, and 2 distinct teachers in a line such that no two girls "
            "are adjacent and the two teachers are not adjacent (all people are distinct, so "
            "swapping two of them gives another arrangement). Give the count as a single "
            "integer."
        )
        # Inclusion–exclusion: girls into the n + 3 gaps around the n + 2 others, minus the
        # line-ups where the teachers form one block (2 orders).
        gold = math.factorial(n + 2) * math.perm(n + 3, m) - 2 * math.factorial(n + 1) * math.perm(
            n + 2, m
        )
        return Instance(prompt, str(gold), {"boys": n, "girls": m})

    def problem_space(self, difficulty: int) -> int | None:
        top = grown(2, difficulty, 60)
        return top * top

    def solve_int(self, problem: Problem) -> int:
        n, m = problem.data["boys"], problem.data["girls"]
        return math.factorial(n + 2) * math.perm(n + 3, m) - 2 * math.factorial(n + 1) * math.perm(
            n + 2, m
        )

    def solve(self, problem: Problem) -> str:
        # Independent: count type sequences (B, G, T) left to right with the last type
        # remembered, then label the people.
        n, m = problem.data["boys"], problem.data["girls"]

        @functools.cache
        def seqs(b: int, g: int, t: int, last: str) -> int:
            if b == g == t == 0:
                return 1
            total = 0
            if b:
                total += seqs(b - 1, g, t, "B")
            if g and last != "G":
                total += seqs(b, g - 1, t, "G")
            if t and last != "T":
                total += seqs(b, g, t - 1, "T")
            return total

        result = seqs(n, m, 2, "")
        seqs.cache_clear()
        return str(result * math.factorial(n) * math.factorial(m) * 2)

    def size(self, problem: Problem) -> float:
        return float(problem.data["boys"] + problem.data["girls"])


# ---- binary strings avoiding a pattern ---------------------------------------------------
@ENVIRONMENTS.register("not_containing_string_counting")
class NotContainingStringCounting(_CountModulo):
    """Binary strings of length N that avoid a pattern, modulo m (binary reward)."""

    difficulty_scales = "N up to 8 + 20d; pattern length 2 .. 3 + d//3"
    size_measure = "N times the pattern length (automaton DP steps)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(4 + difficulty, 8 + 20 * difficulty)
        k = rng.randint(2, min(n, 3 + difficulty // 3))
        pattern = "".join(rng.choice("01") for _ in range(k))
        modulus = rng.randint(1000, 10**9)
        prompt = (
            f"Please count the number of binary (0/1) strings of length {n} that do NOT "
            f"contain the substring {pattern} (as consecutive characters). Output the result "
            f"modulo {modulus}, as a single integer."
        )
        data = {"n": n, "pattern": pattern, "modulus": modulus}
        return Instance(prompt, str(self._kmp_count(n, pattern, modulus)), data)

    @staticmethod
    def _kmp_count(n: int, pattern: str, modulus: int) -> int:
        """DP over the KMP automaton state (length of the matched prefix)."""
        k = len(pattern)
        fail = [0] * k
        for i in range(1, k):
            j = fail[i - 1]
            while j and pattern[i] != pattern[j]:
                j = fail[j - 1]
            fail[i] = j + (pattern[i] == pattern[j])
        step = [[0, 0] for _ in range(k)]
        for state in range(k):
            for bit, ch in enumerate("01"):
                j = state
                while j and pattern[j] != ch:
                    j = fail[j - 1]
                step[state][bit] = j + (pattern[j] == ch)
        ways = [1] + [0] * (k - 1)
        for _ in range(n):
            nxt = [0] * k
            for state, c in enumerate(ways):
                if c:
                    for bit in (0, 1):
                        t = step[state][bit]
                        if t < k:
                            nxt[t] = (nxt[t] + c) % modulus
            ways = nxt
        return sum(ways) % modulus

    def residue(self, problem: Problem) -> int:
        # Independent: the automaton state is the longest suffix of the text that is a
        # prefix of the pattern, found directly (no failure links).
        n, pattern, modulus = (problem.data[k] for k in ("n", "pattern", "modulus"))
        k = len(pattern)

        def advance(prefix: str, ch: str) -> int:
            s = prefix + ch
            for length in range(min(len(s), k), -1, -1):
                if s.endswith(pattern[:length]):
                    return length
            return 0

        table = [[advance(pattern[:state], ch) for ch in "01"] for state in range(k)]
        ways = [1] + [0] * (k - 1)
        for _ in range(n):
            nxt = [0] * k
            for state, c in enumerate(ways):
                for t in table[state]:
                    if t < k:
                        nxt[t] += c
            ways = [c % modulus for c in nxt]
        return sum(ways) % modulus

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"] * len(problem.data["pattern"]))


# ---- partitions into distinct parts ------------------------------------------------------
@ENVIRONMENTS.register("number_partition_counting")
class NumberPartitionCounting(_Count):
    """Ways to write N as a sum of exactly K distinct positive integers (order ignored);
    (min/max)^10 credit."""

    difficulty_scales = "N in 6 + d .. 10 + 15d; K in 2 .. 2 + d//3"
    size_measure = "N (the number partitioned)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        while True:
            n = rng.randint(6 + difficulty, 10 + 15 * difficulty)
            k = rng.randint(2, 2 + difficulty // 3)
            if k * (k + 1) // 2 <= n:
                break
        prompt = (
            f"You are given a positive integer {n}. Your task is to divide it into exactly {k} "
            "positive integers such that: the integers are pairwise distinct, and they sum to "
            f"{n}. The order does not matter (so 1 + 5 and 5 + 1 are the same division). How "
            "many such divisions are there? Give the count as a single integer."
        )
        # q(n, k) = q(n - k, k) + q(n - k, k - 1): subtract 1 from every part; the part 1 (if
        # any) disappears.
        q = [[0] * (k + 1) for _ in range(n + 1)]
        q[0][0] = 1
        for s in range(1, n + 1):
            for j in range(1, k + 1):
                if s >= j:
                    q[s][j] = q[s - j][j] + q[s - j][j - 1]
        return Instance(prompt, str(q[n][k]), {"n": n, "k": k})

    def problem_space(self, difficulty: int) -> int | None:
        return (5 + 14 * difficulty) * (1 + difficulty // 3)

    def solve_int(self, problem: Problem) -> int:
        # Independent: remove the staircase 0, 1, ..., k-1 from the sorted parts; what remains
        # is a partition of n - k(k-1)/2 into exactly k parts, i.e. (by conjugation) into
        # parts of size at most k with largest part k: coin DP over sizes 1..k.
        n, k = problem.data["n"], problem.data["k"]
        rest = n - k * (k - 1) // 2 - k  # after also removing one from each of the k parts
        if rest < 0:
            return 0
        ways = [1] + [0] * rest  # partitions of rest into parts ≤ k (≤ k parts, conjugated)
        for part in range(1, k + 1):
            for s in range(part, rest + 1):
                ways[s] += ways[s - part]
        return ways[rest]

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


# ---- palindromic partitions --------------------------------------------------------------
@ENVIRONMENTS.register("palindrome_partition_counting")
class PalindromePartitionCounting(_Count):
    """Ways to cut a string into palindromic pieces; (min/max)^10 credit."""

    difficulty_scales = "string length 5, then int(1.1·N + 1) per level (at most 60)"
    size_measure = "length of the string"
    size_key = "text"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(5, difficulty, 60)
        letters = "ab" if difficulty >= 3 and rng.random() < 0.6 else "abc"
        text = "".join(rng.choice(letters) for _ in range(n))
        prompt = (
            f"Please count the number of ways to partition the string {text} into (non-empty) "
            "palindromic substrings, where the number of substrings is arbitrary. A partition "
            "cuts the string into consecutive pieces that together give the whole string; a "
            "palindrome reads the same forwards and backwards. Give the count as a single "
            "integer."
        )
        ways = [1] + [0] * n  # ways[i]: partitions of text[:i]
        for i in range(1, n + 1):
            ways[i] = sum(ways[j] for j in range(i) if text[j:i] == text[j:i][::-1])
        return Instance(prompt, str(ways[n]), {"text": text})

    def solve_int(self, problem: Problem) -> int:
        # Independent: suffix recursion with the palindrome table grown from the centres.
        text = problem.data["text"]
        n = len(text)
        pal = [[False] * (n + 1) for _ in range(n + 1)]  # pal[i][j]: text[i:j] palindrome
        for centre in range(2 * n - 1):
            lo, hi = centre // 2, (centre + 1) // 2
            while lo >= 0 and hi < n and text[lo] == text[hi]:
                pal[lo][hi + 1] = True
                lo, hi = lo - 1, hi + 1
        tail = [0] * n + [1]  # tail[i]: partitions of text[i:]
        for i in range(n - 1, -1, -1):
            tail[i] = sum(tail[j] for j in range(i + 1, n + 1) if pal[i][j])
        return tail[0]


# ---- numbers containing a palindromic substring ------------------------------------------
def count_with_palindrome_upto(limit: int) -> int:
    """How many of 1..limit have a palindromic substring of length ≥ 2 in decimal — exactly
    those with two equal digits at distance 1 or 2 — by a digit DP over the last two digits."""
    if limit <= 0:
        return 0
    digits = list(map(int, str(limit)))

    @functools.cache
    def free(pos: int, prev2: int, prev1: int, tight: bool, started: bool) -> int:
        """Numbers (by their remaining digits) that avoid such a pair so far."""
        if pos == len(digits):
            return 1 if started else 0
        total = 0
        for d in range(0, (digits[pos] if tight else 9) + 1):
            t = tight and d == digits[pos]
            if not started and d == 0:
                total += free(pos + 1, -1, -1, t, False)
            elif d != prev1 and d != prev2:
                total += free(pos + 1, prev1, d, t, True)
        return total

    avoid = free(0, -1, -1, True, False)
    free.cache_clear()
    return limit - avoid


@ENVIRONMENTS.register("palindromic_substring_number_counting")
class PalindromicSubstringNumberCounting(_Count):
    """How many integers in [L, R] contain a palindromic substring of length at least 2;
    (min/max)^10 credit."""

    difficulty_scales = "R up to 20·1.5^d"
    size_measure = "R (the range top)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = int(20 * 1.5**difficulty)
        left, right = sorted(rng.randint(1, top) for _ in range(2))
        prompt = (
            "We treat every positive integer as a string of digits (without leading zeros). "
            f"How many integers x with {left} ≤ x ≤ {right} have a palindromic substring of "
            "length at least 2 (a block of consecutive digits, two or more long, that reads the "
            "same forwards and backwards, like 33 in 1332 or 525 in 75251)? Give the count as a "
            "single integer."
        )
        gold = count_with_palindrome_upto(right) - count_with_palindrome_upto(left - 1)
        return Instance(prompt, str(gold), {"left": left, "right": right})

    def solve_int(self, problem: Problem) -> int:
        left, right = problem.data["left"], problem.data["right"]
        return count_with_palindrome_upto(right) - count_with_palindrome_upto(left - 1)

    def solve(self, problem: Problem) -> str:
        left, right = problem.data["left"], problem.data["right"]
        if right - left <= 20_000:  # brute force on the strings themselves
            return str(
                sum(
                    1
                    for x in range(left, right + 1)
                    if any(
                        s[i : j + 1] == s[i : j + 1][::-1]
                        for s in (str(x),)
                        for i in range(len(s))
                        for j in range(i + 1, min(len(s), i + 3))
                    )
                )
            )
        return str(self.solve_int(problem))

    def size(self, problem: Problem) -> float:
        return float(problem.data["right"])


# ---- pairs of binary strings -------------------------------------------------------------
MOD = 1_000_000_007


@ENVIRONMENTS.register("pair_more_one_counting")
class PairMoreOneCounting(_CountModulo):
    """Pairs (S, T) of binary strings, |S| = M + δ and |T| = M, where S has more ones than T,
    modulo 10^9 + 7 (binary reward)."""

    difficulty_scales = "M up to 10·2^(d//3) (at most 10^5); δ up to 5 + d"
    size_measure = "total length of S and T"
    fixed_modulus: ClassVar[int] = MOD

    def problem_space(self, difficulty: int) -> int | None:
        return 10 * 2 ** (difficulty // 3) * (6 + difficulty)

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        m = rng.randint(1, min(100_000, 10 * 2 ** (difficulty // 3)))
        delta = rng.randint(0, 5 + difficulty)
        prompt = (
            "Please count the number of pairs of binary strings (S, T) such that: S has length "
            f"{m + delta}, T has length {m}, and S contains more 1s than T does. Output the "
            f"count modulo {MOD}, as a single integer."
        )
        data = {"m": m, "delta": delta, "modulus": MOD}
        return Instance(prompt, str(self._sum_of_products(m + delta, m)), data)

    @staticmethod
    def _sum_of_products(n: int, m: int) -> int:
        """Σ_{i > j} C(n, i)·C(m, j) mod p, with a running prefix sum over j."""
        fact = [1] * (n + m + 2)
        for i in range(1, len(fact)):
            fact[i] = fact[i - 1] * i % MOD
        inv = [pow(f, MOD - 2, MOD) for f in fact]

        def binom(a: int, b: int) -> int:
            return 0 if b < 0 or b > a else fact[a] * inv[b] % MOD * inv[a - b] % MOD

        total, prefix = 0, 0
        for i in range(1, n + 1):
            prefix = (prefix + binom(m, i - 1)) % MOD  # Σ_{j < i} C(m, j)
            total = (total + binom(n, i) * prefix) % MOD
        return total

    def residue(self, problem: Problem) -> int:
        # Independent (Vandermonde): #1(S) > #1(T) ⇔ #1(S) + #0(T) > M, i.e. more than M ones
        # in S followed by T complemented: Σ_{k > M} C(n + M, k), the row built by
        # C(L, k + 1) = C(L, k)·(L − k)/(k + 1).
        m, n = problem.data["m"], problem.data["m"] + problem.data["delta"]
        length, binom, total = n + m, 1, 0
        for k in range(length + 1):
            if k > m:
                total += binom
            binom = binom * (length - k) % MOD * pow(k + 1, MOD - 2, MOD) % MOD
        return total % MOD

    def size(self, problem: Problem) -> float:
        return float(2 * problem.data["m"] + problem.data["delta"])


# ---- range maxima over all arrays --------------------------------------------------------
def range_max_total(n: int, m: int) -> int:
    """Σ over all m^n arrays of Σ over ranges [l, r] of max(A[l..r]): a range of length L has
    maximum v in v^L - (v-1)^L of its fillings, and the other n - L cells are free."""
    total = 0
    for length in range(1, n + 1):
        per_range = sum(v * (v**length - (v - 1) ** length) for v in range(1, m + 1))
        total += (n - length + 1) * m ** (n - length) * per_range
    return total


@ENVIRONMENTS.register("max_rmq_expectation")
class MaxRmqExpectation(_Count):
    """The expected sum of range maxima of a random array, times M^N (an integer); exact
    answer required (binary reward)."""

    difficulty_scales = "N in 2..3 + d//2, M in 2..3 + d//3"
    size_measure = "N (array length) times M (values)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = rng.randint(2, 3 + difficulty // 2), rng.randint(2, 3 + difficulty // 3)
        prompt = (
            f"Let's randomly generate an array A[1], ..., A[{n}], where each A[i] is "
            f"independently and uniformly chosen from the integers 1 to {m} (so there are "
            f"{m}^{n} possible arrays in total). For an array, let F be the sum of "
            "max(A[l], ..., A[r]) over all pairs 1 ≤ l ≤ r ≤ "
            f"{n}. Compute the expected value of F multiplied by {m}^{n} (this is an integer: "
            "the sum of F over all possible arrays). Give it as a single integer."
        )
        return Instance(prompt, str(range_max_total(n, m)), {"n": n, "m": m})

    def problem_space(self, difficulty: int) -> int | None:
        return (2 + difficulty // 2) * (2 + difficulty // 3)

    def check(self, problem: Problem, answer: str) -> Verdict:
        ok = parse_int(answer) == self.solve_int(problem)
        return graded(0.0, ok, "correct" if ok else "that is not the total")

    def solve_int(self, problem: Problem) -> int:
        return range_max_total(problem.data["n"], problem.data["m"])

    def solve(self, problem: Problem) -> str:
        # Independent: brute force over every array when small; otherwise, per range,
        # E[max] = Σ_v P(max ≥ v) with P(max ≥ v) = 1 - ((v - 1)/m)^L.
        n, m = problem.data["n"], problem.data["m"]
        if m**n <= 20_000:
            return str(
                sum(
                    sum(max(arr[l : r + 1]) for l in range(n) for r in range(l, n))
                    for arr in itertools.product(range(1, m + 1), repeat=n)
                )
            )
        total = 0
        for l in range(n):
            for r in range(l, n):
                length = r - l + 1
                total += m ** (n - length) * sum(
                    m**length - (v - 1) ** length for v in range(1, m + 1)
                )
        return str(total)

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"] * problem.data["m"])
