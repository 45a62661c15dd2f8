"""Graph questions with one number or yes/no for an answer: XOR-zero cycles, simple cycles,
proper colourings and clique/independent-set splits (RLVE catalogue rows CheckAllCycleXorZero,
CycleCounting, ColoringCounting, Clique_IndependentSet_Partitioning_Counting; Zeng et al.
2025, "RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable
Environments", arXiv:2511.07317, Appendix A).

Counts get RLVE's (min/max)^10, yes/no is right or wrong. The verifier computes the answer
one way (potentials, depth-first search, subset dynamic programming, bitmask enumeration)
and ``solve`` another (a cycle basis, subset DP over paths, brute-force colourings, explicit
subsets), so the two cross-check in the tests.
"""

from __future__ import annotations

import functools
import itertools
import random
from typing import Any

import networkx as nx

from verirl.envs.base import ENVIRONMENTS, Environment, Instance, graded
from verirl.envs.kit.answers import FastCount
from verirl.envs.kit.graphs import add_random_pairs, random_tree
from verirl.envs.kit.wording import plural
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict

TAGS = ("rlve", "graphs", "counting")


def _edge_lines(edges: list[list[int]]) -> str:
    return "\n".join(
        f"{e[0]} - {e[1]}" + (f" (weight {e[2]})" if len(e) > 2 else "") for e in edges
    )


def _intro(n: int, edges: list[list[int]]) -> str:
    return (
        f"You are given an undirected graph with {n} vertices labeled 0 to {n - 1} and "
        f"{plural(len(edges), 'edge')}:\n{_edge_lines(edges)}"
    )


def _random_edges(rng: random.Random, n: int, count: int, connected: bool) -> list[list[int]]:
    verts = list(range(n))
    base = random_tree(rng, verts) if connected else []
    pairs = add_random_pairs(rng, base, verts, count - len(base))
    out = [[u, v] for u, v in pairs]
    rng.shuffle(out)
    return out


class _GraphCount(FastCount):
    tags = ("rlve", "graphs")
    size_measure = "vertices + edges of the graph"

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"] + len(problem.data["edges"]))


@ENVIRONMENTS.register("check_all_cycle_xor_zero")
class CheckAllCycleXorZero(Environment):
    """Is the XOR of the edge weights zero around every cycle? (RLVE CheckAllCycleXorZero).
    Right or wrong. The verifier assigns XOR potentials from a root and checks every edge;
    ``solve`` checks each cycle of a networkx cycle basis."""

    tags = TAGS
    difficulty_scales = "vertices: 4 + d; extra edges beyond a spanning tree: 2 + d//2"
    size_measure = "vertices + edges of the graph"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        pairs = _random_edges(rng, n, n + 1 + difficulty // 2, connected=True)
        potential = [rng.randint(0, 15 + difficulty) for _ in range(n)]
        edges = [[u, v, potential[u] ^ potential[v]] for u, v in pairs]
        if rng.random() < 0.5:  # break one cycle edge (a tree edge would break no cycle)
            g = nx.Graph((u, v) for u, v, _ in edges)
            on_cycle = [i for i, (u, v, _) in enumerate(edges) if not self._is_bridge(g, u, v)]
            if on_cycle:
                i = rng.choice(on_cycle)
                edges[i][2] ^= rng.randint(1, 15 + difficulty)
        data = {"n": n, "edges": edges}
        prompt = (
            f"{_intro(n, edges)}\n\nIs it true that for every cycle of the graph, the bitwise "
            "XOR of the weights of its edges is 0? Answer Yes or No."
        )
        return Instance(prompt, "Yes" if self._fast(data) else "No", data)

    @staticmethod
    def _is_bridge(g: nx.Graph, u: int, v: int) -> bool:
        g.remove_edge(u, v)
        cut = not nx.has_path(g, u, v)
        g.add_edge(u, v)
        return cut

    @staticmethod
    def _fast(data: dict[str, Any]) -> bool:
        n = data["n"]
        adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for u, v, w in data["edges"]:
            adj[u].append((v, w))
            adj[v].append((u, w))
        pot: list[int | None] = [None] * n
        for root in range(n):
            if pot[root] is not None:
                continue
            pot[root], stack = 0, [root]
            while stack:
                u = stack.pop()
                for v, w in adj[u]:
                    if pot[v] is None:
                        pot[v] = pot[u] ^ w  # type: ignore[operator]
                        stack.append(v)
        return all(pot[u] ^ pot[v] == w for u, v, w in data["edges"])

    def check(self, problem: Problem, answer: str) -> Verdict:
        word = normalize.clean(answer).strip().lower()
        if word not in ("yes", "no", "true", "false"):
            raise ValueError("answer Yes or No")
        ok = (word in ("yes", "true")) == self._fast(dict(problem.data))
        return graded(0.0, ok, "correct" if ok else "that is not right")

    def solve(self, problem: Problem) -> str:
        weight = {frozenset((u, v)): w for u, v, w in problem.data["edges"]}
        g = nx.Graph((u, v) for u, v, _ in problem.data["edges"])
        for cycle in nx.cycle_basis(g):
            x = 0
            for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True):
                x ^= weight[frozenset((a, b))]
            if x:
                return "No"
        return "Yes"

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return "No" if answer == "Yes" else "Yes"

    def surface_forms(self, problem: Problem) -> list[str]:
        s = self.solve(problem)
        return [s, s.lower(), s.upper(), f"\\text{{{s}}}", f"{s}."]

    def near_misses(self, problem: Problem) -> list[str]:
        other = self.corrupt(problem, self.solve(problem), random.Random(0))
        return [other, "Yes or No", "maybe"]

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"] + len(problem.data["edges"]))


@ENVIRONMENTS.register("cycle_counting")
class CycleCounting(_GraphCount):
    """Simple cycles (length ≥ 3) of an undirected graph (RLVE CycleCounting). Verifier:
    depth-first search from each cycle's smallest vertex (each cycle found in both
    directions); ``solve``: subset DP over paths from the smallest vertex."""

    difficulty_scales = "vertices: 4 + d//3; edges: n + 1 + d//4"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty // 3
        edges = _random_edges(rng, n, n + 1 + difficulty // 4, connected=rng.random() < 0.7)
        prompt = (
            f"{_intro(n, edges)}\n\nHow many simple cycles does the graph have? A simple cycle "
            "visits at least 3 distinct vertices and returns to its start without repeating a "
            "vertex or an edge; cycles that differ only in starting point or direction are the "
            "same cycle."
        )
        return self.instance(prompt, {"n": n, "edges": edges})

    def count(self, data: dict[str, Any]) -> int:
        n = data["n"]
        adj: list[list[int]] = [[] for _ in range(n)]
        for u, v in data["edges"]:
            adj[u].append(v)
            adj[v].append(u)
        found = 0
        for start in range(n):
            stack = [(start, 1 << start, 1)]
            while stack:
                u, seen, length = stack.pop()
                for v in adj[u]:
                    if v == start and length >= 3:
                        found += 1
                    elif v > start and not seen >> v & 1:
                        stack.append((v, seen | 1 << v, length + 1))
        return found // 2

    def solve_int(self, problem: Problem) -> int:
        n = problem.data["n"]
        nbr = [0] * n
        for u, v in problem.data["edges"]:
            nbr[u] |= 1 << v
            nbr[v] |= 1 << u
        paths: dict[tuple[int, int], int] = {(1 << s, s): 1 for s in range(n)}
        total = 0
        for mask in range(1, 1 << n):
            low = (mask & -mask).bit_length() - 1
            for v in range(n):
                ways = paths.get((mask, v), 0)
                if not ways:
                    continue
                if mask.bit_count() >= 3 and nbr[v] >> low & 1:
                    total += ways
                for w in range(low + 1, n):
                    if nbr[v] >> w & 1 and not mask >> w & 1:
                        key = (mask | 1 << w, w)
                        paths[key] = paths.get(key, 0) + ways
        return total // 2


@ENVIRONMENTS.register("coloring_counting")
class ColoringCounting(_GraphCount):
    """Proper colourings with K labeled colours (RLVE ColoringCounting). Verifier: number of
    partitions into k independent sets (subset DP) times K(K−1)…(K−k+1); ``solve``: all K^n
    assignments."""

    difficulty_scales = "vertices: 4 + d//5 (at most 10); edges about 1.3 per vertex; K in 2..4"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(10, 4 + difficulty // 5)
        edges = _random_edges(rng, n, n + n // 3 + rng.randint(0, 2), connected=False)
        k = rng.randint(2, 4)
        prompt = (
            f"{_intro(n, edges)}\n\nHow many ways are there to colour the vertices with the "
            f"{k} colours 1 to {k} (not every colour has to be used) so that the two ends of "
            "every edge get different colours?"
        )
        return self.instance(prompt, {"n": n, "edges": edges, "k": k})

    def count(self, data: dict[str, Any]) -> int:
        n, k = data["n"], data["k"]
        nbr = [0] * n
        for u, v in data["edges"]:
            nbr[u] |= 1 << v
            nbr[v] |= 1 << u
        independent = [all(not (nbr[v] & s) for v in range(n) if s >> v & 1) for s in range(1 << n)]

        @functools.cache
        def partitions(s: int, parts: int) -> int:  # s split into exactly `parts` indep. sets
            if s == 0:
                return 1 if parts == 0 else 0
            if parts == 0:
                return 0
            low = s & -s
            rest, total, sub = s ^ low, 0, s ^ low
            while True:  # blocks containing the lowest vertex: low | subset of rest
                if independent[sub | low]:
                    total += partitions(rest ^ sub, parts - 1)
                if sub == 0:
                    break
                sub = (sub - 1) & rest
            return total

        full = (1 << n) - 1
        return sum(
            partitions(full, parts) * _falling(k, parts) for parts in range(1, min(n, k) + 1)
        )

    def solve_int(self, problem: Problem) -> int:
        n, k, edges = problem.data["n"], problem.data["k"], problem.data["edges"]
        return sum(
            1
            for colours in itertools.product(range(k), repeat=n)
            if all(colours[u] != colours[v] for u, v in edges)
        )


def _falling(k: int, parts: int) -> int:
    out = 1
    for i in range(parts):
        out *= k - i
    return out


@ENVIRONMENTS.register("clique_independent_set_partitioning_counting")
class CliqueIndependentSetPartitioningCounting(_GraphCount):
    """Ways to split the vertices into a clique C and an independent set I (either may be
    empty) (RLVE Clique_IndependentSet_Partitioning_Counting). Verifier: bitmask test of every
    subset as C; ``solve``: explicit pair checks over every subset."""

    difficulty_scales = "vertices: 4 + d//4 (a split graph plus noise)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty // 4
        side = [rng.random() < 0.5 for _ in range(n)]  # True: planted clique side
        pairs = set()
        for u, v in itertools.combinations(range(n), 2):
            if (side[u] and side[v]) or (side[u] != side[v] and rng.random() < 0.5):
                pairs.add((u, v))
        if rng.random() < 0.3:  # noise: the planted split may break
            u, v = rng.sample(range(n), 2)
            pairs ^= {(min(u, v), max(u, v))}
        edges = [[u, v] for u, v in sorted(pairs)]
        rng.shuffle(edges)
        prompt = (
            f"{_intro(n, edges)}\n\nIn how many ways can the vertex set be split into two "
            "parts C and I (every vertex in exactly one; either part may be empty) such that "
            "every two vertices of C are joined by an edge and no two vertices of I are?"
        )
        return self.instance(prompt, {"n": n, "edges": edges})

    def count(self, data: dict[str, Any]) -> int:
        n = data["n"]
        nbr = [0] * n
        for u, v in data["edges"]:
            nbr[u] |= 1 << v
            nbr[v] |= 1 << u
        full, total = (1 << n) - 1, 0
        for c in range(1 << n):
            i = full ^ c
            if all((nbr[v] | 1 << v) & c == c if c >> v & 1 else not nbr[v] & i for v in range(n)):
                total += 1
        return total

    def solve_int(self, problem: Problem) -> int:
        n = problem.data["n"]
        edges = {frozenset(e) for e in problem.data["edges"]}
        found = 0
        for size in range(n + 1):
            for clique in itertools.combinations(range(n), size):
                rest = [v for v in range(n) if v not in clique]
                if all(
                    frozenset(p) in edges for p in itertools.combinations(clique, 2)
                ) and not any(frozenset(p) in edges for p in itertools.combinations(rest, 2)):
                    found += 1
        return found


@ENVIRONMENTS.register("graph_contain_tree_counting")
class GraphContainTreeCounting(_GraphCount):
    """Bijections p from the vertices of a tree T to those of a graph G that send every tree
    edge to a graph edge (RLVE GraphContainTreeCounting, ZJOI "little stars"). Verifier:
    inclusion–exclusion over image sets S with a tree DP counting maps into S; ``solve``: all
    permutations."""

    difficulty_scales = "N = 4 + d//4 vertices (at most 10); G has N − 1 + N//2 + d//3 edges"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(10, 4 + difficulty // 4)
        tree = [[u, v] for u, v in random_tree(rng, list(range(n)))]
        edges = _random_edges(rng, n, n - 1 + n // 2 + difficulty // 3, connected=True)
        tree_lines = "\n".join(f"{u} - {v}" for u, v in tree)
        prompt = (
            f"{_intro(n, edges)}\n\nYou are also given a tree T on the same {n} vertex labels "
            f"with these edges:\n{tree_lines}\n\nHow many bijections p from {{0, ..., {n - 1}}} "
            "to itself are there such that for every edge (u, v) of T, (p(u), p(v)) is an edge "
            "of the graph?"
        )
        return self.instance(prompt, {"n": n, "edges": edges, "tree": tree})

    def count(self, data: dict[str, Any]) -> int:
        n = data["n"]
        adj = [[False] * n for _ in range(n)]
        for u, v in data["edges"]:
            adj[u][v] = adj[v][u] = True
        children: list[list[int]] = [[] for _ in range(n)]
        order, parent, stack = [], [-1] * n, [0]
        tree_adj: list[list[int]] = [[] for _ in range(n)]
        for u, v in data["tree"]:
            tree_adj[u].append(v)
            tree_adj[v].append(u)
        seen = {0}
        while stack:  # root the tree at 0; children before parents in `order` reversed
            u = stack.pop()
            order.append(u)
            for w in tree_adj[u]:
                if w not in seen:
                    seen.add(w)
                    parent[w] = u
                    children[u].append(w)
                    stack.append(w)
        total = 0
        for s in range(1, 1 << n):
            image = [x for x in range(n) if s >> x & 1]
            ways: list[dict[int, int]] = [{} for _ in range(n)]
            for v in reversed(order):
                for x in image:
                    w = 1
                    for c in children[v]:
                        w *= sum(ways[c][y] for y in image if adj[x][y])
                        if not w:
                            break
                    ways[v][x] = w
            maps = sum(ways[0].values())
            total += maps if (n - len(image)) % 2 == 0 else -maps
        return total

    def solve_int(self, problem: Problem) -> int:
        n = problem.data["n"]
        edges = {frozenset(e) for e in problem.data["edges"]}
        return sum(
            1
            for p in itertools.permutations(range(n))
            if all(frozenset((p[u], p[v])) in edges for u, v in problem.data["tree"])
        )
