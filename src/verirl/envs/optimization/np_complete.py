"""NP-complete problems, part 1: SAT, numbers (subset sum, partition, knapsack) and set systems.

Solve–verify asymmetry: every generator *plants* a solution (a satisfying assignment, a subset
hitting the target, a cover), so generation is cheap at any difficulty, and every verifier
checks the answer against the constraints, so any valid answer is accepted. ``solve`` uses a
real solver (DPLL, dynamic programming, exhaustive search over small instances), not the
planted answer. Graph problems (vertex cover, Hamiltonian path, clique, independent set) are
in :mod:`verirl.envs.graphs.np_complete`.
"""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    count_verdict,
    drop_until_wrong,
    invalid,
    optimum_verdict,
    parse_int_list,
    satisfied_verdict,
)
from verirl.types import Problem, Verdict

# ---- SAT ---------------------------------------------------------------------------------


def _clause_text(clause: list[int]) -> str:
    return "(" + " OR ".join(f"x{v}" if v > 0 else f"NOT x{-v}" for v in clause) + ")"


def dpll(clauses: list[list[int]], n: int) -> dict[int, bool] | None:
    """A satisfying assignment by DPLL with unit propagation, or ``None``."""

    def simplify(cls: list[list[int]], lit: int) -> list[list[int]] | None:
        out = []
        for c in cls:
            if lit in c:
                continue
            rest = [x for x in c if x != -lit]
            if not rest:
                return None
            out.append(rest)
        return out

    def search(cls: list[list[int]], assign: dict[int, bool]) -> dict[int, bool] | None:
        while True:
            unit = next((c[0] for c in cls if len(c) == 1), None)
            if unit is None:
                break
            assign = {**assign, abs(unit): unit > 0}
            reduced = simplify(cls, unit)
            if reduced is None:
                return None
            cls = reduced
        if not cls:
            return assign
        var = abs(cls[0][0])
        for lit in (var, -var):
            reduced = simplify(cls, lit)
            if reduced is not None:
                found = search(reduced, {**assign, var: lit > 0})
                if found is not None:
                    return found
        return None

    found = search([list(c) for c in clauses], {})
    if found is None:
        return None
    return {v: found.get(v, False) for v in range(1, n + 1)}


def parse_assignment(text: str, n: int) -> list[int]:
    """``"1, 0, 1"`` / ``"x1=1, x2=0"`` / ``"true false"`` → values of x1..xn (0/1)."""
    t = text.lower()[:20_000]
    words = {"1": 1, "true": 1, "t": 1, "0": 0, "false": 0, "f": 0}
    if "x" in t:
        pairs = re.findall(r"x_?\{?(\d+)\}?\s*=\s*(1|0|true|false|t|f)\b", t)
        if not pairs or re.sub(r"x_?\{?(\d+)\}?\s*=\s*(1|0|true|false|t|f)\b|[\s,;]", "", t):
            raise ValueError("expected x1=0/1 entries")
        values: dict[int, int] = {}
        for idx, val in pairs:
            if len(idx) > 6:
                raise ValueError("variable index too long")
            values[int(idx)] = words[val]
        if sorted(values) != list(range(1, n + 1)):
            return []
        return [values[i] for i in range(1, n + 1)]
    tokens = [tok for tok in re.split(r"[\s,;]+", t.strip().strip("[]()")) if tok]
    if any(tok not in words for tok in tokens):
        raise ValueError("expected 0/1 values")
    return [words[tok] for tok in tokens]


@ENVIRONMENTS.register("sat")
class Satisfiability(Environment):
    """A satisfying assignment of a planted CNF formula; (true clauses/all)^5 credit."""

    size_measure = "total literals in the clauses"
    answer_kind = "integer_list"
    tags = ("np_complete",)
    difficulty_scales = "variables: 3 + d; clauses ~ n*(1.5 + 0.13*min(d, 20)); width 2 then 3"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        width = 2 if difficulty < 2 else 3
        m = round(n * (1.5 + 0.13 * min(difficulty, 20)))
        hidden = [rng.randint(0, 1) for _ in range(n)]
        clauses: list[list[int]] = []
        seen: set[tuple[int, ...]] = set()
        for _ in range(50 * m):
            if len(clauses) >= m:
                break
            chosen = sorted(rng.sample(range(1, n + 1), width))
            clause = [v if rng.random() < 0.5 else -v for v in chosen]
            if (
                any((lit > 0) == bool(hidden[abs(lit) - 1]) for lit in clause)
                and tuple(clause) not in seen
            ):
                seen.add(tuple(clause))
                clauses.append(clause)
        listed = "\n".join(_clause_text(c) for c in clauses)
        prompt = (
            f"Find values (0 = false, 1 = true) of the boolean variables x1, ..., x{n} that "
            f"make every one of these {len(clauses)} clauses true (a clause is true when at "
            f"least one of its literals is true):\n{listed}\n\nGive the values of x1, x2, ..., "
            f"x{n} in this order, separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, hidden)), {"n": n, "clauses": clauses})

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, clauses = problem.data["n"], problem.data["clauses"]
        values = parse_assignment(answer, n)
        if len(values) != n:
            return invalid(f"give exactly one value for each of x1..x{n}")
        good = sum(1 for c in clauses if any((lit > 0) == bool(values[abs(lit) - 1]) for lit in c))
        return satisfied_verdict(good, len(clauses), "clauses are false")

    def solve(self, problem: Problem) -> str:
        found = dpll(problem.data["clauses"], problem.data["n"])
        if found is None:
            raise RuntimeError("unsatisfiable instance")
        return ", ".join(str(int(found[v])) for v in range(1, problem.data["n"] + 1))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        values = [int(x) for x in answer.split(", ")]
        for i in range(len(values)):
            flipped = [*values[:i], 1 - values[i], *values[i + 1 :]]
            text = ", ".join(map(str, flipped))
            if not self.check(problem, text).correct:
                return text
        return ", ".join(map(str, values[:-1]))  # wrong count: invalid

    def size(self, problem: Problem) -> float:
        return float(sum(len(c) for c in problem.data["clauses"]))


# ---- numbers -----------------------------------------------------------------------------


def parse_values(text: str) -> list[int]:
    """The numbers of a chosen sub-multiset: ``"3, 5, 7"`` / ``"3 + 5 + 7 = 15"``."""
    left = text.split("=")[0].replace("+", ",")
    return parse_int_list(left)


def sub_multiset(chosen: list[int], pool: list[int]) -> bool:
    have = Counter(pool)
    return all(have[v] >= k for v, k in Counter(chosen).items())


def subset_with_sum(values: list[int], target: int) -> list[int] | None:
    """Indices of a subset of ``values`` (positive) summing to ``target``, by DP."""
    reach: dict[int, tuple[int, int] | None] = {0: None}  # sum -> (previous sum, index)
    for i, v in enumerate(values):
        for s in sorted(reach, reverse=True):
            if s + v <= target and s + v not in reach:
                reach[s + v] = (s, i)
    if target not in reach:
        return None
    out, s = [], target
    while reach[s] is not None:
        s, i = reach[s]  # type: ignore[misc]
        out.append(i)
    return sorted(out)


class _MultisetEnv(Environment):
    """The answer is a sub-multiset of ``data["values"]``, graded by :meth:`score` on its
    sum; ``solve`` finds one with the sum :meth:`target` by dynamic programming."""

    size_key = "values"

    def check(self, problem: Problem, answer: str) -> Verdict:
        chosen = parse_values(answer)
        if not sub_multiset(chosen, problem.data["values"]):
            return invalid("the answer uses a number that is not available (or too often)")
        return self.score(problem, sum(chosen))

    def score(self, problem: Problem, total: int) -> Verdict:
        raise NotImplementedError

    def target(self, problem: Problem) -> int:
        raise NotImplementedError

    def solve(self, problem: Problem) -> str:
        values = problem.data["values"]
        picked = subset_with_sum(values, self.target(problem))
        if picked is None:
            raise RuntimeError("no subset reaches the target")
        return ", ".join(str(values[i]) for i in picked)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return ", ".join(answer.split(", ")[1:])  # drop one (positive) number


@ENVIRONMENTS.register("subset_sum")
class SubsetSum(_MultisetEnv):
    """A sub-multiset hitting a target sum; (min/max)^10 credit on the sum."""

    size_measure = "number of values"
    answer_kind = "integer_set"
    tags = ("np_complete",)
    difficulty_scales = "numbers: 4 + d; values up to 10 + 3d; planted subset of about half"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        values = [rng.randint(1, 10 + 3 * difficulty) for _ in range(n)]
        chosen = rng.sample(range(n), rng.randint(2, max(2, n // 2)))
        target = sum(values[i] for i in chosen)
        prompt = (
            f"Numbers: {', '.join(map(str, values))}.\nChoose some of these numbers (each "
            f"listed number can be used at most once) whose sum is exactly {target}. Give the "
            "chosen numbers separated by commas."
        )
        answer = ", ".join(str(values[i]) for i in sorted(chosen))
        return Instance(prompt, answer, {"values": values, "target": target})

    def score(self, problem: Problem, total: int) -> Verdict:
        wrong = "the chosen numbers do not add up to the target"
        return count_verdict(total, problem.data["target"], wrong)

    def target(self, problem: Problem) -> int:
        return problem.data["target"]


@ENVIRONMENTS.register("number_partition")
class NumberPartition(_MultisetEnv):
    """One side of an equal-sum split; (smaller/larger side)^10 credit."""

    size_measure = "number of values"
    answer_kind = "integer_set"
    tags = ("np_complete",)
    difficulty_scales = "numbers: 4 + d; values up to 10 + 3d (a planted equal split)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        values = [rng.randint(1, 10 + 3 * difficulty) for _ in range(n - 1)]
        side = [rng.randint(0, 1) for _ in range(n - 1)]
        side[0], side[1] = 0, 1
        diff = sum(v if s == 0 else -v for v, s in zip(values, side, strict=True))
        if diff == 0:  # make room for the balancing number
            values[0] += 1
            diff = 1
        values.append(abs(diff))
        side.append(1 if diff > 0 else 0)
        order = list(range(n))
        rng.shuffle(order)
        values = [values[i] for i in order]
        part = [values[k] for k, i in enumerate(order) if side[i] == 0]
        prompt = (
            f"Numbers: {', '.join(map(str, values))}.\nSplit these numbers into two groups "
            "with equal sums (every number goes into exactly one group). Give the numbers of "
            "one of the two groups, separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, part)), {"values": values})

    def score(self, problem: Problem, total: int) -> Verdict:
        rest = sum(problem.data["values"]) - total
        return count_verdict(total, rest, "the two groups have different sums")

    def target(self, problem: Problem) -> int:
        total = sum(problem.data["values"])
        if total % 2:
            raise RuntimeError("no equal split")
        return total // 2


@ENVIRONMENTS.register("knapsack")
class Knapsack(Environment):
    """A feasible item set of maximum value; (value/optimum)^5 credit."""

    size_measure = "number of items"
    answer_kind = "integer_set"
    tags = ("np_complete",)
    difficulty_scales = "items: 4 + d; weights up to 5 + d; values up to 5 + 2d; capacity 40%"
    size_key = "weights"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        weights = [rng.randint(1, 5 + difficulty) for _ in range(n)]
        values = [rng.randint(1, 5 + 2 * difficulty) for _ in range(n)]
        capacity = max(max(weights), int(0.4 * sum(weights)))
        items = "\n".join(
            f"item {i}: weight {w}, value {v}"
            for i, (w, v) in enumerate(zip(weights, values, strict=True))
        )
        prompt = (
            f"There are {n} items:\n{items}\n\nChoose a set of items (each at most once) "
            f"with total weight at most {capacity} and the largest possible total value. Give "
            "the numbers of the chosen items separated by commas."
        )
        data = {"weights": weights, "values": values, "capacity": capacity}
        return Instance(prompt, _knapsack_text(data), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        chosen = parse_int_list(answer)
        d = problem.data
        if any(i < 0 or i >= len(d["weights"]) for i in chosen):
            return invalid("the answer uses an item number that does not exist")
        if len(set(chosen)) != len(chosen):
            return invalid("an item is chosen twice")
        if sum(d["weights"][i] for i in chosen) > d["capacity"]:
            return invalid("the chosen items are heavier than the capacity")
        value = sum(d["values"][i] for i in chosen)
        best = _knapsack_best(d)[0]
        return optimum_verdict(value, best, "a valid choice, but more value is possible")

    def solve(self, problem: Problem) -> str:
        return _knapsack_text(dict(problem.data))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return ", ".join(answer.split(", ")[1:])  # values are positive: less than optimal


def _knapsack_best(data: Mapping[str, Any]) -> tuple[int, list[int]]:
    """Optimal value and items by the capacity dynamic programme."""
    cap = data["capacity"]
    best: list[tuple[int, list[int]]] = [(0, [])] * (cap + 1)
    for i, (w, v) in enumerate(zip(data["weights"], data["values"], strict=True)):
        for c in range(cap, w - 1, -1):
            cand = best[c - w][0] + v
            if cand > best[c][0]:
                best[c] = (cand, [*best[c - w][1], i])
    return best[cap]


def _knapsack_text(data: dict[str, Any]) -> str:
    return ", ".join(map(str, sorted(_knapsack_best(data)[1])))


# ---- set systems -------------------------------------------------------------------------


def parse_labels(text: str) -> list[int]:
    """Set labels ``"S1, S4"`` / ``"1, 4"`` → ``[1, 4]``."""
    t = re.sub(r"\b[sS]_?\{?(\d+)\}?", r"\1", text)
    return parse_int_list(t)


def _sets_text(sets: list[list[int]]) -> str:
    return "\n".join(f"S{i + 1} = {{{', '.join(map(str, s))}}}" for i, s in enumerate(sets))


def _random_blocks(rng: random.Random, universe: list[int], k: int) -> list[list[int]]:
    items = list(universe)
    rng.shuffle(items)
    cuts = sorted(rng.sample(range(1, len(items)), k - 1))
    return [sorted(items[a:b]) for a, b in zip([0, *cuts], [*cuts, len(items)], strict=True)]


class _SetSystemEnv(Environment):
    """Choose some of the sets ``S1, S2, ...`` of ``data["sets"]`` over the universe
    ``1..data["u"]``: the labels are checked here, :meth:`score` grades the choice."""

    @staticmethod
    def _instance(
        rng: random.Random, u: int, sets: list[list[int]], planted: int, task: str, **data: Any
    ) -> Instance:
        """The first ``planted`` of ``sets`` are the answer; all are shuffled and listed
        before ``task``."""
        order = list(range(len(sets)))
        rng.shuffle(order)
        sets = [sets[i] for i in order]
        prompt = (
            f"The universe is the numbers 1 to {u}. There are {len(sets)} sets:\n"
            f"{_sets_text(sets)}\n\n{task} Give the labels of the chosen sets separated by "
            "commas (e.g. S1, S3)."
        )
        answer = ", ".join(f"S{order.index(i) + 1}" for i in range(planted))
        return Instance(prompt, answer, {"u": u, **data, "sets": sets})

    def check(self, problem: Problem, answer: str) -> Verdict:
        labels = parse_labels(answer)
        m = len(problem.data["sets"])
        if any(x < 1 or x > m for x in labels):
            return invalid(f"sets are labelled S1 to S{m}")
        if len(set(labels)) != len(labels):
            return invalid("a set is chosen twice")
        return self.score(problem, labels)

    def score(self, problem: Problem, labels: list[int]) -> Verdict:
        raise NotImplementedError

    def size(self, problem: Problem) -> float:
        return float(sum(len(s) for s in problem.data["sets"]))


@ENVIRONMENTS.register("set_cover")
class SetCover(_SetSystemEnv):
    """At most k sets covering the universe; (covered/all)^5 credit."""

    size_measure = "total size of the given sets"
    tags = ("np_complete",)
    difficulty_scales = "elements: 6 + d; planted cover of 2 + d//5 sets; decoy sets: 3 + d//2"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        u = 6 + difficulty
        k = 2 + difficulty // 5
        universe = list(range(1, u + 1))
        sets = [
            sorted(set(b) | set(rng.sample(universe, rng.randint(0, 2))))
            for b in _random_blocks(rng, universe, k)
        ]
        for _ in range(3 + difficulty // 2):
            sets.append(sorted(rng.sample(universe, rng.randint(2, max(2, u // k)))))
        task = f"Choose at most {k} of the sets whose union is the whole universe."
        return self._instance(rng, u, sets, k, task, k=k)

    def score(self, problem: Problem, labels: list[int]) -> Verdict:
        d = problem.data
        if len(labels) > d["k"]:
            return invalid(f"at most {d['k']} sets may be chosen")
        covered = len(set().union(*(d["sets"][x - 1] for x in labels))) if labels else 0
        return satisfied_verdict(covered, d["u"], "elements are not covered")

    def solve(self, problem: Problem) -> str:
        d = problem.data
        for size in range(1, d["k"] + 1):
            for combo in itertools.combinations(range(len(d["sets"])), size):
                if len(set().union(*(d["sets"][i] for i in combo))) == d["u"]:
                    return ", ".join(f"S{i + 1}" for i in combo)
        raise RuntimeError("no cover")

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return drop_until_wrong(self, problem, answer)  # until something is uncovered


@ENVIRONMENTS.register("exact_cover")
class ExactCover(_SetSystemEnv):
    """Sets covering every element exactly once; (exactly-once elements/all)^5 credit."""

    size_measure = "total size of the given sets"
    tags = ("np_complete",)
    difficulty_scales = "elements: 5 + d; planted partition into 2 + d//4 blocks; decoys 2 + d//2"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        u = 5 + difficulty
        k = 2 + difficulty // 4
        universe = list(range(1, u + 1))
        sets = _random_blocks(rng, universe, k)
        for _ in range(2 + difficulty // 2):
            sets.append(sorted(rng.sample(universe, rng.randint(2, max(2, u // 2)))))
        task = (
            f"Choose some of the sets so that every number from 1 to {u} lies in exactly one "
            "chosen set."
        )
        return self._instance(rng, u, sets, k, task)

    def score(self, problem: Problem, labels: list[int]) -> Verdict:
        d = problem.data
        hits = Counter(x for label in labels for x in d["sets"][label - 1])
        once = sum(1 for x in range(1, d["u"] + 1) if hits[x] == 1)
        return satisfied_verdict(once, d["u"], "numbers are not covered exactly once")

    def solve(self, problem: Problem) -> str:
        """Algorithm X style search: branch on the element with the fewest candidate sets."""
        sets = [set(s) for s in problem.data["sets"]]
        u = problem.data["u"]

        def search(free: set[int], chosen: list[int]) -> list[int] | None:
            if not free:
                return chosen
            options = {x: [i for i, s in enumerate(sets) if x in s and s <= free] for x in free}
            x = min(sorted(free), key=lambda e: len(options[e]))
            for i in options[x]:
                found = search(free - sets[i], [*chosen, i])
                if found is not None:
                    return found
            return None

        found = search(set(range(1, u + 1)), [])
        if found is None:
            raise RuntimeError("no exact cover")
        return ", ".join(f"S{i + 1}" for i in sorted(found))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return ", ".join(answer.split(", ")[1:])  # a block is missing: its numbers uncovered
