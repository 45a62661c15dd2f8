"""Graph optimisation, part 2: covers, counts and orientations — a minimum path cover of a
DAG, the number of minimum spanning trees, an Eulerian orientation of a mixed graph, a minimum
dominating set, a minimum bisection and a minimum colouring.

Rows MinPathCover_DAG, MinimumSpanningTreeCounting, MixedGraphEulerianCircuit,
Minimum_DominatingSet, Minimum_CrossingEdges_GraphPartition and MinimumChromaticNumber of the
RLVE catalogue (Zeng et al., *RLVE: Scaling Up Reinforcement Learning for Language Models with
Adaptive Verifiable Environments*, arXiv:2511.07317). Verifiers check the answer on the graph
and grade against the optimum: (gold/answer)^5 for the minimisations, (balanced vertices/all)^10
for the orientation, exact for the count. Optima come from matching theory, the matrix-tree
theorem, exhaustive search over small vertex sets, or a planted clique and colouring.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import networkx as nx

from verirl.envs.base import (
    ENVIRONMENTS,
    Instance,
    graded,
    invalid,
    optimum_verdict,
    parse_int,
    parse_int_list,
    ratio_reward,
    satisfied_reward,
)
from verirl.envs.graphs.paths_spanning import GraphEnv
from verirl.envs.kit.graphs import (
    add_random_pairs,
    edge_lines,
    parse_vertices,
    random_tree,
    unknown_vertex,
    unweighted,
)
from verirl.envs.kit.linear_algebra import bareiss_determinant as _determinant
from verirl.envs.kit.size_ladder import grown
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict

TAGS = ("rlve", "graphs")


class _GraphOpt(GraphEnv):
    tags = TAGS
    size_measure = "vertices plus edges"


def _plain_edges(edges: list[list[int]], directed: bool = False) -> str:
    return edge_lines(edges, False, directed)


# ---- minimum path cover of a DAG ---------------------------------------------------------
@ENVIRONMENTS.register("min_path_cover_dag")
class MinPathCoverDag(_GraphOpt):
    """Fewest vertex-disjoint directed paths covering every vertex of a DAG; (gold/paths)^5,
    a set of paths that misses or repeats a vertex or leaves the arcs is invalid."""

    difficulty_scales = "N = 4 + d vertices (labelled 1..N); about 1.3N arcs"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        order = rng.sample(range(1, n + 1), n)
        pairs: set[tuple[int, int]] = set()
        while len(pairs) < min(n * (n - 1) // 2, int(1.3 * n)):
            i, j = sorted(rng.sample(range(n), 2))
            pairs.add((order[i], order[j]))
        edges = unweighted(rng, sorted(pairs))
        prompt = (
            f"You are given a directed acyclic graph (DAG) with {n} vertices labeled from 1 to "
            f"{n} and these arcs:\n{_plain_edges(edges, True)}\n\nCover all vertices with as "
            "few directed paths as possible: every vertex must lie on exactly one path, and "
            "consecutive vertices of a path must be joined by an arc in its direction (a single "
            "vertex is a path too). Output the paths separated by semicolons, each path as its "
            "vertices in order separated by spaces (for example: 1 3 4; 2; 5 6)."
        )
        data = {"n": n, "edges": edges}
        return Instance(prompt, self._kuhn_cover(data), data)

    @staticmethod
    def _kuhn_cover(data: Mapping[str, Any]) -> str:
        """Maximum matching of tails to heads by augmenting paths; unmatched tails end paths."""
        n = data["n"]
        out: dict[int, list[int]] = {v: [] for v in range(1, n + 1)}
        for u, v, _ in data["edges"]:
            out[u].append(v)
        match_head: dict[int, int] = {}

        def augment(u: int, seen: set[int]) -> bool:
            for v in out[u]:
                if v not in seen:
                    seen.add(v)
                    if v not in match_head or augment(match_head[v], seen):
                        match_head[v] = u
                        return True
            return False

        for u in range(1, n + 1):
            augment(u, set())
        succ = {u: v for v, u in match_head.items()}
        starts = [v for v in range(1, n + 1) if v not in match_head]
        paths = []
        for s in starts:
            path = [s]
            while path[-1] in succ:
                path.append(succ[path[-1]])
            paths.append(" ".join(map(str, path)))
        return "; ".join(paths)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n = problem.data["n"]
        text = normalize.clean(answer)
        chunks = [c for c in re.split(r"[;\n]", text) if c.strip()]
        if not chunks or len(chunks) > n:
            return invalid("give between 1 and N paths")
        paths = [parse_vertices(c) for c in chunks]
        flat = [v for p in paths for v in p]
        if sorted(flat) != list(range(1, n + 1)):
            return invalid("every vertex must lie on exactly one path")
        arcs = {(u, v) for u, v, _ in problem.data["edges"]}
        if any((u, v) not in arcs for p in paths for u, v in itertools.pairwise(p)):
            return invalid("consecutive vertices of a path are not joined by an arc")
        g = nx.DiGraph()
        left = [("out", v) for v in range(1, n + 1)]
        g.add_nodes_from(left)
        g.add_nodes_from(("in", v) for v in range(1, n + 1))
        g.add_edges_from((("out", u), ("in", v)) for u, v in arcs)
        matching = nx.bipartite.hopcroft_karp_matching(g.to_undirected(), top_nodes=left)
        best = n - len(matching) // 2
        return optimum_verdict(len(paths), best, "fewer paths suffice", minimise=True)

    def solve(self, problem: Problem) -> str:
        return self._kuhn_cover(problem.data)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        paths = answer.split("; ")
        return "; ".join(paths[:-1]) or "1 1"  # a path missing (or a vertex twice)


# ---- counting minimum spanning trees -----------------------------------------------------
def count_minimum_spanning_trees(n: int, edges: list[list[int]]) -> int:
    """Kruskal by weight classes: in each class, the edges between the current components
    form a multigraph whose spanning forests (matrix-tree theorem per component) are the
    ways to extend; the counts multiply."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    total = 1
    for _, group in itertools.groupby(sorted(edges, key=lambda e: e[2]), key=lambda e: e[2]):
        links = [(find(u), find(v)) for u, v, _ in group]
        links = [(a, b) for a, b in links if a != b]
        g = nx.MultiGraph()
        g.add_edges_from(links)
        for comp in nx.connected_components(g):
            nodes = sorted(comp)
            index = {v: i for i, v in enumerate(nodes)}
            lap = [[0] * len(nodes) for _ in nodes]
            for a, b in g.subgraph(nodes).edges():
                i, j = index[a], index[b]
                lap[i][i] += 1
                lap[j][j] += 1
                lap[i][j] -= 1
                lap[j][i] -= 1
            total *= _determinant([row[1:] for row in lap[1:]])
        for a, b in links:
            parent[find(a)] = find(b)
    return total


@ENVIRONMENTS.register("minimum_spanning_tree_counting")
class MinimumSpanningTreeCounting(_GraphOpt):
    """The number of minimum spanning trees of a connected weighted graph (binary)."""

    difficulty_scales = "N = 4 then int(1.1·N + 1) per level (at most 40); weights 1..3"
    answer_kind = "integer"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(4, difficulty, cap=40)
        verts = list(range(n))
        pairs = add_random_pairs(rng, random_tree(rng, verts), verts, n // 2 + 2)
        edges = [[u, v, rng.randint(1, 3)] for u, v in pairs]
        rng.shuffle(edges)
        prompt = (
            f"You are given an undirected graph with {n} vertices, labeled from 0 to {n - 1}, "
            f"and these weighted edges:\n{edge_lines(edges, True)}\n\nHow many different "
            "minimum spanning trees does the graph have? Two spanning trees are different when "
            "their edge sets differ. Give the count as a single integer."
        )
        data = {"n": n, "edges": edges}
        return Instance(prompt, str(count_minimum_spanning_trees(n, edges)), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        ok = parse_int(answer) == count_minimum_spanning_trees(d["n"], d["edges"])
        return graded(0.0, ok, "correct" if ok else "that is not the number of minimum trees")

    def solve(self, problem: Problem) -> str:
        n, edges = problem.data["n"], problem.data["edges"]
        if math.comb(len(edges), n - 1) > 3_000:
            return str(count_minimum_spanning_trees(n, edges))
        best, count = None, 0  # brute force over every (n - 1)-edge subset
        for subset in itertools.combinations(edges, n - 1):
            g = nx.Graph()
            g.add_nodes_from(range(n))
            g.add_edges_from((u, v) for u, v, _ in subset)
            if nx.is_connected(g):
                weight = sum(w for _, _, w in subset)
                if best is None or weight < best:
                    best, count = weight, 1
                elif weight == best:
                    count += 1
        return str(count)


# ---- Eulerian orientation of a mixed graph -----------------------------------------------
@ENVIRONMENTS.register("mixed_graph_eulerian_circuit")
class MixedGraphEulerianCircuit(_GraphOpt):
    """Orient the undirected edges of a mixed graph so that every vertex has in-degree =
    out-degree (with the arcs, a directed Euler circuit then exists); (balanced/all)^10."""

    difficulty_scales = "N = 4 + d vertices; a Hamiltonian cycle plus 1 + d//2 short cycles"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        order = rng.sample(range(n), n)
        arcs = [(order[i], order[(i + 1) % n]) for i in range(n)]
        used = {frozenset(a) for a in arcs}
        for _ in range(1 + difficulty // 2):
            for _try in range(20):
                cyc = rng.sample(range(n), rng.randint(3, min(4, n)))
                new = [(cyc[i], cyc[(i + 1) % len(cyc)]) for i in range(len(cyc))]
                if all(frozenset(a) not in used for a in new):
                    arcs += new
                    used |= {frozenset(a) for a in new}
                    break
        rng.shuffle(arcs)
        flags = [rng.random() < 0.5 for _ in arcs]
        if not any(flags):
            flags[0] = True
        directed = [list(a) for a, f in zip(arcs, flags, strict=True) if not f]
        undirected, planted = [], []
        for (u, v), f in zip(arcs, flags, strict=True):
            if f:
                undirected.append([u, v] if rng.random() < 0.5 else [v, u])
                planted.append(u)
        lines = "\n".join(f"{u} -> {v} (directed)" for u, v in directed)
        lines += ("\n" if lines else "") + "\n".join(
            f"{u} - {v} (undirected)" for u, v in undirected
        )
        prompt = (
            f"You are given a graph with {n} vertices labeled from 0 to {n - 1}. Some edges are "
            f"directed and some are undirected:\n{lines}\n\nGive every undirected edge a "
            "direction so that, together with the directed edges, every vertex has as many "
            "incoming as outgoing edges (then the graph has a directed Euler circuit). For each "
            f"undirected edge, in the order listed ({len(undirected)} of them), output the "
            "vertex it should start from, separated by spaces."
        )
        data = {"n": n, "directed": directed, "undirected": undirected}
        return Instance(prompt, " ".join(map(str, planted)), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        tails = parse_int_list(answer)
        if len(tails) != len(d["undirected"]):
            return invalid(f"give one start vertex for each of the {len(d['undirected'])} edges")
        if any(t not in e for t, e in zip(tails, d["undirected"], strict=True)):
            return invalid("a start vertex is not an endpoint of its edge")
        balance = [0] * d["n"]
        for u, v in d["directed"]:
            balance[u] += 1
            balance[v] -= 1
        for t, (u, v) in zip(tails, d["undirected"], strict=True):
            head = v if t == u else u
            balance[t] += 1
            balance[head] -= 1
        good = sum(1 for b in balance if b == 0)
        detail = "correct" if good == d["n"] else f"{d['n'] - good} vertices are unbalanced"
        return graded(satisfied_reward(good, d["n"], 10.0), good == d["n"], detail)

    def solve(self, problem: Problem) -> str:
        # Independent: a flow assigns every undirected edge to the endpoint that still
        # needs outgoing edges (out-degree must be half the degree).
        d = problem.data
        degree, out = [0] * d["n"], [0] * d["n"]
        for u, v in d["directed"]:
            degree[u] += 1
            degree[v] += 1
            out[u] += 1
        for u, v in d["undirected"]:
            degree[u] += 1
            degree[v] += 1
        g = nx.DiGraph()
        for i, (u, v) in enumerate(d["undirected"]):
            g.add_edge("s", ("e", i), capacity=1)
            g.add_edge(("e", i), ("v", u), capacity=1)
            g.add_edge(("e", i), ("v", v), capacity=1)
        for x in range(d["n"]):
            g.add_edge(("v", x), "t", capacity=degree[x] // 2 - out[x])
        _, flow = nx.maximum_flow(g, "s", "t")
        tails = []
        for i, (u, v) in enumerate(d["undirected"]):
            tails.append(u if flow[("e", i)][("v", u)] == 1 else v)
        return " ".join(map(str, tails))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        tails = answer.split()
        u, v = problem.data["undirected"][0]
        tails[0] = str(v if tails[0] == str(u) else u)  # one edge flipped: two vertices off
        return " ".join(tails)

    def size(self, problem: Problem) -> float:
        return float(
            problem.data["n"] + len(problem.data["directed"]) + len(problem.data["undirected"])
        )


# ---- exhaustive vertex-set problems on small graphs --------------------------------------
def _closed_neighbourhoods(n: int, edges: list[list[int]]) -> list[int]:
    masks = [1 << v for v in range(n)]
    for u, v, _ in edges:
        masks[u] |= 1 << v
        masks[v] |= 1 << u
    return masks


def domination_number(n: int, edges: list[list[int]]) -> int:
    """The smallest dominating set size, trying sizes upwards over all vertex subsets."""
    masks = _closed_neighbourhoods(n, edges)
    full = (1 << n) - 1
    for k in range(1, n + 1):
        for combo in itertools.combinations(masks, k):
            covered = 0
            for m in combo:
                covered |= m
            if covered == full:
                return k
    return n


@ENVIRONMENTS.register("minimum_dominating_set")
class MinimumDominatingSet(_GraphOpt):
    """A smallest set of vertices such that every vertex is in it or adjacent to it;
    (gold/size)^5 credit, a set that misses a vertex is invalid."""

    difficulty_scales = "N = 4 + d//2 vertices (at most 19); N + d//2 edges"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(19, 4 + difficulty // 2)
        verts = list(range(n))
        pairs = add_random_pairs(rng, random_tree(rng, verts), verts, 1 + difficulty // 2)
        edges = unweighted(rng, pairs)
        prompt = (
            f"You are given an undirected graph with {n} vertices labeled from 0 to {n - 1} "
            f"and these edges:\n{_plain_edges(edges)}\n\nFind a dominating set with as few "
            "vertices as possible: a set S such that every vertex is in S or joined by an edge "
            "to a vertex of S. Output the vertices of S separated by spaces; if several sets "
            "are optimal, any of them is accepted."
        )
        data = {"n": n, "edges": edges}
        return Instance(prompt, self._greedy_exact(data), data)

    @staticmethod
    def _greedy_exact(data: Mapping[str, Any]) -> str:
        """Branch on an undominated vertex: one of its closed neighbours must be chosen."""
        n = data["n"]
        masks = _closed_neighbourhoods(n, data["edges"])
        full, best = (1 << n) - 1, [list(range(n))]

        def search(chosen: list[int], covered: int) -> None:
            if len(chosen) >= len(best[0]):
                return
            if covered == full:
                best[0] = list(chosen)
                return
            v = next(x for x in range(n) if not covered >> x & 1)
            for u in range(n):
                if masks[v] >> u & 1:
                    search([*chosen, u], covered | masks[u])

        search([], 0)
        return " ".join(map(str, sorted(best[0])))

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, edges = problem.data["n"], problem.data["edges"]
        chosen = parse_int_list(answer) if answer.strip() else []
        if unknown_vertex(chosen, n) or len(set(chosen)) != len(chosen):
            return invalid("list distinct vertices of the graph")
        masks = _closed_neighbourhoods(n, edges)
        covered = 0
        for v in chosen:
            covered |= masks[v]
        if covered != (1 << n) - 1:
            return invalid("some vertex is neither chosen nor next to a chosen one")
        best = domination_number(n, edges)
        return optimum_verdict(len(chosen), best, "a smaller dominating set exists", minimise=True)

    def solve(self, problem: Problem) -> str:
        return self._greedy_exact(problem.data)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return " ".join(answer.split()[1:]) or str(problem.data["n"])  # one fewer: misses one


@ENVIRONMENTS.register("minimum_crossing_edges_graph_partition")
class MinimumCrossingEdgesGraphPartition(_GraphOpt):
    """Split the vertices into two halves of equal size with the fewest edges between them;
    (gold/crossing)^5 credit, halves of the wrong size are invalid."""

    difficulty_scales = "N = 4 + 2·(d//4) vertices (at most 18); about 1.5N + d edges"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(18, 4 + 2 * (difficulty // 4))
        verts = list(range(n))
        pairs = add_random_pairs(rng, random_tree(rng, verts), verts, n // 2 + difficulty)
        edges = unweighted(rng, pairs)
        prompt = (
            f"You are given an undirected graph with {n} vertices labeled from 0 to {n - 1} "
            f"and these edges:\n{_plain_edges(edges)}\n\nSplit the vertices into two groups of "
            f"exactly {n // 2} vertices each so that as few edges as possible join the two "
            f"groups. Output the {n // 2} vertices of one group separated by spaces; if several "
            "splits are optimal, any of them is accepted."
        )
        data = {"n": n, "edges": edges}
        return Instance(prompt, self._bitmask_best(n, edges)[1], data)

    @staticmethod
    def _exhaustive(data: Mapping[str, Any]) -> tuple[int, str]:
        """Every half containing vertex 0 (the other half is its complement)."""
        n, edges = data["n"], data["edges"]
        best: tuple[int, tuple[int, ...]] | None = None
        for rest in itertools.combinations(range(1, n), n // 2 - 1):
            side = {0, *rest}
            cut = sum(1 for u, v, _ in edges if (u in side) != (v in side))
            if best is None or cut < best[0]:
                best = (cut, (0, *rest))
        assert best is not None
        return best[0], " ".join(map(str, best[1]))

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, edges = problem.data["n"], problem.data["edges"]
        side = parse_int_list(answer)
        if unknown_vertex(side, n) or len(set(side)) != len(side) or len(side) != n // 2:
            return invalid(f"list exactly {n // 2} distinct vertices")
        chosen = set(side)
        cut = sum(1 for u, v, _ in edges if (u in chosen) != (v in chosen))
        best = self._bitmask_best(n, edges)[0]
        return graded(
            ratio_reward(best, cut, 5.0) if best else 0.0,
            cut == best,
            "a split with fewer crossing edges exists",
        )

    @staticmethod
    def _bitmask_best(n: int, edges: list[list[int]]) -> tuple[int, str]:
        """The fewest crossing edges over every half containing vertex 0 (and one such
        half), counted with adjacency bitmasks (edges leaving the half)."""
        adj = [0] * n
        for u, v, _ in edges:
            adj[u] |= 1 << v
            adj[v] |= 1 << u
        best = (len(edges) + 1, "")
        for rest in itertools.combinations(range(1, n), n // 2 - 1):
            side = 1
            for v in rest:
                side |= 1 << v
            cut = (adj[0] & ~side).bit_count() + sum((adj[v] & ~side).bit_count() for v in rest)
            if cut < best[0]:
                best = (cut, " ".join(map(str, (0, *rest))))
        return best

    def solve(self, problem: Problem) -> str:
        return self._exhaustive(problem.data)[1]

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return " ".join(answer.split()[1:]) or "0 0"  # one vertex short


# ---- colouring with a planted clique -----------------------------------------------------
@ENVIRONMENTS.register("minimum_chromatic_number")
class MinimumChromaticNumber(_GraphOpt):
    """A proper colouring with as few colours as possible; the chromatic number is known
    exactly (a planted k-clique and a planted k-colouring). (k/colours used)^5 credit, an
    improper colouring is invalid."""

    difficulty_scales = "N = 5 + d vertices; k = 3 + d//8 colours; edge density 0.4"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, k = 5 + difficulty, 3 + difficulty // 8
        colour = [i % k for i in range(n)]
        rng.shuffle(colour)
        clique = [next(v for v in range(n) if colour[v] == c) for c in range(k)]
        pairs = {(min(u, v), max(u, v)) for u, v in itertools.combinations(clique, 2)}
        for u, v in itertools.combinations(range(n), 2):
            if colour[u] != colour[v] and rng.random() < 0.4:
                pairs.add((u, v))
        edges = unweighted(rng, sorted(pairs))
        prompt = (
            f"You are given an undirected graph with {n} vertices, labeled from 0 to {n - 1}, "
            f"and these edges:\n{_plain_edges(edges)}\n\nColour the vertices so that the two "
            "ends of every edge get different colours, using as few distinct colours as "
            "possible. Colours are non-negative integers. Output the colour of each vertex, "
            f"from vertex 0 to vertex {n - 1}, separated by spaces."
        )
        data = {"n": n, "edges": edges, "k": k}
        return Instance(prompt, " ".join(map(str, colour)), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, edges, k = problem.data["n"], problem.data["edges"], problem.data["k"]
        colours = parse_int_list(answer)
        if len(colours) != n or any(c < 0 for c in colours):
            return invalid(f"give {n} non-negative colours")
        if any(colours[u] == colours[v] for u, v, _ in edges):
            return invalid("an edge joins two vertices of the same colour")
        used = len(set(colours))
        return graded(float(Fraction(k, used)) ** 5, used == k, "fewer colours suffice")

    def solve(self, problem: Problem) -> str:
        # Independent: the largest clique is a lower bound; backtracking (most constrained
        # vertex first) finds a colouring with that many colours or more.
        n, edges = problem.data["n"], problem.data["edges"]
        g = nx.Graph()
        g.add_nodes_from(range(n))
        g.add_edges_from((u, v) for u, v, _ in edges)
        colours_needed = max(len(c) for c in nx.find_cliques(g))
        while True:
            found = _colour(g, colours_needed)
            if found is not None:
                return " ".join(str(found[v]) for v in range(n))
            colours_needed += 1

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        u, v, _ = problem.data["edges"][0]
        colours = answer.split()
        colours[v] = colours[u]  # an edge with equal colours
        return " ".join(colours)


def _colour(g: nx.Graph, k: int) -> dict[int, int] | None:
    colour: dict[int, int] = {}

    def pick() -> int | None:
        free = [v for v in g if v not in colour]
        if not free:
            return None
        return max(free, key=lambda v: (len({colour[u] for u in g[v] if u in colour}), g.degree(v)))

    def search() -> bool:
        v = pick()
        if v is None:
            return True
        taken = {colour[u] for u in g[v] if u in colour}
        for c in range(min(k, len(set(colour.values())) + 1)):
            if c not in taken:
                colour[v] = c
                if search():
                    return True
                del colour[v]
        return False

    return dict(colour) if search() else None
