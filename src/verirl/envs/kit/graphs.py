"""Graph helpers environment families share: random trees and extra edges, weights, edge
listings, adjacency lists and breadth-first distances, reading vertex lists and pairs from an
answer."""

from __future__ import annotations

import random
import re
from collections import deque
from collections.abc import Mapping
from typing import Any

import networkx as nx

from verirl.envs.base import parse_int
from verirl.envs.kit.wording import plural
from verirl.envs.reading.normalize import strip_delimiters


def random_tree(rng: random.Random, vertices: list[int]) -> list[tuple[int, int]]:
    """A uniformly-attached random tree on ``vertices`` (each joins a random earlier one)."""
    order = list(vertices)
    rng.shuffle(order)
    return [(order[i], order[rng.randrange(i)]) for i in range(1, len(order))]


def random_tree_edges(rng: random.Random, n: int, base: int = 0) -> list[list[int]]:
    """The edges ``[u, v]`` (``u < v``) of a :func:`random_tree` on ``base .. n + base - 1``,
    in a shuffled order."""
    edges = [sorted(e) for e in random_tree(rng, list(range(base, n + base)))]
    rng.shuffle(edges)
    return edges


def adjacency(n: int, edges: list[list[int]], base: int = 0) -> dict[int, list[int]]:
    """Neighbour lists of the undirected graph on ``base .. n + base - 1`` with ``edges``
    (pairs, or triples whose third entry is ignored), in the order the edges are listed."""
    adj: dict[int, list[int]] = {v: [] for v in range(base, n + base)}
    for e in edges:
        adj[e[0]].append(e[1])
        adj[e[1]].append(e[0])
    return adj


def bfs_distances(adj: Mapping[int, list[int]], src: int) -> dict[int, int]:
    """Edge counts from ``src`` to every vertex it reaches, by breadth-first search; the dict
    lists the vertices in the order the search reaches them (nearest first)."""
    dist = {src: 0}
    queue = deque([src])
    while queue:
        v = queue.popleft()
        for w in adj[v]:
            if w not in dist:
                dist[w] = dist[v] + 1
                queue.append(w)
    return dist


def add_random_pairs(
    rng: random.Random,
    pairs: list[tuple[int, int]],
    vertices: list[int],
    count: int,
    directed: bool = False,
) -> list[tuple[int, int]]:
    """``pairs`` plus up to ``count`` new random distinct pairs over ``vertices``."""
    seen = {_key(u, v, directed) for u, v in pairs}
    out = list(pairs)
    limit = len(vertices) * (len(vertices) - 1) // (1 if directed else 2)
    tries = 0
    while count > 0 and len(seen) < limit and tries < 30 * count + 30:
        tries += 1
        u, v = rng.sample(vertices, 2)
        if _key(u, v, directed) in seen:
            continue
        seen.add(_key(u, v, directed))
        out.append((u, v))
        count -= 1
    return out


def _key(u: int, v: int, directed: bool) -> tuple[int, int]:
    return (u, v) if directed else (min(u, v), max(u, v))


def weighted(rng: random.Random, pairs: list[tuple[int, int]], wmax: int) -> list[list[int]]:
    """Attach a weight in ``1..wmax`` to each pair, in a shuffled presentation order."""
    edges = [[u, v, rng.randint(1, wmax)] for u, v in pairs]
    rng.shuffle(edges)
    return edges


def edge_lines(edges: list[list[int]], show_weight: bool, directed: bool = False) -> str:
    """One edge per line: ``u - v (weight w)`` / ``u -> v``."""
    sep = " -> " if directed else " - "
    lines = []
    for u, v, w in edges:
        lines.append(f"{u}{sep}{v}" + (f" (weight {w})" if show_weight else ""))
    return "\n".join(lines)


def unweighted(rng: random.Random, pairs: list[tuple[int, int]]) -> list[list[int]]:
    """Weight-1 edges for ``pairs``, in a shuffled presentation order."""
    edges = [[u, v, 1] for u, v in pairs]
    rng.shuffle(edges)
    return edges


def graph_intro(n: int, edges: list[list[int]], directed: bool = False) -> str:
    """The opening of a prompt about an unweighted graph: its vertices and its edge list."""
    kind = "a directed" if directed else "an undirected"
    noun = "arc" if directed else "edge"
    return (
        f"You are given {kind} graph with {n} vertices labeled 0 to {n - 1} and "
        f"{plural(len(edges), noun)}:\n{edge_lines(edges, False, directed)}"
    )


def to_graph(data: Mapping[str, Any], directed: bool = False) -> nx.Graph:
    """The networkx graph of ``data`` (``n`` vertices, weighted ``edges``)."""
    g: nx.Graph = nx.DiGraph() if directed else nx.Graph()
    g.add_nodes_from(range(int(data["n"])))
    for u, v, w in data["edges"]:
        g.add_edge(int(u), int(v), weight=int(w))
    return g


# ---- answer parsing helpers --------------------------------------------------------------
_LIST_ALLOWED = re.compile(r"[\d\s,;()\[\]{}\-]*")
_ARROWS = re.compile(r"->|→|—|–|\\to|\\rightarrow")
_AND = re.compile(r"(?<![A-Za-z])and(?![A-Za-z])")
_DASH = re.compile(r"(?<=\d)\s*-\s*(?=\d)")
_SIGNED_INT = re.compile(r"-?\d+")


def parse_vertices(text: str) -> list[int]:
    """Read ``"0, 3, 5"`` / ``"0 -> 3 -> 5"`` / ``"[0 3 5]"`` / ``"0-3-5"`` as integers.

    Raises ``ValueError`` (→ wrong format) for anything but numbers and separators.
    """
    t = strip_delimiters(text.strip())  # \{0, 2, 4\}, \langle ... \rangle
    t = _ARROWS.sub(",", t.replace("\\{", "{").replace("\\}", "}"))
    t = _AND.sub(",", t)
    if len(t) > 50_000 or not _LIST_ALLOWED.fullmatch(t):
        raise ValueError("expected a list of vertex numbers")
    t = _DASH.sub(",", t)  # "0-3" means the pair/step 0, 3
    nums = _SIGNED_INT.findall(t)
    # int(x) is what parse_int returns for such a digit run up to its 4000-character limit
    return [int(x) if len(x) <= 4000 else parse_int(x) for x in nums]


def parse_pairs(text: str) -> list[tuple[int, int]]:
    """Read an edge list ``"0-1, 2-3"`` / ``"(0,1), (2,3)"`` into pairs."""
    nums = parse_vertices(text)
    if len(nums) % 2:
        raise ValueError("an odd number of endpoints cannot form edges")
    return [(nums[i], nums[i + 1]) for i in range(0, len(nums), 2)]


def unknown_vertex(values: list[int], n: int) -> bool:
    return any(v < 0 or v >= n for v in values)
