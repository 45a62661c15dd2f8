"""The graph helpers families share (kit/graphs.py): random tree edges, adjacency lists and
breadth-first distances, against networkx."""

from __future__ import annotations

import random

import networkx as nx

from verirl.envs.kit.graphs import (
    adjacency,
    bfs_distances,
    random_tree_edges,
    unweighted,
    weighted,
)


def test_random_tree_edges_form_a_tree_on_the_labels() -> None:
    rng = random.Random(5)
    for n in range(1, 15):
        for base in (0, 1):
            edges = random_tree_edges(rng, n, base)
            assert all(u < v for u, v in edges)
            g = nx.Graph()
            g.add_nodes_from(range(base, n + base))
            g.add_edges_from(map(tuple, edges))
            assert nx.is_tree(g) and set(g) == set(range(base, n + base))


def test_adjacency_lists_every_edge_both_ways() -> None:
    adj = adjacency(4, [[1, 2], [2, 3, 9], [1, 4]], base=1)
    assert adj == {1: [2, 4], 2: [1, 3], 3: [2], 4: [1]}
    assert adjacency(2, []) == {0: [], 1: []}


def test_bfs_distances_against_networkx() -> None:
    rng = random.Random(7)
    for trial in range(40):
        n = rng.randint(1, 12)
        edges = [[u, v] for u in range(n) for v in range(u + 1, n) if rng.random() < 0.25]
        adj = adjacency(n, edges)
        g = nx.Graph()
        g.add_nodes_from(range(n))
        g.add_edges_from(map(tuple, edges))
        for src in range(n):
            dist = bfs_distances(adj, src)
            assert dist == dict(nx.single_source_shortest_path_length(g, src)), trial
            assert list(dist.values()) == sorted(dist.values())  # nearest first


def test_weighted_and_unweighted_keep_every_pair_once() -> None:
    pairs = [(0, 1), (1, 2), (2, 3), (0, 3)]
    edges = weighted(random.Random(1), pairs, 5)
    assert sorted((u, v) for u, v, _ in edges) == sorted(pairs)
    assert all(1 <= w <= 5 for _, _, w in edges)
    plain = unweighted(random.Random(1), pairs)
    assert sorted(map(tuple, plain)) == sorted((u, v, 1) for u, v in pairs)
