"""Systems of difference constraints: any integer solution of x_i − x_j ≤ c, and the
smallest-sum positive solution of order relations (RLVE catalogue rows
DifferenceConstraintSystem and DifferenceConstraintSystemDAG; Zeng et al. 2025, "RLVE:
Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable
Environments", arXiv:2511.07317, Appendix A).

Verifiers check each constraint on the answer. Rewards: (satisfied/all)^5 for the feasibility
task; for the minimum-sum task a composite of RLVE's two parts, kept ordered so that any
feasible answer beats any infeasible one: 0.5·(satisfied/all)^5 while a relation fails, else
0.5 + 0.5·(gold sum / answer sum)^5, correct only at the minimum sum.
"""

from __future__ import annotations

import random

import networkx as nx

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    parse_int_list,
    satisfied_reward,
    satisfied_verdict,
)
from verirl.types import Problem, Verdict

TAGS = ("rlve", "constraints")
MAX_ABS = 10**18


def _names(n: int) -> tuple[str, ...]:
    return tuple(f"x[{i}]" for i in range(n))


@ENVIRONMENTS.register("difference_constraint_system")
class DifferenceConstraintSystem(Environment):
    """Integers x[0..N−1] satisfying constraints x[i] − x[j] ≤ c (RLVE
    DifferenceConstraintSystem). A wrong count or |x| > 10^18 → invalid; else (satisfied /
    all)^5. ``solve``: Bellman–Ford shortest paths from a virtual source."""

    tags = TAGS
    difficulty_scales = "N = 3 + d unknowns; M = N·(1 + (d mod 11)/10) constraints (planted)"
    size_measure = "unknowns + constraints"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        m = int(n * (1 + rng.randint(0, 10) / 10))
        planted = [rng.randint(-5 - difficulty, 5 + difficulty) for _ in range(n)]
        constraints = []
        for _ in range(m):
            i, j = rng.sample(range(n), 2)
            constraints.append([i, j, planted[i] - planted[j] + rng.randint(0, 2)])
        lines = "\n".join(f"x[{i}] - x[{j}] <= {c}" for i, j, c in constraints)
        prompt = (
            f"There are {n} integers x[0], x[1], ..., x[{n - 1}]. They satisfy these "
            f"{m} inequalities:\n{lines}\n\nFind any integers x[0], ..., x[{n - 1}] that satisfy "
            "all of them. Give the values in order, separated by commas."
        )
        data = {"n": n, "constraints": constraints}
        return Instance(prompt, ", ".join(map(str, planted)), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, cons = problem.data["n"], problem.data["constraints"]
        x = parse_int_list(answer, _names(n))
        if len(x) != n or any(abs(v) > MAX_ABS for v in x):
            return invalid(f"give {n} integers (absolute value at most 10^18)")
        good = sum(1 for i, j, c in cons if x[i] - x[j] <= c)
        return satisfied_verdict(good, len(cons), "inequalities fail")

    def solve(self, problem: Problem) -> str:
        n, cons = problem.data["n"], problem.data["constraints"]
        dist = [0] * n  # virtual source joined to every vertex with weight 0
        for _ in range(n):
            changed = False
            for i, j, c in cons:  # x_i ≤ x_j + c: an arc j → i of weight c
                if dist[j] + c < dist[i]:
                    dist[i] = dist[j] + c
                    changed = True
            if not changed:
                break
        return ", ".join(map(str, dist))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        x = parse_int_list(answer)
        i, j, c = problem.data["constraints"][0]
        x[i] = x[j] + c + 1 + abs(x[i])  # breaks the first inequality
        return ", ".join(map(str, x))

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"] + len(problem.data["constraints"]))


_RELATIONS = ("<", "<=", "=")


@ENVIRONMENTS.register("difference_constraint_system_dag")
class DifferenceConstraintSystemDag(Environment):
    """Positive integers x satisfying relations x[i] < x[j], x[i] <= x[j], x[i] = x[j] with the
    smallest possible sum (RLVE DifferenceConstraintSystemDAG; the "candies" problem). A wrong
    count or a non-positive value → invalid. The minimum: repeated relaxation from all ones;
    ``solve``: longest paths over the condensation of the "at least" graph."""

    tags = TAGS
    difficulty_scales = "N = 3 + d unknowns; M = N·(1 + (d mod 11)/10) relations (planted)"
    size_measure = "unknowns + relations"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        m = int(n * (1 + rng.randint(0, 10) / 10))
        planted = [rng.randint(1, 2 + n // 2) for _ in range(n)]
        relations = []
        for _ in range(m):
            i, j = rng.sample(range(n), 2)
            if planted[i] > planted[j]:
                i, j = j, i
            if planted[i] == planted[j]:
                rel = rng.choice(["=", "<="])
            else:
                rel = rng.choice(["<", "<", "<="])
            relations.append([i, rel, j])
        lines = "\n".join(f"x[{i}] {rel} x[{j}]" for i, rel, j in relations)
        prompt = (
            f"There are {n} positive integers x[0], x[1], ..., x[{n - 1}]. They satisfy these "
            f"{m} relations:\n{lines}\n\nFind positive integers satisfying all the relations "
            f"whose sum x[0] + ... + x[{n - 1}] is as small as possible. Give the values in "
            "order, separated by commas."
        )
        data = {"n": n, "relations": relations}
        return Instance(prompt, ", ".join(map(str, self._least(data))), data)

    @staticmethod
    def _least(data: dict) -> list[int]:
        x = [1] * data["n"]
        changed = True
        while changed:
            changed = False
            for i, rel, j in data["relations"]:
                lo = x[i] + (1 if rel == "<" else 0)
                if x[j] < lo:
                    x[j], changed = lo, True
                if rel == "=" and x[i] < x[j]:
                    x[i], changed = x[j], True
        return x

    @staticmethod
    def _holds(a: int, rel: str, b: int) -> bool:
        return a < b if rel == "<" else (a <= b if rel == "<=" else a == b)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, rels = problem.data["n"], problem.data["relations"]
        x = parse_int_list(answer, _names(n))
        if len(x) != n or any(not 1 <= v <= MAX_ABS for v in x):
            return invalid(f"give {n} positive integers (at most 10^18)")
        good = sum(1 for i, rel, j in rels if self._holds(x[i], rel, x[j]))
        if good < len(rels):
            score = 0.5 * satisfied_reward(good, len(rels), 5.0)
            return graded(score, False, f"{len(rels) - good} relations fail")
        best = sum(self._least(dict(problem.data)))
        ok = sum(x) == best
        score = 0.5 + 0.5 * (best / sum(x)) ** 5
        return graded(
            score, ok, "correct" if ok else "all relations hold but the sum can be smaller"
        )

    def solve(self, problem: Problem) -> str:
        n = problem.data["n"]
        g = nx.DiGraph()
        g.add_nodes_from(range(n))
        for i, rel, j in problem.data["relations"]:  # x_j ≥ x_i + w
            w = 1 if rel == "<" else 0
            if not g.has_edge(i, j) or g[i][j]["w"] < w:
                g.add_edge(i, j, w=w)
            if rel == "=":
                g.add_edge(j, i, w=max(0, g[j][i]["w"] if g.has_edge(j, i) else 0))
        cond = nx.condensation(g)
        level = {c: 1 for c in cond}
        for c in nx.topological_sort(cond):
            for d in cond.successors(c):
                w = max(
                    g[u][v]["w"]
                    for u in cond.nodes[c]["members"]
                    for v in cond.nodes[d]["members"]
                    if g.has_edge(u, v)
                )
                level[d] = max(level[d], level[c] + w)
        return ", ".join(str(level[cond.graph["mapping"][v]]) for v in range(n))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        x = parse_int_list(answer)
        return ", ".join(map(str, [x[0] + 1, *x[1:]] if len(x) > 1 else [x[0] + 1]))

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"] + len(problem.data["relations"]))
