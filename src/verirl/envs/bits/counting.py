"""Bit counting: total popcount over a range, numbers with k one-bits, Gray-code ranks, the
AND of a range, pairs with a zero AND, subsets whose OR hits a target, and the sum of
pairwise Hamming distances.

Bit tasks in the spirit of RLVE-Gym's bit rows (Zeng et al. 2025, "RLVE: Scaling Up
Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A: DeltaMinPopcount, BitAndZero_PathCounting,
BitwiseOperationSequenceCounting). Generators use per-bit or digit-DP formulas; each
``solve_int`` brute-forces where the instance is small and uses a second formula otherwise,
so the contract tests cross-check them. Answers are integers scored with (min/max)^10.
"""

from __future__ import annotations

import math
import random

from verirl.envs.base import ENVIRONMENTS, Instance
from verirl.envs.kit.answers import SizedInteger
from verirl.types import Problem

TAGS = ("bits",)


def _ones_up_to(n: int) -> int:
    """Σ popcount(x) for 0 ≤ x ≤ n, per bit: full cycles of 2^(b+1) plus the remainder."""
    total = 0
    for b in range(n.bit_length()):
        cycle = 1 << (b + 1)
        total += (n + 1) // cycle * (cycle >> 1) + max(0, (n + 1) % cycle - (cycle >> 1))
    return total


def _ones_up_to_recursive(n: int) -> int:
    """Σ popcount over [0, n] by splitting at the top bit: [0, 2^k) has k·2^(k-1) ones."""
    if n <= 0:
        return 0
    k = n.bit_length() - 1
    top = 1 << k
    return k * (top >> 1) + (n - top + 1) + _ones_up_to_recursive(n - top)


@ENVIRONMENTS.register("popcount_range_sum")
class PopcountRangeSum(SizedInteger):
    """The total number of one-bits in the binary forms of L, L+1, ..., R."""

    tags = TAGS
    difficulty_scales = "R below 2^(6 + 2d)"
    size_measure = "bits of R"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        bits = 6 + 2 * difficulty
        lo, hi = sorted((rng.randrange(1, 1 << bits), rng.randrange(1, 1 << bits)))
        prompt = (
            f"Write every integer from {lo} to {hi} (inclusive) in binary. How many digits 1 "
            "are written in total?"
        )
        answer = _ones_up_to(hi) - _ones_up_to(lo - 1)
        return Instance(prompt, str(answer), {"lo": lo, "hi": hi, "size": hi.bit_length()})

    def solve_int(self, problem: Problem) -> int:
        lo, hi = problem.data["lo"], problem.data["hi"]
        if hi - lo < 5000:
            return sum(x.bit_count() for x in range(lo, hi + 1))
        return _ones_up_to_recursive(hi) - _ones_up_to_recursive(lo - 1)


def _k_ones_at_most(n: int, k: int) -> int:
    """How many 0 ≤ x ≤ n have exactly k one-bits (walk n's bits from the top)."""
    count, seen = 0, 0
    for b in range(n.bit_length() - 1, -1, -1):
        if n >> b & 1:
            if k - seen >= 0:
                count += math.comb(b, k - seen)
            seen += 1
    return count + (1 if n.bit_count() == k else 0)


@ENVIRONMENTS.register("k_ones_counting")
class KOnesCounting(SizedInteger):
    """How many integers in [1, N] have exactly k ones in binary."""

    tags = TAGS
    difficulty_scales = "N below 2^(7 + 2d)"
    size_measure = "bits of N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        bits = 7 + 2 * difficulty
        n = rng.randrange(1 << (bits - 1), 1 << bits)
        k = rng.randint(2, max(2, bits // 2 + 1))
        prompt = (
            f"How many integers x with 1 ≤ x ≤ {n} have exactly {k} ones in their binary "
            "representation?"
        )
        return Instance(prompt, str(_k_ones_at_most(n, k)), {"n": n, "k": k, "size": bits})

    def solve_int(self, problem: Problem) -> int:
        n, k = problem.data["n"], problem.data["k"]
        if n < 20_000:
            return sum(1 for x in range(1, n + 1) if x.bit_count() == k)
        # digit DP from the low end: (count of x ≤ prefix) built bit by bit
        bits = [n >> b & 1 for b in range(n.bit_length())]
        # le[j] = numbers of the low i bits that are ≤ n's low i bits with j ones
        le = [1] + [0] * k
        for i, bit in enumerate(bits):
            new = [0] * (k + 1)
            for j in range(k + 1):
                if bit:
                    # put 0 here: any lower pattern (C(i, j)); put 1: lower must be ≤ n's
                    new[j] += math.comb(i, j)
                    if j:
                        new[j] += le[j - 1]
                else:
                    new[j] += le[j]
            le = new
        return le[k]


@ENVIRONMENTS.register("gray_code_rank")
class GrayCodeRank(SizedInteger):
    """The position of a number in the reflected binary Gray-code sequence."""

    tags = TAGS
    difficulty_scales = "codes of 5 + 2d bits"
    size_measure = "bits of the code"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        bits = 5 + 2 * difficulty
        code = rng.randrange(1, 1 << bits)
        rank, shift = code, code >> 1
        while shift:
            rank ^= shift
            shift >>= 1
        prompt = (
            "The reflected binary Gray code lists all n-bit strings so that neighbours differ "
            "in exactly one bit: the i-th string (counting from i = 0) is the binary form of "
            "i XOR (i >> 1), so the list starts 0, 1, 11, 10, 110, 111, 101, 100, ... (leading "
            f"zeros dropped). At which position i does the string {code:b} appear?"
        )
        return Instance(prompt, str(rank), {"code": code, "size": bits})

    def problem_space(self, difficulty: int) -> int | None:
        return (1 << (5 + 2 * difficulty)) - 1 if difficulty < 3 else None

    def solve_int(self, problem: Problem) -> int:
        """Bit b of i is the XOR of the code's bits from the top down to b."""
        code = problem.data["code"]
        rank, acc = 0, 0
        for b in range(code.bit_length() - 1, -1, -1):
            acc ^= code >> b & 1
            rank |= acc << b
        return rank


@ENVIRONMENTS.register("range_bitwise_and")
class RangeBitwiseAnd(SizedInteger):
    """L AND (L+1) AND ... AND R: the common binary prefix of L and R."""

    tags = TAGS
    difficulty_scales = "R below 2^(8 + 2d), R - L at most 2^(2 + d)"
    size_measure = "bits of R"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        bits = 8 + 2 * difficulty
        lo = rng.randrange(1 << (bits - 1), 1 << bits)
        hi = lo + rng.randint(1, 1 << (2 + difficulty))
        shift = 0
        a, b = lo, hi
        while a != b:
            a, b, shift = a >> 1, b >> 1, shift + 1
        prompt = (
            f"Compute the bitwise AND of all integers from {lo} to {hi} inclusive, that is "
            f"{lo} AND {lo + 1} AND ... AND {hi}. Give the result as a decimal integer."
        )
        return Instance(prompt, str(a << shift), {"lo": lo, "hi": hi, "size": hi.bit_length()})

    def solve_int(self, problem: Problem) -> int:
        lo, hi = problem.data["lo"], problem.data["hi"]
        if hi - lo < 5000:
            out = lo
            for x in range(lo + 1, hi + 1):
                out &= x
            return out
        out = hi
        while out > lo:  # clear the lowest set bit while the value stays above L
            out &= out - 1
        return out


def _random_values(rng: random.Random, n: int, bits: int) -> list[int]:
    return [rng.randrange(1 << bits) for _ in range(n)]


@ENVIRONMENTS.register("zero_and_pairs_counting")
class ZeroAndPairsCounting(SizedInteger):
    """Pairs i < j with A[i] AND A[j] = 0."""

    tags = TAGS
    difficulty_scales = "6 + 2d numbers below 2^min(14, 4 + d//3)"
    size_measure = "array length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, bits = 6 + 2 * difficulty, min(14, 4 + difficulty // 3)
        values = _random_values(rng, n, bits)
        prompt = (
            f"You are given {n} integers: {' '.join(map(str, values))}\nHow many pairs of "
            "positions i < j are there whose numbers have bitwise AND equal to 0?"
        )
        # sum over submasks: f[m] = how many values are submasks of m
        full = (1 << bits) - 1
        f = [0] * (1 << bits)
        for v in values:
            f[v] += 1
        for b in range(bits):
            for m in range(1 << bits):
                if m >> b & 1:
                    f[m] += f[m ^ (1 << b)]
        ordered = sum(f[full ^ v] for v in values) - values.count(0)
        return Instance(prompt, str(ordered // 2), {"values": values, "size": n})

    def solve_int(self, problem: Problem) -> int:
        v = problem.data["values"]
        return sum(1 for i in range(len(v)) for j in range(i + 1, len(v)) if v[i] & v[j] == 0)


@ENVIRONMENTS.register("or_subset_counting")
class OrSubsetCounting(SizedInteger):
    """Non-empty subsets whose bitwise OR equals a target."""

    tags = TAGS
    difficulty_scales = "5 + d numbers below 2^min(12, 4 + d//4)"
    size_measure = "number of values"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, bits = 5 + difficulty, min(12, 4 + difficulty // 4)
        values = _random_values(rng, n, bits)
        target = 0
        for v in rng.sample(values, rng.randint(2, max(2, n // 2))):
            target |= v
        prompt = (
            f"You are given {n} integers (positions matter, equal values at different positions "
            f"are different elements): {' '.join(map(str, values))}\nHow many non-empty subsets "
            f"of these elements have a bitwise OR equal to exactly {target}?"
        )
        ways = {0: 1}  # OR value -> number of subsets (the empty one included)
        for v in values:
            for key, count in list(ways.items()):
                ways[key | v] = ways.get(key | v, 0) + count
        answer = ways.get(target, 0) - (1 if target == 0 else 0)
        return Instance(prompt, str(answer), {"values": values, "target": target, "size": n})

    def solve_int(self, problem: Problem) -> int:
        """Inclusion–exclusion over submasks T' of the target: (-1)^|T \\ T'| (2^{#v ⊆ T'} - 1)."""
        values, target = problem.data["values"], problem.data["target"]
        if len(values) <= 14:
            count = 0
            for mask in range(1, 1 << len(values)):
                acc = 0
                for i, v in enumerate(values):
                    if mask >> i & 1:
                        acc |= v
                count += acc == target
            return count
        total, sub = 0, target
        while True:
            inside = sum(1 for v in values if v | sub == sub)
            sign = -1 if (target ^ sub).bit_count() % 2 else 1
            total += sign * ((1 << inside) - 1)
            if sub == 0:
                return total
            sub = (sub - 1) & target


@ENVIRONMENTS.register("hamming_distance_sum")
class HammingDistanceSum(SizedInteger):
    """Σ over pairs of the Hamming distance between binary forms."""

    tags = TAGS
    difficulty_scales = "4 + 2d numbers below 2^(4 + d//2)"
    size_measure = "array length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, bits = 4 + 2 * difficulty, 4 + difficulty // 2
        values = _random_values(rng, n, bits)
        prompt = (
            f"You are given {n} integers: {' '.join(map(str, values))}\nThe Hamming distance "
            "of two integers is the number of bit positions at which their binary forms "
            "differ. What is the sum of the Hamming distances over all pairs of positions "
            "i < j?"
        )
        answer = 0
        for b in range(bits):
            ones = sum(v >> b & 1 for v in values)
            answer += ones * (n - ones)
        return Instance(prompt, str(answer), {"values": values, "size": n})

    def solve_int(self, problem: Problem) -> int:
        v = problem.data["values"]
        return sum((v[i] ^ v[j]).bit_count() for i in range(len(v)) for j in range(i + 1, len(v)))
