"""Graphs, choosing vertices and maps: the cheapest set of spies that reaches everyone, K
centres, a longest path in a tournament, a colouring of the XOR-prime graph, a subgraph
embedding.

RLVE-Gym rows SpyNetwork, Vertex_KCenter, Tournament_LongestPath,
PrimeGraph_MinimumChromaticNumber and SubgraphIsomorphism (Zeng et al. 2025, "RLVE: Scaling Up
Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A). Each verifier checks the answer against the graph (every
optimal answer is accepted) and scores it by the row's rule: (gold/answer)^β for
minimisation, (answer/gold)^5 for maximisation, (satisfied/all)^10 for the embedding.
"""

from __future__ import annotations

import itertools
import math
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
    optimum_verdict,
    parse_int_list,
    ratio_reward,
)
from verirl.envs.graphs.walks import _edge_text, _random_edges
from verirl.envs.kit.numbers import is_prime
from verirl.envs.kit.wording import plural
from verirl.types import Problem, Verdict

TAGS = ("rlve", "graphs")


def _vertex_list(answer: str, n: int, *, distinct: bool = True) -> list[int] | Verdict:
    items = parse_int_list(answer)
    if len(items) > 4 * n + 4:
        return invalid("too many vertices")
    if any(not 0 <= v < n for v in items):
        return invalid(f"vertices are labeled 0 to {n - 1}")
    if distinct and len(set(items)) != len(items):
        return invalid("a vertex is listed twice")
    return items


@ENVIRONMENTS.register("spy_network")
class SpyNetwork(Environment):
    """Bribe some spies (only those with a price) so that, following who knows whom, every
    spy is reached; minimise the total price: (gold/answer)^3."""

    tags = TAGS
    answer_kind = "integer_set"
    difficulty_scales = "vertices 4 + d; arcs about 1.3n; about half of the vertices bribable"
    size_measure = "vertices"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        while True:
            arcs: set[tuple[int, int]] = set()
            while len(arcs) < int(1.3 * n):
                u, v = rng.sample(range(n), 2)
                arcs.add((u, v))
            cost = {v: rng.randint(1, 20 + difficulty) for v in range(n) if rng.random() < 0.5}
            data: dict[str, Any] = {
                "n": n,
                "arcs": [list(a) for a in sorted(arcs)],
                "cost": [cost.get(v, 0) for v in range(n)],
            }
            if _cheapest_spies(data) is not None:
                break
        priced = ", ".join(f"{v}: {c}" for v, c in enumerate(data["cost"]) if c)
        prompt = (
            f"You are given a directed graph with {n} vertices labeled 0 to {n - 1} and these "
            f"{len(arcs)} arcs:\n{_edge_text(data['arcs'], ' -> ')}\n\nEach vertex is a spy; an "
            "arc u -> v means that spy u can reveal spy v, and a revealed spy reveals in turn "
            "everyone he can. Only some spies can be bribed; their prices are (vertex: price) "
            f"{priced}. Choose spies to bribe so that every spy is bribed or revealed, at the "
            "smallest total price. Give the bribed spies' labels separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, _cheapest_spies(data) or [])), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        chosen = _vertex_list(answer, d["n"])
        if isinstance(chosen, Verdict):
            return chosen
        if not chosen or any(d["cost"][v] == 0 for v in chosen):
            return invalid("bribe at least one spy, and only spies that have a price")
        reached, stack = set(chosen), list(chosen)
        adj: dict[int, list[int]] = {}
        for u, v in d["arcs"]:
            adj.setdefault(u, []).append(v)
        while stack:
            for w in adj.get(stack.pop(), []):
                if w not in reached:
                    reached.add(w)
                    stack.append(w)
        if len(reached) != d["n"]:
            return invalid("some spy is neither bribed nor revealed")
        price = sum(d["cost"][v] for v in chosen)
        best = sum(d["cost"][v] for v in _cheapest_spies(d) or [])
        ok = price == best
        return graded(
            ratio_reward(best, price, 3.0), ok, "correct" if ok else "a cheaper choice exists"
        )

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, _cheapest_spies(problem.data) or []))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        free = [v for v, c in enumerate(problem.data["cost"]) if c == 0]
        return answer + f", {free[0]}" if free else ""

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def _cheapest_spies(data: Mapping[str, Any]) -> list[int] | None:
    """One cheapest bribable spy in every source component of the condensation (nothing
    else reaches a source component, and it reaches everything below it)."""
    g = nx.DiGraph()
    g.add_nodes_from(range(data["n"]))
    g.add_edges_from(map(tuple, data["arcs"]))
    cond = nx.condensation(g)
    out = []
    for c in cond.nodes:
        if cond.in_degree(c) == 0:
            members = [v for v in cond.nodes[c]["members"] if data["cost"][v]]
            if not members:
                return None
            out.append(min(members, key=lambda v: (data["cost"][v], v)))
    return sorted(out)


@ENVIRONMENTS.register("vertex_k_center")
class VertexKCenter(Environment):
    """K centres minimising the largest distance from a vertex to its nearest centre:
    (gold/answer)^5."""

    tags = TAGS
    answer_kind = "integer_set"
    difficulty_scales = "vertices 4 + d//2 (at most 18); K = 1 + d//8 (at most 3); weights ≤ 10"
    size_measure = "vertices"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, k = min(18, 4 + difficulty // 2), min(3, 1 + difficulty // 8)
        edges = [[u, v, rng.randint(1, 10)] for u, v in _random_edges(rng, n, n // 2)]
        data = {"n": n, "k": k, "edges": edges}
        centres = "centre" if k == 1 else "centres"
        prompt = (
            f"You are given a connected undirected graph with {n} vertices labeled 0 to {n - 1} "
            f"and these weighted edges:\n{_edge_text(edges)}\n\nChoose exactly "
            f"{plural(k, 'vertex', 'distinct vertices')} as {centres} so that the largest "
            "distance (shortest-path length) from any "
            f"vertex to its nearest centre is as small as possible. Give the {centres}"
            + (" separated by commas." if k > 1 else ".")
        )
        return Instance(prompt, ", ".join(map(str, _best_centres(data))), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        chosen = _vertex_list(answer, d["n"])
        if isinstance(chosen, Verdict):
            return chosen
        if len(chosen) != d["k"]:
            return invalid(f"choose exactly {d['k']} vertices")
        dist = _distances(d)
        value = _radius(dist, chosen)
        best = _radius(dist, _best_centres(d))
        return optimum_verdict(
            value, best, "a choice with a smaller largest distance exists", minimise=True
        )

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, _best_centres(problem.data)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer + ", " + answer.split(", ")[0]  # a repeated vertex

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def _distances(data: Mapping[str, Any]) -> list[list[float]]:
    n = data["n"]
    dist = [[0.0 if i == j else float("inf") for j in range(n)] for i in range(n)]
    for u, v, w in data["edges"]:
        dist[u][v] = dist[v][u] = min(dist[u][v], w)
    for m in range(n):  # Floyd–Warshall
        for i in range(n):
            for j in range(n):
                if dist[i][m] + dist[m][j] < dist[i][j]:
                    dist[i][j] = dist[i][m] + dist[m][j]
    return dist


def _radius(dist: list[list[float]], centres: list[int]) -> float:
    return max(min(row[c] for c in centres) for row in dist)


def _best_centres(data: Mapping[str, Any]) -> list[int]:
    dist = _distances(data)
    return list(
        min(
            itertools.combinations(range(data["n"]), data["k"]),
            key=lambda cs: _radius(dist, list(cs)),
        )
    )


@ENVIRONMENTS.register("tournament_longest_path")
class TournamentLongestPath(Environment):
    """A longest simple path in a tournament (every pair joined by one arc); a shorter valid
    path earns (length/gold)^5. Every tournament has a Hamiltonian path (Rédei)."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "vertices 3 + d"
    size_measure = "vertices"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        arcs = [
            [u, v] if rng.random() < 0.5 else [v, u] for u, v in itertools.combinations(range(n), 2)
        ]
        rng.shuffle(arcs)
        data = {"n": n, "arcs": arcs}
        prompt = (
            f"You are given a directed graph with {n} vertices labeled 0 to {n - 1}; every two "
            f"vertices are joined by exactly one arc. The arcs are:\n{_edge_text(arcs, ' -> ')}\n\n"
            "Find a directed path that visits as many vertices as possible, each at most once. "
            "Give its vertices in order, separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, _hamiltonian(data))), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n = problem.data["n"]
        path = _vertex_list(answer, n)
        if isinstance(path, Verdict):
            return path
        arcs = {tuple(a) for a in problem.data["arcs"]}
        if not path or any((u, v) not in arcs for u, v in itertools.pairwise(path)):
            return invalid("consecutive vertices must be joined by an arc in that direction")
        return optimum_verdict(len(path), n, "a path through more vertices exists")

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, _hamiltonian(problem.data)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return ", ".join(answer.split(", ")[:-1])

    def problem_space(self, difficulty: int) -> int | None:
        pairs = (3 + difficulty) * (2 + difficulty) // 2
        return min(10**9, 2**pairs * math.factorial(pairs))

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def _hamiltonian(data: Mapping[str, Any]) -> list[int]:
    """Insertion: put each new vertex before the first path vertex it beats."""
    arcs = {tuple(a) for a in data["arcs"]}
    path: list[int] = []
    for v in range(data["n"]):
        pos = next((i for i, u in enumerate(path) if (v, u) in arcs), len(path))
        path.insert(pos, v)
    return path


@ENVIRONMENTS.register("prime_graph_minimum_chromatic_number")
class PrimeGraphMinimumChromaticNumber(Environment):
    """Colour 1..N so that u, v get different colours when u XOR v is prime, with as few
    colours as possible: (gold/answer)^5 for a proper colouring."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "N up to 6·1.5^d (at most 60)"
    size_measure = "vertices N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = min(60, int(6 * 1.5**difficulty))
        n = rng.randint(max(2, top // 2), top)
        prompt = (
            f"You are given an undirected graph with {n} vertices labeled 1 to {n}; vertices u "
            "and v are joined by an edge when u XOR v (bitwise exclusive or) is a prime number. "
            "Colour the vertices with as few colours as possible so that the two ends of every "
            f"edge get different colours. Give the colours of vertices 1, 2, ..., {n} as "
            "positive integers, separated by commas."
        )
        colours = [v % 4 + 1 for v in range(1, n + 1)]  # proper; optimal from n = 6 on
        if n < 6:  # brute force over colourings with fewer colours
            edges = [
                (u, v)
                for u, v in itertools.combinations(range(n), 2)
                if is_prime((u + 1) ^ (v + 1))
            ]
            for k in range(1, 4):
                found = next(
                    (
                        c
                        for c in itertools.product(range(1, k + 1), repeat=n)
                        if all(c[u] != c[v] for u, v in edges)
                    ),
                    None,
                )
                if found:
                    colours = list(found)
                    break
        return Instance(prompt, ", ".join(map(str, colours)), {"n": n})

    def check(self, problem: Problem, answer: str) -> Verdict:
        n = problem.data["n"]
        colours = parse_int_list(answer)
        if len(colours) != n or any(c < 1 for c in colours):
            return invalid(f"give {n} positive colours, one per vertex")
        for u, v in itertools.combinations(range(1, n + 1), 2):
            if colours[u - 1] == colours[v - 1] and is_prime(u ^ v):
                return invalid("two vertices joined by an edge share a colour")
        used = len(set(colours))
        return optimum_verdict(used, _chromatic(n), "fewer colours suffice", minimise=True)

    def solve(self, problem: Problem) -> str:
        n = problem.data["n"]
        k = _chromatic(n)
        return ", ".join(map(str, _colouring(n, k) or []))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        colours = answer.split(", ")
        return ", ".join([colours[0]] * len(colours))  # 1 XOR 3 = 2 is prime: never proper

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])

    def problem_space(self, difficulty: int) -> int | None:
        top = min(60, int(6 * 1.5**difficulty))
        return min(10**9, top - max(2, top // 2) + 1)


def _colouring(n: int, k: int) -> list[int] | None:
    """A proper colouring of the XOR-prime graph on 1..n with colours 1..k, by backtracking
    (k ≤ 4 always suffices: u ≡ v mod 4 makes u XOR v a multiple of 4)."""
    if k >= 4:
        return [v % 4 + 1 for v in range(1, n + 1)]
    colours: list[int] = []

    def place(v: int) -> bool:
        if v > n:
            return True
        for c in range(1, k + 1):
            if all(not (colours[u - 1] == c and is_prime(u ^ v)) for u in range(1, v)):
                colours.append(c)
                if place(v + 1):
                    return True
                colours.pop()
        return False

    return colours if place(1) else None


def _chromatic(n: int) -> int:
    """The smallest k with a proper colouring; once 1, 3, 4, 6 (a 4-clique: pairwise XORs 2,
    5, 7, 7, 5, 2) are present the answer is 4."""
    if n >= 6 and all(is_prime(a ^ b) for a, b in itertools.combinations((1, 3, 4, 6), 2)):
        return 4
    return next(k for k in range(1, 5) if _colouring(n, k) is not None)


@ENVIRONMENTS.register("subgraph_isomorphism")
class SubgraphIsomorphism(Environment):
    """An injective map of G1's vertices into G2's that sends edges to edges:
    (mapped edges/all)^10."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "G1: 3 + d//3 vertices (at most 10); G2: that plus 2 + d//4 (at most 15)"
    size_measure = "vertices of G2"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n1 = min(10, 3 + difficulty // 3)
        n2 = min(15, n1 + 2 + difficulty // 4)
        g2 = _random_edges(rng, n2, n2 // 2 + difficulty // 3)
        hidden = rng.sample(range(n2), n1)  # G1 vertex i sits at hidden[i]
        at = {v: i for i, v in enumerate(hidden)}
        induced = [[at[u], at[v]] for u, v in g2 if u in at and v in at]
        g1 = [sorted(e) for e in induced if rng.random() < 0.8] or induced[:1]
        if not g1:
            return self._generate(difficulty, rng)
        g1.sort()
        prompt = (
            f"You are given two undirected graphs. G1 has {n1} vertices labeled 0 to {n1 - 1} and "
            f"these edges:\n{_edge_text(g1)}\n\nG2 has {n2} vertices labeled 0 to {n2 - 1} and "
            f"these edges:\n{_edge_text(g2)}\n\nFind an injective map p from the vertices of G1 "
            "to the vertices of G2 (distinct vertices go to distinct vertices) such that for "
            "every edge u - v of G1, p(u) - p(v) is an edge of G2. Give p(0), p(1), ..., "
            f"p({n1 - 1}) separated by commas."
        )
        data = {"n1": n1, "n2": n2, "g1": g1, "g2": g2}
        return Instance(prompt, ", ".join(map(str, hidden)), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        p = _vertex_list(answer, d["n2"])
        if isinstance(p, Verdict):
            return p
        if len(p) != d["n1"]:
            return invalid(f"give {d['n1']} images, one per vertex of G1")
        g2 = {tuple(sorted(e)) for e in d["g2"]}
        good = sum(1 for u, v in d["g1"] if tuple(sorted((p[u], p[v]))) in g2)
        total = len(d["g1"])
        detail = (
            "correct" if good == total else f"{total - good} edges of G1 are not mapped to edges"
        )
        return graded((good / total) ** 10, good == total, detail)

    def solve(self, problem: Problem) -> str:
        """Backtracking, vertices of G1 by decreasing degree, images of at least that degree."""
        d = problem.data
        adj1: dict[int, set[int]] = {v: set() for v in range(d["n1"])}
        adj2: dict[int, set[int]] = {v: set() for v in range(d["n2"])}
        for u, v in d["g1"]:
            adj1[u].add(v)
            adj1[v].add(u)
        for u, v in d["g2"]:
            adj2[u].add(v)
            adj2[v].add(u)
        order = sorted(range(d["n1"]), key=lambda v: -len(adj1[v]))
        image: dict[int, int] = {}

        def extend(i: int) -> bool:
            if i == len(order):
                return True
            v = order[i]
            used = set(image.values())
            for w in range(d["n2"]):
                if w in used or len(adj2[w]) < len(adj1[v]):
                    continue
                if all(image[u] in adj2[w] for u in adj1[v] if u in image):
                    image[v] = w
                    if extend(i + 1):
                        return True
                    del image[v]
            return False

        extend(0)
        return ", ".join(str(image[v]) for v in range(d["n1"]))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        items = answer.split(", ")
        return ", ".join([items[0]] * len(items))

    def size(self, problem: Problem) -> float:
        return float(problem.data["n2"])
