"""Strings found by search: the K-th distinct subsequence, the smallest rotation, the shortest
absent string, and palindromes with extremal properties (a longest concatenation of two, a
longest repeated one, the one with the largest length × occurrences).

Rows KthSubsequence, MinimalCyclicShift, MinNonsubstring, Longest_DoublePalindrome,
Longest_RepeatedPalindrome and MaxWeightPalindromicSubstring of the RLVE catalogue (Zeng et al.,
*RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable
Environments*, arXiv:2511.07317). Answers are strings (or a pair of positions); verifiers check
the stated property on the input (a palindrome that occurs twice, a split into two palindromes)
and grade the objective against the optimum, (answer/gold)^5; exact tasks are binary or earn
the per-position match rate.
"""

from __future__ import annotations

import itertools
import random
import re

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    optimum_verdict,
    parse_int_list,
)
from verirl.envs.kit.size_ladder import grown
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict

TAGS = ("rlve", "strings")
_WORD = re.compile(r"[a-z]{1,400}")


def read_word(answer: str) -> str | None:
    """The answer as a lowercase word (``$abba$``, ``\\text{abba}``, ``"abba"`` accepted)."""
    t = normalize.clean(answer).strip().strip("\"'`").strip()
    return t if _WORD.fullmatch(t) else None


class _StringEnv(Environment):
    tags = TAGS
    size_key = "text"
    size_measure = "length of the string"


def occurrences(text: str, word: str) -> int:
    """Occurrences of ``word`` in ``text``, overlapping ones included."""
    count, start = 0, text.find(word)
    while start >= 0:
        count += 1
        start = text.find(word, start + 1)
    return count


def palindrome_table(text: str) -> list[list[bool]]:
    """pal[i][j]: text[i:j] is a palindrome (j > i), grown from the centres."""
    n = len(text)
    pal = [[False] * (n + 1) for _ in range(n + 1)]
    for centre in range(2 * n - 1):
        lo, hi = centre // 2, (centre + 1) // 2
        while lo >= 0 and hi < n and text[lo] == text[hi]:
            pal[lo][hi + 1] = True
            lo, hi = lo - 1, hi + 1
    return pal


def _random_text(rng: random.Random, n: int, letters: str) -> str:
    return "".join(rng.choice(letters) for _ in range(n))


# ---- K-th distinct subsequence -----------------------------------------------------------
def _subsequence_counts(text: str) -> tuple[list[int], list[dict[str, int]]]:
    """f[i]: distinct subsequences of text[i:] (the empty one included); nxt[i][c]: first
    position ≥ i holding c."""
    n = len(text)
    nxt: list[dict[str, int]] = [{} for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        nxt[i] = {**nxt[i + 1], text[i]: i}
    f = [1] * (n + 1)
    for i in range(n - 1, -1, -1):
        f[i] = 1 + sum(f[p + 1] for p in nxt[i].values())
    return f, nxt


def kth_subsequence(text: str, k: int) -> str:
    """The k-th (1-based) distinct non-empty subsequence in lexicographic order."""
    f, nxt = _subsequence_counts(text)
    out, i = [], 0
    while True:
        for c in sorted(nxt[i]):
            p = nxt[i][c]
            if k <= f[p + 1]:  # subsequences starting with this c: c alone, then c + more
                out.append(c)
                if k == 1:
                    return "".join(out)
                k, i = k - 1, p + 1
                break
            k -= f[p + 1]
        else:
            raise ValueError("k is larger than the number of subsequences")


@ENVIRONMENTS.register("kth_subsequence")
class KthSubsequence(_StringEnv):
    """The K-th distinct non-empty subsequence of S in lexicographic order (binary)."""

    difficulty_scales = "N = 4 then int(1.1·N + 1) per level; letters a, b, c (or a, b from d 3)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(4, difficulty)
        text = _random_text(rng, n, "abc" if difficulty < 3 or rng.random() < 0.5 else "ab")
        total = _subsequence_counts(text)[0][0] - 1
        k = rng.randint(1, total)
        prompt = (
            f"You are given a string S of length {n}: {text}\nConsider all distinct non-empty "
            "subsequences of S (a subsequence is obtained by deleting some characters of S "
            "without changing the order of the rest; equal strings count once), sorted in "
            "lexicographic order (a proper prefix comes before the longer string, e.g. a < ab "
            f"< b). There are {total} of them. Output the {k}-th one (counting from 1)."
        )
        return Instance(prompt, kth_subsequence(text, k), {"text": text, "k": k})

    def check(self, problem: Problem, answer: str) -> Verdict:
        word = read_word(answer)
        if word is None:
            return invalid("the answer must be a string of letters")
        ok = word == kth_subsequence(problem.data["text"], problem.data["k"])
        return graded(0.0, ok, "correct" if ok else "that is not the requested subsequence")

    def solve(self, problem: Problem) -> str:
        text, k = problem.data["text"], problem.data["k"]
        if len(text) <= 14:  # brute force: every subset of positions
            subs = {
                "".join(text[i] for i in range(len(text)) if mask >> i & 1)
                for mask in range(1, 1 << len(text))
            }
            return sorted(subs)[k - 1]
        return kth_subsequence(text, k)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer + "a"  # a longer string is a different rank


# ---- smallest rotation -------------------------------------------------------------------
def least_rotation(text: str) -> str:
    """The lexicographically smallest rotation, by the two-candidate scan: candidates i < j
    are compared on their first k letters; the loser skips past the mismatch."""
    n = len(text)
    i, j, k = 0, 1, 0
    while i < n and j < n and k < n:
        a, b = text[(i + k) % n], text[(j + k) % n]
        if a == b:
            k += 1
            continue
        if a > b:
            i += k + 1
        else:
            j += k + 1
        if i == j:
            j += 1
        k = 0
    start = min(i, j)
    return text[start:] + text[:start]


@ENVIRONMENTS.register("minimal_cyclic_shift")
class MinimalCyclicShift(_StringEnv):
    """The lexicographically smallest cyclic shift of a binary string; the per-position match
    rate^10 as partial credit."""

    difficulty_scales = "N = 4 + d"

    def problem_space(self, difficulty: int) -> int | None:
        return 2 ** (4 + difficulty)

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        text = _random_text(rng, n, "01")
        prompt = (
            f"Here is a binary string S of length {n}: {text}\nYou may perform any number of "
            "cyclic shifts on S, where one shift moves the leftmost character to the rightmost "
            "position. Output the lexicographically smallest string that can be obtained."
        )
        return Instance(prompt, least_rotation(text), {"text": text})

    def check(self, problem: Problem, answer: str) -> Verdict:
        text = problem.data["text"]
        got = normalize.clean(answer).replace(" ", "")
        if len(got) != len(text) or set(got) - {"0", "1"}:
            return invalid(f"the answer must be a binary string of length {len(text)}")
        gold = least_rotation(text)
        hits = sum(a == b for a, b in zip(got, gold, strict=True))
        return graded((hits / len(text)) ** 10, got == gold, "a smaller rotation exists")

    def solve(self, problem: Problem) -> str:
        text = problem.data["text"]
        return min(text[i:] + text[:i] for i in range(len(text)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer[:-1] + ("1" if answer[-1] == "0" else "0")


# ---- shortest absent string --------------------------------------------------------------
@ENVIRONMENTS.register("min_nonsubstring")
class MinNonsubstring(_StringEnv):
    """The shortest string over {a, b} that is not a substring of A, the lexicographically
    smallest among those (binary)."""

    difficulty_scales = "N = 3 + d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        text = _random_text(rng, n, "ab")
        prompt = (
            f"You are given a string A = {text}\nYour task is to find a string B such that: "
            "B consists only of the letters a and b; B is not a (contiguous) substring of A; "
            "B is as short as possible; and among all such shortest strings, B is the "
            "lexicographically smallest. Output B."
        )
        return Instance(prompt, self._absent(text), {"text": text})

    @staticmethod
    def _absent(text: str) -> str:
        for length in itertools.count(1):
            present = {text[i : i + length] for i in range(len(text) - length + 1)}
            for letters in itertools.product("ab", repeat=length):
                word = "".join(letters)
                if word not in present:
                    return word
        raise AssertionError("unreachable")

    def problem_space(self, difficulty: int) -> int | None:
        return 2 ** (3 + difficulty)

    def check(self, problem: Problem, answer: str) -> Verdict:
        word = read_word(answer)
        if word is None or set(word) - {"a", "b"}:
            return invalid("B must be a string of the letters a and b")
        ok = word == self._absent(problem.data["text"])
        if ok:
            return graded(1.0, True)
        detail = "B occurs in A" if word in problem.data["text"] else "a better B exists"
        return graded(0.0, False, detail)

    def solve(self, problem: Problem) -> str:
        # Independent: count up in binary (a = 0, b = 1) within each length.
        text = problem.data["text"]
        length = 1
        while True:
            for code in range(2**length):
                word = format(code, f"0{length}b").replace("0", "a").replace("1", "b")
                if word not in text:
                    return word
            length += 1

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer + "a"


# ---- palindromes with extremal properties ------------------------------------------------
def _palindromic_substrings(text: str) -> set[str]:
    pal = palindrome_table(text)
    n = len(text)
    return {text[i:j] for i in range(n) for j in range(i + 1, n + 1) if pal[i][j]}


@ENVIRONMENTS.register("longest_double_palindrome")
class LongestDoublePalindrome(_StringEnv):
    """The longest substring that is the concatenation of two non-empty palindromes;
    (length/gold)^5, a substring without such a split is invalid."""

    difficulty_scales = "N = 5 then int(1.1·N + 1) per level"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(5, difficulty)
        text = _random_text(rng, n, "ab" if rng.random() < 0.5 else "abc")
        prompt = (
            f"You are given a string S of length {n} (0-indexed): {text}\nPlease find indices "
            "l ≤ r such that the substring S[l..r] (both ends included) can be split into two "
            "non-empty parts X and Y (S[l..r] = XY) that are both palindromes, and r - l + 1 is "
            "as large as possible. Output l and r separated by a space; if several are optimal, "
            "any of them is accepted."
        )
        return Instance(prompt, self._witness(text), {"text": text})

    @staticmethod
    def _witness(text: str) -> str:
        """For each split point: the longest palindrome ending before it + the longest
        starting at it."""
        pal = palindrome_table(text)
        n = len(text)
        best = (0, 0, 0)
        for m in range(1, n):
            left = min((i for i in range(m) if pal[i][m]), default=None)
            right = max((j for j in range(m + 1, n + 1) if pal[m][j]), default=None)
            if left is not None and right is not None:
                best = max(best, (right - left, -left, right - 1))
        return f"{-best[1]} {best[2]}"

    def check(self, problem: Problem, answer: str) -> Verdict:
        text = problem.data["text"]
        pair = parse_int_list(answer)
        if len(pair) != 2:
            return invalid("give l and r")
        l, r = pair
        if not 0 <= l < r < len(text):
            return invalid("need 0 ≤ l < r < N (both parts are non-empty)")
        piece = text[l : r + 1]
        if not any(
            piece[:m] == piece[:m][::-1] and piece[m:] == piece[m:][::-1]
            for m in range(1, len(piece))
        ):
            return invalid("that substring is not two palindromes in a row")
        lo, hi = map(int, self._witness(text).split())
        return optimum_verdict(r - l + 1, hi - lo + 1, "a longer double palindrome exists")

    def solve(self, problem: Problem) -> str:
        # Independent: try substrings from the longest down, each split point.
        text = problem.data["text"]
        n = len(text)
        if n > 40:
            return self._witness(text)
        for length in range(n, 1, -1):
            for l in range(n - length + 1):
                piece = text[l : l + length]
                for m in range(1, length):
                    if piece[:m] == piece[:m][::-1] and piece[m:] == piece[m:][::-1]:
                        return f"{l} {l + length - 1}"
        raise AssertionError("any two letters form a double palindrome")

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        left = answer.split()[0]
        return f"{left} {left}"  # one letter cannot be split into two non-empty parts


class _PalindromeChoice(_StringEnv):
    """The answer is a palindrome T occurring in S; ``value`` says how good it is (None:
    not allowed)."""

    def value(self, text: str, word: str) -> int | None:
        raise NotImplementedError

    def best(self, text: str) -> tuple[int, str]:
        scored = [(v, w) for w in _palindromic_substrings(text) if (v := self.value(text, w))]
        return max(scored, key=lambda t: (t[0], -len(t[1]), [-ord(c) for c in t[1]]))

    def check(self, problem: Problem, answer: str) -> Verdict:
        text = problem.data["text"]
        word = read_word(answer)
        if word is None:
            return invalid("the answer must be a string of letters")
        if word != word[::-1]:
            return invalid("T is not a palindrome")
        got = self.value(text, word)
        if got is None:
            return invalid(self.not_allowed)
        return optimum_verdict(got, self.best(text)[0], "a better palindrome exists")

    not_allowed = "T does not occur in S"

    def solve(self, problem: Problem) -> str:
        # Independent: every substring (not the centre table) checked by reversal.
        text = problem.data["text"]
        words = {text[i:j] for i in range(len(text)) for j in range(i + 1, len(text) + 1)}
        scored = [(v, w) for w in words if w == w[::-1] and (v := self.value(text, w))]
        return max(scored)[1]

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer + "z"  # not a palindrome (z never occurs)


@ENVIRONMENTS.register("longest_repeated_palindrome")
class LongestRepeatedPalindrome(_PalindromeChoice):
    """The longest palindrome that occurs at least twice in S (overlaps allowed);
    (length/gold)^5 credit."""

    difficulty_scales = "N = 5 then int(1.1·N + 1) per level (at most 120)"
    not_allowed = "T does not occur at least twice in S"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(5, difficulty, cap=120)
        letters = "ab" if rng.random() < 0.5 else "abc"
        text = _random_text(rng, n, letters)
        if len(set(text)) == len(text):  # make some letter repeat
            text = text[:-1] + text[0]
        prompt = (
            f"You are given a string S: {text}\nPlease find a substring T of S such that: T is "
            "a palindrome (it reads the same forwards and backwards); T occurs at least twice "
            "in S (occurrences may overlap); and T is as long as possible. Output T; if several "
            "are equally long, any of them is accepted."
        )
        data = {"text": text}
        return Instance(prompt, self.best(text)[1], data)

    def value(self, text: str, word: str) -> int | None:
        return len(word) if occurrences(text, word) >= 2 else None


@ENVIRONMENTS.register("max_weight_palindromic_substring")
class MaxWeightPalindromicSubstring(_PalindromeChoice):
    """The palindrome T maximising |T| × (occurrences of T in S); (value/gold)^5 credit."""

    difficulty_scales = "N = 5 then int(1.1·N + 1) per level (at most 120)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(5, difficulty, cap=120)
        text = _random_text(rng, n, "ab" if difficulty >= 3 and rng.random() < 0.5 else "abc")
        prompt = (
            f"You are given a string S: {text}\nPlease find a palindromic string T such that "
            "the product of T's length and the number of times T occurs in S (as a substring; "
            "overlapping occurrences count) is maximized. Output T; if several strings reach "
            "the maximum, any of them is accepted."
        )
        return Instance(prompt, self.best(text)[1], {"text": text})

    def value(self, text: str, word: str) -> int | None:
        count = occurrences(text, word)
        return len(word) * count if count else None
