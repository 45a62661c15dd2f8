"""Arrays, part 2: cutting and re-arranging — cuts of a digit string with the largest product,
cuts of an array with the smallest largest part, the closest monotone array, subarrays with a
given sum, swaps that make two rows permutations, and a partition into equal-sum groups.

Rows MaxMultSplit, Minimum_MaxSlicer, MakingGrade, LIZ_Lollipop, MinSwapTwoPermutations and
KPartition of the RLVE catalogue (Zeng et al., *RLVE: Scaling Up Reinforcement Learning for
Language Models with Adaptive Verifiable Environments*, arXiv:2511.07317). Every verifier
checks the answer's constraints and grades its objective against the optimum computed by a
dynamic programme ((gold/answer)^β when minimising, (answer/gold)^β when maximising); ``solve``
reaches the optimum another way (binary search, a heap, brute force, a search).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import random
from collections import defaultdict

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    parse_int_list,
    ratio_reward,
    satisfied_verdict,
)
from verirl.envs.kit.size_ladder import grown
from verirl.envs.kit.wording import indexed
from verirl.types import Problem, Verdict

TAGS = ("rlve", "arrays")


class _ArrayEnv(Environment):
    tags = TAGS
    size_measure = "length N of the array"


def _cut_positions(answer: str, n: int, count: int) -> list[int] | Verdict:
    """``count`` distinct cut positions in 1..n-1 (a cut at p splits before index p), sorted."""
    cuts = parse_int_list(answer) if answer.strip() else []
    if len(cuts) != count or len(set(cuts)) != count:
        return invalid(f"give exactly {count} distinct cut positions")
    if any(not 1 <= c <= n - 1 for c in cuts):
        return invalid(f"cut positions are between 1 and {n - 1}")
    return sorted(cuts)


def _pieces(seq: list[int] | str, cuts: list[int]) -> list:
    bounds = [0, *cuts, len(seq)]
    return [seq[a:b] for a, b in itertools.pairwise(bounds)]


# ---- cuts of a digit string with the largest product -------------------------------------
@ENVIRONMENTS.register("max_mult_split")
class MaxMultSplit(_ArrayEnv):
    """Cut a digit string into K + 1 pieces whose product is largest; (product/gold)^3."""

    difficulty_scales = (
        "N = 3 then int(1.1·N + 1) per level (at most 50); K = N·ratio, ratio in 0.05..0.95"
    )
    size_measure = "length N of the digit string"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(3, difficulty, cap=50)
        digits = str(rng.randint(1, 9)) + "".join(rng.choice("0123456789") for _ in range(n - 1))
        ratio = rng.choice([0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95])
        k = min(n - 1, max(1, int(n * ratio)))
        prompt = (
            f"You are given a string of digits S of length {n}: {digits}\n\nInsert exactly {k} "
            f"multiplication sign{'s' if k > 1 else ''} between digits, which cuts S into "
            f"{k + 1} non-empty pieces; each piece is read as a decimal number (leading zeros "
            "are allowed, so 05 is 5). Make the product of the pieces as large as possible. A "
            "cut at position p (1 ≤ p ≤ N - 1) goes between the p-th and the (p+1)-th digit. "
            f"Output the {k} cut positions separated by spaces; if several choices are optimal, "
            "any of them is accepted."
        )
        data = {"digits": digits, "k": k}
        return Instance(prompt, self._witness(digits, k), data)

    @staticmethod
    def _best(digits: str, k: int) -> int:
        """best[j][i]: the largest product of digits[:i] cut into j + 1 pieces."""
        n = len(digits)
        best = [[-1] * (n + 1) for _ in range(k + 1)]
        for i in range(1, n + 1):
            best[0][i] = int(digits[:i])
        for j in range(1, k + 1):
            for i in range(j + 1, n + 1):
                best[j][i] = max(
                    best[j - 1][p] * int(digits[p:i]) for p in range(j, i) if best[j - 1][p] >= 0
                )
        return best[k][n]

    @staticmethod
    def _witness(digits: str, k: int) -> str:
        """Cuts by a memoised recursion from the left (the largest product of the rest)."""
        n = len(digits)

        @functools.cache
        def rest(i: int, j: int) -> tuple[int, tuple[int, ...]]:
            if j == 0:
                return int(digits[i:]), ()
            options = []
            for p in range(i + 1, n - j + 1):
                value, cuts = rest(p, j - 1)
                options.append((int(digits[i:p]) * value, (p, *cuts)))
            return max(options)

        result = rest(0, k)[1]
        rest.cache_clear()
        return " ".join(map(str, result))

    def check(self, problem: Problem, answer: str) -> Verdict:
        digits, k = problem.data["digits"], problem.data["k"]
        cuts = _cut_positions(answer, len(digits), k)
        if isinstance(cuts, Verdict):
            return cuts
        product = 1
        for piece in _pieces(digits, cuts):
            product *= int(piece)
        best = self._best(digits, k)
        ok = product == best
        return graded(
            ratio_reward(product, best, 3.0), ok, "correct" if ok else "a larger product exists"
        )

    def solve(self, problem: Problem) -> str:
        return self._witness(problem.data["digits"], problem.data["k"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return f"{answer} {answer.split()[0]}"  # a cut twice

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["digits"]))


# ---- cuts of an array with the smallest largest part -------------------------------------
@ENVIRONMENTS.register("minimum_max_slicer")
class MinimumMaxSlicer(_ArrayEnv):
    """Cut an array into K contiguous parts with the smallest largest part sum;
    (gold/answer)^3 credit."""

    difficulty_scales = "N = 4 then int(1.1·N + 1) per level; K in 2..N"
    size_key = "values"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(4, difficulty)
        values = [rng.randint(1, 2 * n) for _ in range(n)]
        k = rng.randint(2, n)
        prompt = (
            f"You are given an array A of length {n}. The values are as follows (indexing "
            f"starts at 0):\n{indexed(values)}\n\nCut A into exactly {k} non-empty contiguous "
            "parts so that the largest part sum is as small as possible. A cut at position p "
            f"(1 ≤ p ≤ {n - 1}) goes between A[p-1] and A[p]. Output the {k - 1} cut positions "
            "separated by spaces; if several choices are optimal, any of them is accepted."
        )
        return Instance(prompt, self._greedy_cuts(values, k), {"values": values, "k": k})

    @staticmethod
    def _dp_cuts(values: list[int], k: int) -> str:
        """Cuts by the DP best[j][i] = the smallest largest part of values[:i] in j parts."""
        n = len(values)
        prefix = [0, *itertools.accumulate(values)]
        inf = float("inf")
        best = [[inf] * (n + 1) for _ in range(k + 1)]
        arg = [[0] * (n + 1) for _ in range(k + 1)]
        best[0][0] = 0
        for j in range(1, k + 1):
            for i in range(j, n + 1):
                for p in range(j - 1, i):
                    cand = max(best[j - 1][p], prefix[i] - prefix[p])
                    if cand < best[j][i]:
                        best[j][i], arg[j][i] = cand, p
        cuts, i = [], n
        for j in range(k, 1, -1):
            i = arg[j][i]
            cuts.append(i)
        return " ".join(map(str, sorted(cuts)))

    @staticmethod
    def _bound(values: list[int], k: int) -> int:
        """The optimum: the smallest bound B with a greedy packing into at most k parts."""
        lo, hi = max(values), sum(values)
        while lo < hi:
            mid = (lo + hi) // 2
            count, run = 1, 0
            for v in values:
                if run + v > mid:
                    count, run = count + 1, 0
                run += v
            if count <= k:
                hi = mid
            else:
                lo = mid + 1
        return lo

    @staticmethod
    def _greedy_cuts(values: list[int], k: int) -> str:
        """Binary search on the bound; greedy packing, then extra cuts where allowed."""
        lo, hi = max(values), sum(values)

        def parts(bound: int) -> int:
            count, run = 1, 0
            for v in values:
                if run + v > bound:
                    count, run = count + 1, 0
                run += v
            return count

        while lo < hi:
            mid = (lo + hi) // 2
            if parts(mid) <= k:
                hi = mid
            else:
                lo = mid + 1
        cuts, run = [], 0
        for i, v in enumerate(values):
            if run + v > lo:
                cuts.append(i)
                run = 0
            run += v
        spare = [p for p in range(1, len(values)) if p not in cuts]
        cuts = sorted(cuts + spare[: k - 1 - len(cuts)])  # more cuts never raise the maximum
        return " ".join(map(str, cuts))

    def check(self, problem: Problem, answer: str) -> Verdict:
        values, k = problem.data["values"], problem.data["k"]
        cuts = _cut_positions(answer, len(values), k - 1)
        if isinstance(cuts, Verdict):
            return cuts
        worst = max(sum(part) for part in _pieces(values, cuts))
        best = self._bound(values, k)
        return graded(ratio_reward(best, worst, 3.0), worst == best, "a smaller maximum exists")

    def solve(self, problem: Problem) -> str:
        values, k = problem.data["values"], problem.data["k"]
        return self._dp_cuts(values, k) if len(values) <= 60 else self._greedy_cuts(values, k)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return "0 " + answer  # position 0 is no cut (and one too many)


# ---- closest monotone array --------------------------------------------------------------
def _monotone_cost(values: list[int]) -> int:
    """min Σ|A_i − B_i| over non-decreasing B, by a DP over the values of A (an optimal B
    uses only values of A)."""
    levels = sorted(set(values))
    best: list[float] = [abs(values[0] - v) for v in levels]
    for a in values[1:]:
        running = float("inf")
        nxt = []
        for idx, v in enumerate(levels):
            running = min(running, best[idx])
            nxt.append(running + abs(a - v))
        best = nxt
    return int(min(best))


def _slope_trick(values: list[int]) -> tuple[int, list[int]]:
    """min Σ|A_i − B_i| over non-decreasing B and one optimal B, with a max-heap (each
    value above the running maximum is pulled down to it)."""
    heap: list[int] = []
    cost, tops = 0, []
    for a in values:
        heapq.heappush(heap, -a)
        if -heap[0] > a:
            cost += -heap[0] - a
            heapq.heapreplace(heap, -a)
        tops.append(-heap[0])
    b = tops[:]
    for i in range(len(b) - 2, -1, -1):
        b[i] = min(b[i], b[i + 1])
    return cost, b


@ENVIRONMENTS.register("making_grade")
class MakingGrade(_ArrayEnv):
    """The monotone (non-decreasing or non-increasing) integer array closest to A in
    Σ|A_i − B_i|; (gold/answer)^5 credit, a non-monotone B is invalid."""

    difficulty_scales = "N = 4 + d; values in 0..3N"
    size_key = "values"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        while True:
            values = [rng.randint(0, 3 * n) for _ in range(n)]
            if _monotone_cost(values) and _monotone_cost(values[::-1]):
                break
        prompt = (
            f"There is an array A of length {n}: {' '.join(map(str, values))}\n\nPlease find "
            f"an array B of {n} integers such that B is either monotonically non-decreasing or "
            "monotonically non-increasing, and the sum of |A[i] - B[i]| over all i is as small "
            f"as possible. Output the {n} values of B separated by spaces; if several arrays "
            "are optimal, any of them is accepted."
        )
        return Instance(prompt, self._witness(values), {"values": values})

    @staticmethod
    def _witness(values: list[int]) -> str:
        up_cost, up = _slope_trick(values)
        down_cost, down = _slope_trick(values[::-1])
        return " ".join(map(str, up if up_cost <= down_cost else down[::-1]))

    def check(self, problem: Problem, answer: str) -> Verdict:
        values = problem.data["values"]
        b = parse_int_list(answer)
        if len(b) != len(values):
            return invalid(f"give exactly {len(values)} values")
        pairs = list(itertools.pairwise(b))
        if not (all(x <= y for x, y in pairs) or all(x >= y for x, y in pairs)):
            return invalid("B is not monotone")
        cost = sum(abs(x - y) for x, y in zip(values, b, strict=True))
        best = min(_monotone_cost(values), _monotone_cost(values[::-1]))
        return graded(ratio_reward(best, cost, 5.0), cost == best, "a closer monotone array exists")

    def solve(self, problem: Problem) -> str:
        return self._witness(problem.data["values"])


# ---- subarrays of ones and twos with a given sum -----------------------------------------
@ENVIRONMENTS.register("liz_lollipop")
class LizLollipop(_ArrayEnv):
    """For each query k, a subarray of a 1/2 array with sum k, or -1 -1 when none exists;
    (answered correctly/all)^5 credit."""

    difficulty_scales = "N = 3 + d elements; 2 + d//3 queries"
    size_key = "values"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        values = [rng.choice([1, 2]) for _ in range(n)]
        total = sum(values)
        queries = [rng.randint(1, total + 1) for _ in range(2 + difficulty // 3)]
        prompt = (
            f"You are given an array A of length {n}: {' '.join(map(str, values))}\nEach "
            f"element in A is either 1 or 2, and the total sum of the array is {total}. The "
            "positions are 1 to N from left to right.\n\nFor each of the queries "
            f"{', '.join(map(str, queries))}, find positions l ≤ r such that A[l] + ... + A[r] "
            "equals the query, or write -1 -1 if there are none. Output one pair l r per query, "
            "in the order of the queries, all numbers separated by spaces."
        )
        data = {"values": values, "queries": queries}
        return Instance(prompt, self._answers(values, queries), data)

    @staticmethod
    def _answers(values: list[int], queries: list[int]) -> str:
        prefix = [0, *itertools.accumulate(values)]
        where: dict[int, tuple[int, int]] = {}
        for r in range(1, len(prefix)):
            for l in range(r):
                where.setdefault(prefix[r] - prefix[l], (l + 1, r))
        return " ".join(" ".join(map(str, where.get(q, (-1, -1)))) for q in queries)

    def check(self, problem: Problem, answer: str) -> Verdict:
        values, queries = problem.data["values"], problem.data["queries"]
        nums = parse_int_list(answer)
        if len(nums) != 2 * len(queries):
            return invalid(f"give {len(queries)} pairs of numbers")
        prefix = [0, *itertools.accumulate(values)]
        sums = {b - a for a, b in itertools.combinations(prefix, 2)}
        good = 0
        for q, l, r in zip(queries, nums[::2], nums[1::2], strict=True):
            if (l, r) == (-1, -1):
                good += q not in sums
            elif 1 <= l <= r <= len(values):
                good += prefix[r] - prefix[l - 1] == q
        return satisfied_verdict(good, len(queries), "queries are not answered correctly")

    def solve(self, problem: Problem) -> str:
        # Independent: a two-pointer sweep per query (all elements are positive).
        values, out = problem.data["values"], []
        for q in problem.data["queries"]:
            l, run, found = 0, 0, (-1, -1)
            for r, v in enumerate(values):
                run += v
                while run > q:
                    run -= values[l]
                    l += 1
                if run == q:
                    found = (l + 1, r + 1)
                    break
            out.append(f"{found[0]} {found[1]}")
        return " ".join(out)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        nums = answer.split()
        if nums[0] == "-1":  # claim a non-existent sum is the whole array: wrong
            return " ".join(["1", str(len(problem.data["values"])), *nums[2:]])
        return " ".join(["-1", "-1", *nums[2:]])


# ---- swaps that make two rows permutations -----------------------------------------------
def _min_swaps(a: list[int], b: list[int]) -> int:
    """The fewest swaps: a union-find with parities (swap column j iff column i is swapped,
    or iff it is not), then the cheaper parity class of every component."""
    n = len(a)
    parent, parity = list(range(n)), [0] * n

    def find(i: int) -> tuple[int, int]:
        flip = 0
        while parent[i] != i:
            flip ^= parity[i]
            i = parent[i]
        return i, flip

    first: dict[int, tuple[int, int]] = {}
    for i in range(n):
        for side, v in ((0, a[i]), (1, b[i])):
            if v not in first:
                first[v] = (i, side)
                continue
            j, side_j = first[v]
            if j == i:
                continue
            (ri, fi), (rj, fj) = find(i), find(j)
            if ri != rj:  # same side: exactly one of i, j swaps; opposite sides: both or none
                parent[ri], parity[ri] = rj, fi ^ fj ^ int(side == side_j)
    classes: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for i in range(n):
        root, flip = find(i)
        classes[root][flip] += 1
    return sum(min(c) for c in classes.values())


@ENVIRONMENTS.register("min_swap_two_permutations")
class MinSwapTwoPermutations(_ArrayEnv):
    """Swap A[i] with B[i] at as few positions as possible so that both rows become
    permutations of 1..N; (gold/answer)^5 credit, an answer that does not work is invalid."""

    difficulty_scales = "N = 3 then int(1.1·N + 1) per level"
    answer_kind = "integer_set"

    def problem_space(self, difficulty: int) -> int | None:
        n = grown(3, difficulty)
        if n > 4:
            return None
        perms = list(itertools.permutations(range(1, n + 1)))
        rows = set()
        for a, b in itertools.product(perms, repeat=2):
            for mask in range(1 << n):
                x = [b[i] if mask >> i & 1 else a[i] for i in range(n)]
                y = [a[i] if mask >> i & 1 else b[i] for i in range(n)]
                if _min_swaps(x, y):
                    rows.add((tuple(x), tuple(y)))
        return len(rows)

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(3, difficulty)
        while True:
            a, b = rng.sample(range(1, n + 1), n), rng.sample(range(1, n + 1), n)
            for i in range(n):
                if rng.random() < 0.5:
                    a[i], b[i] = b[i], a[i]
            if _min_swaps(a, b):
                break
        prompt = (
            f"You are given two arrays A and B of length {n} (indexed from 0); together they "
            f"contain every integer from 1 to {n} exactly twice.\nA: {' '.join(map(str, a))}\n"
            f"B: {' '.join(map(str, b))}\n\nA swap at index i exchanges A[i] and B[i]. Choose "
            "a set of indices to swap so that afterwards A and B are both permutations of 1 to "
            f"{n}, using as few swaps as possible. Output the indices separated by spaces; if "
            "several sets are optimal, any of them is accepted."
        )
        data = {"a": a, "b": b}
        return Instance(prompt, self._witness(a, b), data)

    @staticmethod
    def _witness(a: list[int], b: list[int]) -> str:
        """Two-colour the columns: columns sharing a value must be swapped differently if the
        value is on the same side, equally if on opposite sides; per component take the
        smaller colour class."""
        n = len(a)
        by_value = defaultdict(list)
        for i in range(n):
            by_value[a[i]].append((i, 0))
            by_value[b[i]].append((i, 1))
        links = defaultdict(list)
        for occ in by_value.values():
            if len(occ) == 2 and occ[0][0] != occ[1][0]:
                (i, si), (j, sj) = occ
                links[i].append((j, int(si == sj)))
                links[j].append((i, int(si == sj)))
        colour: dict[int, int] = {}
        chosen: list[int] = []
        for start in range(n):
            if start in colour:
                continue
            colour[start], comp, stack = 0, [start], [start]
            while stack:
                u = stack.pop()
                for v, differ in links[u]:
                    if v not in colour:
                        colour[v] = colour[u] ^ differ
                        comp.append(v)
                        stack.append(v)
            ones = [c for c in comp if colour[c]]
            zeros = [c for c in comp if not colour[c]]
            chosen += ones if len(ones) <= len(zeros) else zeros
        return " ".join(map(str, sorted(chosen)))

    def check(self, problem: Problem, answer: str) -> Verdict:
        a, b = list(problem.data["a"]), list(problem.data["b"])
        n = len(a)
        swaps = parse_int_list(answer) if answer.strip() else []
        if len(set(swaps)) != len(swaps) or any(not 0 <= i < n for i in swaps):
            return invalid("the indices must be distinct and in range")
        for i in swaps:
            a[i], b[i] = b[i], a[i]
        if sorted(a) != list(range(1, n + 1)) or sorted(b) != list(range(1, n + 1)):
            return invalid("after these swaps A and B are not both permutations")
        best = _min_swaps(problem.data["a"], problem.data["b"])
        used = len(swaps)
        return graded(ratio_reward(best, used, 5.0), used == best, "fewer swaps suffice")

    def solve(self, problem: Problem) -> str:
        return self._witness(problem.data["a"], problem.data["b"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rpartition(" ")[0]  # one swap fewer leaves a value twice in a row

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["a"]))


# ---- equal-sum groups --------------------------------------------------------------------
@ENVIRONMENTS.register("k_partition")
class KPartition(_ArrayEnv):
    """Split a multiset into M groups with equal sums (planted); binary reward, a labelling
    of the wrong shape is invalid."""

    difficulty_scales = "M = 2 + d groups of 2..4 elements each"
    size_key = "values"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        m = 2 + difficulty
        target = rng.randint(10 + 2 * difficulty, 20 + 4 * difficulty)
        planted: list[tuple[int, int]] = []  # (value, group)
        for group in range(m):
            size = rng.randint(2, 4)
            cuts = sorted(rng.sample(range(1, target), size - 1))
            planted += [(b - a, group + 1) for a, b in itertools.pairwise([0, *cuts, target])]
        rng.shuffle(planted)
        values = [v for v, _ in planted]
        prompt = (
            f"You are given a multiset S containing {len(values)} positive integers: "
            f"{' '.join(map(str, values))}\n\nDivide S into exactly {m} groups with equal sums "
            "(every element goes to exactly one group). Output, for each element in the order "
            f"given, the number of its group (1 to {m}), separated by spaces."
        )
        data = {"values": values, "groups": m}
        return Instance(prompt, " ".join(str(g) for _, g in planted), data)

    @staticmethod
    def _search(values: list[int], m: int) -> str:
        """Backtracking, largest elements first, filling one group at a time."""
        target = sum(values) // m
        order = sorted(range(len(values)), key=lambda i: -values[i])
        label = [0] * len(values)

        def fill(group: int, start: int, left: int) -> bool:
            if group == m:
                return True
            if left == 0:
                return fill(group + 1, 0, target)
            tried = set()
            for pos in range(start, len(order)):
                i = order[pos]
                if label[i] or values[i] > left or values[i] in tried:
                    continue
                tried.add(values[i])
                label[i] = group + 1
                if fill(group, pos + 1, left - values[i]):
                    return True
                label[i] = 0
                if left == target:  # the largest free element must start this group
                    break
            return False

        if not fill(0, 0, target):
            raise RuntimeError("no partition found")
        return " ".join(map(str, label))

    def check(self, problem: Problem, answer: str) -> Verdict:
        values, m = problem.data["values"], problem.data["groups"]
        labels = parse_int_list(answer)
        if len(labels) != len(values) or any(not 1 <= g <= m for g in labels):
            return invalid(f"give one group number from 1 to {m} per element")
        sums = [0] * m
        for v, g in zip(values, labels, strict=True):
            sums[g - 1] += v
        ok = len(set(sums)) == 1
        return graded(0.0, ok, "correct" if ok else "the group sums are not all equal")

    def solve(self, problem: Problem) -> str:
        return self._search(problem.data["values"], problem.data["groups"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        labels = answer.split()
        labels[0] = "1" if labels[0] != "1" else "2"  # moves one element: sums differ
        return " ".join(labels)
