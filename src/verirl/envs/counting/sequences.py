"""Counting over sequences, permutations, strings and expressions (RLVE catalogue rows, Zeng et
al. 2025, "RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive
Verifiable Environments", arXiv:2511.07317, Appendix A).

Every answer is one integer. The verifier recomputes it with a fast method (prefix sums, two
pointers, merge counting, interval or tree DP, closed formulas) and ``solve`` with an
independent brute force or a second formula, so the two cross-check each other in the tests.
Rewards follow each row: RLVE's count reward (min/max)^10, or right/wrong where the row is
binary (exact permutation counts).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import random
from typing import Any

from verirl.envs.base import ENVIRONMENTS, Instance, graded, parse_int
from verirl.envs.kit.answers import FastCount
from verirl.envs.kit.wording import commas, plural
from verirl.types import Problem, Verdict


class BinaryCount(FastCount):
    """A count scored right or wrong (RLVE's binary rows)."""

    def check(self, problem: Problem, answer: str) -> Verdict:
        ok = parse_int(answer, self.answer_names) == self.count(dict(problem.data))
        return graded(0.0, ok, "correct" if ok else self.wrong_detail)


@ENVIRONMENTS.register("anti_palindromic_substring_counting")
class AntiPalindromicSubstringCounting(FastCount):
    """Substrings (by position) of a binary string whose reverse equals their bitwise
    complement (RLVE AntiPalindromicSubstringCounting); fast: expansion around each centre."""

    difficulty_scales = "string length N = 4 + 2d"
    size_measure = "string length N (brute force checks N²/2 substrings)"
    size_param = "length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + 2 * difficulty
        s = "".join(rng.choice("01") for _ in range(n))
        prompt = (
            "A binary string is anti-palindromic when its reverse equals its bitwise complement "
            "(every 0 becomes 1 and every 1 becomes 0): 0101 and 0011 are anti-palindromic (0011 "
            f"reversed is 1100, its complement), 0110 is not.\n\nS = {s}\n\n"
            f"How many pairs (i, j) with 1 ≤ i ≤ j ≤ {n} are there such that the substring "
            "S[i..j] is anti-palindromic? Substrings at different positions count separately, "
            "even when they are equal."
        )
        return self.instance(prompt, {"s": s, "length": n})

    def problem_space(self, difficulty: int) -> int:
        return 2 ** (4 + 2 * difficulty)

    def count(self, data: dict[str, Any]) -> int:
        s = data["s"]
        total = 0
        for centre in range(1, len(s)):  # anti-palindromes have even length
            lo, hi = centre - 1, centre
            while lo >= 0 and hi < len(s) and s[lo] != s[hi]:
                total += 1
                lo, hi = lo - 1, hi + 1
        return total

    def solve_int(self, problem: Problem) -> int:
        s = problem.data["s"]
        flip = str.maketrans("01", "10")
        return sum(
            1
            for i in range(len(s))
            for j in range(i + 1, len(s) + 1)
            if s[i:j][::-1] == s[i:j].translate(flip)
        )


@ENVIRONMENTS.register("bounded_mean_subarray_counting")
class BoundedMeanSubarrayCounting(FastCount):
    """Non-empty contiguous subarrays with mean ≥ K (RLVE BoundedMeanSubarrayCounting); fast:
    pairs of prefix sums of A − K in order, counted with a sorted list."""

    difficulty_scales = "array length N = 3 + 2d, values 0..9 + d"
    size_measure = "array length N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + 2 * difficulty
        a = [rng.randint(0, 9 + difficulty) for _ in range(n)]
        k = rng.randint(min(a), max(a))
        prompt = (
            f"Given the array A of length {n}: {commas(a)}\n\nHow many non-empty contiguous "
            f"subarrays of A have a mean (average) greater than or equal to {k}?"
        )
        return self.instance(prompt, {"a": a, "k": k, "n": n})

    def count(self, data: dict[str, Any]) -> int:
        a, k = data["a"], data["k"]
        seen, prefix, total = [0], 0, 0
        for v in a:
            prefix += v - k
            total += bisect.bisect_right(seen, prefix)  # earlier prefixes ≤ this one
            bisect.insort(seen, prefix)
        return total

    def solve_int(self, problem: Problem) -> int:
        a, k = problem.data["a"], problem.data["k"]
        return sum(
            1 for i in range(len(a)) for j in range(i + 1, len(a) + 1) if sum(a[i:j]) >= k * (j - i)
        )


@ENVIRONMENTS.register("bounded_subarray_counting")
class BoundedSubarrayCounting(FastCount):
    """Subarrays with sum ≤ K of the array B = A repeated M times (RLVE
    BoundedSubarrayCounting); fast: two pointers over B."""

    difficulty_scales = "A of length N = 3 + d, repeated M = 2 + d//2 times; values 1..9"
    size_measure = "length of B = N·M"
    size_param = "length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = 3 + difficulty, 2 + difficulty // 2
        a = [rng.randint(1, 9) for _ in range(n)]
        k = rng.randint(min(a), sum(a) * m // 2 + 1)
        prompt = (
            f"Given the array A of length {n}: {commas(a)}\n\nRepeat A {m} times to form an "
            f"array B of length {n} × {m} = {n * m}. How many non-empty contiguous subarrays of "
            f"B have a sum less than or equal to {k}?"
        )
        return self.instance(prompt, {"a": a, "m": m, "k": k, "length": n * m})

    def count(self, data: dict[str, Any]) -> int:
        b, k = data["a"] * data["m"], data["k"]
        total, lo, window = 0, 0, 0
        for hi, v in enumerate(b):
            window += v
            while window > k:
                window -= b[lo]
                lo += 1
            total += hi - lo + 1
        return total

    def solve_int(self, problem: Problem) -> int:
        b, k = problem.data["a"] * problem.data["m"], problem.data["k"]
        prefix = list(itertools.accumulate(b, initial=0))
        return sum(
            1 for i in range(len(b)) for j in range(i + 1, len(b) + 1) if prefix[j] - prefix[i] <= k
        )


@ENVIRONMENTS.register("bounded_interval_intersection")
class BoundedIntervalIntersection(FastCount):
    """Non-empty subsets of intervals whose intersection has length ≥ K (RLVE
    BoundedIntervalIntersection). Fast: charge each subset to its interval with the largest
    left end (ties by index) and count the others that may join it."""

    difficulty_scales = "N = 3 + d intervals inside [0, 10 + 2d]"
    size_measure = "number of intervals N (2^N subsets)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 3 + difficulty, 10 + 2 * difficulty
        intervals = []
        for _ in range(n):
            lo, hi = sorted(rng.sample(range(top + 1), 2))
            intervals.append([lo, hi])
        k = rng.randint(0, top // 3)
        lines = "\n".join(f"[{lo}, {hi}]" for lo, hi in intervals)
        prompt = (
            "The length of an interval [l, r] is r − l. The intersection of a set of intervals "
            "[l_1, r_1], ..., [l_m, r_m] is [max l_i, min r_i], and it is empty when "
            f"max l_i > min r_i.\n\nYou are given {n} intervals:\n{lines}\n\nHow many non-empty "
            f"subsets of these {n} intervals have a non-empty intersection of length at least "
            f"{k}? Intervals that happen to be equal still count as different members."
        )
        return self.instance(prompt, {"intervals": intervals, "k": k, "n": n})

    def count(self, data: dict[str, Any]) -> int:
        iv, k = data["intervals"], data["k"]
        total = 0
        for i, (li, ri) in enumerate(iv):
            if ri - li < k:
                continue
            others = sum(
                1
                for j, (lj, rj) in enumerate(iv)
                if j != i and (lj < li or (lj == li and j < i)) and rj >= li + k
            )
            total += 2**others
        return total

    def solve_int(self, problem: Problem) -> int:
        iv, k = problem.data["intervals"], problem.data["k"]
        found = 0
        for mask in range(1, 1 << len(iv)):
            chosen = [iv[i] for i in range(len(iv)) if mask >> i & 1]
            lo, hi = max(c[0] for c in chosen), min(c[1] for c in chosen)
            found += hi - lo >= k
        return found


@ENVIRONMENTS.register("inversion_pair")
class InversionPair(FastCount):
    """The fewest adjacent swaps that make Σ (A_i − B_i)² minimal (RLVE InversionPair; the
    NOIP "matches" problem). The minimum pairs equal ranks (rearrangement inequality), so the
    element at position i of A must reach the position π(i) where B holds the value of the
    same rank; a swap in A or in B changes the inversion count of π by exactly one, so the
    answer is inv(π). Fast: merge-sort count; solve: π by rank counting and all pairs."""

    difficulty_scales = "arrays of length N = 3 + 2d with distinct values up to 10N"
    size_measure = "array length N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + 2 * difficulty
        a, b = rng.sample(range(1, 10 * n), n), rng.sample(range(1, 10 * n), n)
        prompt = (
            f"You are given two arrays A and B, each of {n} distinct integers:\nA: {commas(a)}"
            f"\nB: {commas(b)}\n\nIn one operation you may swap two adjacent elements of A or "
            "two adjacent elements of B. What is the minimum number of operations needed to "
            "make Σ (A[i] − B[i])² (over all positions i) as small as it can possibly be?"
        )
        return self.instance(prompt, {"a": a, "b": b, "n": n})

    def count(self, data: dict[str, Any]) -> int:
        a, b = data["a"], data["b"]
        rank_b = {v: r for r, v in enumerate(sorted(b))}
        order = sorted(range(len(a)), key=lambda i: a[i])  # position of the r-th smallest of A
        target = [0] * len(a)  # where B's value of rank(A[i]) sits, by position i of A
        by_rank = {rank_b[v]: j for j, v in enumerate(b)}
        for r, i in enumerate(order):
            target[i] = by_rank[r]

        def inversions(xs: list[int]) -> tuple[list[int], int]:
            if len(xs) <= 1:
                return xs, 0
            left, x = inversions(xs[: len(xs) // 2])
            right, y = inversions(xs[len(xs) // 2 :])
            merged, count, i, j = [], x + y, 0, 0
            while i < len(left) and j < len(right):
                if left[i] <= right[j]:
                    merged.append(left[i])
                    i += 1
                else:
                    merged.append(right[j])
                    count += len(left) - i
                    j += 1
            return merged + left[i:] + right[j:], count

        return inversions(target)[1]

    def solve_int(self, problem: Problem) -> int:
        a, b = problem.data["a"], problem.data["b"]
        n = len(a)

        def rank(xs: list[int], i: int) -> int:
            return sum(1 for x in xs if x < xs[i])

        # element i of A must end where B holds the value of the same rank
        dest = [next(j for j in range(n) if rank(b, j) == rank(a, i)) for i in range(n)]
        return sum(1 for i, j in itertools.combinations(range(n), 2) if dest[i] > dest[j])


@ENVIRONMENTS.register("inversion_pair_k_counting")
class InversionPairKCounting(BinaryCount):
    """Permutations of 1..N with exactly K inversions (RLVE InversionPairK_Counting), right or
    wrong. Fast: the insertion DP with prefix sums; solve: the product ∏ (1 + x + … + x^{i−1})."""

    difficulty_scales = "N in 3..4 + d//2, K in 0..N(N−1)/2"
    size_measure = "N (permutations of N elements)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(3, 4 + difficulty // 2)
        k = rng.randint(0, n * (n - 1) // 2)
        prompt = (
            f"Consider all permutations of the numbers 1 through {n}. An inversion is a pair of "
            "positions i < j whose values are in decreasing order. How many of these "
            f"permutations have exactly {plural(k, 'inversion')}?"
        )
        return self.instance(prompt, {"n": n, "k": k})

    def problem_space(self, difficulty: int) -> int:
        return sum(n * (n - 1) // 2 + 1 for n in range(3, 5 + difficulty // 2))

    def count(self, data: dict[str, Any]) -> int:
        n, k = data["n"], data["k"]
        row = [1] + [0] * k  # permutations of i elements by inversion count
        for i in range(2, n + 1):  # inserting element i adds 0..i-1 inversions
            prefix = list(itertools.accumulate(row, initial=0))
            row = [prefix[j + 1] - prefix[max(0, j - i + 1)] for j in range(k + 1)]
        return row[k]

    def solve_int(self, problem: Problem) -> int:
        n, k = problem.data["n"], problem.data["k"]
        poly = [1]
        for i in range(1, n + 1):
            poly = [
                sum(poly[e - t] for t in range(i) if 0 <= e - t < len(poly))
                for e in range(len(poly) + i - 1)
            ]
        return poly[k] if k < len(poly) else 0


@ENVIRONMENTS.register("heap_counting")
class HeapCounting(BinaryCount):
    """Permutations P of 1..N with P[i] > P[⌊i/2⌋] for 2 ≤ i ≤ N, i.e. heap orders (RLVE
    HeapCounting), right or wrong. Fast: f(n) = C(n−1, |left|)·f(left)·f(right); solve: the
    tree hook-length formula n! / ∏ subtree sizes."""

    difficulty_scales = "N in 2..10 + 3d"
    size_measure = "N (permutations of N elements)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(2, 10 + 3 * difficulty)
        prompt = (
            f"How many permutations P[1], P[2], ..., P[{n}] of the numbers 1 through {n} satisfy "
            f"P[i] > P[⌊i/2⌋] for every 2 ≤ i ≤ {n} (⌊·⌋ rounds down)?"
        )
        return self.instance(prompt, {"n": n})

    def problem_space(self, difficulty: int) -> int:
        return 9 + 3 * difficulty

    def count(self, data: dict[str, Any]) -> int:
        n = data["n"]

        @functools.cache
        def heaps(root: int) -> tuple[int, int]:  # (size, count) of the subtree at root
            if root > n:
                return 0, 1
            ls, lc = heaps(2 * root)
            rs, rc = heaps(2 * root + 1)
            return ls + rs + 1, math.comb(ls + rs, ls) * lc * rc

        return heaps(1)[1]

    def solve_int(self, problem: Problem) -> int:
        n = problem.data["n"]
        sizes = [0] * (n + 2)
        for v in range(n, 0, -1):
            sizes[v] = (
                1
                + (sizes[2 * v] if 2 * v <= n else 0)
                + (sizes[2 * v + 1] if 2 * v + 1 <= n else 0)
            )
        return math.factorial(n) // math.prod(sizes[1 : n + 1])


@ENVIRONMENTS.register("cantor_expansion")
class CantorExpansion(BinaryCount):
    """Distinct permutations of a sequence (with repeats) that are lexicographically smaller
    than it (RLVE CantorExpansion), right or wrong. Fast: Σ over positions of multinomials;
    solve: a recursion on the remaining multiset (no factorials)."""

    difficulty_scales = "sequence length N = 3 + d, values 1..2 + d//2"
    size_measure = "sequence length N"
    size_param = "length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        seq = [rng.randint(1, 2 + difficulty // 2) for _ in range(n)]
        prompt = (
            f"Given the sequence of integers: {commas(seq)}\n\nCount the distinct "
            "permutations of this sequence (rearrangements of its elements, equal sequences "
            "counted once) that are lexicographically smaller than the sequence itself."
        )
        return self.instance(prompt, {"seq": seq, "length": n})

    def problem_space(self, difficulty: int) -> int:
        return (2 + difficulty // 2) ** (3 + difficulty)

    def count(self, data: dict[str, Any]) -> int:
        seq = data["seq"]
        counts: dict[int, int] = {}
        for v in seq:
            counts[v] = counts.get(v, 0) + 1
        total = 0
        for i, v in enumerate(seq):
            rest = len(seq) - i - 1
            for smaller in (u for u in counts if u < v and counts[u]):
                counts[smaller] -= 1
                ways = math.factorial(rest)
                for c in counts.values():
                    ways //= math.factorial(c)
                total += ways
                counts[smaller] += 1
            counts[v] -= 1
        return total

    def solve_int(self, problem: Problem) -> int:
        seq = problem.data["seq"]
        values = sorted(set(seq))

        @functools.cache
        def arrangements(remaining: tuple[int, ...]) -> int:
            if not any(remaining):
                return 1
            total = 0
            for idx, c in enumerate(remaining):
                if c:
                    total += arrangements((*remaining[:idx], c - 1, *remaining[idx + 1 :]))
            return total

        left = [seq.count(v) for v in values]
        total = 0
        for v in seq:
            pos = values.index(v)
            for idx in range(pos):
                if left[idx]:
                    left[idx] -= 1
                    total += arrangements(tuple(left))
                    left[idx] += 1
            left[pos] -= 1
        return total


def _random_tree(rng: random.Random, leaves: list[Any], ops: str) -> Any:
    """A random full binary tree over ``leaves`` (in order) with operators from ``ops``:
    nested ``[op, left, right]`` lists."""
    if len(leaves) == 1:
        return leaves[0]
    cut = rng.randint(1, len(leaves) - 1)
    return [
        rng.choice(ops),
        _random_tree(rng, leaves[:cut], ops),
        _random_tree(rng, leaves[cut:], ops),
    ]


def _render(tree: Any, top: bool = True) -> str:
    if not isinstance(tree, list):
        return str(tree)
    text = f"{_render(tree[1], False)} {tree[0]} {_render(tree[2], False)}"
    return text if top else f"({text})"


_BIT_OPS = {"&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b}


@ENVIRONMENTS.register("bit_equation_counting")
class BitEquationCounting(FastCount):
    """Assignments of 0/1 variables that make a parenthesised AND/OR/XOR formula equal 1 (RLVE
    BitEquationCounting); fast: (ways to 0, ways to 1) up the tree; brute: all 2^N."""

    difficulty_scales = "N = 2 + d variables"
    size_measure = "number of variables N (2^N assignments)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 2 + difficulty
        tree = _random_tree(rng, [f"x{i}" for i in range(1, n + 1)], "&|^")
        prompt = (
            f"Consider the Boolean formula\n\n{_render(tree)}\n\nwhere x1, ..., x{n} are "
            "variables that are each 0 or 1, & is AND, | is OR and ^ is XOR (exclusive or). Of "
            f"the 2^{n} assignments of values to the variables, how many make the formula "
            "equal to 1?"
        )
        return self.instance(prompt, {"tree": tree, "n": n})

    def problem_space(self, difficulty: int) -> int:
        n = 2 + difficulty
        return math.comb(2 * n - 2, n - 1) // n * 3 ** (n - 1)  # trees × operator choices

    def count(self, data: dict[str, Any]) -> int:
        def ways(t: Any) -> tuple[int, int]:
            if not isinstance(t, list):
                return 1, 1
            (l0, l1), (r0, r1) = ways(t[1]), ways(t[2])
            out = [0, 0]
            for a, ca in ((0, l0), (1, l1)):
                for b, cb in ((0, r0), (1, r1)):
                    out[_BIT_OPS[t[0]](a, b)] += ca * cb
            return out[0], out[1]

        return ways(data["tree"])[1]

    def solve_int(self, problem: Problem) -> int:
        n = problem.data["n"]

        def value(t: Any, bits: dict[str, int]) -> int:
            if not isinstance(t, list):
                return bits[t]
            return _BIT_OPS[t[0]](value(t[1], bits), value(t[2], bits))

        names = [f"x{i}" for i in range(1, n + 1)]
        return sum(
            value(problem.data["tree"], dict(zip(names, bits, strict=True)))
            for bits in itertools.product((0, 1), repeat=n)
        )


_ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


@ENVIRONMENTS.register("expression_adding_parenthese_counting")
class ExpressionAddingParentheseCounting(FastCount):
    """Distinct values an expression a1 op a2 op … takes over all ways to parenthesise it,
    without reordering (RLVE Expression_AddingParenthese_Counting). Fast: interval DP over
    value sets; brute: every full binary tree, enumerated without memory."""

    difficulty_scales = "operands: 3 + d//4 (at most 10), each 1..9"
    size_measure = "number of operands (Catalan-many parenthesisations)"
    size_param = "operands"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(10, 3 + difficulty // 4)
        nums = [rng.randint(1, 9) for _ in range(n)]
        ops = [rng.choice("+-*") for _ in range(n - 1)]
        text = " ".join(f"{x} {o}" for x, o in zip(nums, ops, strict=False)) + f" {nums[-1]}"
        prompt = (
            f"Consider the expression {text}. Inserting parentheses changes the order in which "
            "the operations are done, but the numbers and operators keep their order (no "
            "rearranging). How many distinct values can be obtained over all ways of fully "
            "parenthesising the expression?"
        )
        return self.instance(prompt, {"nums": nums, "ops": ops, "operands": n})

    def count(self, data: dict[str, Any]) -> int:
        nums, ops = data["nums"], data["ops"]
        n = len(nums)
        table: dict[tuple[int, int], set[int]] = {(i, i): {nums[i]} for i in range(n)}
        for width in range(1, n):
            for i in range(n - width):
                j = i + width
                out: set[int] = set()
                for cut in range(i, j):
                    f = _ARITH[ops[cut]]
                    out |= {f(a, b) for a in table[i, cut] for b in table[cut + 1, j]}
                table[i, j] = out
        return len(table[0, n - 1])

    def solve_int(self, problem: Problem) -> int:
        nums, ops = problem.data["nums"], problem.data["ops"]

        def values(i: int, j: int) -> list[int]:  # one entry per parenthesisation
            if i == j:
                return [nums[i]]
            out = []
            for cut in range(i, j):
                for a in values(i, cut):
                    for b in values(cut + 1, j):
                        out.append(_ARITH[ops[cut]](a, b))
            return out

        return len(set(values(0, len(nums) - 1)))


@ENVIRONMENTS.register("grid_triangle_counting")
class GridTriangleCounting(FastCount):
    """Non-degenerate triangles with vertices on the lattice points of [0, N] × [0, M] (RLVE
    GridTriangleCounting). Fast: C(T, 3) minus collinear triples counted by direction vector
    and gcd; brute: all triples with a cross product."""

    difficulty_scales = "N, M ≤ 2 + d//2"
    size_measure = "lattice points T = (N+1)(M+1) (brute force checks T³/6 triples)"
    size_param = "points"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = 2 + difficulty // 2
        n, m = rng.randint(1, top), rng.randint(1, top)
        prompt = (
            "How many non-degenerate triangles (with positive area) have all three vertices at "
            f"integer points (x, y) with 0 ≤ x ≤ {n} and 0 ≤ y ≤ {m}?"
        )
        return self.instance(prompt, {"n": n, "m": m, "points": (n + 1) * (m + 1)})

    def problem_space(self, difficulty: int) -> int:
        return (2 + difficulty // 2) ** 2

    def count(self, data: dict[str, Any]) -> int:
        n, m = data["n"], data["m"]
        t = (n + 1) * (m + 1)
        collinear = 0  # a triple is charged to its two end points, direction (dx, dy)
        for dx in range(n + 1):
            for dy in range(m + 1):
                if dx == dy == 0:
                    continue
                between = math.gcd(dx, dy) - 1
                placements = (n + 1 - dx) * (m + 1 - dy) * (2 if dx and dy else 1)
                collinear += between * placements
        return math.comb(t, 3) - collinear

    def solve_int(self, problem: Problem) -> int:
        n, m = problem.data["n"], problem.data["m"]
        pts = [(x, y) for x in range(n + 1) for y in range(m + 1)]
        return sum(
            1
            for (ax, ay), (bx, by), (cx, cy) in itertools.combinations(pts, 3)
            if (bx - ax) * (cy - ay) != (by - ay) * (cx - ax)
        )
