"""Constraint satisfaction: 2-SAT, splitting a set so that no given subset is one-sided, the
lexicographically smallest topological order, and seating groups at round tables.

RLVE-Gym rows TwoSAT, SetSplitting, TopologicalSort_MinimalLexicographicalOrder and
RoundTableAssignment (Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for Language
Models with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A). Verifiers check
every constraint (any satisfying answer is accepted) and give (satisfied/all)^β with the
row's β; the lexicographic order is scored by its match with the unique smallest order times
the share of arcs it respects.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Mapping
from typing import Any

import networkx as nx

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    parse_int_list,
    satisfied_reward,
    sequence_reward,
)
from verirl.envs.kit.wording import plural
from verirl.types import Problem, Verdict

TAGS = ("rlve", "logic")


def _literal(v: int, positive: bool) -> str:
    return f"x[{v}]" if positive else f"¬x[{v}]"


@ENVIRONMENTS.register("two_sat")
class TwoSat(Environment):
    """An assignment satisfying clauses of two literals; (satisfied/all)^10."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "variables 3 + d; clauses 2n (each true under a planted assignment)"
    size_measure = "variables"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        hidden = [rng.randint(0, 1) for _ in range(n)]
        clauses: list[list[int]] = []
        while len(clauses) < 2 * n:
            a, b = rng.sample(range(n), 2)
            sa, sb = rng.random() < 0.5, rng.random() < 0.5
            if (hidden[a] == sa) or (hidden[b] == sb):  # true under the planted assignment
                clauses.append([a, int(sa), b, int(sb)])
        lines = "\n".join(
            f"({_literal(a, bool(sa))} ∨ {_literal(b, bool(sb))})" for a, sa, b, sb in clauses
        )
        prompt = (
            f"There are {n} boolean (0/1) values x[0], x[1], ..., x[{n - 1}]. Find values that "
            f"make all of the following {len(clauses)} clauses true (¬ is negation, ∨ is or):\n"
            f"{lines}\nGive x[0], x[1], ..., x[{n - 1}] as 0s and 1s separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, hidden)), {"n": n, "clauses": clauses})

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, clauses = problem.data["n"], problem.data["clauses"]
        x = parse_int_list(answer)
        if len(x) != n or any(v not in (0, 1) for v in x):
            return invalid(f"give {n} values, each 0 or 1")
        good = sum(1 for a, sa, b, sb in clauses if x[a] == sa or x[b] == sb)
        ok = good == len(clauses)
        detail = "correct" if ok else f"{len(clauses) - good} clauses are false"
        return graded(satisfied_reward(good, len(clauses), 10.0), ok, detail)

    def solve(self, problem: Problem) -> str:
        """Implication graph; x is true when its component comes after ¬x topologically."""
        n = problem.data["n"]
        g = nx.DiGraph()
        g.add_nodes_from(range(2 * n))  # 2v: x[v] true, 2v + 1: x[v] false

        def node(v: int, positive: int) -> int:
            return 2 * v + (0 if positive else 1)

        for a, sa, b, sb in problem.data["clauses"]:
            g.add_edge(node(a, 1 - sa), node(b, sb))  # ¬A → B
            g.add_edge(node(b, 1 - sb), node(a, sa))  # ¬B → A
        cond = nx.condensation(g)
        rank = {c: i for i, c in enumerate(nx.topological_sort(cond))}
        comp = {v: rank[cond.graph["mapping"][v]] for v in g.nodes}
        return ", ".join("1" if comp[2 * v] > comp[2 * v + 1] else "0" for v in range(n))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        a, sa, _, _ = problem.data["clauses"][0]  # make both literals of clause 0 false
        _, _, b, sb = problem.data["clauses"][0]
        x = parse_int_list(answer)
        x[a], x[b] = 1 - sa, 1 - sb
        return ", ".join(map(str, x))

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


@ENVIRONMENTS.register("set_splitting")
class SetSplitting(Environment):
    """A part S' of S = {0..N-1} such that every given subset meets both S' and S \\ S';
    (split subsets/all)^10."""

    tags = TAGS
    answer_kind = "integer_set"
    difficulty_scales = "N = 4 + d//2 elements (at most 18); subsets 3 + d, of size 2..4"
    size_measure = "elements N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(18, 4 + difficulty // 2)
        side = [rng.randint(0, 1) for _ in range(n)]
        if len(set(side)) == 1:
            side[0] = 1 - side[0]
        ones, zeros = [v for v in range(n) if side[v]], [v for v in range(n) if not side[v]]
        subsets = []
        for _ in range(3 + difficulty):  # one element from each side, the rest anywhere
            chosen = {rng.choice(ones), rng.choice(zeros)}
            while len(chosen) < min(n, rng.randint(2, 4)):
                chosen.add(rng.randrange(n))
            subsets.append(sorted(chosen))
        listing = "\n".join("{" + ", ".join(map(str, sub)) + "}" for sub in subsets)
        prompt = (
            f"Define the full set S as all {n} integers from 0 to {n - 1}. Split S into two parts "
            f"(a part S1 and the rest) so that each of the following {len(subsets)} subsets has "
            f"at least one element in S1 and at least one element outside S1:\n{listing}\nGive "
            "the elements of S1 separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, ones)), {"n": n, "subsets": subsets})

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, subsets = problem.data["n"], problem.data["subsets"]
        part = parse_int_list(answer)
        if len(part) > n or len(set(part)) != len(part) or any(not 0 <= v < n for v in part):
            return invalid(f"give distinct elements between 0 and {n - 1}")
        inside = set(part)
        good = sum(1 for sub in subsets if 0 < len(inside & set(sub)) < len(sub))
        ok = good == len(subsets)
        detail = "correct" if ok else f"{len(subsets) - good} subsets lie on one side"
        return graded(satisfied_reward(good, len(subsets), 10.0), ok, detail)

    def solve(self, problem: Problem) -> str:
        """Backtracking over the elements; a subset fails once it is complete and one-sided."""
        n, subsets = problem.data["n"], problem.data["subsets"]
        closing: dict[int, list[list[int]]] = {}  # subsets whose largest element is v
        for sub in subsets:
            closing.setdefault(max(sub), []).append(sub)
        side: list[int] = []

        def place(v: int) -> bool:
            if v == n:
                return True
            for s in (1, 0):
                side.append(s)
                if all(len({side[u] for u in sub}) == 2 for sub in closing.get(v, [])) and place(
                    v + 1
                ):
                    return True
                side.pop()
            return False

        place(0)
        return ", ".join(str(v) for v in range(n) if side[v])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return ", ".join(map(str, range(problem.data["n"])))  # everything on one side

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


@ENVIRONMENTS.register("topological_sort_minimal_lexicographical_order")
class TopologicalSortMinimalLexicographicalOrder(Environment):
    """The lexicographically smallest topological order of a DAG: mean([gold = answer])^5
    times (arcs respected/all)^5."""

    tags = TAGS
    answer_kind = "integer_list"
    unique_answer = True
    difficulty_scales = "vertices 4 + d; arcs about 1.2n"
    size_measure = "vertices"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        order = list(range(n))
        rng.shuffle(order)
        arcs: set[tuple[int, int]] = set()
        while len(arcs) < max(2, int(1.2 * n)):
            i, j = sorted(rng.sample(range(n), 2))
            arcs.add((order[i], order[j]))
        arcs_list = sorted(list(a) for a in arcs)
        rules = "\n".join(f"{u} must come before {v}" for u, v in arcs_list)
        prompt = (
            f"Find a permutation of 0 to {n - 1} ({n} integers in total) such that the following "
            f"conditions hold:\n{rules}\nAmong all such permutations, give the lexicographically "
            "smallest one (the one with the smallest first element, then the smallest second "
            "element, and so on), separated by commas."
        )
        data = {"n": n, "arcs": arcs_list}
        return Instance(prompt, ", ".join(map(str, _smallest_order(data))), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, arcs = problem.data["n"], problem.data["arcs"]
        perm = parse_int_list(answer)
        if sorted(perm) != list(range(n)):
            return invalid(f"give a permutation of 0 to {n - 1}")
        pos = {v: i for i, v in enumerate(perm)}
        respected = sum(1 for u, v in arcs if pos[u] < pos[v])
        gold = _smallest_order(problem.data)
        score = sequence_reward(perm, gold, 5.0) * satisfied_reward(respected, len(arcs), 5.0)
        ok = perm == gold
        return graded(score, ok, "correct" if ok else "not the smallest valid order")

    def solve(self, problem: Problem) -> str:
        """Greedy from the front: the smallest vertex whose predecessors are all placed."""
        n, arcs = problem.data["n"], problem.data["arcs"]
        preds = {v: {u for u, w in arcs if w == v} for v in range(n)}
        out: list[int] = []
        while len(out) < n:
            v = min(v for v in range(n) if v not in out and preds[v] <= set(out))
            out.append(v)
        return ", ".join(map(str, out))

    def count_answers(self, problem: Problem, limit: int = 2) -> int | None:
        return 1  # the lexicographic minimum of a non-empty set of permutations is unique

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        items = answer.split(", ")
        return ", ".join(items[::-1])

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def _smallest_order(data: Mapping[str, Any]) -> list[int]:
    n = data["n"]
    indeg = [0] * n
    succ: dict[int, list[int]] = {v: [] for v in range(n)}
    for u, v in data["arcs"]:
        succ[u].append(v)
        indeg[v] += 1
    heap = [v for v in range(n) if indeg[v] == 0]
    heapq.heapify(heap)
    out = []
    while heap:  # Kahn's algorithm with a min-heap
        u = heapq.heappop(heap)
        out.append(u)
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                heapq.heappush(heap, v)
    return out


@ENVIRONMENTS.register("round_table_assignment")
class RoundTableAssignment(Environment):
    """Seat N groups at M tables, never two people of one group at a table, within the
    tables' capacities: (tables within capacity/all)^5."""

    tags = TAGS
    answer_kind = "text"
    difficulty_scales = "groups and tables 2..3 + d//3 each; group sizes up to the table count"
    size_measure = "people to seat"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = 3 + difficulty // 3
        groups, tables = rng.randint(2, top), rng.randint(2, top)
        seating = [
            sorted(rng.sample(range(1, tables + 1), rng.randint(1, tables))) for _ in range(groups)
        ]
        load = [sum(t in s for s in seating) for t in range(1, tables + 1)]
        capacity = [c + (1 if rng.random() < 0.3 else 0) for c in load]
        sizes = [len(s) for s in seating]
        prompt = (
            f"There are {groups} groups of people and {tables} tables. Group i has "
            + ", ".join(
                f"{plural(s, 'person', 'people')} (group {i + 1})" for i, s in enumerate(sizes)
            )
            + "; table j seats at most "
            + ", ".join(f"{c} (table {j + 1})" for j, c in enumerate(capacity))
            + ". Seat everyone so that no table has two people of the same group and no table "
            "holds more people than it seats. For each group, in order, give the tables its "
            "people sit at separated by spaces, and separate the groups by semicolons, e.g. "
            '"1 2; 2 3".'
        )
        answer = "; ".join(" ".join(map(str, s)) for s in seating)
        return Instance(prompt, answer, {"sizes": sizes, "capacity": capacity})

    def check(self, problem: Problem, answer: str) -> Verdict:
        sizes, capacity = problem.data["sizes"], problem.data["capacity"]
        parts = answer.split(";")
        if len(parts) != len(sizes):
            return invalid(f"give {len(sizes)} groups separated by semicolons")
        load = [0] * len(capacity)
        for part, size in zip(parts, sizes, strict=True):
            tables = parse_int_list(part)
            if len(tables) != size or len(set(tables)) != size:
                return invalid("each group needs one distinct table per person")
            if any(not 1 <= t <= len(capacity) for t in tables):
                return invalid(f"tables are numbered 1 to {len(capacity)}")
            for t in tables:
                load[t - 1] += 1
        good = sum(1 for a, c in zip(load, capacity, strict=True) if a <= c)
        ok = good == len(capacity)
        detail = "correct" if ok else f"{len(capacity) - good} tables are over capacity"
        return graded(satisfied_reward(good, len(capacity), 5.0), ok, detail)

    def solve(self, problem: Problem) -> str:
        """Maximum flow: group i → table j with capacity 1, table j → sink with its size."""
        sizes, capacity = problem.data["sizes"], problem.data["capacity"]
        g = nx.DiGraph()
        for i, s in enumerate(sizes):
            g.add_edge("s", ("g", i), capacity=s)
            for j in range(len(capacity)):
                g.add_edge(("g", i), ("t", j), capacity=1)
        for j, c in enumerate(capacity):
            g.add_edge(("t", j), "t", capacity=c)
        _, flow = nx.maximum_flow(g, "s", "t")
        return "; ".join(
            " ".join(str(j + 1) for j in range(len(capacity)) if flow[("g", i)][("t", j)])
            for i in range(len(sizes))
        )

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rsplit(";", 1)[0] if ";" in answer else answer + "; 1"

    def size(self, problem: Problem) -> float:
        return float(sum(problem.data["sizes"]))
