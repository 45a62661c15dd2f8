"""Graphs, part 1: weighted paths and spanning trees (shortest paths, MST, tree diameter).

Every graph has vertices ``0..n-1`` and is stored in ``Problem.data`` as an edge list
``[[u, v, w], ...]`` (``w`` = 1 when unweighted). networkx is the independent solver; verifiers
check the answer against the graph (a path must use real edges, a tree must span the graph) so
any optimal answer earns full reward. Partial credit follows RLVE: (gold/answer)^5 for
minimisation answers, (min/max)^10 for numbers. The helpers here are shared with
:mod:`verirl.envs.graphs.structure` and :mod:`verirl.envs.graphs.np_complete`.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import networkx as nx

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    IntegerAnswer,
    invalid,
    optimum_verdict,
)
from verirl.envs.kit.graphs import (
    add_random_pairs,
    edge_lines,
    parse_pairs,
    parse_vertices,
    random_tree,
    to_graph,
    unknown_vertex,
    weighted,
)
from verirl.types import Problem, Verdict

Edge = tuple[int, int, int]


class GraphEnv(Environment):
    """Shared pieces of graph environments: size = vertices + edges."""

    size_measure = "vertices plus edges"

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"] + len(problem.data["edges"]))


def _weighted_connected(rng: random.Random, n: int, extra: int, wmax: int) -> list[list[int]]:
    verts = list(range(n))
    return weighted(rng, add_random_pairs(rng, random_tree(rng, verts), verts, extra), wmax)


def _header(n: int, edges: list[list[int]]) -> str:
    return (
        f"You are given an undirected weighted graph with {n} vertices labeled 0 to {n - 1} "
        f"and {len(edges)} edges:\n{edge_lines(edges, True)}"
    )


# ---- environments -------------------------------------------------------------------------
class _PathEnv(GraphEnv):
    def _instance(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        n = 4 + difficulty
        while True:  # a pair whose shortest path is not one edge (73% were, at d = 0)
            edges = _weighted_connected(rng, n, 1 + difficulty // 2 + n // 3, 9 + difficulty)
            g = to_graph({"n": n, "edges": edges})
            for _ in range(30):
                source, target = rng.sample(range(n), 2)
                if len(nx.dijkstra_path(g, source, target)) > 2:
                    return {"n": n, "edges": edges, "source": source, "target": target}

    @staticmethod
    def distance(problem: Problem) -> int:
        g = to_graph(problem.data)
        return int(nx.dijkstra_path_length(g, problem.data["source"], problem.data["target"]))


@ENVIRONMENTS.register("shortest_path_length")
class ShortestPathLength(_PathEnv, IntegerAnswer):
    """Distance between two vertices of a weighted graph; (min/max)^10 credit."""

    tags = ("graphs",)
    difficulty_scales = (
        "vertices: 4 + d; extra edges beyond a spanning tree: 1 + d//2 + n//3; the shortest "
        "path has two edges or more"
    )
    wrong_detail = "that is not the shortest distance"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        data = self._instance(difficulty, rng)
        prompt = (
            f"{_header(data['n'], data['edges'])}\n\nWhat is the length (total weight) of a "
            f"shortest path from vertex {data['source']} to vertex {data['target']}? "
            "Give the length as a single integer."
        )
        g = to_graph(data)
        gold = nx.shortest_path_length(g, data["source"], data["target"], weight="weight")
        return Instance(prompt, str(gold), data)

    def solve_int(self, problem: Problem) -> int:
        return self.distance(problem)


@ENVIRONMENTS.register("shortest_path")
class ShortestPath(_PathEnv):
    """A minimum-weight path; any shortest path is accepted, longer valid paths earn
    (gold/weight)^5."""

    answer_kind = "integer_list"
    tags = ("graphs",)
    difficulty_scales = (
        "vertices: 4 + d; extra edges beyond a spanning tree: 1 + d//2 + n//3; the shortest "
        "path has two edges or more"
    )

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        data = self._instance(difficulty, rng)
        prompt = (
            f"{_header(data['n'], data['edges'])}\n\nFind a shortest path (minimum total "
            f"weight) from vertex {data['source']} to vertex {data['target']}. Give the "
            "vertices of the path in order, starting with "
            f"{data['source']} and ending with {data['target']}, separated by commas."
        )
        g = to_graph(data)
        path = nx.dijkstra_path(g, data["source"], data["target"])
        return Instance(prompt, ", ".join(map(str, path)), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        path = parse_vertices(answer)
        d = problem.data
        if not path:
            return invalid("the path is empty")
        if unknown_vertex(path, d["n"]):
            return invalid("the path uses a vertex that is not in the graph")
        if path[0] != d["source"] or path[-1] != d["target"]:
            return invalid("the path must start at the source and end at the target")
        g = to_graph(d)
        total = 0
        for a, b in itertools.pairwise(path):
            if not g.has_edge(a, b):
                return invalid(f"there is no edge between {a} and {b}")
            total += g[a][b]["weight"]
        worse = "a valid path, but not a shortest one"
        return optimum_verdict(total, self.distance(problem), worse, minimise=True)

    def solve(self, problem: Problem) -> str:
        g = to_graph(problem.data)
        return ", ".join(
            map(str, nx.dijkstra_path(g, problem.data["source"], problem.data["target"]))
        )

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        # drop the target: the path no longer ends where it must
        return ", ".join(answer.split(", ")[:-1]) or str(problem.data["n"])


class _SpanningEnv(GraphEnv):
    def _instance(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        n = 4 + difficulty
        return {"n": n, "edges": _weighted_connected(rng, n, 2 + difficulty, 9 + difficulty)}

    @staticmethod
    def mst_weight(problem: Problem) -> int:
        tree = nx.minimum_spanning_tree(to_graph(problem.data), algorithm="kruskal")
        return int(tree.size(weight="weight"))


@ENVIRONMENTS.register("mst_weight")
class MinimumSpanningTreeWeight(_SpanningEnv, IntegerAnswer):
    """Total weight of a minimum spanning tree; (min/max)^10 credit."""

    tags = ("graphs",)
    difficulty_scales = "vertices: 4 + d; extra edges beyond a spanning tree: 2 + d"
    wrong_detail = "that is not the minimum spanning tree weight"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        data = self._instance(difficulty, rng)
        prompt = (
            f"{_header(data['n'], data['edges'])}\n\nWhat is the total weight of a minimum "
            "spanning tree of this graph? Give it as a single integer."
        )
        tree = nx.minimum_spanning_tree(to_graph(data), algorithm="prim")
        return Instance(prompt, str(int(tree.size(weight="weight"))), data)

    def solve_int(self, problem: Problem) -> int:
        return self.mst_weight(problem)


@ENVIRONMENTS.register("minimum_spanning_tree")
class MinimumSpanningTree(_SpanningEnv):
    """The edges of a minimum spanning tree; any one is accepted, heavier spanning trees earn
    (gold/weight)^5."""

    tags = ("graphs",)
    difficulty_scales = "vertices: 4 + d; extra edges beyond a spanning tree: 2 + d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        data = self._instance(difficulty, rng)
        prompt = (
            f"{_header(data['n'], data['edges'])}\n\nFind a minimum spanning tree of this "
            f"graph. Give its {data['n'] - 1} edges as pairs u-v separated by commas "
            "(for example: 0-2, 2-1)."
        )
        return Instance(prompt, self._tree_text(data), data)

    @staticmethod
    def _tree_text(data: dict[str, Any]) -> str:
        tree = nx.minimum_spanning_tree(to_graph(data), algorithm="kruskal")
        return ", ".join(f"{u}-{v}" for u, v in sorted(tree.edges()))

    def check(self, problem: Problem, answer: str) -> Verdict:
        pairs = parse_pairs(answer)
        n = problem.data["n"]
        if len(pairs) != n - 1:
            return invalid(f"a spanning tree of {n} vertices has exactly {n - 1} edges")
        if unknown_vertex([x for p in pairs for x in p], n):
            return invalid("an edge uses a vertex that is not in the graph")
        g = to_graph(problem.data)
        tree = nx.Graph()
        tree.add_nodes_from(range(n))
        total = 0
        for u, v in pairs:
            if not g.has_edge(u, v):
                return invalid(f"{u}-{v} is not an edge of the graph")
            if tree.has_edge(u, v):
                return invalid(f"the edge {u}-{v} is listed twice")
            tree.add_edge(u, v)
            total += g[u][v]["weight"]
        if not nx.is_tree(tree):
            return invalid("the edges do not form a spanning tree (there is a cycle)")
        worse = "a spanning tree, but not a minimum one"
        return optimum_verdict(total, self.mst_weight(problem), worse, minimise=True)

    def solve(self, problem: Problem) -> str:
        return self._tree_text(dict(problem.data))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return ", ".join(answer.split(", ")[1:])  # one edge short


@ENVIRONMENTS.register("tree_diameter")
class TreeDiameter(GraphEnv, IntegerAnswer):
    """Longest path length in a weighted tree; (min/max)^10 credit."""

    tags = ("graphs",)
    difficulty_scales = "tree vertices: 3 + d; edge weights up to 9 + d"
    wrong_detail = "that is not the diameter"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        edges = weighted(rng, random_tree(rng, list(range(n))), 9 + difficulty)
        data = {"n": n, "edges": edges}
        prompt = (
            f"You are given a tree with {n} vertices labeled 0 to {n - 1} and these weighted "
            f"edges:\n{edge_lines(edges, True)}\n\nThe length of a path is the sum of its edge "
            "weights. What is the diameter of the tree, i.e. the length of the longest path "
            "between two vertices? Give it as a single integer."
        )
        g = to_graph(data)
        gold = max(max(nx.single_source_dijkstra_path_length(g, v).values()) for v in g)
        return Instance(prompt, str(gold), data)

    @staticmethod
    def diameter(problem: Problem) -> int:
        # two sweeps: the farthest vertex from anywhere is an end of a longest path
        g = to_graph(problem.data)
        far = nx.single_source_dijkstra_path_length(g, 0)
        end = max(far, key=lambda v: (far[v], -v))
        return int(max(nx.single_source_dijkstra_path_length(g, end).values()))

    def solve_int(self, problem: Problem) -> int:
        return self.diameter(problem)
