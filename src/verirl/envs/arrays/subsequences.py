"""Arrays, part 1: choosing elements or an interval — K non-adjacent elements, the longest
interval of bounded spread, the longest rise-then-fall subsequence, the lexicographically
largest subsequence, the largest concatenation, and the next greater element.

Rows Max_NonAdjacent_KElementSum, LongestMaxDiffBoundedInterval, LIS_LDS_Concatenation,
MaximumLexicographicalOrderSubsequence, MaxPermutation and MonotonicStack of the RLVE catalogue
(Zeng et al., *RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive
Verifiable Environments*, arXiv:2511.07317). Witness answers are checked against the
constraints and their objective graded against the optimum, (answer/gold)^5; answers with one
right value (a subsequence, a list of indices) earn the element-wise match rate.
"""

from __future__ import annotations

import functools
import itertools
import random
from fractions import Fraction

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    optimum_verdict,
    parse_int_list,
    ratio_reward,
    sequence_reward,
)
from verirl.envs.kit.size_ladder import grown
from verirl.envs.kit.wording import indexed, plural
from verirl.types import Problem, Verdict

TAGS = ("rlve", "arrays")


class _ArrayEnv(Environment):
    tags = TAGS
    size_key = "values"
    size_measure = "length N of the array"


def _indices(answer: str, n: int) -> list[int] | Verdict:
    """Distinct in-range indices of the answer, or an invalid verdict."""
    chosen = parse_int_list(answer)
    if len(chosen) > n or len(set(chosen)) != len(chosen):
        return invalid("the indices must be distinct")
    if any(not 0 <= i < n for i in chosen):
        return invalid("an index is out of range")
    return chosen


# ---- K non-adjacent elements -------------------------------------------------------------
def _indices_noun(k: int) -> str:
    return "1 index" if k == 1 else f"{k} indices"


def best_k_nonadjacent(values: list[int], k: int) -> int | None:
    """Largest sum of exactly k pairwise non-adjacent elements (None if impossible)."""
    neg: int | None = None
    # take[j], skip[j]: best with j chosen so far, last element taken / not taken
    skip = [0] + [neg] * k
    take = [neg] * (k + 1)
    for v in values:
        new_skip = [
            max((x for x in (skip[j], take[j]) if x is not None), default=None)
            for j in range(k + 1)
        ]
        new_take = [neg] + [None if s is None else s + v for s in skip[:k]]
        skip, take = new_skip, new_take
    options = [x for x in (skip[k], take[k]) if x is not None]
    return max(options) if options else None


@ENVIRONMENTS.register("max_non_adjacent_k_element_sum")
class MaxNonAdjacentKElementSum(_ArrayEnv):
    """Exactly K pairwise non-adjacent elements with the largest sum; (sum/gold)^5 credit."""

    difficulty_scales = "N = 4 then int(1.1·N + 1) per level; K in 1..ceil(N/2)"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(4, difficulty)
        values = [rng.randint(1, 2 * n) for _ in range(n)]
        k = rng.randint(1, (n + 1) // 2)
        prompt = (
            f"You are given an array A of {n} positive integers: {indexed(values)}\n\n"
            f"Choose exactly {_indices_noun(k)}, no two of them adjacent (|i - j| ≥ 2 for any "
            "two chosen indices), so that the sum of the chosen values is as large as possible. "
            "Give the chosen indices separated by spaces; if several choices are optimal, any "
            "of them is accepted."
        )
        data = {"values": values, "k": k}
        return Instance(prompt, self.solve_from(values, k), data)

    @staticmethod
    def solve_from(values: list[int], k: int) -> str:
        """Indices by a suffix DP: best[i][j] = best sum choosing j from values[i:]."""
        n = len(values)

        @functools.cache
        def best(i: int, j: int) -> float:
            if j == 0:
                return 0
            if i >= n:
                return float("-inf")
            return max(best(i + 1, j), values[i] + best(i + 2, j - 1))

        chosen, i, j = [], 0, k
        while j:
            if values[i] + best(i + 2, j - 1) >= best(i + 1, j):
                chosen.append(i)
                i, j = i + 2, j - 1
            else:
                i += 1
        best.cache_clear()
        return " ".join(map(str, chosen))

    def check(self, problem: Problem, answer: str) -> Verdict:
        values, k = problem.data["values"], problem.data["k"]
        chosen = _indices(answer, len(values))
        if isinstance(chosen, Verdict):
            return chosen
        if len(chosen) != k:
            return invalid(f"choose exactly {k} indices")
        ordered = sorted(chosen)
        if any(b - a < 2 for a, b in itertools.pairwise(ordered)):
            return invalid("two chosen indices are adjacent")
        gold = best_k_nonadjacent(values, k)
        return optimum_verdict(sum(values[i] for i in chosen), gold or 0, "a larger sum exists")

    def solve(self, problem: Problem) -> str:
        return self.solve_from(problem.data["values"], problem.data["k"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        first = answer.split()[0]
        return f"{first} {int(first) + 1}" if problem.data["k"] == 2 else f"{answer} {first}"


# ---- longest interval with bounded spread ------------------------------------------------
@ENVIRONMENTS.register("longest_max_diff_bounded_interval")
class LongestMaxDiffBoundedInterval(_ArrayEnv):
    """The longest contiguous subarray whose max − min is at most K; (length/gold)^5."""

    difficulty_scales = "N = 3 then int(1.1·N + 1) per level; values in 0..2N"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(3, difficulty)
        values = [rng.randint(0, 2 * n) for _ in range(n)]
        k = rng.randint(0, n)
        prompt = (
            f"You are given an array A of length {n}: {indexed(values)}\n\nPlease find the "
            "longest contiguous subarray A[l : r] (from index l to index r, both included) such "
            f"that the maximum minus the minimum of its values is at most {k}. Output l and r "
            "separated by a space; if several subarrays are equally long, any of them is "
            "accepted."
        )
        data = {"values": values, "k": k}
        return Instance(prompt, self._brute(values, k), data)

    @staticmethod
    def _brute(values: list[int], k: int) -> str:
        best = (0, 0, 0)
        for l in range(len(values)):
            lo = hi = values[l]
            for r in range(l, len(values)):
                lo, hi = min(lo, values[r]), max(hi, values[r])
                if hi - lo > k:
                    break
                best = max(best, (r - l + 1, -l, r))
        return f"{-best[1]} {best[2]}"

    @staticmethod
    def _longest(values: list[int], k: int) -> int:
        """Two pointers: the window [l, r] shrinks from the left while its spread is > k."""
        best, l = 0, 0
        for r in range(len(values)):
            while max(values[l : r + 1]) - min(values[l : r + 1]) > k:
                l += 1
            best = max(best, r - l + 1)
        return best

    def check(self, problem: Problem, answer: str) -> Verdict:
        values, k = problem.data["values"], problem.data["k"]
        pair = parse_int_list(answer)
        if len(pair) != 2:
            return invalid("give l and r")
        l, r = pair
        if not 0 <= l <= r < len(values):
            return invalid("need 0 ≤ l ≤ r < N")
        window = values[l : r + 1]
        if max(window) - min(window) > k:
            return invalid("the spread of that subarray is larger than allowed")
        return optimum_verdict(r - l + 1, self._longest(values, k), "a longer subarray exists")

    def solve(self, problem: Problem) -> str:
        return self._brute(problem.data["values"], problem.data["k"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        l, r = map(int, answer.split())
        return f"{r} {l - 1}" if l > 0 else f"{l} {len(problem.data['values'])}"


# ---- rise then fall ----------------------------------------------------------------------
def _bitonic_length(values: list[int]) -> int:
    """Length of a longest rise-then-fall subsequence, by a DP over (index, phase): the
    longest continuation that starts by choosing index i while rising or falling."""
    n = len(values)
    rising, falling = [1] * n, [1] * n
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            if values[j] < values[i]:
                falling[i] = max(falling[i], falling[j] + 1)
                rising[i] = max(rising[i], falling[j] + 1)
            elif values[j] > values[i]:
                rising[i] = max(rising[i], rising[j] + 1)
    return max(rising)


@ENVIRONMENTS.register("lis_lds_concatenation")
class LisLdsConcatenation(_ArrayEnv):
    """The longest subsequence that strictly increases and then strictly decreases (either
    part may be empty); (length/gold)^5 credit."""

    difficulty_scales = "N = 5 then int(1.2·N) per level (at most 200)"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5
        for _ in range(difficulty):
            n = min(200, int(n * 1.2))
        values = [rng.randint(1, 2 * n) for _ in range(n)]
        prompt = (
            f"You are given an array A of length {n}. The values are as follows (indexing "
            f"starts at 0):\n{indexed(values)}\n\nChoose indices i_1 < i_2 < ... < i_k such "
            "that the chosen values first strictly increase and then strictly decrease: for "
            "some position p, A[i_1] < ... < A[i_p] > A[i_(p+1)] > ... > A[i_k] (either part may "
            "be empty). Make k as large as possible. Give the indices in increasing order "
            "separated by spaces; if several choices are optimal, any of them is accepted."
        )
        return Instance(prompt, self._witness(values), {"values": values})

    @staticmethod
    def _witness(values: list[int]) -> str:
        """A longest increasing run ending at the peak i joined to a longest decreasing one
        starting there (LIS ending at i + LDS starting at i - 1), with parent pointers."""
        n = len(values)
        up, up_prev = [1] * n, [-1] * n
        for i in range(n):
            for j in range(i):
                if values[j] < values[i] and up[j] + 1 > up[i]:
                    up[i], up_prev[i] = up[j] + 1, j
        down, down_next = [1] * n, [-1] * n
        for i in range(n - 1, -1, -1):
            for j in range(i + 1, n):
                if values[j] < values[i] and down[j] + 1 > down[i]:
                    down[i], down_next[i] = down[j] + 1, j
        peak = max(range(n), key=lambda i: up[i] + down[i])
        left, i = [], peak
        while i >= 0:
            left.append(i)
            i = up_prev[i]
        right, i = [], down_next[peak]
        while i >= 0:
            right.append(i)
            i = down_next[i]
        return " ".join(map(str, left[::-1] + right))

    def check(self, problem: Problem, answer: str) -> Verdict:
        values = problem.data["values"]
        chosen = _indices(answer, len(values))
        if isinstance(chosen, Verdict):
            return chosen
        if not chosen:
            return invalid("choose at least one index")
        seq = [values[i] for i in sorted(chosen)]
        peak = seq.index(max(seq))
        rising = all(a < b for a, b in itertools.pairwise(seq[: peak + 1]))
        falling = all(a > b for a, b in itertools.pairwise(seq[peak:]))
        if not (rising and falling):
            return invalid("the chosen values do not rise and then fall strictly")
        return optimum_verdict(len(seq), _bitonic_length(values), "a longer choice exists")

    def solve(self, problem: Problem) -> str:
        return self._witness(problem.data["values"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rpartition(" ")[0] or "x"  # one index fewer (or no answer)


# ---- lexicographically largest subsequence -----------------------------------------------
@ENVIRONMENTS.register("maximum_lexicographical_order_subsequence")
class MaximumLexicographicalOrderSubsequence(_ArrayEnv):
    """The lexicographically largest subsequence of length K; element-wise match^5 credit,
    a list that is not a subsequence of length K is invalid."""

    difficulty_scales = "N = 3 then int(1.1·N + 1) per level; values in 1..N"
    answer_kind = "integer_list"

    def problem_space(self, difficulty: int) -> int | None:
        n = grown(3, difficulty)
        space = max(3, n) ** n * n
        return space if space < 10_000 else None

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(3, difficulty)
        values = [rng.randint(1, max(3, n)) for _ in range(n)]
        k = rng.randint(1, n)
        prompt = (
            f"Given an array A of length {n}: {indexed(values)}\n\nPlease find a (not "
            f"necessarily contiguous) subsequence of length {k} (i.e., select "
            f"{plural(k, 'element')} with "
            "increasing indices) whose sequence of values is lexicographically largest: compared "
            "element by element from the first, the first difference decides. Output the "
            f"{plural(k, 'value')} of the subsequence, in order, separated by spaces."
        )
        return Instance(
            prompt, " ".join(map(str, self._stack(values, k))), {"values": values, "k": k}
        )

    @staticmethod
    def _stack(values: list[int], k: int) -> list[int]:
        """Greedy stack: pop smaller values while enough elements remain."""
        out: list[int] = []
        for i, v in enumerate(values):
            while out and out[-1] < v and len(out) - 1 + len(values) - i >= k:
                out.pop()
            if len(out) < k:
                out.append(v)
        return out

    def check(self, problem: Problem, answer: str) -> Verdict:
        values, k = problem.data["values"], problem.data["k"]
        got = parse_int_list(answer)
        if len(got) != k:
            return invalid(f"give exactly {k} values")
        it = iter(values)
        if not all(any(v == w for w in it) for v in got):
            return invalid("that is not a subsequence of A")
        gold = self._stack(values, k)
        ok = got == gold
        return graded(sequence_reward(got, gold, 5.0), ok, "a lexicographically larger one exists")

    def solve(self, problem: Problem) -> str:
        # Independent: pick, for each position, the largest value in the window that still
        # leaves enough elements (leftmost occurrence).
        values, k = problem.data["values"], problem.data["k"]
        out, start = [], 0
        for left in range(k, 0, -1):
            window = values[start : len(values) - left + 1]
            best = max(window)
            start += window.index(best) + 1
            out.append(best)
        return " ".join(map(str, out))


# ---- largest concatenation ---------------------------------------------------------------
@ENVIRONMENTS.register("max_permutation")
class MaxPermutation(_ArrayEnv):
    """An order of the numbers whose concatenation is largest; (value/gold)^5 credit."""

    difficulty_scales = "N = 3 then int(1.1·N + 1) per level (at most 80); values up to 10^(1+d//6)"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(3, difficulty, cap=80)
        top = 10 ** (1 + difficulty // 6)
        values = [rng.randint(1, top) for _ in range(n)]
        if n > 2:  # shared prefixes make the order subtle
            values[rng.randrange(n)] = int(str(values[0]) * 2)
        prompt = (
            f"You are given an array A of {n} positive integers: {indexed(values)}\n\nArrange "
            "all of them in some order and write their decimal digits one after another to "
            "form one big number. Find an order that makes this number as large as possible. "
            "Output the order as the list of indices (a permutation of 0.."
            f"{n - 1}) separated by spaces; if several orders give the largest number, any of "
            "them is accepted."
        )
        return Instance(prompt, self._by_comparison(values), {"values": values})

    @staticmethod
    def _by_comparison(values: list[int]) -> str:
        def cmp(i: int, j: int) -> int:
            a, b = str(values[i]), str(values[j])
            return -1 if a + b > b + a else (1 if a + b < b + a else 0)

        return " ".join(map(str, sorted(range(len(values)), key=functools.cmp_to_key(cmp))))

    def check(self, problem: Problem, answer: str) -> Verdict:
        values = problem.data["values"]
        order = parse_int_list(answer)
        if sorted(order) != list(range(len(values))):
            return invalid("the order must be a permutation of the indices")
        got = int("".join(str(values[i]) for i in order))
        best = int("".join(str(values[i]) for i in map(int, self._by_comparison(values).split())))
        return graded(
            ratio_reward(Fraction(got), Fraction(best), 5.0), got == best, "a larger number exists"
        )

    def solve(self, problem: Problem) -> str:
        # Independent: sort by the string repeated to a common length (a + b > b + a is the
        # same as comparing the infinite repetitions of a and b).
        values = problem.data["values"]
        width = 2 * max(len(str(v)) for v in values) + 1
        key = {i: (str(v) * width)[:width] for i, v in enumerate(values)}
        return " ".join(map(str, sorted(range(len(values)), key=lambda i: key[i], reverse=True)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rpartition(" ")[0] or "x"  # an index missing


# ---- next greater element ----------------------------------------------------------------
@ENVIRONMENTS.register("monotonic_stack")
class MonotonicStack(_ArrayEnv):
    """For each position, the first later position with a larger value (0 if none); binary
    reward on the whole list."""

    difficulty_scales = "N = 4 then int(1.1·N + 1) per level; values in 1..N"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(4, difficulty)
        values = [rng.randint(1, n) for _ in range(n)]
        shown = " ".join(f"A[{i + 1}]={v}" for i, v in enumerate(values))
        prompt = (
            f"You are given an array A indexed from 1 to {n}: {shown}\n\nFor each i from 1 to "
            f"{n}, let F[i] be the smallest index j > i with A[j] > A[i], or 0 if there is no "
            f"such j. Output F[1], F[2], ..., F[{n}] separated by spaces."
        )
        return Instance(prompt, " ".join(map(str, self._stack(values))), {"values": values})

    @staticmethod
    def _stack(values: list[int]) -> list[int]:
        out = [0] * len(values)
        stack: list[int] = []
        for j, v in enumerate(values):
            while stack and values[stack[-1]] < v:
                out[stack.pop()] = j + 1
            stack.append(j)
        return out

    def check(self, problem: Problem, answer: str) -> Verdict:
        values = problem.data["values"]
        got = parse_int_list(answer)
        if len(got) != len(values):
            return invalid(f"give exactly {len(values)} numbers")
        ok = got == self._stack(values)
        return graded(0.0, ok, "correct" if ok else "some entries are not right")

    def solve(self, problem: Problem) -> str:
        values = problem.data["values"]
        out = []
        for i, v in enumerate(values):
            out.append(next((j + 1 for j in range(i + 1, len(values)) if values[j] > v), 0))
        return " ".join(map(str, out))

    def problem_space(self, difficulty: int) -> int | None:
        n = grown(4, difficulty)
        return n**n if n**n < 1000 else None
