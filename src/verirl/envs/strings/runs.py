"""Strings, balances and runs: the longest stretch of a salad bar where fruit always leads,
a character of a self-rotating code, the longest cyclically equivalent prefix and suffix,
flipping bits to shorten the longest run, and a permutation that makes two concatenations
agree.

RLVE-Gym rows SaladBar, SecretCowCode, Prefixuffix, ShortestUnicolorSubstring and
PCPPermutation (Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for Language Models
with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A). Exact answers are
binary; choices are checked against the constraints and scored by the row's ratio
((answer/gold)^5, (gold/answer)^5, matching characters^10).
"""

from __future__ import annotations

import itertools
import random

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    parse_int,
    parse_int_list,
    ratio_reward,
    wrong_format,
)
from verirl.types import Problem, Verdict

TAGS = ("rlve", "strings")


def _balanced(segment: str) -> bool:
    """Every prefix and every suffix has at least as many p as j."""
    run = 0
    for c in segment:
        run += 1 if c == "p" else -1
        if run < 0:
            return False
    run = 0
    for c in reversed(segment):
        run += 1 if c == "p" else -1
        if run < 0:
            return False
    return True


@ENVIRONMENTS.register("salad_bar")
class SaladBar(Environment):
    """The longest substring of a j/p string whose every prefix and suffix has #p ≥ #j:
    (length/gold)^5."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "length 5 + 2d; p with probability 0.4..0.7"
    size_measure = "string length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + 2 * difficulty
        bias = rng.choice([0.4, 0.5, 0.6, 0.7])
        s = "".join("p" if rng.random() < bias else "j" for _ in range(n))
        if "p" not in s:
            i = rng.randrange(n)
            s = s[:i] + "p" + s[i + 1 :]
        prompt = (
            f"You are given a string S of length {n}, indexed from 1, made of the letters j and p:"
            f"\n{s}\nFind the longest substring S[l..r] such that every prefix of it and every "
            "suffix of it contains at least as many p as j. Give l and r separated by a comma."
        )
        return Instance(prompt, "{}, {}".format(*_best_bar(s)), {"s": s})

    def check(self, problem: Problem, answer: str) -> Verdict:
        s = problem.data["s"]
        got = parse_int_list(answer)
        if len(got) != 2 or not 1 <= got[0] <= got[1] <= len(s):
            return invalid(f"give l and r with 1 ≤ l ≤ r ≤ {len(s)}")
        if not _balanced(s[got[0] - 1 : got[1]]):
            return invalid("some prefix or suffix of that substring has more j than p")
        gl, gr = _best_bar(s)
        length, best = got[1] - got[0] + 1, gr - gl + 1
        ok = length == best
        return graded(
            ratio_reward(length, best, 5.0), ok, "correct" if ok else "a longer substring exists"
        )

    def solve(self, problem: Problem) -> str:
        return "{}, {}".format(*_best_bar(problem.data["s"]))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return f"0, {len(problem.data['s'])}"

    def problem_space(self, difficulty: int) -> int | None:
        return min(10**9, 2 ** (5 + 2 * difficulty) - 1)

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["s"]))


def _best_bar(s: str) -> tuple[int, int]:
    best = (0, -1)
    for l in range(len(s)):
        for r in range(l + best[1] - best[0] + 1, len(s)):
            if _balanced(s[l : r + 1]):
                best = (l, r)
    return best[0] + 1, best[1] + 1


def _letter(answer: str) -> str | Verdict:
    t = answer.strip().strip("$").strip()
    if t.startswith("\\text{") and t.endswith("}"):
        t = t[6:-1].strip()
    t = t.strip("'\"")
    if len(t) != 1 or not t.isalpha() or not t.isascii():
        return wrong_format("expected a single letter")
    return t.lower()


@ENVIRONMENTS.register("secret_cow_code")
class SecretCowCode(Environment):
    """S grows by appending its own rotation (last letter first); the N-th letter."""

    tags = TAGS
    answer_kind = "text"
    difficulty_scales = "|S| = 3 + d//3; N up to |S|·2^(3 + d) (at most |S|·2^40)"
    size_measure = "bits of N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        s = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(3 + difficulty // 3))
        n = rng.randint(1, len(s) * 2 ** min(40, 3 + difficulty))
        prompt = (
            f"You are given a string S of lowercase letters: {s}\nRepeat the following forever: "
            "rotate S to the right by one (move its last letter to the front) and append the "
            "result to S. For example, abc becomes abccab, then abccabbabcca, and so on. What "
            f"is the {n}-th letter (counting from 1) of the resulting infinite string? Give the "
            "letter."
        )
        return Instance(prompt, _cow_letter(s, n), {"s": s, "n": n})

    def check(self, problem: Problem, answer: str) -> Verdict:
        letter = _letter(answer)
        if isinstance(letter, Verdict):
            return letter
        gold = self.solve(problem)
        return graded(
            0.0, letter == gold, "correct" if letter == gold else "the letter is not right"
        )

    def solve(self, problem: Problem) -> str:
        """Build the string while it is short enough; beyond, reduce N as in the generator."""
        s, n = problem.data["s"], problem.data["n"]
        if n <= 2**16:
            text = s
            while len(text) < n:
                text += text[-1] + text[:-1]
            return text[n - 1]
        return _cow_letter(s, n)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return "a" if answer != "a" else "b"

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"].bit_length())


def _cow_letter(s: str, n: int) -> str:
    """In a string of length 2L, position L + 1 copies L and position L + k (k ≥ 2) copies
    k - 1: map N back until it falls in S."""
    length = len(s)
    while length < n:
        length *= 2
    while length > len(s):
        half = length // 2
        if n > half:
            n = half if n == half + 1 else n - half - 1
        length = half
    return s[n - 1]


@ENVIRONMENTS.register("prefixuffix")
class Prefixuffix(Environment):
    """The largest L ≤ n/2 whose length-L prefix and suffix are cyclic shifts of each other."""

    tags = TAGS
    answer_kind = "integer"
    difficulty_scales = (
        "S = u v m v u over {a, b}: |u| ≤ 2 + d//2, |v| ≤ 3 + d//2, |m| ≤ 3 + d (length ~8 + 3d)"
    )
    size_measure = "string length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        def word(k: int) -> str:
            return "".join(rng.choice("ab") for _ in range(k))

        u, v = word(rng.randint(0, 2 + difficulty // 2)), word(rng.randint(1, 3 + difficulty // 2))
        s = u + v + word(rng.randint(0, 3 + difficulty)) + v + u
        best = max(
            (k for k in range(len(s) // 2 + 1) if s[len(s) - k :] in (s[:k] + s[:k])),
            default=0,
        )
        prompt = (
            "Two strings are cyclically equivalent when one can be obtained from the other by "
            f"moving a suffix to the front (a cyclic shift). You are given the string S = {s} of "
            f"length {len(s)}. Find the largest L with 2L ≤ {len(s)} such that the prefix of S "
            "of length L and the suffix of S of length L are cyclically equivalent (L = 0 "
            "always qualifies)."
        )
        return Instance(prompt, str(best), {"s": s})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)
        ok = value == int(self.solve(problem))  # RLVE's row is binary
        return graded(0.0, ok, "correct" if ok else "the length is not right")

    def solve(self, problem: Problem) -> str:
        s = problem.data["s"]
        for k in range(len(s) // 2, -1, -1):
            pre, suf = s[:k], s[len(s) - k :]
            if any(pre[i:] + pre[:i] == suf for i in range(max(k, 1))):
                return str(k)
        return "0"

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["s"]))


@ENVIRONMENTS.register("shortest_unicolor_substring")
class ShortestUnicolorSubstring(Environment):
    """Flip at most K bits of a binary string to make its longest run of equal characters as
    short as possible: (gold/answer)^5."""

    tags = TAGS
    answer_kind = "text"
    difficulty_scales = "length 5 + d; K in 1..n//3"
    size_measure = "string length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + difficulty
        stay = rng.choice([0.5, 0.7, 0.85])  # chance that a character repeats the previous one
        chars = [rng.choice("01")]
        for _ in range(n - 1):
            chars.append(chars[-1] if rng.random() < stay else "10"[int(chars[-1])])
        s = "".join(chars)
        k = rng.randint(1, max(1, n // 3))
        prompt = (
            f"You are given a binary string S of length {n}:\n{s}\nYou may flip at most {k} of its "
            "characters (change 0 to 1 or 1 to 0). Make the longest substring of equal characters "
            f"as short as possible. Give the resulting string of length {n}."
        )
        return Instance(prompt, _flipped(s, k), {"s": s, "k": k})

    def check(self, problem: Problem, answer: str) -> Verdict:
        s, k = problem.data["s"], problem.data["k"]
        t = "".join(answer.split())
        if len(t) > 4 * len(s) or set(t) - {"0", "1"}:
            return wrong_format("expected a string of 0s and 1s")
        if len(t) != len(s):
            return invalid(f"the string must have length {len(s)}")
        if sum(a != b for a, b in zip(s, t, strict=True)) > k:
            return invalid(f"more than {k} characters were flipped")
        value, best = _longest_run(t), _best_run(s, k)
        ok = value == best
        return graded(
            ratio_reward(best, value, 5.0),
            ok,
            "correct" if ok else "a shorter longest run is possible",
        )

    def solve(self, problem: Problem) -> str:
        return _flipped(problem.data["s"], problem.data["k"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer + "0"

    def problem_space(self, difficulty: int) -> int | None:
        n = 5 + difficulty
        return min(10**9, 2**n * max(1, n // 3))

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["s"]))


def _longest_run(t: str) -> int:
    best = run = 1
    for a, b in itertools.pairwise(t):
        run = run + 1 if a == b else 1
        best = max(best, run)
    return best


def _runs(s: str) -> list[int]:
    out, run = [], 1
    for a, b in itertools.pairwise(s):
        if a == b:
            run += 1
        else:
            out.append(run)
            run = 1
    return [*out, run]


def _alternating_cost(s: str) -> int:
    mismatches = sum(c != "01"[i % 2] for i, c in enumerate(s))
    return min(mismatches, len(s) - mismatches)


def _best_run(s: str, k: int) -> int:
    """L = 1 needs an alternating string; L ≥ 2 needs ⌊r/(L+1)⌋ flips in each run of r."""
    if _alternating_cost(s) <= k:
        return 1
    return next(big for big in range(2, len(s) + 1) if sum(r // (big + 1) for r in _runs(s)) <= k)


def _flipped(s: str, k: int) -> str:
    best = _best_run(s, k)
    if best == 1:
        alt = "".join("01"[i % 2] for i in range(len(s)))
        other = "".join("10"[i % 2] for i in range(len(s)))
        return min((alt, other), key=lambda t: sum(a != b for a, b in zip(s, t, strict=True)))
    out, pos = list(s), 0
    for r in _runs(s):  # flip offsets L, 2L+1, ...; one earlier if the last would end the run
        step = best + 1
        shift = 1 if r % step == 0 else 0
        for off in range(best - shift, r, step):
            if r // step and off < r:
                out[pos + off] = "1" if out[pos + off] == "0" else "0"
        pos += r
    return "".join(out)


@ENVIRONMENTS.register("pcp_permutation")
class PcpPermutation(Environment):
    """A permutation p with A[p0] + A[p1] + ... = B[p0] + B[p1] + ... (a Post
    correspondence instance where every index is used once): mean([a = b])^10 over the
    characters of the two concatenations."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "N = 3 + d//2 strings (at most 10) cut from one word of length ~3N"
    size_measure = "strings N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(10, 3 + difficulty // 2)
        length = rng.randint(2 * n, 3 * n)
        word = "".join(rng.choice("ab") for _ in range(length))

        def pieces() -> list[str]:
            cuts = sorted(rng.sample(range(1, length), n - 1))
            return [word[i:j] for i, j in zip([0, *cuts], [*cuts, length], strict=True)]

        order = list(range(n))
        rng.shuffle(order)  # index order[k] holds the k-th piece of both cuttings
        a, b = [""] * n, [""] * n
        for k, (pa, pb) in enumerate(zip(pieces(), pieces(), strict=True)):
            a[order[k]], b[order[k]] = pa, pb
        prompt = (
            f"You are given two arrays of strings, A and B, each containing {n} strings:\n"
            + "\n".join(f"A[{i}] = {a[i]}, B[{i}] = {b[i]}" for i in range(n))
            + f"\n\nFind a permutation p of 0 to {n - 1} such that A[p[0]] + A[p[1]] + ... + "
            f"A[p[{n - 1}]] equals B[p[0]] + B[p[1]] + ... + B[p[{n - 1}]] (+ is concatenation). "
            "Give p separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, order)), {"a": a, "b": b})

    def check(self, problem: Problem, answer: str) -> Verdict:
        a, b = problem.data["a"], problem.data["b"]
        p = parse_int_list(answer)
        if sorted(p) != list(range(len(a))):
            return invalid(f"give a permutation of 0 to {len(a) - 1}")
        top, bottom = "".join(a[i] for i in p), "".join(b[i] for i in p)
        same = sum(x == y for x, y in zip(top, bottom, strict=True))  # equal total lengths
        ok = top == bottom
        return graded((same / len(top)) ** 10, ok, "correct" if ok else "the concatenations differ")

    def solve(self, problem: Problem) -> str:
        """Depth-first search keeping one concatenation a prefix of the other; states are
        (indices used, the overhang) and dead states are remembered."""
        a, b = problem.data["a"], problem.data["b"]
        n = len(a)
        dead: set[tuple[int, str, bool]] = set()
        path: list[int] = []

        def extend(used: int, over: str, a_ahead: bool) -> bool:
            if used == (1 << n) - 1:
                return over == ""
            if (used, over, a_ahead) in dead:
                return False
            for i in range(n):
                if used >> i & 1:
                    continue
                top, bottom = (over + a[i], b[i]) if a_ahead else (a[i], over + b[i])
                if top.startswith(bottom):
                    state = (top[len(bottom) :], True)
                elif bottom.startswith(top):
                    state = (bottom[len(top) :], False)
                else:
                    continue
                path.append(i)
                if extend(used | 1 << i, *state):
                    return True
                path.pop()
            dead.add((used, over, a_ahead))
            return False

        extend(0, "", True)
        return ", ".join(map(str, path))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        items = answer.split(", ")
        return ", ".join(items[:-1])

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["a"]))
