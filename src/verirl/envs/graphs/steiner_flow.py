"""Graph optimisation, part 3: a minimum Steiner tree and a minimum-cost maximum flow.

Rows MinimumSteinerTree and MinimumCost_MaximumFlow of the RLVE catalogue (Zeng et al., *RLVE:
Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable Environments*,
arXiv:2511.07317). The Steiner verifier checks that the chosen edges exist and connect every
terminal, then grades (gold/weight)^5 against the Dreyfus–Wagner optimum; ``solve`` searches
subsets of Steiner vertices. The flow verifier checks capacities and conservation, then grades
with RLVE's composite rule: below the maximum flow value, half of (value/max)^5; at the maximum,
(min cost/cost)^5. networkx's network simplex gives the optimum, ``solve`` runs its own
successive shortest paths.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping
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
from verirl.envs.kit.graphs import add_random_pairs, edge_lines, parse_pairs, random_tree
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict

TAGS = ("rlve", "graphs")


def steiner_weight(n: int, edges: list[list[int]], terminals: list[int]) -> int:
    """Dreyfus–Wagner: best[S][v] = lightest tree spanning the terminal set S and vertex v,
    built from subsets (merge at v) and shortest paths (move v)."""
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_weighted_edges_from(edges)
    dist = dict(nx.all_pairs_dijkstra_path_length(g))
    k = len(terminals)
    inf = float("inf")
    best = [[inf] * n for _ in range(1 << k)]
    for i, t in enumerate(terminals):
        for v in range(n):
            best[1 << i][v] = dist[t].get(v, inf)
    for mask in range(1, 1 << k):
        if mask & (mask - 1) == 0:
            continue
        row = best[mask]
        sub = (mask - 1) & mask
        while sub:
            other = mask ^ sub
            if sub < other:
                for v in range(n):
                    row[v] = min(row[v], best[sub][v] + best[other][v])
            sub = (sub - 1) & mask
        for v in range(n):
            row[v] = min(row[u] + dist[u].get(v, inf) for u in range(n))
    return int(min(best[(1 << k) - 1]))


@ENVIRONMENTS.register("minimum_steiner_tree")
class MinimumSteinerTree(GraphEnv):
    """The lightest set of edges connecting all terminal vertices; (gold/weight)^5 credit,
    edges that leave a terminal disconnected are invalid."""

    tags = TAGS
    difficulty_scales = (
        "N = 5 + d//3 vertices (at most 16); 3 + d//10 terminals (at most 6); 2 + d//3 extra edges"
    )
    size_measure = "vertices plus edges"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(16, 5 + difficulty // 3)
        verts = list(range(n))
        pairs = add_random_pairs(rng, random_tree(rng, verts), verts, 2 + difficulty // 3)
        edges = [[u, v, rng.randint(1, 10)] for u, v in pairs]
        rng.shuffle(edges)
        terminals = sorted(rng.sample(verts, min(6, 3 + difficulty // 10)))
        prompt = (
            f"You are given an undirected graph with {n} vertices, labeled from 0 to {n - 1}, "
            f"and these weighted edges:\n{edge_lines(edges, True)}\n\nChoose a set of edges "
            f"that connects all of the vertices {', '.join(map(str, terminals))} (other "
            "vertices may be used too) with the smallest total weight. Output the chosen edges "
            "as u-v pairs separated by commas; if several choices are optimal, any of them is "
            "accepted."
        )
        data = {"n": n, "edges": edges, "terminals": terminals}
        return Instance(prompt, self._search(data), data)

    @staticmethod
    def _search(data: Mapping[str, Any]) -> str:
        """Every set of extra (Steiner) vertices: the MST of the induced subgraph."""
        n, terminals = data["n"], data["terminals"]
        others = [v for v in range(n) if v not in terminals]
        g = nx.Graph()
        g.add_weighted_edges_from(data["edges"])
        best: tuple[float, list[tuple[int, int]]] = (float("inf"), [])
        for r in range(len(others) + 1):
            for extra in itertools.combinations(others, r):
                sub = g.subgraph([*terminals, *extra])
                if sub.number_of_nodes() == len(terminals) + r and nx.is_connected(sub):
                    tree = nx.minimum_spanning_tree(sub)
                    weight = tree.size(weight="weight")
                    if weight < best[0]:
                        best = (weight, sorted(tuple(sorted(e)) for e in tree.edges))
        return ", ".join(f"{u}-{v}" for u, v in best[1])

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        text = normalize.clean(answer)
        pairs = parse_pairs(text) if text.strip() else []
        weights: dict[tuple[int, int], int] = {}
        for u, v, w in d["edges"]:
            weights[(u, v)] = weights[(v, u)] = w
        if any(p not in weights for p in pairs):
            return invalid("a listed pair is not an edge")
        chosen = {(min(p), max(p)) for p in pairs}
        g = nx.Graph()
        g.add_nodes_from(d["terminals"])
        g.add_edges_from(chosen)
        reached = nx.node_connected_component(g, d["terminals"][0])
        if any(t not in reached for t in d["terminals"]):
            return invalid("the chosen edges do not connect all terminals")
        got = sum(weights[p] for p in chosen)
        best = steiner_weight(d["n"], d["edges"], d["terminals"])
        return optimum_verdict(got, best, "a lighter connection exists", minimise=True)

    def solve(self, problem: Problem) -> str:
        return self._search(problem.data)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return ", ".join(answer.split(", ")[1:])  # a tree edge fewer disconnects it


# ---- minimum-cost maximum flow -----------------------------------------------------------
def _path_arcs(via: list[int], to: list[int], s: int, t: int) -> list[int]:
    """The residual arcs of the path to ``t`` recorded in ``via`` (each arc's tail is the
    head of its twin ``e ^ 1``)."""
    out, v = [], t
    while v != s:
        out.append(via[v])
        v = to[via[v] ^ 1]
    return out


def _successive_shortest_paths(n: int, arcs: list[list[int]], s: int, t: int) -> list[int]:
    """Flow per arc: augment along cheapest residual paths (Bellman–Ford) until none left."""
    graph: list[list[int]] = [[] for _ in range(n)]
    to: list[int] = []
    cap: list[int] = []
    cost: list[int] = []
    for u, v, c, w in arcs:
        for a, b, cc, ww in ((u, v, c, w), (v, u, 0, -w)):
            graph[a].append(len(to))
            to.append(b)
            cap.append(cc)
            cost.append(ww)
    while True:
        dist = [float("inf")] * n
        via = [-1] * n
        dist[s] = 0
        for _ in range(n):
            changed = False
            for u in range(n):
                if dist[u] == float("inf"):
                    continue
                for e in graph[u]:
                    if cap[e] > 0 and dist[u] + cost[e] < dist[to[e]]:
                        dist[to[e]], via[to[e]] = dist[u] + cost[e], e
                        changed = True
            if not changed:
                break
        if dist[t] == float("inf"):
            break
        path = _path_arcs(via, to, s, t)
        push = min(cap[e] for e in path)
        for e in path:
            cap[e] -= push
            cap[e ^ 1] += push
    return [cap[2 * i + 1] for i in range(len(arcs))]


@ENVIRONMENTS.register("minimum_cost_maximum_flow")
class MinimumCostMaximumFlow(GraphEnv):
    """A maximum flow from 0 to N-1 with the least cost. Below the maximum value: half of
    (value/max)^5; at the maximum: (min cost/cost)^5; invalid if a capacity or the
    conservation at a vertex is broken."""

    tags = TAGS
    difficulty_scales = "N = 4 + d//2 vertices; about 2N arcs; capacities 1..5 + d//3, costs 1..9"
    size_measure = "vertices plus arcs"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty // 2
        order = [0, *rng.sample(range(1, n - 1), n - 2), n - 1]
        pairs = [(order[i], order[i + 1]) for i in range(n - 1)]  # a path 0 → N-1
        pairs = add_random_pairs(rng, pairs, list(range(n)), n, directed=True)
        pairs = [(u, v) for u, v in pairs if v != 0 and u != n - 1]
        arcs = [[u, v, rng.randint(1, 5 + difficulty // 3), rng.randint(1, 9)] for u, v in pairs]
        rng.shuffle(arcs)
        listing = "\n".join(
            f"arc {i}: {u} -> {v} (capacity {c}, cost {w})" for i, (u, v, c, w) in enumerate(arcs)
        )
        prompt = (
            f"You are given a directed graph with {n} vertices, labeled from 0 to {n - 1}, and "
            f"these arcs:\n{listing}\n\nSend as much flow as possible from vertex 0 to vertex "
            f"{n - 1} (every arc carries a non-negative integer amount at most its capacity, "
            "and at every other vertex the inflow equals the outflow); among all maximum flows, "
            "take one whose total cost (amount × cost summed over arcs) is smallest. Output the "
            f"amount on each arc, from arc 0 to arc {len(arcs) - 1}, separated by spaces."
        )
        data = {"n": n, "edges": arcs}
        flow = _successive_shortest_paths(n, arcs, 0, n - 1)
        return Instance(prompt, " ".join(map(str, flow)), data)

    @staticmethod
    def _optimum(data: Mapping[str, Any]) -> tuple[int, int]:
        g = nx.DiGraph()
        g.add_nodes_from(range(data["n"]))
        for u, v, c, w in data["edges"]:
            g.add_edge(u, v, capacity=c, weight=w)
        flow = nx.max_flow_min_cost(g, 0, data["n"] - 1)
        value = sum(flow[0][v] for v in flow[0])
        return value, nx.cost_of_flow(g, flow)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, arcs = problem.data["n"], problem.data["edges"]
        amounts = parse_int_list(answer)
        if len(amounts) != len(arcs):
            return invalid(f"give {len(arcs)} amounts, one per arc")
        if any(not 0 <= f <= c for f, (_, _, c, _) in zip(amounts, arcs, strict=True)):
            return invalid("an amount is negative or above its capacity")
        net = [0] * n
        for f, (u, v, _, _) in zip(amounts, arcs, strict=True):
            net[u] += f
            net[v] -= f
        if any(net[v] for v in range(1, n - 1)):
            return invalid("inflow and outflow differ at some vertex")
        value = net[0]
        cost = sum(f * w for f, (_, _, _, w) in zip(amounts, arcs, strict=True))
        best_value, best_cost = self._optimum(problem.data)
        if value < best_value:
            return graded(
                0.5 * ratio_reward(value, best_value, 5.0), False, "more flow can be sent"
            )
        return optimum_verdict(cost, best_cost, "a cheaper maximum flow exists", minimise=True)

    def solve(self, problem: Problem) -> str:
        d = problem.data
        return " ".join(map(str, _successive_shortest_paths(d["n"], d["edges"], 0, d["n"] - 1)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rpartition(" ")[0]  # one amount missing
