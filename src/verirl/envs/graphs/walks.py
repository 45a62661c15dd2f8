"""Graphs, counting and walks: triangles, non-backtracking walks, independent sets of a
Pythagorean graph, the gcd sum over spanning trees, a graph with K shortest paths, and
power-of-two jumps.

RLVE-Gym rows ThreeVertexCycleCounting, Path_NoGoingBack_Counting,
PythagoreanGraph_IndependentSetCounting, SumSpanningTreeGCD, ShortestPathCountConstruction and
PowerShortcut (Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for Language Models
with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A). Counts are scored by
the row's rule (binary or (min/max)^10); the construction and the jump route are checked
against the graph, so any correct answer is accepted.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import deque
from collections.abc import Mapping
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    IntegerAnswer,
    count_verdict,
    invalid,
    optimum_verdict,
    parse_int_list,
)
from verirl.envs.kit.graphs import random_tree
from verirl.envs.kit.linear_algebra import laplacian_minor, rational_determinant
from verirl.envs.kit.wording import plural
from verirl.types import Problem, Verdict

TAGS = ("rlve", "graphs")


def _random_edges(
    rng: random.Random, n: int, extra: int, connected: bool = True
) -> list[list[int]]:
    """A random tree on 0..n-1 (when ``connected``) plus up to ``extra`` other edges, sorted."""
    edges = {tuple(sorted(e)) for e in random_tree(rng, list(range(n)))} if connected else set()
    tries = 0
    while extra > 0 and tries < 50 * (extra + 1) and len(edges) < n * (n - 1) // 2:
        tries += 1
        u, v = sorted(rng.sample(range(n), 2))
        if (u, v) not in edges:
            edges.add((u, v))
            extra -= 1
    return [list(e) for e in sorted(edges)]


def _edge_text(edges: list[list[int]], sep: str = " - ") -> str:
    return "\n".join(
        f"{e[0]}{sep}{e[1]}" + (f" (weight {e[2]})" if len(e) > 2 else "") for e in edges
    )


@ENVIRONMENTS.register("three_vertex_cycle_counting")
class ThreeVertexCycleCounting(IntegerAnswer):
    """Triangles in an undirected graph."""

    tags = TAGS
    difficulty_scales = "vertices 5 + d; edge density 0.2..0.6"
    size_measure = "vertices"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + difficulty
        density = rng.choice([0.2, 0.3, 0.4, 0.5, 0.6])
        edges = [[u, v] for u, v in itertools.combinations(range(n), 2) if rng.random() < density]
        have = {tuple(e) for e in edges}
        count = sum(
            1
            for a, b, c in itertools.combinations(range(n), 3)
            if (a, b) in have and (a, c) in have and (b, c) in have
        )
        prompt = (
            f"You are given an undirected graph with {n} vertices labeled 0 to {n - 1} and "
            f"{plural(len(edges), 'edge')}:\n{_edge_text(edges)}\n\n"
            "How many triangles does it have, that "
            "is, unordered triples of distinct vertices every two of which are joined by an edge?"
        )
        return Instance(prompt, str(count), {"n": n, "edges": edges})

    def solve_int(self, problem: Problem) -> int:
        adj: dict[int, set[int]] = {v: set() for v in range(problem.data["n"])}
        for u, v in problem.data["edges"]:
            adj[u].add(v)
            adj[v].add(u)
        return sum(len(adj[u] & adj[v]) for u, v in problem.data["edges"]) // 3

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


@ENVIRONMENTS.register("path_no_going_back_counting")
class PathNoGoingBackCounting(IntegerAnswer):
    """Walks of exactly T edges from S to E that never return along the edge just used."""

    tags = TAGS
    difficulty_scales = "vertices 4 + d//2; edges n + d//2; walk length T = 3 + d"
    size_measure = "walk length T times edges"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty // 2
        edges = _random_edges(rng, n, 1 + difficulty // 2)
        t = 3 + difficulty
        s, e = rng.randrange(n), rng.randrange(n)
        # DP over arcs: walks ending with arc (u -> v)
        arcs = [(u, v) for u, v in edges] + [(v, u) for u, v in edges]
        ways = {a: int(a[0] == s) for a in arcs}
        for _ in range(t - 1):
            nxt = dict.fromkeys(arcs, 0)
            for (u, v), w in ways.items():
                if w:
                    for a in arcs:
                        if a[0] == v and a[1] != u:
                            nxt[a] += w
            ways = nxt
        count = sum(w for (u, v), w in ways.items() if v == e)
        prompt = (
            f"You are given an undirected graph with {n} vertices labeled 0 to {n - 1} and "
            f"{plural(len(edges), 'edge')}:\n{_edge_text(edges)}\n\n"
            "A walk moves along one edge per step; it "
            "may visit vertices and edges several times, but it may never go straight back along "
            f"the edge it has just used. Count the walks of exactly {t} steps that start at "
            f"vertex {s} and end at vertex {e}."
        )
        return Instance(prompt, str(count), {"n": n, "edges": edges, "t": t, "s": s, "e": e})

    def solve_int(self, problem: Problem) -> int:
        d = problem.data
        adj: dict[int, list[int]] = {v: [] for v in range(d["n"])}
        for u, v in d["edges"]:
            adj[u].append(v)
            adj[v].append(u)
        memo: dict[tuple[int, int, int], int] = {}

        def walks(v: int, came: int, left: int) -> int:
            if left == 0:
                return int(v == d["e"])
            key = (v, came, left)
            if key not in memo:
                memo[key] = sum(walks(w, v, left - 1) for w in adj[v] if w != came)
            return memo[key]

        return walks(d["s"], -1, d["t"])

    binary = True  # RLVE's row is binary
    wrong_detail = "the count is not right"

    def size(self, problem: Problem) -> float:
        return float(problem.data["t"] * len(problem.data["edges"]))


def _pythagorean_legs(top: int) -> list[int]:
    return sorted(
        {
            x
            for a in range(1, top + 1)
            for b in range(a, top + 1)
            if _is_square(a * a + b * b)
            for x in (a, b)
        }
    )


def _is_square(x: int) -> bool:
    r = math.isqrt(x)
    return r * r == x


@ENVIRONMENTS.register("pythagorean_graph_independent_set_counting")
class PythagoreanGraphIndependentSetCounting(IntegerAnswer):
    """Independent sets of the graph joining i, j when H[i]² + H[j]² is a perfect square."""

    tags = TAGS
    difficulty_scales = "N = 3 + d values, about half of them legs of Pythagorean triples ≤ 20 + 4d"
    size_measure = "N, the number of vertices"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 3 + difficulty, 20 + 4 * difficulty
        legs = _pythagorean_legs(top)
        values: set[int] = set()
        while len(values) < n:
            values.add(rng.choice(legs) if rng.random() < 0.6 else rng.randint(1, top))
        h = sorted(values)
        rng.shuffle(h)
        adj = [
            [j for j in range(n) if j != i and _is_square(h[i] ** 2 + h[j] ** 2)] for i in range(n)
        ]
        # independent sets multiply over connected components; brute force inside each
        seen, count = [False] * n, 1
        for start in range(n):
            if seen[start]:
                continue
            comp, stack = [], [start]
            seen[start] = True
            while stack:
                v = stack.pop()
                comp.append(v)
                for w in adj[v]:
                    if not seen[w]:
                        seen[w] = True
                        stack.append(w)
            if len(comp) > 20:
                return self._generate(difficulty, rng)
            count *= sum(
                1
                for mask in range(1 << len(comp))
                if all(
                    not (mask >> a & 1 and mask >> b & 1)
                    for a, b in itertools.combinations(range(len(comp)), 2)
                    if comp[b] in adj[comp[a]]
                )
            )
        prompt = (
            f"You are given an array H of length {n}: {' '.join(map(str, h))}\nConstruct an "
            f"undirected graph with vertices labeled 0 to {n - 1}, joining vertices i and j "
            "(i ≠ j) by an edge when H[i]^2 + H[j]^2 is a perfect square. Count the independent "
            "sets of this graph: subsets of vertices, the empty set included, with no edge "
            "between two of their vertices."
        )
        return Instance(prompt, str(count), {"h": h})

    def solve_int(self, problem: Problem) -> int:
        """Branch on a vertex of highest degree (out or in), memoised on the remaining set."""
        h = problem.data["h"]
        n = len(h)
        adj = [
            frozenset(j for j in range(n) if j != i and _is_square(h[i] ** 2 + h[j] ** 2))
            for i in range(n)
        ]
        memo: dict[frozenset[int], int] = {}

        def count(rest: frozenset[int]) -> int:
            if not rest:
                return 1
            if rest not in memo:
                v = max(rest, key=lambda x: len(adj[x] & rest))
                if not adj[v] & rest:
                    memo[rest] = 2 * count(rest - {v})
                else:
                    memo[rest] = count(rest - {v}) + count(rest - {v} - adj[v])
            return memo[rest]

        return count(frozenset(range(n)))

    binary = True  # RLVE's row is binary
    wrong_detail = "the count is not right"

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["h"]))


def _spanning_trees(n: int, edges: list[list[int]]) -> int:
    """Kirchhoff: the determinant of the Laplacian with one row and column removed."""
    return rational_determinant(laplacian_minor(n, edges))


@ENVIRONMENTS.register("sum_spanning_tree_gcd")
class SumSpanningTreeGcd(IntegerAnswer):
    """Σ over spanning trees of the gcd of their edge weights."""

    tags = TAGS
    difficulty_scales = "vertices 3 + d//3 (at most 12); edges n - 1 + 1 + d//3; weights ≤ 12 + 2d"
    size_measure = "edges of the graph"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(12, 3 + difficulty // 3)
        top = 12 + 2 * difficulty
        base = rng.randint(1, 3)  # a shared factor makes large gcds common
        edges = [
            [u, v, base * rng.randint(1, top // base)]
            for u, v in _random_edges(rng, n, 1 + difficulty // 3)
        ]
        # gcd(T) = Σ_{g | gcd(T)} φ(g): count the trees inside each "divisible by g" subgraph
        total = 0
        for g in range(1, top + 1):
            phi = sum(1 for x in range(1, g + 1) if math.gcd(x, g) == 1)
            sub = [[u, v] for u, v, w in edges if w % g == 0]
            if len(sub) >= n - 1:
                total += phi * _spanning_trees(n, sub)
        prompt = (
            f"You are given an undirected graph with {n} vertices labeled 0 to {n - 1} and these "
            f"{len(edges)} weighted edges:\n{_edge_text(edges)}\n\nFor every spanning tree (a set "
            f"of {n - 1} edges connecting all vertices), take the greatest common divisor of its "
            "edge weights. Compute the sum of these values over all spanning trees."
        )
        return Instance(prompt, str(total), {"n": n, "edges": edges})

    def solve_int(self, problem: Problem) -> int:
        """Trees whose gcd is exactly g, from the largest g down (inclusion–exclusion)."""
        n, edges = problem.data["n"], problem.data["edges"]
        top = max(w for _, _, w in edges)
        exact = [0] * (top + 1)
        for g in range(top, 0, -1):
            sub = [[u, v] for u, v, w in edges if w % g == 0]
            within = _spanning_trees(n, sub) if len(sub) >= n - 1 else 0
            exact[g] = within - sum(exact[k] for k in range(2 * g, top + 1, g))
        return sum(g * exact[g] for g in range(1, top + 1))

    binary = True  # RLVE's row is binary
    wrong_detail = "the sum is not right"

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["edges"]))


_MAX_VERTICES = 100
_MAX_EDGES = 1000


@ENVIRONMENTS.register("shortest_path_count_construction")
class ShortestPathCountConstruction(Environment):
    """Build a simple graph with exactly K shortest paths between vertices 1 and 2;
    (min/max)^10 credit on the number of shortest paths."""

    tags = TAGS
    answer_kind = "text"
    difficulty_scales = "K up to 12·1.5^d (at most 10^8)"
    size_measure = "bits of K (the construction needs about 3 vertices per bit)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        k = rng.randint(1, int(min(10**8, 12 * 1.5**difficulty)))
        prompt = (
            "Construct a simple undirected graph (no loops, no repeated edges) on vertices "
            f"labeled from 1 to at most {_MAX_VERTICES} such that the number of shortest paths "
            f"between vertex 1 and vertex 2 is exactly {k}. Give the edges as pairs of vertex "
            'labels, each pair in parentheses, separated by commas, e.g. "(1, 3), (3, 2)"; use '
            f"at most {_MAX_EDGES} edges."
        )
        return Instance(prompt, _construct(k), {"k": k})

    def check(self, problem: Problem, answer: str) -> Verdict:
        flat = parse_int_list(answer.replace("(", " ").replace(")", " "))
        if not flat or len(flat) % 2 or len(flat) > 2 * _MAX_EDGES:
            return invalid(f"give between 1 and {_MAX_EDGES} edges as pairs of vertices")
        edges = set()
        for u, v in zip(flat[::2], flat[1::2], strict=True):
            if not (1 <= u <= _MAX_VERTICES and 1 <= v <= _MAX_VERTICES) or u == v:
                return invalid(f"vertices are labeled 1 to {_MAX_VERTICES}, with no loops")
            if (min(u, v), max(u, v)) in edges:
                return invalid("an edge is repeated")
            edges.add((min(u, v), max(u, v)))
        adj: dict[int, list[int]] = {}
        for u, v in edges:
            adj.setdefault(u, []).append(v)
            adj.setdefault(v, []).append(u)
        dist, ways = {1: 0}, {1: 1}
        queue = deque([1])
        while queue:  # BFS counting shortest paths
            u = queue.popleft()
            for v in adj.get(u, []):
                if v not in dist:
                    dist[v], ways[v] = dist[u] + 1, 0
                    queue.append(v)
                if dist[v] == dist[u] + 1:
                    ways[v] += ways[u]
        return count_verdict(
            ways.get(2, 0), problem.data["k"], "the number of shortest paths is not right"
        )

    def solve(self, problem: Problem) -> str:
        return _construct(problem.data["k"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return _construct(problem.data["k"] + 1)

    def size(self, problem: Problem) -> float:
        return float(problem.data["k"].bit_length())

    def problem_space(self, difficulty: int) -> int | None:
        return min(10**9, int(min(10**8, 12 * 1.5**difficulty)))


def _construct(k: int) -> str:
    """Ladder of two-vertex layers (2^(j-1) paths to each vertex of layer j) closing through
    one vertex F for the top bit, and a spine P_1 … P_(m-1) → 2 for the lower bits: layer
    vertex A_(i+1) joins P_(i+1) when bit i of K is set. Every route to 2 has length m + 1."""
    m = k.bit_length()
    if m == 1:
        return "(1, 2)"
    labels = iter(range(3, 3 * m + 3))
    layers = [(next(labels), next(labels)) for _ in range(m - 1)]
    f = next(labels)
    spine = [next(labels) for _ in range(m - 1)]
    edges = [(1, layers[0][0]), (1, layers[0][1])]
    for (a, b), (c, d) in itertools.pairwise(layers):
        edges += [(a, c), (a, d), (b, c), (b, d)]
    edges += [(layers[-1][0], f), (layers[-1][1], f), (f, 2)]
    edges += [*list(itertools.pairwise(spine)), (spine[-1], 2)]
    edges += [(layers[i][0], spine[i]) for i in range(m - 1) if k >> i & 1]
    return ", ".join(f"({u}, {v})" for u, v in edges)


@ENVIRONMENTS.register("power_shortcut")
class PowerShortcut(Environment):
    """Fewest jumps from 0 to N-1 where one jump follows a walk of exactly 2^j arcs;
    a valid longer route earns (gold/answer)^5."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "vertices 4 + d; arcs about 1.5n; jump exponents j ≤ 3 + d//6"
    size_measure = "vertices"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top_j = 4 + difficulty, 3 + difficulty // 6
        order = list(range(1, n - 1))
        rng.shuffle(order)
        chain = [0, *order, n - 1]  # a path through every vertex keeps n-1 reachable
        arcs = set(itertools.pairwise(chain))
        while len(arcs) < (3 * n) // 2:
            u, v = rng.sample(range(n), 2)
            arcs.add((u, v))
        arcs_list = [list(a) for a in sorted(arcs)]
        data = {"n": n, "arcs": arcs_list, "max_j": top_j}
        prompt = (
            f"You are given a directed graph with {n} vertices labeled 0 to {n - 1} and these "
            f"{len(arcs_list)} arcs:\n{_edge_text(arcs_list, ' -> ')}\n\nIn one jump you may move "
            f"from a vertex u to a vertex v when there is a walk from u to v that uses exactly "
            f"2^j arcs for some j with 0 ≤ j ≤ {top_j} (arcs and vertices may repeat within a "
            f"walk). Using as few jumps as possible, go from vertex 0 to vertex {n - 1}. Give "
            f"the vertices where you stand, from 0 to {n - 1}, separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, _jump_route(data))), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        route = parse_int_list(answer)
        n = problem.data["n"]
        if len(route) < 2 or len(route) > 4 * n or route[0] != 0 or route[-1] != n - 1:
            return invalid(f"the route must start at 0 and end at {n - 1}")
        if any(not 0 <= v < n for v in route):
            return invalid(f"vertices are labeled 0 to {n - 1}")
        jumps = _jump_masks(problem.data)
        if any(not jumps[u] >> v & 1 for u, v in itertools.pairwise(route)):
            return invalid("some step is not a walk of a power-of-two length")
        best = len(_jump_route(problem.data)) - 1
        return optimum_verdict(
            len(route) - 1, best, "a route with fewer jumps exists", minimise=True
        )

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, _jump_route(problem.data)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return "1, " + answer

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def _jump_masks(data: Mapping[str, Any]) -> list[int]:
    """Bitmask of the vertices reachable from u by one jump, from boolean matrix squaring."""
    n = data["n"]
    step = [0] * n
    for u, v in data["arcs"]:
        step[u] |= 1 << v
    jumps = list(step)
    for _ in range(data["max_j"]):
        nxt = [0] * n
        for u in range(n):
            row, mask = step[u], 0
            while row:
                low = row & -row
                mask |= step[low.bit_length() - 1]
                row ^= low
            nxt[u] = mask
        step = nxt
        jumps = [a | b for a, b in zip(jumps, step, strict=True)]
    return jumps


def _jump_route(data: Mapping[str, Any]) -> list[int]:
    n, jumps = data["n"], _jump_masks(data)
    prev = {0: -1}
    queue = deque([0])
    while queue:
        u = queue.popleft()
        for v in range(n):
            if jumps[u] >> v & 1 and v not in prev:
                prev[v] = u
                queue.append(v)
    route, v = [], n - 1
    while v != -1:
        route.append(v)
        v = prev[v]
    return route[::-1]
