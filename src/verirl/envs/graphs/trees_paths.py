"""Graph optimisation, part 1: paths, matchings, trees — the heaviest path in a DAG, a
maximum-weight matching, a maximum-weight independent set and a minimum-cost vertex cover of a
tree, a minimum spanning arborescence, and the path with the smallest max/min weight ratio.

Rows LongestPath, MaximumWeightMatching, Maximum_IndependentSet_Tree, MinCostTreeCoverage,
MinimumDirectedSpanningTree and MinimumRatioPath of the RLVE catalogue (Zeng et al., *RLVE:
Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable Environments*,
arXiv:2511.07317). Every verifier checks the answer on the graph (arcs exist, sets are
independent or covering, the arborescence reaches every vertex) and grades its objective
against the optimum, (answer/gold)^β or (gold/answer)^β; ``solve`` reaches the optimum by
another algorithm (brute force on small graphs, a different DP order).
"""

from __future__ import annotations

import functools
import itertools
import random
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
    parse_int_list,
    ratio_reward,
)
from verirl.envs.graphs.paths_spanning import GraphEnv
from verirl.envs.kit.graphs import (
    add_random_pairs,
    edge_lines,
    parse_pairs,
    parse_vertices,
    random_tree,
    unknown_vertex,
    weighted,
)
from verirl.envs.kit.size_ladder import grown
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict

TAGS = ("rlve", "graphs")


class _GraphOpt(GraphEnv):
    tags = TAGS
    size_measure = "vertices plus edges"


def _vertices(answer: str) -> list[int]:
    """Vertex numbers of the answer after the shared surface cleanup (``$…$``, ``\\text{}``)."""
    return parse_vertices(normalize.clean(answer))


def _pairs(answer: str) -> list[tuple[int, int]]:
    return parse_pairs(normalize.clean(answer))


def _weights(edges: list[list[int]], directed: bool = False) -> dict[tuple[int, int], int]:
    out = {}
    for u, v, w in edges:
        out[(u, v)] = w
        if not directed:
            out[(v, u)] = w
    return out


# ---- heaviest path in a DAG --------------------------------------------------------------
@ENVIRONMENTS.register("longest_path")
class LongestPath(_GraphOpt):
    """The heaviest directed path in a weighted DAG (any start and end); (weight/gold)^5,
    a sequence that does not follow arcs is invalid."""

    difficulty_scales = "N = 4 + d vertices; about 1.5N arcs, all from a hidden order"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        order = rng.sample(range(n), n)
        pairs: set[tuple[int, int]] = set()
        while len(pairs) < min(n * (n - 1) // 2, int(1.5 * n)):
            i, j = sorted(rng.sample(range(n), 2))
            pairs.add((order[i], order[j]))
        edges = weighted(rng, sorted(pairs), 10)
        prompt = (
            f"You are given a directed graph with {n} vertices, labeled from 0 to {n - 1}. It "
            "has no directed cycle. Its arcs are given as u -> v (weight w):\n"
            f"{edge_lines(edges, True, directed=True)}\n\nFind a directed path (a sequence of "
            "distinct vertices, each joined to the next by an arc in its direction) whose total "
            "weight is as large as possible. Output the vertices of the path in order, "
            "separated by spaces; if several paths are optimal, any of them is accepted."
        )
        data = {"n": n, "edges": edges}
        return Instance(prompt, self._witness(data), data)

    @staticmethod
    def _witness(data: Mapping[str, Any]) -> str:
        """DP along a topological order: best[v] = heaviest path ending at v."""
        g = nx.DiGraph()
        g.add_nodes_from(range(data["n"]))
        g.add_weighted_edges_from(data["edges"])
        best = {v: (0, [v]) for v in g}
        for v in nx.topological_sort(g):
            for u in g.predecessors(v):
                cand = best[u][0] + g[u][v]["weight"]
                if cand > best[v][0]:
                    best[v] = (cand, [*best[u][1], v])
        return " ".join(map(str, max(best.values())[1]))

    @staticmethod
    def _heaviest(data: Mapping[str, Any]) -> int:
        """Memoised DFS: the heaviest path starting at each vertex."""
        out: dict[int, list[tuple[int, int]]] = {v: [] for v in range(data["n"])}
        for u, v, w in data["edges"]:
            out[u].append((v, w))

        @functools.cache
        def start(u: int) -> int:
            return max((w + start(v) for v, w in out[u]), default=0)

        result = max(start(v) for v in range(data["n"]))
        start.cache_clear()
        return result

    def check(self, problem: Problem, answer: str) -> Verdict:
        path = _vertices(answer)
        arcs = _weights(problem.data["edges"], directed=True)
        if not path or unknown_vertex(path, problem.data["n"]):
            return invalid("the path names a vertex that is not in the graph")
        if len(set(path)) != len(path):
            return invalid("a vertex is repeated")
        if any((u, v) not in arcs for u, v in itertools.pairwise(path)):
            return invalid("consecutive vertices are not joined by an arc")
        got = sum(arcs[u, v] for u, v in itertools.pairwise(path))
        return optimum_verdict(got, self._heaviest(problem.data), "a heavier path exists")

    def solve(self, problem: Problem) -> str:
        return self._witness(problem.data)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        first = answer.split()[0]
        return f"{answer} {first}"  # a vertex repeated


# ---- maximum-weight matching -------------------------------------------------------------
@ENVIRONMENTS.register("maximum_weight_matching")
class MaximumWeightMatching(_GraphOpt):
    """A matching of largest total weight in a general graph; (weight/gold)^5 credit."""

    difficulty_scales = "N = 5 + d vertices; about 1.5N edges"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + difficulty
        verts = list(range(n))
        pairs = add_random_pairs(rng, [], verts, int(1.5 * n))
        edges = weighted(rng, pairs, 10 + difficulty)
        prompt = (
            f"You are given an undirected graph with {n} vertices, labeled from 0 to {n - 1}, "
            f"and these weighted edges:\n{edge_lines(edges, True)}\n\nFind a matching (a set "
            "of edges, no two sharing a vertex) whose total weight is as large as possible. "
            "Output its edges as u-v pairs separated by commas (for example 0-3, 1-2); if "
            "several matchings are optimal, any of them is accepted."
        )
        data = {"n": n, "edges": edges}
        matching = nx.max_weight_matching(self._graph(data))
        return Instance(
            prompt, ", ".join(f"{u}-{v}" for u, v in sorted(map(sorted, matching))), data
        )

    @staticmethod
    def _graph(data: Mapping[str, Any]) -> nx.Graph:
        g = nx.Graph()
        g.add_nodes_from(range(data["n"]))
        g.add_weighted_edges_from(data["edges"])
        return g

    def check(self, problem: Problem, answer: str) -> Verdict:
        pairs = _pairs(answer) if answer.strip() else []
        weights = _weights(problem.data["edges"])
        if any(p not in weights for p in pairs):
            return invalid("a listed pair is not an edge")
        ends = [v for p in pairs for v in p]
        if len(set(ends)) != len(ends):
            return invalid("two edges share a vertex")
        got = sum(weights[p] for p in pairs)
        g = self._graph(problem.data)
        best = sum(g[u][v]["weight"] for u, v in nx.max_weight_matching(g))
        return optimum_verdict(got, best, "a heavier matching exists")

    def solve(self, problem: Problem) -> str:
        n, weights = problem.data["n"], _weights(problem.data["edges"])
        if n > 14:
            g = self._graph(problem.data)
            return ", ".join(f"{u}-{v}" for u, v in nx.max_weight_matching(g))

        @functools.cache
        def best(free: int) -> tuple[int, tuple[tuple[int, int], ...]]:
            """Bitmask DP: the lowest free vertex is left alone or matched to a neighbour."""
            if not free:
                return 0, ()
            u = (free & -free).bit_length() - 1
            rest = free & ~(1 << u)
            options = [best(rest)]
            for v in range(n):
                if rest >> v & 1 and (u, v) in weights:
                    w, chosen = best(rest & ~(1 << v))
                    options.append((w + weights[u, v], ((u, v), *chosen)))
            return max(options)

        result = best((1 << n) - 1)[1]
        best.cache_clear()
        return ", ".join(f"{u}-{v}" for u, v in result)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        u, v, _ = problem.data["edges"][0]
        return f"{answer}, {u}-{v}, {u}-{v}" if answer else f"{u}-{v}, {u}-{v}"


# ---- trees: independent set and vertex cover with weights --------------------------------
def _tree_data(rng: random.Random, n: int, wmax: int) -> dict[str, Any]:
    pairs = random_tree(rng, list(range(n)))
    rng.shuffle(pairs)
    return {
        "n": n,
        "edges": [[u, v, 1] for u, v in pairs],
        "weights": [rng.randint(1, wmax) for _ in range(n)],
    }


def _tree_dp(data: Mapping[str, Any]) -> tuple[int, int]:
    """(max weight independent set, min weight vertex cover) of the tree, by the rooted DP
    take[v] / skip[v] in reverse BFS order."""
    n, w = data["n"], data["weights"]
    adj: list[list[int]] = [[] for _ in range(n)]
    for u, v, _ in data["edges"]:
        adj[u].append(v)
        adj[v].append(u)
    order, parent = [0], [-1] * n
    for u in order:
        for v in adj[u]:
            if v != parent[u]:
                parent[v] = u
                order.append(v)
    take_i, skip_i = [0] * n, [0] * n  # independent set
    take_c, skip_c = [0] * n, [0] * n  # cover
    for u in reversed(order):
        kids = [v for v in adj[u] if v != parent[u]]
        take_i[u] = w[u] + sum(skip_i[v] for v in kids)
        skip_i[u] = sum(max(take_i[v], skip_i[v]) for v in kids)
        take_c[u] = w[u] + sum(min(take_c[v], skip_c[v]) for v in kids)
        skip_c[u] = sum(take_c[v] for v in kids)
    return max(take_i[0], skip_i[0]), min(take_c[0], skip_c[0])


def _tree_prompt(data: Mapping[str, Any]) -> str:
    n = data["n"]
    edges = "\n".join(f"{u} - {v}" for u, v, _ in data["edges"])
    weights = " ".join(f"W[{i}]={x}" for i, x in enumerate(data["weights"]))
    return (
        "You are given a tree (i.e., a connected undirected graph with no cycles) with "
        f"{n} vertices, labeled from 0 to {n - 1}, and these edges:\n{edges}\nEach vertex has "
        f"a weight: {weights}"
    )


class _TreeChoice(_GraphOpt):
    """The answer is a set of vertices of a vertex-weighted tree."""

    answer_kind = "integer_set"

    def chosen(self, problem: Problem, answer: str) -> list[int] | Verdict:
        chosen = parse_int_list(answer) if answer.strip() else []
        if unknown_vertex(chosen, problem.data["n"]) or len(set(chosen)) != len(chosen):
            return invalid("list distinct vertices of the tree")
        return chosen

    def brute(self, problem: Problem, ok: Any, better: Any) -> str:
        """Best vertex set by exhaustive search (small trees) satisfying ``ok``."""
        n, w = problem.data["n"], problem.data["weights"]
        best: tuple[int, tuple[int, ...]] | None = None
        for mask in range(1 << n):
            chosen = tuple(v for v in range(n) if mask >> v & 1)
            if ok(set(chosen)):
                value = sum(w[v] for v in chosen)
                if best is None or better(value, best[0]):
                    best = (value, chosen)
        assert best is not None
        return " ".join(map(str, best[1]))


@ENVIRONMENTS.register("maximum_independent_set_tree")
class MaximumIndependentSetTree(_TreeChoice):
    """A maximum-weight independent set of a tree; (weight/gold)^3 credit."""

    difficulty_scales = "N = 4 then int(1.1·N + 1) per level; weights 1..10"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        data = _tree_data(rng, grown(4, difficulty), 10)
        prompt = (
            f"{_tree_prompt(data)}\n\nChoose a set of vertices, no two of them joined by an "
            "edge, whose total weight is as large as possible. Output the chosen vertices "
            "separated by spaces; if several sets are optimal, any of them is accepted."
        )
        return Instance(prompt, self._greedy_leaves(data), data)

    @staticmethod
    def _greedy_leaves(data: Mapping[str, Any]) -> str:
        """Reconstruct from the DP: a vertex is taken if that is better given its parent."""
        n, w = data["n"], data["weights"]
        adj: list[list[int]] = [[] for _ in range(n)]
        for u, v, _ in data["edges"]:
            adj[u].append(v)
            adj[v].append(u)
        order, parent = [0], [-1] * n
        for u in order:
            for v in adj[u]:
                if v != parent[u]:
                    parent[v] = u
                    order.append(v)
        take, skip = [0] * n, [0] * n
        for u in reversed(order):
            kids = [v for v in adj[u] if v != parent[u]]
            take[u] = w[u] + sum(skip[v] for v in kids)
            skip[u] = sum(max(take[v], skip[v]) for v in kids)
        chosen = set()
        for u in order:
            if (parent[u] < 0 or parent[u] not in chosen) and take[u] >= skip[u]:
                chosen.add(u)
        return " ".join(map(str, sorted(chosen)))

    def check(self, problem: Problem, answer: str) -> Verdict:
        chosen = self.chosen(problem, answer)
        if isinstance(chosen, Verdict):
            return chosen
        picked = set(chosen)
        if any(u in picked and v in picked for u, v, _ in problem.data["edges"]):
            return invalid("two chosen vertices are joined by an edge")
        got = sum(problem.data["weights"][v] for v in chosen)
        best = _tree_dp(problem.data)[0]
        return graded(ratio_reward(got, best, 3.0), got == best, "a heavier independent set exists")

    def solve(self, problem: Problem) -> str:
        if problem.data["n"] > 12:
            return self._greedy_leaves(problem.data)
        edges = problem.data["edges"]
        return self.brute(
            problem, lambda s: not any(u in s and v in s for u, v, _ in edges), int.__gt__
        )

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        u, v, _ = problem.data["edges"][0]
        return f"{u} {v}"  # two adjacent vertices


@ENVIRONMENTS.register("min_cost_tree_coverage")
class MinCostTreeCoverage(_TreeChoice):
    """A minimum-cost set of vertices touching every edge of a tree; (gold/cost)^3 credit,
    a set that misses an edge is invalid."""

    difficulty_scales = "N = 3 then int(1.1·N + 1) per level; costs 1..10"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        data = _tree_data(rng, grown(3, difficulty), 10)
        prompt = (
            f"{_tree_prompt(data).replace('a weight', 'a cost')}\n\nChoose a set of vertices "
            "such that every edge has at least one chosen endpoint, with the smallest total "
            "cost (the sum of the chosen vertices' costs W). Output the chosen vertices "
            "separated by spaces; if several sets are optimal, any of them is accepted."
        )
        return Instance(prompt, self._complement_witness(data), data)

    @staticmethod
    def _complement_witness(data: Mapping[str, Any]) -> str:
        """The complement of a maximum-weight independent set is a minimum-weight cover."""
        mis = set(map(int, MaximumIndependentSetTree._greedy_leaves(data).split()))
        return " ".join(str(v) for v in range(data["n"]) if v not in mis)

    def check(self, problem: Problem, answer: str) -> Verdict:
        chosen = self.chosen(problem, answer)
        if isinstance(chosen, Verdict):
            return chosen
        picked = set(chosen)
        if any(u not in picked and v not in picked for u, v, _ in problem.data["edges"]):
            return invalid("an edge has no chosen endpoint")
        got = sum(problem.data["weights"][v] for v in chosen)
        best = _tree_dp(problem.data)[1]
        return graded(ratio_reward(best, got, 3.0), got == best, "a cheaper cover exists")

    def solve(self, problem: Problem) -> str:
        if problem.data["n"] > 12:
            return self._complement_witness(problem.data)
        edges = problem.data["edges"]
        return self.brute(problem, lambda s: all(u in s or v in s for u, v, _ in edges), int.__lt__)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        u, v, _ = problem.data["edges"][0]
        rest = [x for x in map(int, answer.split()) if x not in (u, v)] if answer else []
        return " ".join(map(str, rest)) or str(problem.data["n"])  # edge u-v uncovered


# ---- minimum spanning arborescence -------------------------------------------------------
@ENVIRONMENTS.register("minimum_directed_spanning_tree")
class MinimumDirectedSpanningTree(_GraphOpt):
    """A minimum-weight spanning arborescence rooted at r: each other vertex picks the arc
    from its parent; (gold/weight)^5 credit, a choice that is not a tree from r is invalid."""

    difficulty_scales = "N = 4 then int(1.1·N + 1) per level; about 2N arcs"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(4, difficulty)
        root = rng.randrange(n)
        order = [root, *rng.sample([v for v in range(n) if v != root], n - 1)]
        pairs = [(order[rng.randrange(i)], order[i]) for i in range(1, n)]  # reachability
        pairs = add_random_pairs(rng, pairs, list(range(n)), n, directed=True)
        edges = weighted(rng, pairs, 10 + difficulty)
        prompt = (
            f"You are given a directed graph with {n} vertices, labeled from 0 to {n - 1}, "
            f"and these weighted arcs u -> v:\n{edge_lines(edges, True, directed=True)}\n\n"
            f"Select one incoming arc for every vertex other than {root} so that the selected "
            f"arcs form a tree in which every vertex can be reached from {root} (a spanning "
            "arborescence rooted at "
            f"{root}), with the smallest total weight. For each vertex v ≠ {root} in increasing "
            "order, output the start vertex of its selected arc, separated by spaces."
        )
        data = {"n": n, "edges": edges, "root": root}
        return Instance(prompt, self._edmonds(data)[1], data)

    @staticmethod
    def _edmonds(data: Mapping[str, Any]) -> tuple[int, str]:
        """Chu–Liu/Edmonds (own implementation; networkx 3.6's arborescence search misses
        some that exist): the weight and the parent list."""
        n, root = data["n"], data["root"]
        arcs = [(u, v, w, i) for i, (u, v, w) in enumerate(data["edges"]) if v != root and u != v]
        chosen = _chu_liu_edmonds(n, root, arcs)
        parent = {data["edges"][i][1]: data["edges"][i][0] for i in chosen}
        weight = sum(data["edges"][i][2] for i in chosen)
        return weight, " ".join(str(parent[v]) for v in range(n) if v != root)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, root = problem.data["n"], problem.data["root"]
        parents = parse_int_list(answer)
        others = [v for v in range(n) if v != root]
        if len(parents) != len(others):
            return invalid(f"give one start vertex for each of the {len(others)} other vertices")
        arcs = _weights(problem.data["edges"], directed=True)
        parent = dict(zip(others, parents, strict=True))
        if any((p, v) not in arcs for v, p in parent.items()):
            return invalid("a selected arc is not in the graph")
        for v in others:  # every vertex must reach the root by following parents
            seen, u = set(), v
            while u != root:
                if u in seen:
                    return invalid("the selected arcs contain a cycle")
                seen.add(u)
                u = parent[u]
        got = sum(arcs[p, v] for v, p in parent.items())
        best = self._edmonds(problem.data)[0]
        return optimum_verdict(got, best, "a lighter arborescence exists", minimise=True)

    def solve(self, problem: Problem) -> str:
        n, root = problem.data["n"], problem.data["root"]
        incoming: dict[int, list[tuple[int, int]]] = {v: [] for v in range(n)}
        for u, v, w in problem.data["edges"]:
            incoming[v].append((u, w))
        others = [v for v in range(n) if v != root]
        if n > 7:
            return self._edmonds(problem.data)[1]
        best: tuple[int, tuple[int, ...]] | None = None  # brute force over parent choices
        for choice in itertools.product(*(incoming[v] for v in others)):
            parent = {v: u for v, (u, _) in zip(others, choice, strict=True)}
            if all(_reaches(parent, v, root) for v in others):
                weight = sum(w for _, w in choice)
                if best is None or weight < best[0]:
                    best = (weight, tuple(u for u, _ in choice))
        assert best is not None
        return " ".join(map(str, best[1]))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return f"{answer} {problem.data['root']}"  # one parent too many


def _chu_liu_edmonds(n: int, root: int, arcs: list[tuple[int, int, int, int]]) -> set[int]:
    """Ids of the arcs of a minimum spanning arborescence: every vertex takes its cheapest
    incoming arc; a cycle among those is contracted (arcs into it cost w - w(cycle arc)),
    solved recursively, and expanded (the cycle minus the arc replaced by the one entering)."""
    best: dict[int, tuple[int, int, int, int]] = {}
    for arc in arcs:
        if arc[1] != root and (arc[1] not in best or arc[2] < best[arc[1]][2]):
            best[arc[1]] = arc
    if len(best) < n - 1:
        raise ValueError("some vertex cannot be reached from the root")
    colour = dict.fromkeys(range(n), 0)
    cycle: list[int] = []
    for start in range(n):
        path, v = [], start
        while v != root and colour[v] == 0:
            colour[v] = start + 1
            path.append(v)
            v = best[v][0]
        if v != root and colour[v] == start + 1:
            cycle = path[path.index(v) :]
            break
        for x in path:
            colour[x] = -1
    if not cycle:
        return {arc[3] for arc in best.values()}
    inside = set(cycle)
    label, c = {}, 0
    for v in range(n):
        if v not in inside:
            label[v], c = c, c + 1
    merged = c  # the contracted cycle
    reduced, origin = [], {}
    for u, v, w, i in arcs:
        if u in inside and v in inside:
            continue
        nu = merged if u in inside else label[u]
        nv = merged if v in inside else label[v]
        nw = w - best[v][2] if v in inside else w
        reduced.append((nu, nv, nw, i))
        origin[i] = (u, v)
    picked = _chu_liu_edmonds(c + 1, label[root], reduced)
    entering = next(origin[i][1] for i in picked if origin[i][1] in inside)
    return picked | {best[v][3] for v in cycle if v != entering}


def _find(parent: list[int], x: int) -> int:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def _reaches(parent: dict[int, int], v: int, root: int) -> bool:
    seen = set()
    while v != root:
        if v in seen:
            return False
        seen.add(v)
        v = parent[v]
    return True


# ---- smallest max/min ratio path ---------------------------------------------------------
@ENVIRONMENTS.register("minimum_ratio_path")
class MinimumRatioPath(_GraphOpt):
    """A path from s to t whose largest edge weight divided by its smallest is as small as
    possible; (gold/ratio)^5 credit."""

    difficulty_scales = "N = 4 then int(1.1·N + 1) per level; about 1.5N edges, weights 1..30"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(4, difficulty)
        verts = list(range(n))
        pairs = add_random_pairs(rng, random_tree(rng, verts), verts, n // 2 + 1)
        edges = weighted(rng, pairs, 30)
        s, t = rng.sample(verts, 2)
        prompt = (
            f"You are given an undirected graph with {n} vertices, labeled from 0 to {n - 1}, "
            f"and these weighted edges:\n{edge_lines(edges, True)}\n\nFind a path from vertex "
            f"{s} to vertex {t} (a sequence of vertices, each joined to the next by an edge) "
            "that minimises the ratio (largest edge weight on the path) / (smallest edge "
            "weight on the path). Output the vertices of the path in order, separated by "
            "spaces; if several paths are optimal, any of them is accepted."
        )
        data = {"n": n, "edges": edges, "source": s, "target": t}
        return Instance(prompt, self._witness(data)[1], data)

    @staticmethod
    def _witness(data: Mapping[str, Any]) -> tuple[Fraction, str]:
        """For each smallest-allowed weight, add edges in increasing weight until s and t
        connect (union–find); the best ratio's band gives a path by BFS."""
        edges = sorted(data["edges"], key=lambda e: e[2])
        s, t = data["source"], data["target"]
        best: tuple[Fraction, int, int] | None = None
        for i, (_, _, low) in enumerate(edges):
            parent = list(range(data["n"]))
            for u, v, w in edges[i:]:
                parent[_find(parent, u)] = _find(parent, v)
                if _find(parent, s) == _find(parent, t):
                    ratio = Fraction(w, low)
                    if best is None or ratio < best[0]:
                        best = (ratio, low, w)
                    break
        assert best is not None
        ratio, low, high = best
        g = nx.Graph()
        g.add_edges_from((u, v) for u, v, w in data["edges"] if low <= w <= high)
        return ratio, " ".join(map(str, nx.shortest_path(g, s, t)))

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        path = _vertices(answer)
        weights = _weights(d["edges"])
        if len(path) < 2 or path[0] != d["source"] or path[-1] != d["target"]:
            return invalid("the path must go from the source to the target")
        if len(path) > 4 * d["n"] or any(p not in weights for p in itertools.pairwise(path)):
            return invalid("consecutive vertices are not joined by an edge")
        used = [weights[p] for p in itertools.pairwise(path)]
        got = Fraction(max(used), min(used))
        best = self._witness(d)[0]
        return graded(
            ratio_reward(best, got, 5.0), got == best, "a path with a smaller ratio exists"
        )

    def solve(self, problem: Problem) -> str:
        # Independent: try every weight band [low, high] of edge weights, smallest ratio
        # first, and look for a path inside it.
        d = problem.data
        ws = sorted({w for _, _, w in d["edges"]})
        bands = sorted((Fraction(hi, lo), lo, hi) for lo in ws for hi in ws if hi >= lo)
        for _, lo, hi in bands:
            g = nx.Graph()
            g.add_nodes_from(range(d["n"]))
            g.add_edges_from((u, v) for u, v, w in d["edges"] if lo <= w <= hi)
            if nx.has_path(g, d["source"], d["target"]):
                return " ".join(map(str, nx.shortest_path(g, d["source"], d["target"])))
        raise AssertionError("the graph is connected")

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rpartition(" ")[0] or str(problem.data["source"])  # stops short
