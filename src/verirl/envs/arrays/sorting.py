"""Sorting and searching: sort, merge, stable sort by key, order statistics, top-k,
binary-search position, inversions, a pair with a given sum.

Rewards: a rearranged list that is not a permutation of the input is invalid; otherwise
element-wise credit (RLVE's mean([answer_i = gold_i])^β, β = 5). Order statistics give
(min/max)^10 on the rank of the chosen element; counts (inversions, insert position) get
(min/max)^10 on the value. Top-k accepts any order and is scored by how many of the k answers
belong to the top k; a pair with a given sum accepts any valid pair.
"""

from __future__ import annotations

import random
import re
from collections import Counter

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    IntegerAnswer,
    count_reward,
    graded,
    invalid,
    parse_int,
    parse_int_list,
    satisfied_reward,
    sequence_reward,
    wrong_format,
)
from verirl.envs.kit.wording import commas
from verirl.types import Problem, Verdict

_VALUE_RANGE = "values within ±(9 + 10·(d//2)), negative ones from d 5"


def _values(rng: random.Random, n: int, difficulty: int) -> list[int]:
    """n values in [0, 9 + 10·(d//2)], negative ones too from difficulty 5."""
    hi = 9 + 10 * (difficulty // 2)
    lo = -hi if difficulty >= 5 else 0
    return [rng.randint(lo, hi) for _ in range(n)]


def ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def _arrangement_verdict(answer: list, pool: list, gold: list) -> Verdict:
    """A rearrangement of ``pool`` compared element-wise with ``gold``."""
    if Counter(answer) != Counter(pool):
        return invalid("the answer is not a rearrangement of the given items")
    ok = answer == gold
    return graded(sequence_reward(answer, gold), ok, "correct" if ok else "the order is not right")


@ENVIRONMENTS.register("sort_list")
class SortList(Environment):
    size_measure = "number of values"
    answer_kind = "integer_list"
    difficulty_scales = f"n = 3 + d; {_VALUE_RANGE}; descending order from d 2"
    size_key = "values"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        values = _values(rng, 3 + difficulty, difficulty)
        descending = difficulty >= 2 and rng.random() < 0.5
        order = "descending (largest first)" if descending else "ascending (smallest first)"
        prompt = (
            f"Sort these numbers in {order} order: {commas(values)}.\n"
            "Give the sorted numbers as a comma-separated list."
        )
        gold = sorted(values, reverse=descending)
        return Instance(prompt, commas(gold), {"values": values, "descending": descending})

    def check(self, problem: Problem, answer: str) -> Verdict:
        return _arrangement_verdict(
            parse_int_list(answer), problem.data["values"], _sorted(problem)
        )

    def solve(self, problem: Problem) -> str:
        return commas(_sorted(problem))


def _sorted(problem: Problem) -> list[int]:
    out: list[int] = []  # insertion sort: independent of the generator's sorted()
    for v in problem.data["values"]:
        i = len(out)
        while i and out[i - 1] > v:
            i -= 1
        out.insert(i, v)
    return out[::-1] if problem.data.get("descending") else out


@ENVIRONMENTS.register("merge_sorted_lists")
class MergeSortedLists(Environment):
    size_measure = "total number of values"
    answer_kind = "integer_list"
    difficulty_scales = "2 + d//6 lists of 1 + d//3 to 3 + d//3 numbers up to 9 + 5d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        lists = [
            sorted(
                rng.randint(0, 9 + 5 * difficulty)
                for _ in range(rng.randint(1 + difficulty // 3, 3 + difficulty // 3))
            )
            for _ in range(2 + difficulty // 6)
        ]
        shown = "\n".join(f"List {i + 1}: {commas(xs)}" for i, xs in enumerate(lists))
        prompt = (
            f"Each of these lists is sorted in increasing order:\n{shown}\n"
            "Merge them into one list sorted in increasing order that contains every number "
            "from every list (keep repeated numbers). Give it as a comma-separated list."
        )
        merged = sorted(x for xs in lists for x in xs)
        return Instance(prompt, commas(merged), {"lists": lists})

    def check(self, problem: Problem, answer: str) -> Verdict:
        pool = [x for xs in problem.data["lists"] for x in xs]
        return _arrangement_verdict(parse_int_list(answer), pool, self._merge(problem))

    def solve(self, problem: Problem) -> str:
        return commas(self._merge(problem))

    @staticmethod
    def _merge(problem: Problem) -> list[int]:
        heads = [0] * len(problem.data["lists"])  # k-way merge by repeated minimum of heads
        lists = problem.data["lists"]
        out: list[int] = []
        while True:
            live = [i for i, xs in enumerate(lists) if heads[i] < len(xs)]
            if not live:
                return out
            i = min(live, key=lambda j: lists[j][heads[j]])
            out.append(lists[i][heads[i]])
            heads[i] += 1

    def size(self, problem: Problem) -> float:
        return float(sum(len(xs) for xs in problem.data["lists"]))


_SYLLABLE_START = "bdfgklmnprstvz"
_VOWELS = "aeiou"


def _names(rng: random.Random, n: int) -> list[str]:
    """n distinct pronounceable four-letter names (Bako, Ritu, ...)."""
    names: list[str] = []
    while len(names) < n:
        name = "".join(rng.choice(_SYLLABLE_START) + rng.choice(_VOWELS) for _ in range(2))
        if name.capitalize() not in names:
            names.append(name.capitalize())
    return names


@ENVIRONMENTS.register("stable_sort_by_key")
class StableSortByKey(Environment):
    size_measure = "number of records"
    difficulty_scales = "n = 3 + d records with scores in 0..2 + d//3 (ties kept in order)"
    size_key = "names"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        names = _names(rng, n)
        scores = [rng.randint(0, 2 + difficulty // 3) for _ in range(n)]
        records = "\n".join(f"{a}: {s}" for a, s in zip(names, scores, strict=True))
        prompt = (
            f"Here are {n} records, each a name and a score:\n{records}\n"
            "Sort the records by score from lowest to highest. The sort must be stable: records "
            "with equal scores keep the order in which they appear above. Give the names in "
            "sorted order as a comma-separated list."
        )
        gold = [a for _, a in sorted(zip(scores, names, strict=True), key=lambda t: t[0])]
        return Instance(prompt, ", ".join(gold), {"names": names, "scores": scores})

    def check(self, problem: Problem, answer: str) -> Verdict:
        words = [w for w in re.split(r"[,;\s]+", answer.strip().strip("[]()")) if w]
        if len(words) > 10_000:
            return wrong_format("the list is far too long")
        names = [a.lower() for a in problem.data["names"]]
        gold = [a.lower() for a in self._stable(problem)]
        return _arrangement_verdict([w.lower() for w in words], names, gold)

    def solve(self, problem: Problem) -> str:
        return ", ".join(self._stable(problem))

    @staticmethod
    def _stable(problem: Problem) -> list[str]:
        names, scores = problem.data["names"], problem.data["scores"]
        # counting sort: bucket by score, buckets filled in input order
        return [
            a for s in range(max(scores) + 1) for a, t in zip(names, scores, strict=True) if t == s
        ]


@ENVIRONMENTS.register("kth_smallest")
class KthSmallest(Environment):
    size_measure = "number of values"
    answer_kind = "integer"
    difficulty_scales = f"n = 4 + d; {_VALUE_RANGE}; k uniform in 1..n"
    size_key = "values"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        values = _values(rng, 4 + difficulty, difficulty)
        k = rng.randint(1, len(values))
        prompt = (
            f"Here is a list of numbers: {commas(values)}.\nWhat is the {ordinal(k)} smallest "
            "number in it? Count repeated values separately (the 1st smallest is the minimum). "
            "Give the number."
        )
        return Instance(prompt, str(sorted(values)[k - 1]), {"values": values, "k": k})

    def check(self, problem: Problem, answer: str) -> Verdict:
        """A list element of another rank earns (min/max)^10 between its nearest rank and k."""
        value = parse_int(answer)
        ranked = _sorted(problem)
        if value not in ranked:
            return invalid("the answer is not a number from the list")
        k = problem.data["k"]
        if value == ranked[k - 1]:
            return graded(1.0, True)
        rank = min((i + 1 for i, v in enumerate(ranked) if v == value), key=lambda r: abs(r - k))
        return graded(count_reward(rank, k), False, "that number has another rank in the list")

    def solve(self, problem: Problem) -> str:
        return str(_sorted(problem)[problem.data["k"] - 1])


@ENVIRONMENTS.register("median")
class Median(KthSmallest):
    size_measure = "number of values"
    difficulty_scales = f"odd n = 3 + d + d mod 2; {_VALUE_RANGE}"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        values = _values(rng, 3 + difficulty + difficulty % 2, difficulty)
        k = (len(values) + 1) // 2
        prompt = (
            f"What is the median of these {len(values)} numbers: {commas(values)}? (The median "
            "is the middle number once the list is sorted.)"
        )
        return Instance(prompt, str(sorted(values)[k - 1]), {"values": values, "k": k})


@ENVIRONMENTS.register("top_k_largest")
class TopKLargest(Environment):
    size_measure = "number of values"
    answer_kind = "integer_set"
    difficulty_scales = f"n = 5 + d; {_VALUE_RANGE}; k in 2..2 + d//3"
    size_key = "values"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        values = _values(rng, 5 + difficulty, difficulty)
        k = rng.randint(2, 2 + difficulty // 3)
        prompt = (
            f"Here is a list of numbers: {commas(values)}.\nList its {k} largest numbers, "
            "counting repeated values separately (a value that occurs twice can be listed "
            "twice). Give them as a comma-separated list in any order."
        )
        gold = sorted(values, reverse=True)[:k]
        return Instance(prompt, commas(gold), {"values": values, "k": k})

    def check(self, problem: Problem, answer: str) -> Verdict:
        """Any order; (hits/k)^5 where hits counts answers that belong to the top k."""
        chosen = Counter(parse_int_list(answer))
        k = problem.data["k"]
        if chosen.total() != k:
            return invalid("the answer does not list the requested number of values")
        if chosen - Counter(problem.data["values"]):
            return invalid("the answer uses a value more often than the list has it")
        hits = (chosen & Counter(self._top(problem))).total()
        ok = hits == k
        detail = "correct" if ok else "some listed values are not among the largest"
        return graded(satisfied_reward(hits, k), ok, detail)

    def solve(self, problem: Problem) -> str:
        return commas(self._top(problem))

    @staticmethod
    def _top(problem: Problem) -> list[int]:
        rest, top = list(problem.data["values"]), []
        for _ in range(problem.data["k"]):  # selection: k times take the maximum
            top.append(rest.pop(rest.index(max(rest))))
        return top


@ENVIRONMENTS.register("search_insert_position")
class SearchInsertPosition(IntegerAnswer):
    size_measure = "length of the sorted list"
    difficulty_scales = "sorted list of 4 + d distinct numbers below 4·(4 + d)"
    size_key = "values"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        values = sorted(rng.sample(range(1, 4 * n), n))
        target = rng.choice(values)
        if rng.random() < 0.5:
            target = rng.choice([x for x in range(4 * n + 1) if x not in values])
        prompt = (
            f"This list is sorted in increasing order: {commas(values)}.\nWith 0-based "
            f"indexing, at which index is {target} in the list? If {target} is not in the list, "
            "give the index where it would be inserted to keep the list sorted (0 if it "
            f"belongs before every element, {n} if after every element)."
        )
        gold = sum(1 for v in values if v < target)
        return Instance(prompt, str(gold), {"values": values, "target": target})

    def check(self, problem: Problem, answer: str) -> Verdict:
        if not 0 <= parse_int(answer) <= len(problem.data["values"]):
            return invalid("the index is outside the list")
        return super().check(problem, answer)

    def solve_int(self, problem: Problem) -> int:
        lo, hi = 0, len(problem.data["values"])  # binary search (bisect_left)
        while lo < hi:
            mid = (lo + hi) // 2
            if problem.data["values"][mid] < problem.data["target"]:
                lo = mid + 1
            else:
                hi = mid
        return lo


@ENVIRONMENTS.register("count_inversions")
class CountInversions(IntegerAnswer):
    size_measure = "number of values"
    difficulty_scales = "n = 4 + d distinct numbers"
    size_key = "values"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        values = rng.sample(range(1, 3 * n), n)
        prompt = (
            f"Consider the list {commas(values)}.\nAn inversion is a pair of positions i < j "
            "whose numbers are out of order, that is, the number at i is larger than the number "
            "at j. How many inversions does the list have?"
        )
        return Instance(prompt, str(_merge_count(values)[1]), {"values": values})

    def solve_int(self, problem: Problem) -> int:
        v = problem.data["values"]
        return sum(1 for i in range(len(v)) for j in range(i + 1, len(v)) if v[i] > v[j])


def _merge_count(values: list[int]) -> tuple[list[int], int]:
    """Merge sort that also counts inversions: O(n log n)."""
    if len(values) <= 1:
        return list(values), 0
    left, a = _merge_count(values[: len(values) // 2])
    right, b = _merge_count(values[len(values) // 2 :])
    out, i, j, count = [], 0, 0, a + b
    while i < len(left) and j < len(right):
        if right[j] < left[i]:
            out.append(right[j])
            count += len(left) - i
            j += 1
        else:
            out.append(left[i])
            i += 1
    return out + left[i:] + right[j:], count


@ENVIRONMENTS.register("pair_with_sum")
class PairWithSum(Environment):
    difficulty_scales = "n = 4 + d distinct numbers below 10 + 6n"
    size_key = "values"
    size_measure = "list length (pairs to search: n(n-1)/2)"
    answer_kind = "integer_set"
    answer_names = ("i", "j")

    def surface_forms(self, problem: Problem) -> list[str]:
        i, j = parse_int_list(self.solve(problem))
        return [*super().surface_forms(problem), f"i = {i}, j = {j}", f"j = {j}, i = {i}"]

    def near_misses(self, problem: Problem) -> list[str]:
        i = parse_int_list(self.solve(problem))[0]
        return [*super().near_misses(problem), f"i = {i}", f"{i}, {i}"]

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        values = rng.sample(range(1, 10 + 6 * n), n)
        i, j = sorted(rng.sample(range(n), 2))
        target = values[i] + values[j]
        prompt = (
            f"Here is a list of numbers (positions start at 0): {commas(values)}.\nFind two "
            f"different positions i and j whose numbers add up to {target}. Give them as "
            '"i, j"; if several pairs work, any one of them is accepted.'
        )
        return Instance(prompt, f"{i}, {j}", {"values": values, "target": target})

    def check(self, problem: Problem, answer: str) -> Verdict:
        positions = parse_int_list(answer, self.answer_names)
        values = problem.data["values"]
        if len(positions) != 2:
            return invalid("the answer must be exactly two positions")
        i, j = positions
        if i == j or not (0 <= i < len(values) and 0 <= j < len(values)):
            return invalid("the positions must be two different valid positions")
        ok = values[i] + values[j] == problem.data["target"]
        return graded(0.0, ok, "correct" if ok else "those two numbers do not add up to the target")

    def solve(self, problem: Problem) -> str:
        v, t = problem.data["values"], problem.data["target"]
        seen: dict[int, int] = {}  # value -> position, one pass
        for j, x in enumerate(v):
            if t - x in seen:
                return f"{seen[t - x]}, {j}"
            seen[x] = j
        raise ValueError("no pair")  # unreachable: the generator plants one

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        v, t = problem.data["values"], problem.data["target"]
        wrong = [(i, j) for i in range(len(v)) for j in range(i + 1, len(v)) if v[i] + v[j] != t]
        i, j = rng.choice(wrong)
        return f"{i}, {j}"
