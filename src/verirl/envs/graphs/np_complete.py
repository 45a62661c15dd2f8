"""NP-complete problems, part 2: graph problems with a planted solution.

Vertex cover of size <= k, Hamiltonian path, clique of size k and independent set of size k.
Generators plant the solution (cheap at any size); verifiers check the answer on the graph and
give RLVE's (satisfied/all)^5 over the relevant constraints (covered edges, path steps that are
edges, vertex pairs). ``solve`` searches (bounded branching, bitmask DP, maximal cliques).
"""

from __future__ import annotations

import itertools
import random

import networkx as nx

from verirl.envs.base import (
    ENVIRONMENTS,
    Instance,
    drop_until_wrong,
    invalid,
    satisfied_verdict,
    swap_until_wrong,
)
from verirl.envs.graphs.paths_spanning import GraphEnv
from verirl.envs.kit.graphs import (
    add_random_pairs,
    graph_intro,
    parse_vertices,
    to_graph,
    unknown_vertex,
    unweighted,
)
from verirl.types import Problem, Verdict


class _VertexSetEnv(GraphEnv):
    """The answer is a set of distinct vertices of the graph, graded by :meth:`score`."""

    def check(self, problem: Problem, answer: str) -> Verdict:
        chosen = parse_vertices(answer)
        if unknown_vertex(chosen, problem.data["n"]):
            return invalid("the answer uses a vertex that is not in the graph")
        if len(set(chosen)) != len(chosen):
            return invalid("a vertex is listed twice")
        return self.score(problem, chosen)

    def score(self, problem: Problem, chosen: list[int]) -> Verdict:
        raise NotImplementedError


@ENVIRONMENTS.register("vertex_cover")
class VertexCover(_VertexSetEnv):
    """A vertex cover of at most k vertices; (covered edges/all)^5 credit."""

    answer_kind = "integer_set"
    tags = ("np_complete",)
    difficulty_scales = "vertices: 5 + d; cover size k = 1 + n//4 (planted); edges: n + d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + difficulty
        k = 1 + n // 4
        cover = sorted(rng.sample(range(n), k))
        seen: set[tuple[int, int]] = set()
        pairs: list[tuple[int, int]] = []
        for _ in range(20 * (n + difficulty)):
            if len(pairs) >= n + difficulty:
                break
            u, v = rng.choice(cover), rng.randrange(n)
            if u != v and (min(u, v), max(u, v)) not in seen:
                seen.add((min(u, v), max(u, v)))
                pairs.append((u, v))
        edges = unweighted(rng, pairs)
        prompt = (
            f"{graph_intro(n, edges)}\n\nFind a vertex cover with at most {k} vertices: a set of "
            "vertices such that every edge has at least one endpoint in the set. Give the "
            "vertices separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, cover)), {"n": n, "k": k, "edges": edges})

    def score(self, problem: Problem, chosen: list[int]) -> Verdict:
        d = problem.data
        if len(chosen) > d["k"]:
            return invalid(f"the cover may have at most {d['k']} vertices")
        picked = set(chosen)
        good = sum(1 for u, v, _ in d["edges"] if u in picked or v in picked)
        return satisfied_verdict(good, len(d["edges"]), "edges are not covered")

    def solve(self, problem: Problem) -> str:
        """Bounded search tree: some endpoint of any uncovered edge is in the cover."""

        def cover(edges: list[tuple[int, int]], k: int) -> list[int] | None:
            if not edges:
                return []
            if k == 0:
                return None
            for v in edges[0]:
                rest = cover([e for e in edges if v not in e], k - 1)
                if rest is not None:
                    return [v, *rest]
            return None

        found = cover([(u, v) for u, v, _ in problem.data["edges"]], problem.data["k"])
        if found is None:
            raise RuntimeError("no cover of size k")
        return ", ".join(map(str, sorted(found)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return drop_until_wrong(self, problem, answer)  # until an edge is uncovered


@ENVIRONMENTS.register("hamiltonian_path")
class HamiltonianPath(GraphEnv):
    """A path through every vertex once; (steps that are edges/all)^5 credit."""

    answer_kind = "integer_list"
    tags = ("np_complete",)
    difficulty_scales = "vertices: 4 + 2d//3 (planted path); extra edges: n//2 + d//3"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + 2 * difficulty // 3
        path = list(range(n))
        rng.shuffle(path)
        pairs = add_random_pairs(
            rng, list(itertools.pairwise(path)), list(range(n)), n // 2 + difficulty // 3
        )
        edges = unweighted(rng, pairs)
        prompt = (
            f"{graph_intro(n, edges)}\n\nFind a Hamiltonian path: an order of all {n} vertices, "
            "each exactly once, such that every two consecutive vertices are joined by an "
            "edge. Give the vertices in path order, separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, path)), {"n": n, "edges": edges})

    def check(self, problem: Problem, answer: str) -> Verdict:
        order = parse_vertices(answer)
        n = problem.data["n"]
        if len(order) != n or sorted(order) != list(range(n)):
            return invalid(f"the path must list each of the {n} vertices exactly once")
        g = to_graph(problem.data)
        good = sum(1 for a, b in itertools.pairwise(order) if g.has_edge(a, b))
        return satisfied_verdict(good, n - 1, "steps are not edges")

    def solve(self, problem: Problem) -> str:
        """Bitmask dynamic programme over (visited set, last vertex)."""
        n = problem.data["n"]
        adj = [0] * n
        for u, v, _ in problem.data["edges"]:
            adj[u] |= 1 << v
            adj[v] |= 1 << u
        parent: dict[tuple[int, int], int] = {(1 << v, v): -1 for v in range(n)}
        frontier = list(parent)
        for _ in range(n - 1):
            nxt = []
            for mask, last in frontier:
                free = adj[last] & ~mask
                while free:
                    bit = free & -free
                    free ^= bit
                    key = (mask | bit, bit.bit_length() - 1)
                    if key not in parent:
                        parent[key] = last
                        nxt.append(key)
            frontier = nxt
        if not frontier:
            raise RuntimeError("no Hamiltonian path")
        mask, last = frontier[0]
        order = []
        while last != -1:
            order.append(last)
            mask, last = mask ^ (1 << last), parent[(mask, last)]
        return ", ".join(map(str, order[::-1]))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return swap_until_wrong(self, problem, answer)


class _KSetEnv(_VertexSetEnv):
    """Find k vertices that are pairwise adjacent (clique) or pairwise non-adjacent; ``goal``
    names what to find in the prompt."""

    want_edge: bool
    goal: str

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 6 + difficulty
        k = 3 + difficulty // 4
        planted = sorted(rng.sample(range(n), k))
        inside = set(planted)
        density = 0.3 if self.want_edge else 0.45
        pairs = []
        for u, v in itertools.combinations(range(n), 2):
            both = u in inside and v in inside
            if (both and self.want_edge) or (not both and rng.random() < density):
                pairs.append((u, v))
        edges = unweighted(rng, pairs)
        prompt = (
            f"{graph_intro(n, edges)}\n\nFind {self.goal.format(k=k)}. Give the vertices "
            "separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, planted)), {"n": n, "k": k, "edges": edges})

    def score(self, problem: Problem, chosen: list[int]) -> Verdict:
        d = problem.data
        if len(chosen) != d["k"]:
            return invalid(f"choose exactly {d['k']} vertices")
        g = to_graph(d)
        pairs = list(itertools.combinations(chosen, 2))
        good = sum(1 for u, v in pairs if g.has_edge(u, v) == self.want_edge)
        what = "adjacent" if self.want_edge else "non-adjacent"
        return satisfied_verdict(good, len(pairs), f"pairs are not {what}")

    def solve(self, problem: Problem) -> str:
        g = to_graph(problem.data)
        if not self.want_edge:
            g = nx.complement(g)
        k = problem.data["k"]
        for clique in nx.find_cliques(g):
            if len(clique) >= k:
                return ", ".join(map(str, sorted(clique)[:k]))
        raise RuntimeError("no set of size k")

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return ", ".join(answer.split(", ")[1:])  # one vertex short

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"] + problem.data["k"])


@ENVIRONMENTS.register("clique")
class Clique(_KSetEnv):
    """k pairwise adjacent vertices; (adjacent pairs/all)^5 credit."""

    answer_kind = "integer_set"
    tags = ("np_complete",)
    difficulty_scales = "vertices: 6 + d; clique size k = 3 + d//4 (planted); edge density 0.3"
    want_edge = True
    goal = "a clique of {k} vertices: {k} vertices every two of which are joined by an edge"


@ENVIRONMENTS.register("independent_set")
class IndependentSet(_KSetEnv):
    """k pairwise non-adjacent vertices; (non-adjacent pairs/all)^5 credit."""

    answer_kind = "integer_set"
    tags = ("np_complete",)
    difficulty_scales = "vertices: 6 + d; set size k = 3 + d//4 (planted); edge density 0.45"
    want_edge = False
    goal = "an independent set of {k} vertices: {k} vertices no two of which are joined by an edge"
