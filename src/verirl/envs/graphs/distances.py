"""Graphs, distances: the K-th shortest walk in a small-weight digraph, the best edge to add
to a tree to shrink its diameter, the shortest patrol of a tree with one extra road, and the
edge swap that makes a tree's diameter largest or smallest.

RLVE-Gym rows WYC, TreeAddOneEdgeDiameter, Patrol and TreeChangeOneEdgeDiameter (Zeng et al.
2025, "RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable
Environments", arXiv:2511.07317, Appendix A). The K-th walk length is a count-like value scored
(min/max)^10; the added edge is checked on the tree and scored (gold/answer)^5; the patrol
length is binary; the edge swaps get the mean of the two ratios. RLVE's Patrol may add one or
two roads; here it is always one.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    IntegerAnswer,
    graded,
    invalid,
    optimum_verdict,
    parse_int_list,
    ratio_reward,
)
from verirl.envs.kit.graphs import adjacency, bfs_distances, random_tree_edges
from verirl.types import Problem, Verdict

TAGS = ("rlve", "graphs")


@ENVIRONMENTS.register("wyc")
class Wyc(IntegerAnswer):
    """All walks with at least one arc, sorted by total weight (weights 1..3): the weight of
    the K-th one, counting every walk (start, arcs) separately."""

    tags = TAGS
    difficulty_scales = (
        "vertices 3..8; arcs 2n; K up to 5·2^d (at most 10^12 and at most the number "
        "of walks of weight ≤ 60)"
    )
    size_measure = "bits of K"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(3, 8)
        arcs: set[tuple[int, int]] = set()
        while len(arcs) < min(n * (n - 1), 2 * n):
            u, v = rng.sample(range(1, n + 1), 2)
            arcs.add((u, v))
        edges = [[u, v, rng.randint(1, 3)] for u, v in sorted(arcs)]
        cumulative = _walks_by_weight({"n": n, "edges": edges})
        k = rng.randint(1, min(10**12, 5 * 2**difficulty, cumulative[-1]))
        data = {"n": n, "edges": edges, "k": k}
        answer = next(w for w, c in enumerate(cumulative) if c >= k)
        prompt = (
            f"You are given a directed graph with {n} vertices (labeled 1 to {n}) and these "
            "weighted arcs:\n"
            + "\n".join(f"{u} -> {v} (weight {w})" for u, v, w in edges)
            + "\n\nConsider all walks that use at least one arc (a walk may repeat vertices and "
            "arcs; two walks differ when their sequences of arcs differ). Sort them by total "
            f"weight. What is the total weight of the {k}-th walk in this order (counting from 1; "
            "walks of equal weight all count)?"
        )
        return Instance(prompt, str(answer), data)

    def solve_int(self, problem: Problem) -> int:
        """Count walks by exact weight: ends[L][v] = walks (no arc yet counts as weight 0) of
        weight L ending at v, from ends[L − w][u] over each arc u → v of weight w."""
        d = problem.data
        ends = [dict.fromkeys(range(1, d["n"] + 1), 1)]
        seen, weight = 0, 0
        while seen < d["k"]:
            weight += 1
            if weight > _MAX_WEIGHT:
                return -1
            row = dict.fromkeys(range(1, d["n"] + 1), 0)
            for u, v, w in d["edges"]:
                if weight - w >= 0:
                    row[v] += ends[weight - w][u]
            ends.append(row)
            seen += sum(row.values())
        return weight

    def size(self, problem: Problem) -> float:
        return float(problem.data["k"].bit_length())


_MAX_WEIGHT = 60


def _walks_by_weight(data: Mapping[str, Any]) -> list[int]:
    """Generator-side count: cumulative[L] = walks of weight 1..L, from matrices of walk
    counts between every pair of vertices, one weight at a time (weights are 1..3)."""
    n = data["n"]
    by_w = {w: [[0] * (n + 1) for _ in range(n + 1)] for w in (1, 2, 3)}
    for u, v, w in data["edges"]:
        by_w[w][u][v] += 1
    counts: list[list[list[int]]] = [[[int(s == t) for t in range(n + 1)] for s in range(n + 1)]]
    cumulative = [0]
    for length in range(1, _MAX_WEIGHT + 1):
        cur = [[0] * (n + 1) for _ in range(n + 1)]
        for w in (1, 2, 3):
            if length - w < 0:
                continue
            prev = counts[length - w]
            for s in range(1, n + 1):
                for m in range(1, n + 1):
                    if prev[s][m]:
                        for t in range(1, n + 1):
                            cur[s][t] += prev[s][m] * by_w[w][m][t]
        counts.append(cur)
        cumulative.append(cumulative[-1] + sum(map(sum, cur)))
    return cumulative


@ENVIRONMENTS.register("tree_add_one_edge_diameter")
class TreeAddOneEdgeDiameter(Environment):
    """Add one new edge to a tree so that the diameter (longest shortest path) of the
    resulting graph is as small as possible: (gold/answer)^5."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "N = 4 + d//2 vertices (at most 12)"
    size_measure = "vertices N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(12, 4 + difficulty // 2)
        edges = [[u + 1, v + 1] for u, v in random_tree_edges(rng, n)]
        data = {"n": n, "edges": edges}
        prompt = (
            f"You are given a tree (a connected undirected graph with no cycles) with {n} "
            f"vertices labeled 1 to {n} and these edges:\n"
            + "\n".join(f"{u} - {v}" for u, v in edges)
            + "\n\nAdd exactly one new edge between two vertices that are not already joined, so "
            "that the diameter of the resulting graph (the largest number of edges on a "
            "shortest path between two vertices) is as small as possible. Give the two "
            "endpoints of the new edge separated by a comma."
        )
        return Instance(prompt, "{}, {}".format(*_best_edge(data)), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n = problem.data["n"]
        got = parse_int_list(answer)
        if len(got) != 2 or not all(1 <= v <= n for v in got) or got[0] == got[1]:
            return invalid(f"give two different vertices from 1 to {n}")
        if sorted(got) in [sorted(e) for e in problem.data["edges"]]:
            return invalid("those vertices are already joined")
        value = _diameter_with(problem.data, got[0], got[1])
        best = _diameter_with(problem.data, *_best_edge(problem.data))
        return optimum_verdict(value, best, "another edge gives a smaller diameter", minimise=True)

    def solve(self, problem: Problem) -> str:
        return "{}, {}".format(*_best_edge(problem.data))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return "{}, {}".format(*problem.data["edges"][0])  # an existing edge

    def problem_space(self, difficulty: int) -> int | None:
        n = min(12, 4 + difficulty // 2)
        return min(10**9, n ** (n - 2) * math.factorial(n - 1))  # labeled trees × edge orders

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def _diameter_with(data: Mapping[str, Any], a: int, b: int) -> int:
    adj = adjacency(data["n"], data["edges"], base=1)
    adj[a].append(b)
    adj[b].append(a)
    best = 0
    for s in adj:
        dist = bfs_distances(adj, s)
        best = max(best, max(dist.values()))
    return best


def _best_edge(data: Mapping[str, Any]) -> tuple[int, int]:
    have = {tuple(sorted(e)) for e in data["edges"]}
    pairs = [p for p in itertools.combinations(range(1, data["n"] + 1), 2) if p not in have]
    return min(pairs, key=lambda p: (_diameter_with(data, *p), p))


@ENVIRONMENTS.register("patrol")
class Patrol(IntegerAnswer):
    """A patrol starts and ends at vertex 1, travels every road of a tree and must use one
    new road (built between any two vertices) exactly once: the shortest possible patrol,
    2(N − 1) − D + 1 for the tree's diameter D. Binary reward."""

    tags = TAGS
    difficulty_scales = "N = 4 + d vertices"
    size_measure = "vertices N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        edges = [[u + 1, v + 1] for u, v in random_tree_edges(rng, n)]
        adj = adjacency(n, edges, base=1)

        def farthest(s: int) -> tuple[int, int]:
            dist = bfs_distances(adj, s)
            far = max(dist, key=lambda v: (dist[v], -v))
            return far, dist[far]

        diameter = farthest(farthest(1)[0])[1]  # double sweep
        prompt = (
            f"You are given a tree (a connected undirected graph with no cycles) with {n} "
            f"vertices labeled 1 to {n}; each of these {n - 1} roads has length 1:\n"
            + "\n".join(f"{u} - {v}" for u, v in edges)
            + "\n\nOne new road of length 1 will be built between two vertices of your choice (it "
            "may join vertices that are already joined). A patrol car starts at vertex 1, must "
            "travel along every old road at least once and along the new road exactly once, and "
            "must return to vertex 1. What is the smallest possible total distance of the patrol?"
        )
        return Instance(prompt, str(2 * (n - 1) - diameter + 1), {"n": n, "edges": edges})

    def solve_int(self, problem: Problem) -> int:
        """Each old road off the cycle closed by the new road is driven twice, those on it
        once: minimise 2(N − 1) + 1 − dist(u, v) over all pairs (BFS from every vertex)."""
        n, edges = problem.data["n"], problem.data["edges"]
        adj = adjacency(n, edges, base=1)
        longest = 0
        for s in adj:
            dist = bfs_distances(adj, s)
            longest = max(longest, max(dist.values()))
        return 2 * (n - 1) + 1 - longest

    binary = True  # RLVE's row is binary
    wrong_detail = "the distance is not right"

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])

    def problem_space(self, difficulty: int) -> int | None:
        n = 4 + difficulty
        return min(10**9, n ** (n - 2) * math.factorial(n - 1))


def _tree_diameter(n: int, edges: list[list[int]]) -> int:
    """Diameter (in edges) of a tree on vertices 1..n by a double breadth-first sweep."""
    adj = adjacency(n, edges, base=1)

    def sweep(s: int) -> tuple[int, int]:
        dist = bfs_distances(adj, s)
        far = max(dist, key=lambda v: dist[v])
        return far, dist[far]

    return sweep(sweep(1)[0])[1]


def _moves(data: Mapping[str, Any]) -> list[tuple[int, int, int, int, int]]:
    """Every (removed u, v, added x, y, resulting diameter) that keeps a tree."""
    n, edges = data["n"], data["edges"]
    out = []
    for k, (u, v) in enumerate(edges):
        rest = edges[:k] + edges[k + 1 :]
        adj = adjacency(n, rest, base=1)
        side, stack = {u}, [u]
        while stack:
            for y in adj[stack.pop()]:
                if y not in side:
                    side.add(y)
                    stack.append(y)
        for x in sorted(side):
            for y in range(1, n + 1):
                if y not in side:
                    out.append((u, v, x, y, _tree_diameter(n, [*rest, [x, y]])))
    return out


@ENVIRONMENTS.register("tree_change_one_edge_diameter")
class TreeChangeOneEdgeDiameter(Environment):
    """Replace one edge of a tree by another (the result must be a tree), once to make the
    diameter as large as possible and once as small as possible: the mean of
    (answer/gold)^5 and (gold/answer)^5."""

    tags = TAGS
    answer_kind = "text"
    difficulty_scales = "N = 4 + d//3 vertices (at most 12)"
    size_measure = "vertices N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(12, 4 + difficulty // 3)
        edges = [sorted([u + 1, v + 1]) for u, v in random_tree_edges(rng, n)]
        data = {"n": n, "edges": edges}
        moves = _moves(data)
        big = max(moves, key=lambda m: m[4])
        small = min(moves, key=lambda m: m[4])
        prompt = (
            f"You are given a tree (a connected undirected graph with no cycles) with {n} "
            f"vertices labeled 1 to {n} and these edges:\n"
            + "\n".join(f"{u} - {v}" for u, v in edges)
            + "\n\nAn operation removes one edge u - v and adds a new edge x - y so that the graph "
            "is again a tree. Give two operations: the first should make the diameter (the "
            "largest number of edges on a path) as large as possible, the second as small as "
            'possible. Write each as "u v x y" and separate the two by a semicolon, e.g. '
            '"1 2 3 4; 2 5 1 3".'
        )
        answer = "{} {} {} {}; {} {} {} {}".format(*big[:4], *small[:4])
        return Instance(prompt, answer, data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        parts = answer.split(";")
        if len(parts) != 2:
            return invalid("give two operations separated by a semicolon")
        values = []
        for part in parts:
            op = parse_int_list(part)
            if len(op) != 4:
                return invalid('write each operation as "u v x y"')
            u, v, x, y = op
            if sorted([u, v]) not in d["edges"]:
                return invalid("the removed edge is not an edge of the tree")
            rest = [e for e in d["edges"] if e != sorted([u, v])]
            if not (1 <= x <= d["n"] and 1 <= y <= d["n"]) or x == y or sorted([x, y]) in rest:
                return invalid("the added edge must join two different vertices not yet joined")
            new = [*rest, [x, y]]
            if not _connected(d["n"], new):
                return invalid("the result is not a tree")
            values.append(_tree_diameter(d["n"], new))
        high, low = _diameter_range(d)
        score = (ratio_reward(values[0], high, 5.0) + ratio_reward(low, values[1], 5.0)) / 2
        ok = values[0] == high and values[1] == low
        return graded(score, ok, "correct" if ok else "an operation is not optimal")

    def solve(self, problem: Problem) -> str:
        moves = _moves(problem.data)
        big = max(moves, key=lambda m: m[4])
        small = min(moves, key=lambda m: m[4])
        return "{} {} {} {}; {} {} {} {}".format(*big[:4], *small[:4])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.split(";")[0]

    def problem_space(self, difficulty: int) -> int | None:
        n = min(12, 4 + difficulty // 3)
        return min(10**9, n ** (n - 2) * math.factorial(n - 1))

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def _connected(n: int, edges: list[list[int]]) -> bool:
    adj = adjacency(n, edges, base=1)
    seen, stack = {1}, [1]
    while stack:
        for y in adj[stack.pop()]:
            if y not in seen:
                seen.add(y)
                stack.append(y)
    return len(seen) == n


def _diameter_range(data: Mapping[str, Any]) -> tuple[int, int]:
    """Removing u - v splits the tree into parts of diameters a and b: joining their ends
    gives at most a + b + 1, joining their centres at least max(a, b, ⌈a/2⌉ + ⌈b/2⌉ + 1)."""
    n, edges = data["n"], data["edges"]
    high, low = 0, n
    for k in range(len(edges)):
        rest = edges[:k] + edges[k + 1 :]
        adj = adjacency(n, rest, base=1)
        parts = []
        seen: set[int] = set()
        for s in adj:
            if s in seen:
                continue
            comp, stack = {s}, [s]
            while stack:
                for y in adj[stack.pop()]:
                    if y not in comp:
                        comp.add(y)
                        stack.append(y)
            seen |= comp
            parts.append(_part_diameter(adj, comp))
        a, b = parts
        high = max(high, a + b + 1)
        low = min(low, max(a, b, (a + 1) // 2 + (b + 1) // 2 + 1))
    return high, low


def _part_diameter(adj: dict[int, list[int]], comp: set[int]) -> int:
    best = 0
    for s in comp:
        dist = bfs_distances(adj, s)
        best = max(best, max(dist.values()))
    return best
