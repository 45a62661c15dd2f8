"""Graphs, part 2: structure (components, orders, colourings, matchings, cycles).

Verifiers accept *any* valid answer: any topological order, any proper colouring, any maximum
matching, any directed cycle. Constraint answers earn RLVE's (satisfied/all)^5, matchings the
maximisation ratio (size/optimum)^5, counts (min/max)^10. Shared helpers live in
:mod:`verirl.envs.graphs.paths_spanning`.
"""

from __future__ import annotations

import random
from typing import Any

import networkx as nx

from verirl.envs.base import (
    ENVIRONMENTS,
    Instance,
    IntegerAnswer,
    invalid,
    optimum_verdict,
    satisfied_verdict,
)
from verirl.envs.graphs.paths_spanning import GraphEnv
from verirl.envs.kit.graphs import (
    add_random_pairs,
    graph_intro,
    parse_pairs,
    parse_vertices,
    random_tree,
    to_graph,
    unknown_vertex,
    unweighted,
)
from verirl.types import Problem, Verdict


@ENVIRONMENTS.register("connected_components")
class ConnectedComponents(GraphEnv, IntegerAnswer):
    """Number of connected components; (min/max)^10 credit."""

    tags = ("graphs",)
    difficulty_scales = "vertices: 5 + d; up to 1 + n//3 planted components"
    wrong_detail = "that is not the number of components"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + difficulty
        count = rng.randint(1, 1 + n // 3)
        verts = list(range(n))
        rng.shuffle(verts)
        cuts = sorted(rng.sample(range(1, n), count - 1))
        groups = [verts[a:b] for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
        pairs: list[tuple[int, int]] = []
        for group in groups:
            pairs += add_random_pairs(rng, random_tree(rng, group), group, len(group) // 3)
        edges = unweighted(rng, pairs)
        prompt = (
            f"{graph_intro(n, edges)}\n\nHow many connected components does this graph have? "
            "(A vertex without edges is a component on its own.) Give a single integer."
        )
        return Instance(prompt, str(count), {"n": n, "edges": edges})

    def solve_int(self, problem: Problem) -> int:
        return nx.number_connected_components(to_graph(problem.data))


def _ranked_arcs(rng: random.Random, n: int, count: int) -> tuple[list[int], list[tuple[int, int]]]:
    """A hidden random order of the ``n`` vertices and up to ``count`` random arcs that all
    point forwards in it (so they form no cycle)."""
    hidden = list(range(n))
    rng.shuffle(hidden)
    rank = {v: i for i, v in enumerate(hidden)}
    pairs = add_random_pairs(rng, [], list(range(n)), count)
    return hidden, [(u, v) if rank[u] < rank[v] else (v, u) for u, v in pairs]


def _permutation_error(order: list[int], n: int) -> str | None:
    if len(order) != n:
        return f"expected {n} vertices, got {len(order)}"
    if sorted(order) != list(range(n)):
        return "the list must contain every vertex exactly once"
    return None


@ENVIRONMENTS.register("topological_sort")
class TopologicalSort(GraphEnv):
    """Any topological order of a DAG; (arcs respected/all)^5 credit."""

    answer_kind = "integer_list"
    tags = ("graphs",)
    difficulty_scales = "vertices: 4 + d; arcs: n + d (capped by the complete DAG)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        hidden, arcs = _ranked_arcs(rng, n, n + difficulty)
        edges = unweighted(rng, arcs)
        prompt = (
            f"{graph_intro(n, edges, directed=True)}\n\nThe graph has no directed cycle. Find a "
            "topological order: an ordering of all vertices such that for every arc u -> v, "
            "u comes before v. Give all vertices in that order, separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, hidden)), {"n": n, "edges": edges})

    def check(self, problem: Problem, answer: str) -> Verdict:
        order = parse_vertices(answer)
        error = _permutation_error(order, problem.data["n"])
        if error:
            return invalid(error)
        pos = {v: i for i, v in enumerate(order)}
        arcs = problem.data["edges"]
        good = sum(1 for u, v, _ in arcs if pos[u] < pos[v])
        return satisfied_verdict(good, len(arcs), "arcs point backwards")

    def solve(self, problem: Problem) -> str:
        g = to_graph(problem.data, directed=True)
        return ", ".join(map(str, nx.lexicographical_topological_sort(g)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return ", ".join(reversed(answer.split(", ")))  # every arc now points backwards


class _ColouringEnv(GraphEnv):
    """A proper colouring with the colours ``0..colours(problem) - 1``; (proper
    edges/all)^5 credit."""

    def colours(self, problem: Problem) -> int:
        raise NotImplementedError

    def check(self, problem: Problem, answer: str) -> Verdict:
        colours = parse_vertices(answer)
        n, k = problem.data["n"], self.colours(problem)
        if len(colours) != n:
            return invalid(f"expected one colour for each of the {n} vertices")
        if any(c < 0 or c >= k for c in colours):
            return invalid(f"colours must be integers from 0 to {k - 1}")
        edges = problem.data["edges"]
        good = sum(1 for u, v, _ in edges if colours[u] != colours[v])
        return satisfied_verdict(good, len(edges), "edges join two vertices of one colour")

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        colours = answer.split(", ")
        u, v, _ = problem.data["edges"][0]
        colours[u] = colours[v]  # the first edge becomes monochromatic
        return ", ".join(colours)


@ENVIRONMENTS.register("two_coloring")
class TwoColouring(_ColouringEnv):
    """A proper 2-colouring of a bipartite graph; (proper edges/all)^5 credit."""

    answer_kind = "integer_list"
    tags = ("graphs",)
    difficulty_scales = "vertices: 4 + d or 5 + d; extra cross edges: d//2 + 1"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty + rng.randint(0, 1)
        side = [rng.randint(0, 1) for _ in range(n)]
        side[0], side[1] = 0, 1
        rest = list(range(2, n))
        rng.shuffle(rest)
        placed, pairs = [0, 1], [(0, 1)]
        for v in rest:  # attach each vertex to a placed one of the other side: connected
            pairs.append((v, rng.choice([u for u in placed if side[u] != side[v]])))
            placed.append(v)
        zero = [v for v in range(n) if side[v] == 0]
        one = [v for v in range(n) if side[v] == 1]
        existing = {(min(u, v), max(u, v)) for u, v in pairs}
        for _ in range(difficulty // 2 + 1):
            u, v = rng.choice(zero), rng.choice(one)
            if (min(u, v), max(u, v)) not in existing:
                existing.add((min(u, v), max(u, v)))
                pairs.append((u, v))
        edges = unweighted(rng, pairs)
        prompt = (
            f"{graph_intro(n, edges)}\n\nColour every vertex with colour 0 or 1 so that the two "
            "ends of every edge get different colours. Give the colours of vertices 0, 1, ..., "
            f"{n - 1} in this order, separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, side)), {"n": n, "edges": edges})

    def colours(self, problem: Problem) -> int:
        return 2

    def solve(self, problem: Problem) -> str:
        g = to_graph(problem.data)
        colour: dict[int, int] = {}
        for comp in nx.connected_components(g):
            colour.update(nx.bipartite.color(g.subgraph(comp)))
        return ", ".join(str(colour[v]) for v in range(problem.data["n"]))


def _two_of(rng: random.Random, n: int) -> tuple[int, int]:
    """``tuple(rng.sample(range(n), 2))`` for ``n >= 2``, drawing the same numbers from ``rng``
    without ``sample``'s overhead (its type check and list building were a third of
    :class:`GraphColouring`'s generation). ``sample`` takes ``k = 2`` from a pool when
    ``n <= 21`` (the second draw below ``n - 1``, the last item moved into the first one's
    place) and otherwise redraws below ``n`` until the two differ; ``randrange(m)`` is
    ``_randbelow(m)`` for ``m >= 1``, called here directly (``randrange``'s argument checks
    were a third of the rest). ``tests/envs/graphs/test_paths_spanning.py`` checks it against
    ``sample``."""
    below = rng._randbelow  # type: ignore[attr-defined]  # random.Random._randbelow
    u = below(n)
    if n <= 21:
        v = below(n - 1)
        return u, (n - 1 if v == u else v)
    v = below(n)
    while v == u:
        v = below(n)
    return u, v


@ENVIRONMENTS.register("graph_coloring")
class GraphColouring(_ColouringEnv):
    """A proper k-colouring of a graph with a planted one; (proper edges/all)^5 credit."""

    answer_kind = "integer_list"
    tags = ("graphs",)
    difficulty_scales = "vertices: 5 + d; colours: 3 + d//8; edges: 3n/2 + d (planted colouring)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + difficulty
        k = 3 + difficulty // 8
        colour = [rng.randrange(k) for _ in range(n)]
        target = 3 * n // 2 + difficulty
        seen: set[tuple[int, int]] = set()
        pairs: list[tuple[int, int]] = []
        for _ in range(20 * target):
            if len(pairs) >= target:
                break
            u, v = _two_of(rng, n)
            if colour[u] != colour[v]:
                key = (u, v) if u < v else (v, u)
                if key not in seen:
                    seen.add(key)
                    pairs.append((u, v))
        if not pairs:  # every vertex drew the same colour: recolour one endpoint
            colour[1] = (colour[0] + 1) % k
            pairs.append((0, 1))
        edges = unweighted(rng, pairs)
        prompt = (
            f"{graph_intro(n, edges)}\n\nColour every vertex with one of the colours 0 to {k - 1} "
            "so that the two ends of every edge get different colours. Give the colours of "
            f"vertices 0, 1, ..., {n - 1} in this order, separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, colour)), {"n": n, "edges": edges, "k": k})

    def colours(self, problem: Problem) -> int:
        return problem.data["k"]

    def solve(self, problem: Problem) -> str:
        """Backtracking, most-constrained vertex first."""
        g = to_graph(problem.data)
        k, n = problem.data["k"], problem.data["n"]
        colour: dict[int, int] = {}

        def search() -> bool:
            if len(colour) == n:
                return True
            v = max(
                (u for u in range(n) if u not in colour),
                key=lambda u: (len({colour[w] for w in g[u] if w in colour}), g.degree(u)),
            )
            used = {colour[w] for w in g[v] if w in colour}
            for c in range(k):
                if c not in used:
                    colour[v] = c
                    if search():
                        return True
                    del colour[v]
            return False

        search()
        return ", ".join(str(colour.get(v, 0)) for v in range(n))


@ENVIRONMENTS.register("max_matching")
class MaximumMatching(GraphEnv):
    """A maximum matching (any); smaller valid matchings earn (size/optimum)^5."""

    tags = ("graphs",)
    difficulty_scales = "vertices: 4 + d; random edges: n + d//2"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        edges = unweighted(rng, add_random_pairs(rng, [], list(range(n)), n + difficulty // 2))
        data = {"n": n, "edges": edges}
        prompt = (
            f"{graph_intro(n, edges)}\n\nA matching is a set of edges no two of which share a "
            "vertex. Find a matching with as many edges as possible. Give its edges as pairs "
            "u-v separated by commas (for example: 0-3, 1-2)."
        )
        return Instance(prompt, self._matching_text(data), data)

    @staticmethod
    def _matching_text(data: dict[str, Any]) -> str:
        m = nx.max_weight_matching(to_graph(data), maxcardinality=True, weight=None)
        return ", ".join(f"{min(e)}-{max(e)}" for e in sorted(tuple(sorted(e)) for e in m))

    def check(self, problem: Problem, answer: str) -> Verdict:
        pairs = parse_pairs(answer)
        n = problem.data["n"]
        if unknown_vertex([x for p in pairs for x in p], n):
            return invalid("an edge uses a vertex that is not in the graph")
        g = to_graph(problem.data)
        used: set[int] = set()
        for u, v in pairs:
            if not g.has_edge(u, v):
                return invalid(f"{u}-{v} is not an edge of the graph")
            if u in used or v in used:
                return invalid("two chosen edges share a vertex")
            used.update((u, v))
        best = len(nx.max_weight_matching(g, maxcardinality=True, weight=None))
        return optimum_verdict(len(pairs), best, "a valid matching, but a larger one exists")

    def solve(self, problem: Problem) -> str:
        return self._matching_text(dict(problem.data))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return ", ".join(answer.split(", ")[1:])  # one edge fewer than the maximum


@ENVIRONMENTS.register("find_cycle")
class FindCycle(GraphEnv):
    """Any directed cycle of a digraph; (steps that are arcs/all)^5 credit."""

    answer_kind = "integer_list"
    tags = ("graphs",)
    difficulty_scales = "vertices: 4 + d; acyclic arcs: n + d//2; planted cycle length <= 3 + d//3"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        arcs = set(_ranked_arcs(rng, n, n + difficulty // 2)[1])
        length = rng.randint(3, min(n, 3 + difficulty // 3))
        cycle = rng.sample(range(n), length)
        arcs.update(zip(cycle, cycle[1:] + cycle[:1], strict=True))
        edges = unweighted(rng, sorted(arcs))
        prompt = (
            f"{graph_intro(n, edges, directed=True)}\n\nFind a directed cycle: distinct vertices "
            "v1, v2, ..., vk such that v1 -> v2, v2 -> v3, ..., vk -> v1 are all arcs. Give the "
            "vertices of the cycle in order, separated by commas (do not repeat v1 at the end)."
        )
        return Instance(prompt, ", ".join(map(str, cycle)), {"n": n, "edges": edges})

    def check(self, problem: Problem, answer: str) -> Verdict:
        cycle = parse_vertices(answer)
        if len(cycle) >= 2 and cycle[0] == cycle[-1]:
            cycle = cycle[:-1]
        if len(cycle) < 2:
            return invalid("a directed cycle needs at least two vertices")
        if unknown_vertex(cycle, problem.data["n"]):
            return invalid("the cycle uses a vertex that is not in the graph")
        if len(set(cycle)) != len(cycle):
            return invalid("the vertices of the cycle must be distinct")
        arcs = {(u, v) for u, v, _ in problem.data["edges"]}
        good = sum(1 for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True) if (a, b) in arcs)
        return satisfied_verdict(good, len(cycle), "steps of the cycle are not arcs")

    def solve(self, problem: Problem) -> str:
        found = nx.find_cycle(to_graph(problem.data, directed=True))
        return ", ".join(str(u) for u, _v in found)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        vertices = answer.split(", ")
        return ", ".join([*vertices, vertices[0], vertices[0]])  # a repeated vertex
