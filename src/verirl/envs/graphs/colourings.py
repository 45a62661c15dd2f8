"""Graph optimisation, part 4: harmonious colouring — a proper colouring in which no two
edges join the same pair of colours, with as few colours as possible.

Row MinimumHarmoniousChromaticNumber of the RLVE catalogue (Zeng et al., *RLVE: Scaling Up
Reinforcement Learning for Language Models with Adaptive Verifiable Environments*,
arXiv:2511.07317). The verifier checks both rules and grades (gold/colours)^5; the optimum is
found by backtracking over colour counts from the lower bound (k(k-1)/2 ≥ edges, k > largest
degree) upwards, and ``solve`` enumerates every colouring on small graphs.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Instance,
    invalid,
    optimum_verdict,
    parse_int_list,
)
from verirl.envs.graphs.paths_spanning import GraphEnv
from verirl.envs.kit.graphs import add_random_pairs, edge_lines, random_tree
from verirl.types import Problem, Verdict

TAGS = ("rlve", "graphs")


def _is_harmonious(edges: list[list[int]], colour: list[int]) -> bool:
    pairs = set()
    for u, v, _ in edges:
        a, b = colour[u], colour[v]
        if a == b or (min(a, b), max(a, b)) in pairs:
            return False
        pairs.add((min(a, b), max(a, b)))
    return True


def _try_colours(adj: list[list[int]], order: list[int], k: int) -> list[int] | None:
    """A harmonious colouring with at most k colours, or None (backtracking in ``order``;
    a new colour is only ever the next unused one)."""
    n = len(adj)
    colour = [-1] * n
    used: set[tuple[int, int]] = set()

    def place(i: int, top: int) -> bool:
        if i == n:
            return True
        v = order[i]
        for c in range(min(k, top + 1)):
            new: list[tuple[int, int]] = []
            for u in adj[v]:
                if colour[u] < 0:
                    continue
                pair = (min(c, colour[u]), max(c, colour[u]))
                if c == colour[u] or pair in used or pair in new:
                    break
                new.append(pair)
            else:
                colour[v] = c
                used.update(new)
                if place(i + 1, max(top, c + 1)):
                    return True
                used.difference_update(new)
                colour[v] = -1
        return False

    return colour if place(0, 0) else None


def harmonious_colouring(n: int, edges: list[list[int]]) -> list[int]:
    """A harmonious colouring with the fewest colours, trying colour counts upwards from the
    lower bound (k > largest degree, k(k-1)/2 ≥ edges)."""
    adj: list[list[int]] = [[] for _ in range(n)]
    for u, v, _ in edges:
        adj[u].append(v)
        adj[v].append(u)
    k = max([1, *(len(a) + 1 for a in adj)])
    while k * (k - 1) // 2 < len(edges):
        k += 1
    order = sorted(range(n), key=lambda v: -len(adj[v]))
    while True:
        found = _try_colours(adj, order, k)
        if found is not None:
            return found
        k += 1


@ENVIRONMENTS.register("minimum_harmonious_chromatic_number")
class MinimumHarmoniousChromaticNumber(GraphEnv):
    """A harmonious colouring (proper, and every pair of colours on at most one edge) with
    the fewest colours; (gold/colours)^5 credit, a colouring breaking a rule is invalid."""

    tags = TAGS
    difficulty_scales = "N = 5 + d//3 vertices (at most 12); N - 1 + d//4 edges (a tree plus)"
    size_measure = "vertices plus edges"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(12, 5 + difficulty // 3)
        verts = list(range(n))
        pairs = add_random_pairs(rng, random_tree(rng, verts), verts, difficulty // 4)
        edges = [[u, v, 1] for u, v in pairs]
        rng.shuffle(edges)
        prompt = (
            f"You are given an undirected graph with {n} vertices, labeled from 0 to {n - 1}, "
            f"and these edges:\n{edge_lines(edges, False)}\n\nColour the vertices with "
            "non-negative integers so that (1) the two ends of every edge get different "
            "colours, and (2) no two edges join the same pair of colours. Use as few distinct "
            f"colours as possible. Output the colours of vertices 0 to {n - 1} separated by "
            "spaces."
        )
        data = {"n": n, "edges": edges}
        return Instance(prompt, " ".join(map(str, harmonious_colouring(n, edges))), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, edges = problem.data["n"], problem.data["edges"]
        colour = parse_int_list(answer)
        if len(colour) != n or any(c < 0 for c in colour):
            return invalid(f"give {n} non-negative colours")
        if not _is_harmonious(edges, colour):
            return invalid("an edge joins equal colours, or two edges join the same pair")
        best = len(set(harmonious_colouring(n, edges)))
        return optimum_verdict(len(set(colour)), best, "fewer colours suffice", minimise=True)

    def solve(self, problem: Problem) -> str:
        n, edges = problem.data["n"], problem.data["edges"]
        if n > 6:
            return " ".join(map(str, harmonious_colouring(n, edges)))
        best: tuple[int, tuple[int, ...]] | None = None
        for k in range(1, n + 1):  # every colouring with k colours, fewest k first
            for colour in itertools.product(range(k), repeat=n):
                if _is_harmonious(edges, list(colour)):
                    best = (k, colour)
                    break
            if best:
                break
        assert best is not None
        return " ".join(map(str, best[1]))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        u, v, _ = problem.data["edges"][0]
        colour = answer.split()
        colour[v] = colour[u]
        return " ".join(colour)

    def size(self, problem: Problem) -> float:
        data: Mapping[str, Any] = problem.data
        return float(data["n"] + len(data["edges"]))
