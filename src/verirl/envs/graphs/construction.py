"""Graph constructions: bridges, parity partitions, cliques, constrained spanning trees,
isomorphisms and directed Hamiltonian paths (RLVE catalogue rows, Zeng et al. 2025, "RLVE:
Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A).

Verifiers check the answer against the graph (solve–verify asymmetry), so every valid
construction earns full reward, not only the planted one. A parsed answer of the wrong shape
(an edge that is not in the graph, a repeated vertex, a list of the wrong length, a set of
edges that is not a spanning tree) is RLVE's invalid −0.5; partial credit follows each row.
"""

from __future__ import annotations

import itertools
import random
import re
from typing import Any

import networkx as nx
from networkx.algorithms import isomorphism

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
from verirl.envs.kit.graphs import add_random_pairs, parse_pairs, random_tree
from verirl.envs.kit.wording import plural
from verirl.types import Problem, Verdict

TAGS = ("rlve", "graphs")
MAX_ITEMS = 10_000  # answers longer than this are rejected before any graph work


def _edge_text(edges: list[list[int]], arrow: str = "-") -> str:
    return "\n".join(
        f"{e[0]} {arrow} {e[1]}" + (f" (weight {e[2]})" if len(e) > 2 else "") for e in edges
    )


def _shuffled_pairs(rng: random.Random, pairs: list[tuple[int, int]]) -> list[list[int]]:
    out = [[u, v] if rng.random() < 0.5 else [v, u] for u, v in pairs]
    rng.shuffle(out)
    return out


_ARROWS = re.compile(r"->|→|\\to\b|\\rightarrow")


def _read_order(text: str) -> list[int]:
    """A vertex sequence: ``0, 3, 5`` / ``[0 3 5]`` / ``0 -> 3 -> 5`` / ``0 \\to 3``."""
    return parse_int_list(_ARROWS.sub(",", text))


def _satisfied(good: int, total: int, unmet: str, beta: float) -> Verdict:
    """RLVE's (satisfied/all)^β with a row-specific β (``satisfied_verdict`` fixes β = 5)."""
    ok = good == total
    return graded(
        satisfied_reward(good, total, beta), ok, "correct" if ok else f"{total - good} {unmet}"
    )


def _edge_set(edges: list[list[int]]) -> set[frozenset[int]]:
    return {frozenset((e[0], e[1])) for e in edges}


def _read_edges(answer: str, n: int, allowed: set[frozenset[int]]) -> list[frozenset[int]] | str:
    """The answer's edges, or the reason it is invalid (unknown vertex, not an edge, repeated)."""
    pairs = parse_pairs(answer) if answer.strip() else []
    if len(pairs) > MAX_ITEMS:
        return "too many edges"
    seen: list[frozenset[int]] = []
    for u, v in pairs:
        e = frozenset((u, v))
        if e not in allowed:
            return f"({u}, {v}) is not an edge of the graph"
        if e in seen:
            return f"the edge ({u}, {v}) is listed twice"
        seen.append(e)
    return seen


def _is_spanning_tree(n: int, edges: list[frozenset[int]]) -> bool:
    if len(edges) != n - 1:
        return False
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for e in edges:
        u, v = tuple(e)
        ru, rv = find(u), find(v)
        if ru == rv:
            return False
        parent[ru] = rv
    return True


class _GraphConstruction(Environment):
    tags = TAGS
    size_measure = "vertices + edges of the graph"

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"] + len(problem.data["edges"]))


def _connected_pairs(rng: random.Random, n: int, extra: int) -> list[tuple[int, int]]:
    verts = list(range(n))
    return add_random_pairs(rng, random_tree(rng, verts), verts, extra)


@ENVIRONMENTS.register("bridge")
class Bridge(_GraphConstruction):
    """All bridges of an undirected graph (RLVE Bridge). Reward: (|found ∩ bridges| /
    |found ∪ bridges|)^5, so listing extra edges costs credit; correct only for the exact set.
    The verifier uses networkx's bridge finder; ``solve`` deletes each edge and searches."""

    difficulty_scales = "vertices: 5 + d; extra edges beyond a spanning tree: 1 + d//2"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + difficulty
        while True:
            edges = _shuffled_pairs(rng, _connected_pairs(rng, n, 1 + difficulty // 2))
            data = {"n": n, "edges": edges}
            if self._bridges(data):
                break
        prompt = (
            f"You are given an undirected graph with {n} vertices labeled 0 to {n - 1} and these "
            f"{len(edges)} edges:\n{_edge_text(edges)}\n\nA bridge is an edge whose removal "
            "increases the number of connected components. List all the bridges of the graph "
            "as pairs (u, v), separated by commas, in any order."
        )
        return Instance(prompt, self._render(self._bridges(data)), data)

    @staticmethod
    def _bridges(data: dict[str, Any]) -> set[frozenset[int]]:
        g = nx.Graph()
        g.add_nodes_from(range(data["n"]))
        g.add_edges_from((e[0], e[1]) for e in data["edges"])
        return {frozenset(e) for e in nx.bridges(g)}

    @staticmethod
    def _render(edges: set[frozenset[int]]) -> str:
        return ", ".join(f"({min(e)}, {max(e)})" for e in sorted(edges, key=sorted))

    def check(self, problem: Problem, answer: str) -> Verdict:
        data = dict(problem.data)
        found = _read_edges(answer, data["n"], _edge_set(data["edges"]))
        if isinstance(found, str):
            return invalid(found)
        gold, got = self._bridges(data), set(found)
        ok = got == gold
        iou = len(got & gold) / len(got | gold) if got | gold else 1.0
        return graded(iou**5, ok, "correct" if ok else "the set of bridges is not right")

    def solve(self, problem: Problem) -> str:
        n, edges = problem.data["n"], [tuple(e) for e in problem.data["edges"]]

        def components(kept: list[tuple[int, int]]) -> int:
            adj: dict[int, list[int]] = {v: [] for v in range(n)}
            for u, v in kept:
                adj[u].append(v)
                adj[v].append(u)
            seen, parts = set(), 0
            for s in range(n):
                if s in seen:
                    continue
                parts += 1
                stack = [s]
                seen.add(s)
                while stack:
                    for w in adj[stack.pop()]:
                        if w not in seen:
                            seen.add(w)
                            stack.append(w)
            return parts

        base = components(edges)
        return self._render(
            {
                frozenset(e)
                for i, e in enumerate(edges)
                if components(edges[:i] + edges[i + 1 :]) > base
            }
        )

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        parts = answer.split(", (")
        return "(" + ", (".join(parts[1:]) if len(parts) > 1 else ""

    def surface_forms(self, problem: Problem) -> list[str]:
        gold = sorted(self._bridges(dict(problem.data)), key=sorted)
        plain = self.solve(problem)
        flipped = ", ".join(f"({max(e)}, {min(e)})" for e in reversed(gold))
        dashes = ", ".join(f"{min(e)}-{max(e)}" for e in gold)
        return [plain, flipped, dashes, f"[{plain}]"]


@ENVIRONMENTS.register("even_degree_graph_partitioning")
class EvenDegreeGraphPartitioning(_GraphConstruction):
    """Split the vertices into two groups so that every vertex has an even number of
    neighbours in its own group (RLVE EvenDegreeGraphPartitioning; always possible, Gallai).
    Reward: (vertices satisfied / all)^10. ``solve`` solves the GF(2) system
    Σ_{u ∈ N(v)} x_u + deg(v)·x_v ≡ deg(v)."""

    difficulty_scales = "vertices: 5 + d; edges about 1.5 per vertex"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + difficulty
        verts = list(range(n))
        edges = _shuffled_pairs(rng, add_random_pairs(rng, [], verts, n + n // 2))
        data = {"n": n, "edges": edges}
        prompt = (
            f"You are given an undirected graph with {n} vertices labeled 0 to {n - 1} and these "
            f"{len(edges)} edges:\n{_edge_text(edges)}\n\nPut every vertex into group 1 or group "
            "2 (a group may be empty) so that every vertex has an even number (possibly 0) of "
            "neighbours in its own group. Give the groups of vertices 0, 1, ..., "
            f"{n - 1} in this order, separated by commas (e.g. 1, 2, 2, ...)."
        )
        return Instance(prompt, self.solve_data(data), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n = problem.data["n"]
        groups = parse_int_list(answer)
        if len(groups) != n or any(g not in (1, 2) for g in groups):
            return invalid(f"give exactly {n} groups, each 1 or 2")
        same = [0] * n
        for u, v in problem.data["edges"]:
            if groups[u] == groups[v]:
                same[u] += 1
                same[v] += 1
        good = sum(1 for c in same if c % 2 == 0)
        return _satisfied(good, n, "vertices have an odd number of neighbours in their group", 10)

    def solve(self, problem: Problem) -> str:
        return self.solve_data(dict(problem.data))

    @staticmethod
    def solve_data(data: dict[str, Any]) -> str:
        n = data["n"]
        rows = [0] * n  # bit n holds the right-hand side
        deg = [0] * n
        for u, v in data["edges"]:
            rows[u] ^= 1 << v
            rows[v] ^= 1 << u
            deg[u] += 1
            deg[v] += 1
        for v in range(n):
            if deg[v] % 2:
                rows[v] ^= (1 << v) | (1 << n)
        pivots: list[tuple[int, int]] = []
        for col in range(n):
            pick = next((r for r in range(len(pivots), n) if rows[r] >> col & 1), None)
            if pick is None:
                continue
            top = len(pivots)
            rows[top], rows[pick] = rows[pick], rows[top]
            for r in range(n):
                if r != top and rows[r] >> col & 1:
                    rows[r] ^= rows[top]
            pivots.append((top, col))
        x = [0] * n  # free variables 0
        for r, col in pivots:
            x[col] = rows[r] >> n & 1
        return ", ".join(str(1 + b) for b in x)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        groups = parse_int_list(answer)
        for v in range(len(groups)):  # flip one vertex until some parity breaks
            flipped = [*groups[:v], 3 - groups[v], *groups[v + 1 :]]
            text = ", ".join(map(str, flipped))
            if not self.check(problem, text).correct:
                return text
        return ", ".join(map(str, groups[:-1]))


@ENVIRONMENTS.register("imp_party")
class ImpParty(_GraphConstruction):
    """A graph on 3N vertices contains a clique of 2N vertices; find a clique of N (RLVE
    ImpParty, POI). Reward: (pairs that are edges / all pairs)^5. ``solve`` is the classic
    greedy: delete both ends of any non-edge; at most N pairs go, the rest is a clique."""

    difficulty_scales = "N = 2 + d//3 (3N vertices, planted 2N-clique); other edges density 0.3"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        k = 2 + difficulty // 3
        n = 3 * k
        clique = rng.sample(range(n), 2 * k)
        pairs = list(itertools.combinations(sorted(clique), 2))
        inside = set(clique)
        for u, v in itertools.combinations(range(n), 2):
            if (u not in inside or v not in inside) and rng.random() < 0.3:
                pairs.append((u, v))
        edges = _shuffled_pairs(rng, pairs)
        data = {"n": n, "k": k, "edges": edges}
        prompt = (
            f"You are given an undirected graph with {n} vertices labeled 0 to {n - 1} and these "
            f"{len(edges)} edges:\n{_edge_text(edges)}\n\nThe graph is known to contain a clique "
            f"of {2 * k} vertices (every two of them joined by an edge). Find a clique of exactly "
            f"{k} vertices and list them, separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, sorted(clique[:k]))), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, k = problem.data["n"], problem.data["k"]
        chosen = parse_int_list(answer)
        if len(chosen) != k or len(set(chosen)) != k or any(not 0 <= v < n for v in chosen):
            return invalid(f"give {k} distinct vertices between 0 and {n - 1}")
        edges = _edge_set(problem.data["edges"])
        pairs = list(itertools.combinations(chosen, 2))
        good = sum(1 for u, v in pairs if frozenset((u, v)) in edges)
        return satisfied_verdict(good, len(pairs), "pairs are not joined by an edge")

    def solve(self, problem: Problem) -> str:
        n, k = problem.data["n"], problem.data["k"]
        edges = _edge_set(problem.data["edges"])
        alive = list(range(n))
        changed = True
        while changed:
            changed = False
            for u, v in itertools.combinations(alive, 2):
                if frozenset((u, v)) not in edges:
                    alive = [w for w in alive if w not in (u, v)]
                    changed = True
                    break
        return ", ".join(map(str, alive[:k]))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        chosen = parse_int_list(answer)
        edges = _edge_set(problem.data["edges"])
        for v in range(problem.data["n"]):  # swap in a vertex missing an edge to the rest
            if v not in chosen and any(frozenset((v, u)) not in edges for u in chosen[1:]):
                return ", ".join(map(str, [v, *chosen[1:]]))
        return ", ".join(map(str, chosen[1:]))


@ENVIRONMENTS.register("degree_fixed_spanning_tree")
class DegreeFixedSpanningTree(_GraphConstruction):
    """A spanning tree in which every vertex has a prescribed degree (RLVE
    DegreeFixed_SpanningTree). Not a spanning tree of the graph → invalid; else reward
    (vertices with the right degree / all)^5. ``solve`` backtracks over the edges."""

    difficulty_scales = "vertices: 4 + d//2 (planted tree); extra edges: 1 + n//2 + d//4"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty // 2
        verts = list(range(n))
        tree = random_tree(rng, verts)
        degree = [0] * n
        for u, v in tree:
            degree[u] += 1
            degree[v] += 1
        edges = _shuffled_pairs(
            rng, add_random_pairs(rng, tree, verts, 1 + n // 2 + difficulty // 4)
        )
        data = {"n": n, "edges": edges, "degree": degree}
        wanted = "\n".join(f"vertex {v}: degree {d}" for v, d in enumerate(degree))
        prompt = (
            f"You are given an undirected graph with {n} vertices labeled 0 to {n - 1} and these "
            f"{len(edges)} edges:\n{_edge_text(edges)}\n\nSelect {n - 1} of these edges that form "
            "a spanning tree (connected, no cycle, every vertex included) in which each vertex "
            f"has exactly the following degree:\n{wanted}\n\nList the selected edges as pairs "
            "(u, v), separated by commas."
        )
        answer = ", ".join(f"({u}, {v})" for u, v in tree)
        return Instance(prompt, answer, data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n = problem.data["n"]
        chosen = _read_edges(answer, n, _edge_set(problem.data["edges"]))
        if isinstance(chosen, str):
            return invalid(chosen)
        if not _is_spanning_tree(n, chosen):
            return invalid(f"the edges must form a spanning tree ({n - 1} edges, no cycle)")
        degree = [0] * n
        for e in chosen:
            for v in e:
                degree[v] += 1
        good = sum(1 for a, b in zip(degree, problem.data["degree"], strict=True) if a == b)
        return satisfied_verdict(good, n, "vertices have the wrong degree")

    def solve(self, problem: Problem) -> str:
        n, want = problem.data["n"], problem.data["degree"]
        edges = [tuple(e) for e in problem.data["edges"]]
        degree = [0] * n
        chosen: list[tuple[int, int]] = []

        def search(i: int) -> bool:
            if len(chosen) == n - 1:
                return degree == want and _is_spanning_tree(n, [frozenset(e) for e in chosen])
            if i == len(edges) or len(edges) - i < n - 1 - len(chosen):
                return False
            u, v = edges[i]
            if degree[u] < want[u] and degree[v] < want[v]:
                chosen.append((u, v))
                degree[u] += 1
                degree[v] += 1
                if _is_forest(n, chosen) and search(i + 1):
                    return True
                chosen.pop()
                degree[u] -= 1
                degree[v] -= 1
            return search(i + 1)

        search(0)
        return ", ".join(f"({u}, {v})" for u, v in chosen)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rsplit(", (", 1)[0]  # one edge short: not a spanning tree


def _is_forest(n: int, pairs: list[tuple[int, int]]) -> bool:
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    for u, v in pairs:
        ru, rv = find(u), find(v)
        if ru == rv:
            return False
        parent[ru] = rv
    return True


@ENVIRONMENTS.register("fixed_one_edge_num_spanning_tree")
class FixedOneEdgeNumSpanningTree(_GraphConstruction):
    """A spanning tree with exactly K edges of weight 1 in a graph with weights 0 and 1 (RLVE
    FixedOneEdgeNum_SpanningTree); right or wrong, not a spanning tree → invalid. ``solve``:
    the weight-1 edges forced by the weight-0 forest, then more weight-1 edges up to K, then
    weight-0 edges (exchange property of matroids)."""

    difficulty_scales = "vertices: 4 + d; extra edges beyond a spanning tree: 2 + d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        pairs = _connected_pairs(rng, n, 2 + difficulty)
        edges = [[u, v, rng.randint(0, 1)] for u, v in _shuffled_pairs(rng, pairs)]
        lo, hi = self._count_range(n, edges)
        k = rng.randint(lo, hi)
        data = {"n": n, "edges": edges, "k": k}
        prompt = (
            f"You are given an undirected graph with {n} vertices labeled 0 to {n - 1}; each edge "
            f"has weight 0 or 1:\n{_edge_text(edges)}\n\nFind a spanning tree of the graph "
            f"({n - 1} of its edges, connected, no cycle) that uses exactly "
            f"{plural(k, 'edge')} of weight 1. "
            "List its edges as pairs (u, v), separated by commas."
        )
        return Instance(prompt, self._tree(n, edges, k), data)

    @staticmethod
    def _kruskal(
        n: int, order: list[list[int]], start: list[list[int]] | None = None
    ) -> list[list[int]]:
        parent = list(range(n))

        def find(x: int) -> int:
            while parent[x] != x:
                x = parent[x]
            return x

        out = []
        for e in [*(start or []), *order]:
            ru, rv = find(e[0]), find(e[1])
            if ru != rv:
                parent[ru] = rv
                out.append(e)
        return out

    def _count_range(self, n: int, edges: list[list[int]]) -> tuple[int, int]:
        zeros_first = sorted(edges, key=lambda e: e[2])
        ones_first = sorted(edges, key=lambda e: -e[2])
        return (
            sum(e[2] for e in self._kruskal(n, zeros_first)),
            sum(e[2] for e in self._kruskal(n, ones_first)),
        )

    def _tree(self, n: int, edges: list[list[int]], k: int) -> str:
        forced = [e for e in self._kruskal(n, sorted(edges, key=lambda e: e[2])) if e[2] == 1]
        ones = self._kruskal(n, [e for e in edges if e[2] == 1], forced)[:k]
        tree = self._kruskal(n, [e for e in edges if e[2] == 0], ones)
        return ", ".join(f"({e[0]}, {e[1]})" for e in tree)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, k = problem.data["n"], problem.data["k"]
        weight = {frozenset((e[0], e[1])): e[2] for e in problem.data["edges"]}
        chosen = _read_edges(answer, n, set(weight))
        if isinstance(chosen, str):
            return invalid(chosen)
        if not _is_spanning_tree(n, chosen):
            return invalid(f"the edges must form a spanning tree ({n - 1} edges, no cycle)")
        ones = sum(weight[e] for e in chosen)
        ok = ones == k
        return graded(
            0.0, ok, "correct" if ok else "the tree has the wrong number of weight-1 edges"
        )

    def solve(self, problem: Problem) -> str:
        d = problem.data
        return self._tree(d["n"], [list(e) for e in d["edges"]], d["k"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rsplit(", (", 1)[0]


@ENVIRONMENTS.register("graph_isomorphism")
class GraphIsomorphism(_GraphConstruction):
    """A bijection between two isomorphic graphs (RLVE GraphIsomorphism). Not a permutation →
    invalid; else reward (edges of G1 mapped onto edges of G2 / all)^10. ``solve``: VF2
    (networkx)."""

    difficulty_scales = "vertices: 4 + d//2; edges about 1.5 per vertex"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty // 2
        pairs = _connected_pairs(rng, n, n // 2 + difficulty // 4)
        perm = list(range(n))
        rng.shuffle(perm)
        g1 = _shuffled_pairs(rng, pairs)
        g2 = _shuffled_pairs(rng, [(perm[u], perm[v]) for u, v in pairs])
        data = {"n": n, "edges": g1, "edges2": g2}
        prompt = (
            f"You are given two undirected graphs G1 and G2, each with {n} vertices labeled 0 to "
            f"{n - 1}.\nEdges of G1:\n{_edge_text(g1)}\nEdges of G2:\n{_edge_text(g2)}\n\nThe "
            "graphs are isomorphic. Find a bijection p from the vertices of G1 to the vertices "
            "of G2 such that (u, v) is an edge of G1 exactly when (p(u), p(v)) is an edge of G2. "
            f"Give p(0), p(1), ..., p({n - 1}) in this order, separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, perm)), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n = problem.data["n"]
        p = parse_int_list(answer)
        if sorted(p) != list(range(n)):
            return invalid(f"p must list each of 0..{n - 1} exactly once")
        target = _edge_set(problem.data["edges2"])
        good = sum(1 for u, v in problem.data["edges"] if frozenset((p[u], p[v])) in target)
        return _satisfied(
            good, len(problem.data["edges"]), "edges of G1 are not mapped to edges of G2", 10
        )

    def solve(self, problem: Problem) -> str:
        g1, g2 = nx.Graph(), nx.Graph()
        g1.add_nodes_from(range(problem.data["n"]))
        g2.add_nodes_from(range(problem.data["n"]))
        g1.add_edges_from(map(tuple, problem.data["edges"]))
        g2.add_edges_from(map(tuple, problem.data["edges2"]))
        mapping = next(isomorphism.GraphMatcher(g1, g2).isomorphisms_iter())
        return ", ".join(str(mapping[v]) for v in range(problem.data["n"]))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        p = parse_int_list(answer)
        for i, j in itertools.combinations(range(len(p)), 2):
            q = list(p)
            q[i], q[j] = q[j], q[i]
            if not self.check(problem, ", ".join(map(str, q))).correct:
                return ", ".join(map(str, q))
        return ", ".join(map(str, p[:-1]))


@ENVIRONMENTS.register("hamiltonian_path_existence")
class HamiltonianPathExistence(_GraphConstruction):
    """A Hamiltonian path in a directed graph that has one (RLVE HamiltonianPathExistence). Not
    a permutation → invalid; else reward (consecutive pairs that are arcs / (n − 1))^5.
    ``solve``: dynamic programming over subsets."""

    difficulty_scales = "vertices: 4 + d//2 (planted path); extra arcs: n + d//2"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty // 2
        path = list(range(n))
        rng.shuffle(path)
        arcs = add_random_pairs(
            rng, list(itertools.pairwise(path)), list(range(n)), n + difficulty // 2, directed=True
        )
        edges = [list(a) for a in arcs]
        rng.shuffle(edges)
        data = {"n": n, "edges": edges}
        prompt = (
            f"You are given a directed graph with {n} vertices labeled 0 to {n - 1} and these "
            f"{len(edges)} arcs (u -> v goes from u to v):\n{_edge_text(edges, '->')}\n\nFind a "
            "path that visits every vertex exactly once, following arcs in their direction. "
            "Give the vertices in path order, separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, path)), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n = problem.data["n"]
        order = _read_order(answer)
        if sorted(order) != list(range(n)):
            return invalid(f"the path must list each of the {n} vertices exactly once")
        arcs = {(u, v) for u, v in problem.data["edges"]}
        good = sum(1 for step in itertools.pairwise(order) if step in arcs)
        return satisfied_verdict(good, n - 1, "consecutive pairs are not arcs")

    def solve(self, problem: Problem) -> str:
        n = problem.data["n"]
        succ: list[list[int]] = [[] for _ in range(n)]
        for u, v in problem.data["edges"]:
            succ[u].append(v)
        # reach[mask][v]: a path covering mask ends at v (with the previous vertex stored)
        prev: dict[tuple[int, int], int] = {(1 << v, v): -1 for v in range(n)}
        for mask in range(1, 1 << n):
            for v in range(n):
                if (mask, v) not in prev:
                    continue
                for w in succ[v]:
                    key = (mask | 1 << w, w)
                    if not mask >> w & 1 and key not in prev:
                        prev[key] = v
        full = (1 << n) - 1
        end = next(v for v in range(n) if (full, v) in prev)
        order, mask = [], full
        while end != -1:
            order.append(end)
            end, mask = prev[(mask, end)], mask & ~(1 << end)
        return ", ".join(map(str, reversed(order)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        order = parse_int_list(answer)
        for i in range(len(order) - 1):
            q = list(order)
            q[i], q[i + 1] = q[i + 1], q[i]
            if not self.check(problem, ", ".join(map(str, q))).correct:
                return ", ".join(map(str, q))
        return ", ".join(map(str, order[1:]))
