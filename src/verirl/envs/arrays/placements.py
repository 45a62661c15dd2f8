"""Arrays, part 3: building or placing to optimise — extend a sequence to have the most
distinct subsequences, and place one or two bridges to shorten everyone's trips.

Rows Maximum_SubsequenceNum and PalembangBridges of the RLVE catalogue (Zeng et al., *RLVE:
Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable Environments*,
arXiv:2511.07317). Verifiers evaluate the answer (the number of distinct subsequences by the
last-occurrence recurrence; the total trip length) and grade it against the optimum,
(answer/gold)^5 or (gold/answer)^5. The optimum comes from a greedy rule (append the symbol
seen longest ago) or from trying every candidate position, and ``solve`` reaches it another way
(brute force; medians of a sorted split).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    invalid,
    optimum_verdict,
    parse_int_list,
)
from verirl.envs.kit.size_ladder import grown
from verirl.types import Problem, Verdict

TAGS = ("rlve", "arrays")


def distinct_subsequences(seq: list[int]) -> int:
    """Distinct subsequences (the empty one included): each new symbol doubles the count,
    minus those already ending with it (the count before its previous occurrence)."""
    total, before_last = 1, dict[int, int]()
    for x in seq:
        total, before_last[x] = 2 * total - before_last.get(x, 0), total
    return total


def _greedy_extension(seq: list[int], k: int, m: int) -> list[int]:
    """Append, m times, the symbol whose last occurrence is earliest (unseen ones first)."""
    last = {x: -1 for x in range(k)}
    for i, x in enumerate(seq):
        last[x] = i
    out, pos = [], len(seq)
    for _ in range(m):
        x = min(range(k), key=lambda s: (last[s], s))
        out.append(x)
        last[x] = pos
        pos += 1
    return out


@ENVIRONMENTS.register("maximum_subsequence_num")
class MaximumSubsequenceNum(Environment):
    """Append M symbols from [0, K) so that the final sequence has as many distinct
    subsequences as possible; (count/gold)^5 credit."""

    tags = TAGS
    difficulty_scales = "N, M = 2 then int(1.1·x + 1) per level; K in 2..2 + d//4"
    size_measure = "final length N + M"
    answer_kind = "integer_list"

    def problem_space(self, difficulty: int) -> int | None:
        n = grown(2, difficulty)
        return sum(k**n for k in range(2, 3 + difficulty // 4))

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = grown(2, difficulty), grown(2, difficulty)
        k = rng.randint(2, 2 + difficulty // 4)
        seq = [rng.randrange(k) for _ in range(n)]
        prompt = (
            f"We want to obtain a sequence of length {n} + {m} = {n + m} from an initial "
            f"sequence of length {n} by appending {m} integers, each in [0, {k}). The initial "
            f"sequence is: {' '.join(map(str, seq))}\n\nChoose the appended integers so that "
            "the final sequence has as many distinct subsequences as possible (a subsequence "
            "keeps some of the elements in their order; the empty one counts; equal "
            f"subsequences count once). Output the {m} appended integers in order, separated "
            "by spaces; if several choices are optimal, any of them is accepted."
        )
        data = {"sequence": seq, "k": k, "m": m}
        return Instance(prompt, " ".join(map(str, _greedy_extension(seq, k, m))), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        seq, k, m = problem.data["sequence"], problem.data["k"], problem.data["m"]
        extra = parse_int_list(answer)
        if len(extra) != m or any(not 0 <= x < k for x in extra):
            return invalid(f"give {m} integers from 0 to {k - 1}")
        got = distinct_subsequences(seq + extra)
        best = distinct_subsequences(seq + _greedy_extension(seq, k, m))
        return optimum_verdict(got, best, "a choice with more subsequences exists")

    def solve(self, problem: Problem) -> str:
        seq, k, m = problem.data["sequence"], problem.data["k"], problem.data["m"]
        if k**m > 5000:
            return " ".join(map(str, _greedy_extension(seq, k, m)))
        best = max(
            itertools.product(range(k), repeat=m),
            key=lambda t: distinct_subsequences(seq + list(t)),
        )
        return " ".join(map(str, best))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rpartition(" ")[0] or str(problem.data["k"])  # one short / out of range

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["sequence"]) + problem.data["m"])


def _trip_total(starts: list[int], ends: list[int], bridges: list[int]) -> int:
    return sum(
        min(abs(s - x) + abs(x - t) for x in bridges) for s, t in zip(starts, ends, strict=True)
    )


@ENVIRONMENTS.register("palembang_bridges")
class PalembangBridges(Environment):
    """Place K ∈ {1, 2} bridges on a line so that the total trip length Σ min over bridges of
    |S_i − x| + |x − T_i| is smallest; (gold/total)^5 credit."""

    tags = TAGS
    difficulty_scales = "N = 3 + d people; positions in 0..10N; K = 1 or 2"
    size_measure = "number of people N"
    size_key = "starts"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        starts = [rng.randint(0, 10 * n) for _ in range(n)]
        ends = [rng.randint(0, 10 * n) for _ in range(n)]
        k = rng.choice([1, 2])
        people = "\n".join(
            f"person {i}: S = {s}, T = {t}"
            for i, (s, t) in enumerate(zip(starts, ends, strict=True))
        )
        prompt = (
            f"You are given two arrays S and T, each of length {n}, provided as:\n{people}\n\n"
            "Everybody lives at S[i] on one bank of a river and works at T[i] on the other "
            "bank (positions along the river). You will build "
            f"{'1 bridge' if k == 1 else '2 bridges'} at integer positions; person i crosses "
            "at the bridge x that makes |S[i] - x| + |x - T[i]| smallest. Choose the bridge "
            "position" + ("" if k == 1 else "s") + " to minimise the sum of these distances "
            "over all people. Output the position"
            + ("" if k == 1 else "s (two integers)")
            + " separated by spaces; if several choices are optimal, any of them is accepted."
        )
        data = {"starts": starts, "ends": ends, "k": k}
        return Instance(prompt, self._medians(data), data)

    @staticmethod
    def _candidates_best(data: Mapping[str, Any]) -> int:
        """Trying every placement on the S and T values (the cost is piecewise linear with
        breakpoints there, so some optimum uses them)."""
        points = sorted(set(data["starts"]) | set(data["ends"]))
        if data["k"] == 1:
            return min(_trip_total(data["starts"], data["ends"], [x]) for x in points)
        return min(
            _trip_total(data["starts"], data["ends"], [x, y])
            for x, y in itertools.combinations_with_replacement(points, 2)
        )

    @staticmethod
    def _medians(data: Mapping[str, Any]) -> str:
        """One bridge: a median of all 2N endpoints. Two bridges: sorted by S + T, a prefix
        uses the left bridge; try every split, each side at its own median."""
        people = sorted(zip(data["starts"], data["ends"], strict=True), key=lambda p: p[0] + p[1])

        def median_cost(group: list[tuple[int, int]]) -> tuple[int, int]:
            pts = sorted(x for p in group for x in p)
            x = pts[(len(pts) - 1) // 2]
            return sum(abs(s - x) + abs(x - t) for s, t in group), x

        if data["k"] == 1:
            return str(median_cost(people)[1])
        best = None
        for cut in range(1, len(people)):
            (c1, x1), (c2, x2) = median_cost(people[:cut]), median_cost(people[cut:])
            if best is None or c1 + c2 < best[0]:
                best = (c1 + c2, x1, x2)
        assert best is not None
        return f"{best[1]} {best[2]}"

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        bridges = parse_int_list(answer)
        if len(bridges) != d["k"]:
            return invalid(f"give {d['k']} bridge position" + ("" if d["k"] == 1 else "s"))
        if any(abs(x) > 10**9 for x in bridges):
            return invalid("a bridge position is far too large")
        got = _trip_total(d["starts"], d["ends"], bridges)
        return optimum_verdict(
            got, self._candidates_best(d), "a better placement exists", minimise=True
        )

    def solve(self, problem: Problem) -> str:
        return self._medians(problem.data)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return f"{answer} 0"  # one bridge too many
