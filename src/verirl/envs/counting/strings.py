"""Counting in strings: distinct subsequences, distinct substrings, completions of a bracket
pattern, necklaces with given bead counts, palindromic subsequences, the longest palindromic
subsequence and the fewest insertions that make a palindrome.

String-counting rows in the spirit of RLVE-Gym (Zeng et al. 2025, "RLVE: Scaling Up
Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A: DoublePalindromicStringCounting,
Kth_SemiBalancedBracketSequence, PalindromicSubstringNumberCounting). Each generator's
dynamic programme is cross-checked by ``solve_int``: brute-force enumeration on small
instances and a different recurrence (or Burnside's lemma summed another way) otherwise.
Answers are integers scored with RLVE's (min/max)^10.
"""

from __future__ import annotations

import functools
import itertools
import math
import random

from verirl.envs.base import ENVIRONMENTS, Instance
from verirl.envs.kit.answers import SizedInteger
from verirl.envs.kit.numbers import totient
from verirl.envs.kit.strings import random_word
from verirl.envs.kit.wording import plural
from verirl.types import Problem

TAGS = ("strings", "counting")


@ENVIRONMENTS.register("distinct_subsequence_count")
class DistinctSubsequenceCount(SizedInteger):
    """How many different non-empty strings occur as subsequences of S."""

    tags = TAGS
    difficulty_scales = "|S| = 6 + 2d over 2-4 letters"
    size_measure = "string length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        s = random_word(rng, 6 + 2 * difficulty, "abcd"[: rng.randint(2, 4)])
        prompt = (
            f"How many different non-empty strings can be obtained as a subsequence of S = {s} "
            "(delete any set of characters, possibly none, keeping the order of the rest)? "
            "Equal strings obtained from different positions count once."
        )
        # dp = number of distinct subsequences (with the empty one); subtract the count from
        # before the previous occurrence of the same letter
        dp, last = 1, dict[str, int]()
        for ch in s:
            dp, last[ch] = 2 * dp - last.get(ch, 0), dp
        return Instance(prompt, str(dp - 1), {"s": s, "size": len(s)})

    def solve_int(self, problem: Problem) -> int:
        s = problem.data["s"]
        if len(s) <= 14:
            return len(
                {"".join(c) for r in range(1, len(s) + 1) for c in itertools.combinations(s, r)}
            )
        # count distinct subsequences by their greedy (leftmost) embedding: nxt[i][c]
        n = len(s)
        nxt: list[dict[str, int]] = [{} for _ in range(n + 1)]
        for i in range(n - 1, -1, -1):
            nxt[i] = dict(nxt[i + 1])
            nxt[i][s[i]] = i
        ways = [0] * (n + 1)  # ways[i]: distinct non-empty subsequences starting at i or later
        for i in range(n - 1, -1, -1):
            ways[i] = sum(1 + ways[j + 1] for j in nxt[i].values())
        return ways[0]


@ENVIRONMENTS.register("distinct_substring_count")
class DistinctSubstringCount(SizedInteger):
    """How many different non-empty substrings S has."""

    tags = TAGS
    difficulty_scales = "|S| = 6 + 2d over 2-3 letters"
    size_measure = "string length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        s = random_word(rng, 6 + 2 * difficulty, "abc"[: rng.randint(2, 3)])
        prompt = (
            f"How many different non-empty substrings (contiguous pieces) does the string "
            f"S = {s} have? Equal substrings at different positions count once."
        )
        subs = {s[i:j] for i in range(len(s)) for j in range(i + 1, len(s) + 1)}
        return Instance(prompt, str(len(subs)), {"s": s, "size": len(s)})

    def solve_int(self, problem: Problem) -> int:
        """n(n+1)/2 minus the sum of longest common prefixes of neighbouring sorted suffixes."""
        s = problem.data["s"]
        suffixes = sorted(s[i:] for i in range(len(s)))
        total = len(s) * (len(s) + 1) // 2
        for a, b in itertools.pairwise(suffixes):
            k = 0
            while k < min(len(a), len(b)) and a[k] == b[k]:
                k += 1
            total -= k
        return total


@ENVIRONMENTS.register("bracket_completion_counting")
class BracketCompletionCounting(SizedInteger):
    """Replacements of ? by brackets that give a balanced bracket sequence."""

    tags = TAGS
    difficulty_scales = "length 8 + 2d, about half the characters ?"
    size_measure = "pattern length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        chars = list("(" * n + ")" * n)
        rng.shuffle(chars)  # need not be balanced; the ? give the freedom
        q = rng.choice([0.4, 0.5, 0.6])
        pattern = "".join("?" if rng.random() < q else c for c in chars)
        prompt = (
            f"The pattern {pattern} has {len(pattern)} characters, each (, ) or ?. In how "
            "many ways can every ? be replaced by ( or ) so that the result is a balanced "
            "bracket sequence (every prefix has at least as many ( as ), and the totals are "
            "equal)?"
        )
        depth = {0: 1}
        for c in pattern:
            new: dict[int, int] = {}
            for h, w in depth.items():
                for step in (1, -1) if c == "?" else (1 if c == "(" else -1,):
                    if h + step >= 0:
                        new[h + step] = new.get(h + step, 0) + w
            depth = new
        return Instance(prompt, str(depth.get(0, 0)), {"pattern": pattern, "size": len(pattern)})

    def solve_int(self, problem: Problem) -> int:
        pattern = problem.data["pattern"]
        holes = pattern.count("?")
        if holes <= 14:
            count = 0
            for fill in itertools.product("()", repeat=holes):
                it = iter(fill)
                h = 0
                for c in pattern:
                    h += 1 if (next(it) if c == "?" else c) == "(" else -1
                    if h < 0:
                        break
                count += h == 0
            return count

        @functools.cache
        def go(i: int, h: int) -> int:  # ways to finish from position i at depth h
            if h < 0 or h > len(pattern) - i:
                return 0
            if i == len(pattern):
                return int(h == 0)
            c = pattern[i]
            return (go(i + 1, h + 1) if c != ")" else 0) + (go(i + 1, h - 1) if c != "(" else 0)

        for i in range(len(pattern), -1, -1):
            for h in range(len(pattern) + 1):
                go(i, h)
        return go(0, 0)


def _multinomial(parts: list[int]) -> int:
    out, total = 1, 0
    for p in parts:
        total += p
        out *= math.comb(total, p)
    return out


@ENVIRONMENTS.register("necklace_counting")
class NecklaceCounting(SizedInteger):
    """Necklaces (up to rotation) with given numbers of beads of each colour: Burnside."""

    tags = TAGS
    difficulty_scales = (
        "2-4 colours, 1..3 + d//2 beads each (a common factor planted half the time)"
    )
    size_measure = "number of beads"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        k = rng.randint(2, min(4, 3 + difficulty // 3))
        counts = [rng.randint(1, 3 + difficulty // 2) for _ in range(k)]
        if rng.random() < 0.5:
            counts = [c * rng.choice([2, 3]) for c in counts]
        colours = ["red", "blue", "green", "white"][:k]
        listing = ", ".join(
            plural(c, f"{col} bead") for col, c in zip(colours, counts, strict=True)
        )
        n = sum(counts)
        prompt = (
            f"A necklace is made by placing {n} beads evenly on a circle: {listing}. Beads of "
            "the same colour are identical. Two necklaces are the same when one can be rotated "
            "into the other (turning it over is not allowed). How many different necklaces "
            "can be made?"
        )
        g = math.gcd(*counts)
        total = sum(
            totient(d) * _multinomial([c // d for c in counts])
            for d in range(1, g + 1)
            if g % d == 0
        )
        return Instance(prompt, str(total // n), {"counts": counts, "size": n})

    def problem_space(self, difficulty: int) -> int | None:
        top, kmax = 3 + difficulty // 2, min(4, 3 + difficulty // 3)
        if top**kmax > 3000:
            return None
        shapes = {
            tuple(c * f for c in counts)
            for k in range(2, kmax + 1)
            for counts in itertools.product(range(1, top + 1), repeat=k)
            for f in (1, 2, 3)
        }
        return len(shapes)

    def solve_int(self, problem: Problem) -> int:
        counts = problem.data["counts"]
        n = sum(counts)
        if _multinomial(counts) <= 40_000:
            seen = set()
            for s in _arrangements(list(counts)):
                seen.add(min(s[i:] + s[:i] for i in range(n)))
            return len(seen)
        # Burnside over the n rotations: rotation by j fixes exactly the words of period gcd(j, n)
        fixed = 0
        for j in range(n):
            period = math.gcd(j, n)
            if all(c * period % n == 0 for c in counts):
                fixed += _multinomial([c * period // n for c in counts])
        return fixed // n


def _arrangements(counts: list[int]) -> list[str]:
    """Every word with ``counts[i]`` copies of the digit i (no repeats generated)."""
    if not any(counts):
        return [""]
    out = []
    for i, c in enumerate(counts):
        if c:
            counts[i] -= 1
            out += [str(i) + rest for rest in _arrangements(counts)]
            counts[i] += 1
    return out


@ENVIRONMENTS.register("palindromic_subsequence_count")
class PalindromicSubsequenceCount(SizedInteger):
    """Non-empty subsequences, counted by their positions, that read as palindromes."""

    tags = TAGS
    difficulty_scales = "|S| = 5 + 2d over 2-3 letters"
    size_measure = "string length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        s = random_word(rng, 5 + 2 * difficulty, "abc"[: rng.randint(2, 3)])
        prompt = (
            f"For the string S = {s}, count the non-empty sets of positions whose characters, "
            "read in order, form a palindrome. Different sets of positions count separately "
            "even when they spell the same word."
        )
        n = len(s)
        dp = [[0] * n for _ in range(n)]  # dp[i][j]: palindromic position sets inside [i, j]
        for i in range(n - 1, -1, -1):
            dp[i][i] = 1
            for j in range(i + 1, n):
                dp[i][j] = dp[i + 1][j] + dp[i][j - 1] - (dp[i + 1][j - 1] if i + 1 <= j - 1 else 0)
                if s[i] == s[j]:
                    dp[i][j] += 1 + (dp[i + 1][j - 1] if i + 1 <= j - 1 else 0)
        return Instance(prompt, str(dp[0][n - 1]), {"s": s, "size": n})

    def solve_int(self, problem: Problem) -> int:
        s = problem.data["s"]
        n = len(s)
        if n <= 11:
            return sum(
                1
                for mask in range(1, 1 << n)
                for w in ["".join(s[i] for i in range(n) if mask >> i & 1)]
                if w == w[::-1]
            )
        # pal[i][j]: palindromic position sets whose first position is i and last is j;
        # inner[i][j]: Σ pal[x][y] over i ≤ x ≤ y ≤ j (0 when the range is empty)
        inner = [[0] * (n + 1) for _ in range(n + 2)]
        for i in range(n - 1, -1, -1):
            row = 0
            for j in range(i, n):
                if s[i] == s[j]:
                    row += 1 if i == j else 1 + (inner[i + 1][j - 1] if i + 1 <= j - 1 else 0)
                inner[i][j] = (inner[i + 1][j] if i + 1 <= j else 0) + row
        return inner[0][n - 1]


def _lps_length(s: str) -> int:
    n = len(s)
    dp = [[0] * n for _ in range(n)]
    for i in range(n - 1, -1, -1):
        dp[i][i] = 1
        for j in range(i + 1, n):
            dp[i][j] = dp[i + 1][j - 1] + 2 if s[i] == s[j] else max(dp[i + 1][j], dp[i][j - 1])
    return dp[0][n - 1]


def _lcs_length(a: str, b: str) -> int:
    row = [0] * (len(b) + 1)
    for ca in a:
        prev = 0
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], prev + 1 if ca == cb else max(row[j], row[j - 1])
    return row[-1]


@ENVIRONMENTS.register("longest_palindromic_subsequence")
class LongestPalindromicSubsequence(SizedInteger):
    """The length of the longest palindromic subsequence."""

    tags = TAGS
    difficulty_scales = "|S| = 7 + 3d over 2-5 letters"
    size_measure = "string length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        s = random_word(rng, 7 + 3 * difficulty, "abcde"[: rng.randint(2, 5)])
        prompt = (
            f"What is the length of the longest subsequence of S = {s} that is a palindrome "
            "(a subsequence keeps some characters of S in their order)?"
        )
        return Instance(prompt, str(_lps_length(s)), {"s": s, "size": len(s)})

    def solve_int(self, problem: Problem) -> int:
        s = problem.data["s"]
        return _lcs_length(s, s[::-1])  # the LPS is the LCS of S and its reverse


@ENVIRONMENTS.register("min_insertions_palindrome")
class MinInsertionsPalindrome(SizedInteger):
    """The fewest characters to insert (anywhere) to make S a palindrome."""

    tags = TAGS
    difficulty_scales = "|S| = 6 + 3d over 2-5 letters"
    size_measure = "string length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        s = random_word(rng, 6 + 3 * difficulty, "abcde"[: rng.randint(2, 5)])
        prompt = (
            f"What is the smallest number of characters that must be inserted into S = {s} "
            "(at any positions) to turn it into a palindrome?"
        )
        return Instance(prompt, str(len(s) - _lps_length(s)), {"s": s, "size": len(s)})

    def solve_int(self, problem: Problem) -> int:
        """Interval DP on insertions directly: f(i, j) = f(i+1, j-1) if equal ends, else
        1 + min(f(i+1, j), f(i, j-1))."""
        s = problem.data["s"]
        n = len(s)
        f = [[0] * (n + 1) for _ in range(n + 1)]
        for length in range(2, n + 1):
            for i in range(n - length + 1):
                j = i + length - 1
                f[i][j] = f[i + 1][j - 1] if s[i] == s[j] else 1 + min(f[i + 1][j], f[i][j - 1])
        return f[0][n - 1]
