"""Counting sequences and strings: equal neighbours, surjections, bounded increasing
sequences, XOR equations, subarray sums and XORs, the longest non-decreasing subsequence of a
repeated array, shared substrings, common subsequences of three strings, prefix-free subsets.

RLVE-Gym rows SameAdjacencyCounting, StirlingSecond,
RangeConstrained_IncreasingSequence_Counting, XorEquationCounting, SubarraySumXor,
SubarrayXorSum, RepeatSequenceLNDS, SharedSubstringCounting,
ThreeStringCommonSubsequenceCounting and ZeroPrefixSubsetCounting (Zeng et al. 2025, "RLVE:
Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A). Rows whose RLVE reward is binary stay binary; counts get
(min/max)^10. Generator and verifier compute each count by two different methods.
"""

from __future__ import annotations

import bisect
import math
import random
from collections import Counter

from verirl.envs.base import ENVIRONMENTS, Instance, IntegerAnswer
from verirl.envs.kit.wording import plural
from verirl.types import Problem

TAGS = ("rlve", "counting")


class _SeqCount(IntegerAnswer):
    tags = TAGS
    size_measure = "length of the sequences or strings involved"


@ENVIRONMENTS.register("same_adjacency_counting")
class SameAdjacencyCounting(_SeqCount):
    """Length-N sequences over 1..M with at least one pair of equal neighbours."""

    binary = True
    difficulty_scales = "N in 2..4 + d; M in 2..3 + d//2"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = rng.randint(2, 4 + difficulty), rng.randint(2, 3 + difficulty // 2)
        count = m**n - m * (m - 1) ** (n - 1)  # all minus those with no equal neighbours
        prompt = (
            f"Count the sequences of length {n} with every element an integer from 1 to {m} "
            "such that at least one pair of adjacent elements is equal."
        )
        return Instance(prompt, str(count), {"n": n, "m": m})

    def solve_int(self, problem: Problem) -> int:
        n, m = problem.data["n"], problem.data["m"]
        clean, dirty = m, 0  # sequences so far without / with an equal adjacent pair
        for _ in range(n - 1):
            clean, dirty = clean * (m - 1), dirty * m + clean
        return dirty

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])

    def problem_space(self, difficulty: int) -> int | None:
        return min(10**9, (3 + difficulty) * (2 + difficulty // 2))


@ENVIRONMENTS.register("stirling_second")
class StirlingSecond(_SeqCount):
    """Ways to put N distinct balls into R distinct boxes with no box empty: R!·S(N, R)."""

    binary = True
    difficulty_scales = "R in 1..2 + d//3; N in R..7 + d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        r = rng.randint(1, 2 + difficulty // 3)
        n = rng.randint(r, 7 + difficulty)
        count = sum((-1) ** j * math.comb(r, j) * (r - j) ** n for j in range(r + 1))
        balls = "ball" if n == 1 else "balls"
        boxes = "box" if r == 1 else "boxes"
        prompt = (
            f"There are {r} distinct {boxes} and {n} distinct {balls}. Count the ways to put "
            "every ball into a box so that no box is empty (two ways differ when some ball is "
            "in a different box)."
        )
        return Instance(prompt, str(count), {"n": n, "r": r})

    def solve_int(self, problem: Problem) -> int:
        n, r = problem.data["n"], problem.data["r"]
        s = [1] + [0] * r  # S(i, k) row by row
        for _ in range(n):
            s = [0] + [k * s[k] + s[k - 1] for k in range(1, r + 1)]
        return s[r] * math.factorial(r)

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])

    def problem_space(self, difficulty: int) -> int | None:
        return min(10**9, sum(8 + difficulty - r for r in range(1, 3 + difficulty // 3)))


@ENVIRONMENTS.register("range_constrained_increasing_sequence_counting")
class RangeConstrainedIncreasingSequenceCounting(_SeqCount):
    """Strictly increasing sequences with A[i] in [L[i], R[i]]."""

    binary = True
    difficulty_scales = "length N = 2 + d//2; values in 0..10 + 3d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 2 + difficulty // 2, 10 + 3 * difficulty
        bounds = []
        for _ in range(n):
            lo = rng.randint(0, top)
            bounds.append([lo, rng.randint(lo, min(top, lo + 3 + difficulty))])
        ways = {v: 1 for v in range(bounds[0][0], bounds[0][1] + 1)}
        for lo, hi in bounds[1:]:
            prefix, run = {}, 0  # prefix[v] = Σ ways[u] for u < v
            for v in range(0, top + 2):
                prefix[v] = run
                run += ways.get(v, 0)
            ways = {v: prefix[v] for v in range(lo, hi + 1) if prefix[v]}
        count = sum(ways.values())
        rules = "\n".join(f"{lo} ≤ A[{i}] ≤ {hi}" for i, (lo, hi) in enumerate(bounds))
        prompt = (
            f"Count the integer sequences A[0], A[1], ..., A[{n - 1}] of length {n} such that "
            f"A[0] < A[1] < ... < A[{n - 1}] (strictly increasing) and\n{rules}"
        )
        return Instance(prompt, str(count), {"bounds": bounds})

    def solve_int(self, problem: Problem) -> int:
        bounds = problem.data["bounds"]
        memo: dict[tuple[int, int], int] = {}

        def count(i: int, above: int) -> int:  # sequences for positions i.. with A[i] > above
            if i == len(bounds):
                return 1
            if (i, above) not in memo:
                lo, hi = bounds[i]
                memo[(i, above)] = sum(count(i + 1, v) for v in range(max(lo, above + 1), hi + 1))
            return memo[(i, above)]

        return count(0, -1)

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["bounds"]))


@ENVIRONMENTS.register("xor_equation_counting")
class XorEquationCounting(_SeqCount):
    """Tuples (X[1..N]) with 0 ≤ X[i] ≤ R and X[1] XOR ... XOR X[N] = K."""

    binary = True
    difficulty_scales = "N = 2 + d//3 variables; R < 2^(2 + d//3) (at most 2^12)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, bits = 2 + difficulty // 3, min(12, 2 + difficulty // 3)
        r = rng.randint(1, 2**bits - 1)
        k = rng.randint(0, 2**bits - 1)
        # digit DP from the top bit; state: how many variables still equal R's prefix
        ways = {n: 1}
        for b in range(bits - 1, -1, -1):
            rb, kb = r >> b & 1, k >> b & 1
            nxt: dict[int, int] = {}
            for t, w in ways.items():
                free = n - t
                for j in range(t + 1) if rb else [t]:  # j tight ones take bit 1 (only if R has it)
                    stay = j if rb else t
                    ones = j if rb else 0
                    if free:
                        add = w * math.comb(t, j) * 2 ** (free - 1) if rb else w * 2 ** (free - 1)
                        nxt[stay] = nxt.get(stay, 0) + add
                    elif ones % 2 == kb:
                        nxt[stay] = nxt.get(stay, 0) + w * (math.comb(t, j) if rb else 1)
            ways = nxt
        count = sum(ways.values())
        prompt = (
            f"You are given the equation X[1] XOR X[2] XOR ... XOR X[{n}] = {k}, where XOR is "
            f"the bitwise exclusive or. Count the tuples (X[1], ..., X[{n}]) of integers with "
            f"0 ≤ X[i] ≤ {r} for every i that satisfy it."
        )
        return Instance(prompt, str(count), {"n": n, "r": r, "k": k, "bits": bits})

    def solve_int(self, problem: Problem) -> int:
        """XOR convolution of N indicator vectors by the Walsh–Hadamard transform."""
        d = problem.data
        size = 1 << d["bits"]
        vec = [1 if v <= d["r"] else 0 for v in range(size)]
        _walsh_hadamard(vec)
        vec = [x ** d["n"] for x in vec]
        _walsh_hadamard(vec)
        return vec[d["k"]] // size

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"] * problem.data["bits"])

    def problem_space(self, difficulty: int) -> int | None:
        bits = min(12, 2 + difficulty // 3)
        return min(10**9, (2**bits - 1) * 2**bits)


def _walsh_hadamard(a: list[int]) -> None:
    h = 1
    while h < len(a):
        for i in range(0, len(a), 2 * h):
            for j in range(i, i + h):
                a[j], a[j + h] = a[j] + a[j + h], a[j] - a[j + h]
        h *= 2


def _array(rng: random.Random, n: int, top: int) -> list[int]:
    return [rng.randint(0, top) for _ in range(n)]


@ENVIRONMENTS.register("subarray_sum_xor")
class SubarraySumXor(_SeqCount):
    """The XOR of the sums of all contiguous subarrays."""

    binary = True
    difficulty_scales = "N = 3 + d elements in 0..20 + 10d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        a = _array(rng, 3 + difficulty, 20 + 10 * difficulty)
        total = 0
        for i in range(len(a)):
            run = 0
            for j in range(i, len(a)):
                run += a[j]
                total ^= run
        prompt = (
            f"You are given an array A of {len(a)} integers: {' '.join(map(str, a))}\nThis array "
            f"has {len(a)} × ({len(a)} + 1) / 2 = {len(a) * (len(a) + 1) // 2} contiguous "
            "subarrays. Compute the bitwise XOR of the sums of all of them."
        )
        return Instance(prompt, str(total), {"array": a})

    def solve_int(self, problem: Problem) -> int:
        """Bit by bit: bit b of the result is the parity of the subarrays whose sum
        P[j] − P[i] has bit b set."""
        a = problem.data["array"]
        prefix = [0]
        for x in a:
            prefix.append(prefix[-1] + x)
        result = 0
        for b in range(prefix[-1].bit_length()):
            odd = 0
            for j in range(1, len(prefix)):
                for i in range(j):
                    odd ^= (prefix[j] - prefix[i]) >> b & 1
            result |= odd << b
        return result

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["array"]))


@ENVIRONMENTS.register("subarray_xor_sum")
class SubarrayXorSum(_SeqCount):
    """The sum of the XORs of all contiguous subarrays."""

    binary = True
    difficulty_scales = "N = 3 + d elements in 0..20 + 10d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        a = _array(rng, 3 + difficulty, 20 + 10 * difficulty)
        total = 0
        for i in range(len(a)):
            run = 0
            for j in range(i, len(a)):
                run ^= a[j]
                total += run
        prompt = (
            f"You are given an array A of {len(a)} integers: {' '.join(map(str, a))}\nThis array "
            f"has {len(a)} × ({len(a)} + 1) / 2 = {len(a) * (len(a) + 1) // 2} contiguous "
            "subarrays. Compute the sum of the bitwise XORs of all of them (the XOR of a "
            "subarray is the XOR of its elements)."
        )
        return Instance(prompt, str(total), {"array": a})

    def solve_int(self, problem: Problem) -> int:
        """Per bit b: subarrays with an odd number of elements having bit b = pairs of prefix
        positions of different parity."""
        a = problem.data["array"]
        total = 0
        for b in range(max(a).bit_length()):
            parity, counts = 0, [1, 0]
            odd = 0
            for x in a:
                parity ^= x >> b & 1
                odd += counts[parity ^ 1]
                counts[parity] += 1
            total += odd << b
        return total

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["array"]))


@ENVIRONMENTS.register("repeat_sequence_lnds")
class RepeatSequenceLnds(_SeqCount):
    """The longest non-decreasing subsequence of an array repeated T times."""

    binary = True
    difficulty_scales = "period n = 3 + d; repetitions T up to 5·1.5^d (at most 200)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        t = rng.randint(1, int(min(200, 5 * 1.5**difficulty)))
        a = [rng.randint(1, n) for _ in range(n)]
        # beyond n copies every extra copy adds the most frequent value once
        core = _lnds(a * min(t, n))
        length = core + max(0, t - n) * max(Counter(a).values())
        prompt = (
            f"You are given an array that repeats every {n} elements. The first {n} elements "
            f"are {' '.join(map(str, a))}, and the whole array consists of these {n} elements "
            f"repeated {plural(t, 'time')} in a row ({n * t} elements in total). What is the "
            "length of its "
            "longest non-decreasing subsequence?"
        )
        return Instance(prompt, str(length), {"period": a, "t": t})

    def solve_int(self, problem: Problem) -> int:
        return _lnds(problem.data["period"] * problem.data["t"])

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["period"]))

    def problem_space(self, difficulty: int) -> int | None:
        n = 3 + difficulty
        return min(10**9, n**n * int(min(200, 5 * 1.5**difficulty)))


def _lnds(seq: list[int]) -> int:
    tails: list[int] = []  # patience sorting with bisect_right for non-decreasing
    for x in seq:
        i = bisect.bisect_right(tails, x)
        if i == len(tails):
            tails.append(x)
        else:
            tails[i] = x
    return len(tails)


def _word(rng: random.Random, length: int, alphabet: str) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


@ENVIRONMENTS.register("shared_substring_counting")
class SharedSubstringCounting(_SeqCount):
    """Tuples (lS, rS, lT, rT) with S[lS..rS] = T[lT..rT]."""

    difficulty_scales = "string lengths up to 5 + d (at most 40); alphabet a, b (c from d 6)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        alphabet = "ab" if difficulty < 6 else "abc"
        top = min(40, 5 + difficulty)
        s, t = (_word(rng, rng.randint(2, top), alphabet) for _ in range(2))
        run = [[0] * (len(t) + 1) for _ in range(len(s) + 1)]  # common suffix lengths
        count = 0
        for i in range(1, len(s) + 1):
            for j in range(1, len(t) + 1):
                if s[i - 1] == t[j - 1]:
                    run[i][j] = run[i - 1][j - 1] + 1
                    count += run[i][j]
        prompt = (
            f"You are given two strings:\nS = {s}\nT = {t}\nCount the tuples (lS, rS, lT, rT) "
            f"with 0 ≤ lS ≤ rS < {len(s)} and 0 ≤ lT ≤ rT < {len(t)} such that the substring "
            "S[lS..rS] equals the substring T[lT..rT] (both ends included, 0-indexed)."
        )
        return Instance(prompt, str(count), {"s": s, "t": t})

    def solve_int(self, problem: Problem) -> int:
        s, t = problem.data["s"], problem.data["t"]

        def subs(x: str) -> Counter[str]:
            return Counter(x[i:j] for i in range(len(x)) for j in range(i + 1, len(x) + 1))

        cs, ct = subs(s), subs(t)
        return sum(c * ct[u] for u, c in cs.items())

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["s"]) + len(problem.data["t"]))


@ENVIRONMENTS.register("three_string_common_subsequence_counting")
class ThreeStringCommonSubsequenceCounting(_SeqCount):
    """Triples of non-empty index subsequences of A, B, C that spell the same string."""

    difficulty_scales = "string lengths 3..3 + d//2 (at most 18); alphabet a, b (c from d 4)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        alphabet = "ab" if difficulty < 4 else "abc"
        top = min(18, 3 + difficulty // 2)
        a, b, c = (_word(rng, rng.randint(2, top), alphabet) for _ in range(3))
        # F[i][j][k]: matching triples whose last picks are exactly i, j, k; P: prefix sums of F
        na, nb, nc = len(a), len(b), len(c)
        p = [[[0] * (nc + 1) for _ in range(nb + 1)] for _ in range(na + 1)]
        total = 0
        for i in range(1, na + 1):
            for j in range(1, nb + 1):
                for k in range(1, nc + 1):
                    f = 0
                    if a[i - 1] == b[j - 1] == c[k - 1]:
                        f = 1 + p[i - 1][j - 1][k - 1]
                        total += f
                    p[i][j][k] = (
                        f
                        + p[i - 1][j][k]
                        + p[i][j - 1][k]
                        + p[i][j][k - 1]
                        - p[i - 1][j - 1][k]
                        - p[i - 1][j][k - 1]
                        - p[i][j - 1][k - 1]
                        + p[i - 1][j - 1][k - 1]
                    )
        prompt = (
            f"There are three strings:\nA: {a}\nB: {b}\nC: {c}\nCount the triples (a, b, c) where "
            "a, b and c are non-empty subsequences of A, B and C respectively (a subsequence is "
            "a set of positions, so equal strings taken from different positions count "
            "separately) that spell the same string."
        )
        return Instance(prompt, str(total), {"a": a, "b": b, "c": c})

    def solve_int(self, problem: Problem) -> int:
        """G(i, j, k): triples (empty allowed) within the prefixes, by inclusion–exclusion on
        whether the last letter of each prefix is used."""
        a, b, c = problem.data["a"], problem.data["b"], problem.data["c"]
        g = [[[1] * (len(c) + 1) for _ in range(len(b) + 1)] for _ in range(len(a) + 1)]
        for i in range(1, len(a) + 1):
            for j in range(1, len(b) + 1):
                for k in range(1, len(c) + 1):
                    v = (
                        g[i - 1][j][k]
                        + g[i][j - 1][k]
                        + g[i][j][k - 1]
                        - g[i - 1][j - 1][k]
                        - g[i - 1][j][k - 1]
                        - g[i][j - 1][k - 1]
                        + g[i - 1][j - 1][k - 1]
                    )
                    if a[i - 1] == b[j - 1] == c[k - 1]:
                        v += g[i - 1][j - 1][k - 1]
                    g[i][j][k] = v
        return g[len(a)][len(b)][len(c)] - 1

    def size(self, problem: Problem) -> float:
        return float(sum(len(problem.data[x]) for x in "abc"))


@ENVIRONMENTS.register("zero_prefix_subset_counting")
class ZeroPrefixSubsetCounting(_SeqCount):
    """Non-empty subsets of distinct strings in which no string is a prefix of another."""

    difficulty_scales = "N = 3 + d distinct strings over {0, 1} of length 1..2 + d//3"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, longest = 3 + difficulty, 2 + difficulty // 3
        pool_size = sum(2**k for k in range(1, longest + 1))
        n = min(n, pool_size)
        words: set[str] = set()
        while len(words) < n:
            words.add(_word(rng, rng.randint(1, longest), "01"))
        ordered = sorted(words, key=lambda w: (len(w), w))
        rng.shuffle(ordered)
        # forest: each word's parent is its longest proper prefix in the set
        children: dict[str, list[str]] = {w: [] for w in ordered}
        roots: list[str] = []
        for w in ordered:
            parents = [w[:i] for i in range(len(w) - 1, 0, -1) if w[:i] in words]
            (children[parents[0]] if parents else roots).append(w)

        def antichains(w: str) -> int:  # within w's subtree, empty included
            return 1 + math.prod(antichains(c) for c in children[w])

        count = math.prod(antichains(r) for r in roots) - 1
        prompt = (
            f"You are given {n} strings:\n" + "\n".join(ordered) + "\n\nHow many non-empty "
            "subsets of these strings are there such that no string in the subset is a prefix "
            "of another string in the subset?"
        )
        return Instance(prompt, str(count), {"words": ordered})

    def solve_int(self, problem: Problem) -> int:
        """Trie over the letters: a word node may be taken alone, or its children combined."""
        trie: dict[str, dict] = {}
        for w in problem.data["words"]:
            node = trie
            for ch in w:
                node = node.setdefault(ch, {})
            node["$"] = {}

        def ways(node: dict) -> int:
            below = math.prod(ways(child) for ch, child in node.items() if ch != "$")
            return below + 1 if "$" in node else below

        return ways(trie) - 1

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["words"]))

    def problem_space(self, difficulty: int) -> int | None:
        pool = sum(2**k for k in range(1, 3 + difficulty // 3))
        return min(10**9, math.perm(pool, min(3 + difficulty, pool)))
