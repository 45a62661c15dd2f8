"""Trees, choosing and building: the vertex nearest to all others, a black/white colouring
maximising same-colour distances, a split into equal connected parts, a walk visiting the most
vertices, and the highest-scoring binary tree over a fixed inorder.

RLVE-Gym rows TreeCenter, TreeColoring, TreeEvenPartitioning, TreeMaximumVisitedVertex and
WeightedBinaryTree (Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for Language
Models with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A). Verifiers
evaluate the answer on the tree, so every optimal answer is accepted, and score it by the
row's ratio: (gold/answer)^8 for the centre, (answer/gold)^2, ^3 or ^5 for the maximisations,
(connected parts/all)^5 for the partition.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    parse_int,
    parse_int_list,
    ratio_reward,
)
from verirl.envs.kit.graphs import adjacency, random_tree_edges
from verirl.envs.kit.wording import plural
from verirl.types import Problem, Verdict

TAGS = ("rlve", "trees")


def _weighted_text(edges: list[list[int]]) -> str:
    return "\n".join(f"{u} - {v} (weight {w})" for u, v, w in edges)


def _weighted_distances(n: int, edges: list[list[int]], src: int) -> list[int]:
    adj: dict[int, list[tuple[int, int]]] = {v: [] for v in range(n)}
    for u, v, w in edges:
        adj[u].append((v, w))
        adj[v].append((u, w))
    dist = [-1] * n
    dist[src] = 0
    stack = [src]
    while stack:
        v = stack.pop()
        for w, c in adj[v]:
            if dist[w] < 0:
                dist[w] = dist[v] + c
                stack.append(w)
    return dist


@ENVIRONMENTS.register("tree_center")
class TreeCenter(Environment):
    """The vertex minimising the sum of weighted distances to all vertices: (gold/answer)^8."""

    tags = TAGS
    answer_kind = "integer"
    difficulty_scales = "N = 4 + d vertices; edge weights 1..10"
    size_measure = "vertices N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        edges = [[u, v, rng.randint(1, 10)] for u, v in random_tree_edges(rng, n)]
        prompt = (
            f"You are given a tree (a connected undirected graph with no cycles) with {n} "
            f"vertices labeled 0 to {n - 1} and these weighted edges:\n{_weighted_text(edges)}\n\n"
            "Find a vertex v that minimises the sum of the distances from v to all vertices "
            "(the distance is the total weight of the path). Give that vertex."
        )
        data = {"n": n, "edges": edges}
        return Instance(prompt, str(self._best(data)), data)

    def _costs(self, data: Mapping[str, Any]) -> list[int]:
        return [sum(_weighted_distances(data["n"], data["edges"], v)) for v in range(data["n"])]

    def _best(self, data: Mapping[str, Any]) -> int:
        costs = self._costs(data)
        return costs.index(min(costs))

    def check(self, problem: Problem, answer: str) -> Verdict:
        v = parse_int(answer)
        n = problem.data["n"]
        if not 0 <= v < n:
            return invalid(f"vertices are labeled 0 to {n - 1}")
        costs = self._costs(problem.data)
        best = min(costs)
        ok = costs[v] == best
        return graded(
            ratio_reward(best, costs[v], 8.0),
            ok,
            "correct" if ok else "another vertex has a smaller sum",
        )

    def solve(self, problem: Problem) -> str:
        """Rerooting: moving from v to a child c over weight w changes the sum by
        w·(n − 2·size(c))."""
        n, edges = problem.data["n"], problem.data["edges"]
        adj: dict[int, list[tuple[int, int]]] = {v: [] for v in range(n)}
        for u, v, w in edges:
            adj[u].append((v, w))
            adj[v].append((u, w))
        order, parent = [0], {0: (-1, 0)}
        for v in order:
            for c, w in adj[v]:
                if c not in parent:
                    parent[c] = (v, w)
                    order.append(c)
        size = dict.fromkeys(range(n), 1)
        for v in reversed(order[1:]):
            size[parent[v][0]] += size[v]
        total = {0: sum(_weighted_distances(n, edges, 0))}
        for v in order[1:]:
            p, w = parent[v]
            total[v] = total[p] + w * (n - 2 * size[v])
        best = min(total.values())
        return str(min(v for v in total if total[v] == best))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return str(problem.data["n"])  # out of range

    def near_misses(self, problem: Problem) -> list[str]:
        """The default integer traps, less any that name another optimal vertex (a tree can
        have two medians)."""
        return [
            m
            for m in super().near_misses(problem)
            if not self.verify(problem, f"\\boxed{{{m}}}").correct
        ]

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


@ENVIRONMENTS.register("tree_coloring")
class TreeColoring(Environment):
    """Colour exactly K vertices black to maximise Σ dist over black pairs + Σ dist over
    white pairs: (answer/gold)^2."""

    tags = TAGS
    answer_kind = "integer_set"
    difficulty_scales = "N = 3 + d vertices (at most 16 for the reference search); K in 1..N-1"
    size_measure = "vertices N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(16, 3 + difficulty)
        k = rng.randint(1, n - 1)
        edges = [[u, v, rng.randint(1, 10)] for u, v in random_tree_edges(rng, n)]
        data = {"n": n, "k": k, "edges": edges}
        prompt = (
            f"You are given a tree with {n} vertices labeled 0 to {n - 1} and these weighted "
            f"edges:\n{_weighted_text(edges)}\n\nColour exactly "
            f"{plural(k, 'vertex', 'vertices')} black and the others "
            "white. The profit is the sum of the distances between all pairs of black vertices "
            "plus the sum of the distances between all pairs of white vertices (the distance is "
            "the total weight of the path). Maximise the profit. Give the black vertices "
            "separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, _best_blacks(data))), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        blacks = parse_int_list(answer)
        if (
            len(blacks) != d["k"]
            or len(set(blacks)) != d["k"]
            or any(not 0 <= v < d["n"] for v in blacks)
        ):
            return invalid(f"give {d['k']} distinct vertices between 0 and {d['n'] - 1}")
        value = _profit(d, set(blacks))
        best = _best_profit(d)
        ok = value == best
        return graded(
            ratio_reward(value, best, 2.0), ok, "correct" if ok else "a larger profit is possible"
        )

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, _best_blacks(problem.data)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer + ", " + answer.split(", ")[0]

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def _rooted(n: int, edges: list[list[int]]) -> tuple[list[int], dict[int, tuple[int, int]]]:
    adj: dict[int, list[tuple[int, int]]] = {v: [] for v in range(n)}
    for u, v, w in edges:
        adj[u].append((v, w))
        adj[v].append((u, w))
    order, parent = [0], {0: (-1, 0)}
    for v in order:
        for c, w in adj[v]:
            if c not in parent:
                parent[c] = (v, w)
                order.append(c)
    return order, parent


def _profit(data: Mapping[str, Any], blacks: set[int]) -> int:
    """Each edge is crossed by b·(K − b) black pairs and by w·(N − K − w) white pairs, where
    b, w count the colours below it."""
    n, k = data["n"], data["k"]
    order, parent = _rooted(n, data["edges"])
    below = {v: (1 if v in blacks else 0, 1) for v in range(n)}
    total = 0
    for v in reversed(order[1:]):
        b, s = below[v]
        p, w = parent[v]
        total += w * (b * (k - b) + (s - b) * (n - k - (s - b)))
        pb, ps = below[p]
        below[p] = (pb + b, ps + s)
    return total


def _best_profit(data: Mapping[str, Any]) -> int:
    """Tree knapsack: best[v][j] = the largest contribution of the edges inside v's subtree
    with j black vertices there."""
    n, k = data["n"], data["k"]
    order, parent = _rooted(n, data["edges"])
    neg = -1  # profits are non-negative: -1 marks an impossible black count
    best: dict[int, list[int]] = {}
    size = dict.fromkeys(range(n), 1)
    for v in reversed(order):
        cur = [0, 0]  # v white (0 black) or v black (1 black)
        for c in (u for u in range(n) if parent.get(u, (-1,))[0] == v):
            w = parent[c][1]
            sub = best.pop(c)
            merged = [neg] * (len(cur) + len(sub) - 1)
            for i, a in enumerate(cur):
                if a == neg:
                    continue
                for j, b in enumerate(sub):
                    if b == neg or i + j > k:
                        continue
                    edge = w * (j * (k - j) + (size[c] - j) * (n - k - size[c] + j))
                    merged[i + j] = max(merged[i + j], a + b + edge)
            cur = merged
            size[v] += size[c]
        best[v] = cur
    return best[0][k]


def _best_blacks(data: Mapping[str, Any]) -> list[int]:
    best = max(
        itertools.combinations(range(data["n"]), data["k"]), key=lambda bs: _profit(data, set(bs))
    )
    return list(best)


@ENVIRONMENTS.register("tree_even_partitioning")
class TreeEvenPartitioning(Environment):
    """Split a tree of N = K·M vertices into M connected parts of K vertices:
    (connected parts/all)^5 for a partition into parts of the right size."""

    tags = TAGS
    answer_kind = "text"
    unique_answer = True
    difficulty_scales = "part size K = 2 + d//4; parts M = 3 + d//3"
    size_measure = "vertices N = K·M"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        k, m = 2 + difficulty // 4, 3 + difficulty // 3
        n = k * m
        labels = list(range(1, n + 1))
        rng.shuffle(labels)
        blocks = [labels[i * k : (i + 1) * k] for i in range(m)]
        edges = []
        for block in blocks:  # a random tree inside each block, then a tree over the blocks
            edges += [[block[a], block[b]] for a, b in random_tree_edges(rng, k)]
        for a, b in random_tree_edges(rng, m):
            edges.append([rng.choice(blocks[a]), rng.choice(blocks[b])])
        edges = [sorted(e) for e in edges]
        rng.shuffle(edges)
        prompt = (
            f"You have a tree with {n} vertices labeled 1 to {n} and these edges:\n"
            + "\n".join(f"{u} - {v}" for u, v in edges)
            + f"\n\nSplit the vertices into {m} groups of exactly {k} vertices each, such that the "
            "vertices of every group form a connected subtree (are connected using only edges "
            "between vertices of that group). Write each group as its vertices separated by "
            'spaces, and separate the groups by semicolons, e.g. "1 2; 3 4".'
        )
        answer = "; ".join(" ".join(map(str, sorted(b))) for b in sorted(blocks, key=min))
        return Instance(prompt, answer, {"n": n, "k": k, "edges": edges})

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        groups = (
            [parse_int_list(g) for g in answer.split(";")] if answer.count(";") < d["n"] else []
        )
        flat = [v for g in groups for v in g]
        if not groups or sorted(flat) != list(range(1, d["n"] + 1)):
            return invalid(f"every vertex 1 to {d['n']} must be in exactly one group")
        if any(len(g) != d["k"] for g in groups):
            return invalid(f"every group must have exactly {d['k']} vertices")
        adj = adjacency(d["n"], d["edges"], base=1)
        good = 0
        for g in groups:
            inside, seen, stack = set(g), {g[0]}, [g[0]]
            while stack:
                for w in adj[stack.pop()]:
                    if w in inside and w not in seen:
                        seen.add(w)
                        stack.append(w)
            good += len(seen) == len(inside)
        ok = good == len(groups)
        return graded(
            (good / len(groups)) ** 5,
            ok,
            "correct" if ok else f"{len(groups) - good} groups are not connected",
        )

    def solve(self, problem: Problem) -> str:
        """Cut every edge above a subtree whose size is a multiple of K (root 1); the parts
        that remain are the only valid split."""
        d = problem.data
        adj = adjacency(d["n"], d["edges"], base=1)
        order, parent = [1], {1: 0}
        for v in order:
            for w in adj[v]:
                if w not in parent:
                    parent[w] = v
                    order.append(w)
        size = dict.fromkeys(adj, 1)
        for v in reversed(order[1:]):
            size[parent[v]] += size[v]
        head: dict[int, int] = {}
        for v in order:  # each vertex belongs to the part of its nearest cut ancestor
            head[v] = v if v == 1 or size[v] % d["k"] == 0 else head[parent[v]]
        parts: dict[int, list[int]] = {}
        for v in order:
            parts.setdefault(head[v], []).append(v)
        return "; ".join(" ".join(map(str, sorted(p))) for p in sorted(parts.values(), key=min))

    def count_answers(self, problem: Problem, limit: int = 2) -> int | None:
        return 1  # the cut edges are forced (subtree sizes divisible by K)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        groups = [g.split() for g in answer.split("; ")]
        groups[0][0], groups[1][0] = groups[1][0], groups[0][0]  # swap two vertices
        if self.check(problem, "; ".join(" ".join(g) for g in groups)).correct:
            return answer.replace("; ", " ", 1)
        return "; ".join(" ".join(g) for g in groups)

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


@ENVIRONMENTS.register("tree_maximum_visited_vertex")
class TreeMaximumVisitedVertex(Environment):
    """A walk of at most M moves from vertex 0 visiting as many distinct vertices as
    possible: (visited/gold)^3."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "N = 4 + d vertices; M in 1..2N"
    size_measure = "vertices N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        edges = random_tree_edges(rng, n)
        m = rng.randint(1, 2 * n)
        data = {"n": n, "m": m, "edges": edges}
        prompt = (
            f"You are given a tree with {n} vertices labeled 0 to {n - 1} and these edges:\n"
            + "\n".join(f"{u} - {v}" for u, v in edges)
            + f"\n\nYou start at vertex 0 and may make at most {plural(m, 'move')}; each move "
            "goes along an "
            "edge to a neighbouring vertex. Visit as many distinct vertices as possible (vertex 0 "
            "counts as visited). Give the vertices you move to, in order, separated by commas "
            "(without the starting vertex 0)."
        )
        return Instance(prompt, ", ".join(map(str, _best_walk(data))), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        walk = parse_int_list(answer)
        if len(walk) > d["m"]:
            return invalid(f"at most {d['m']} moves are allowed")
        adj = adjacency(d["n"], d["edges"])
        here = 0
        for v in walk:
            if v not in adj[here]:
                return invalid("a move does not follow an edge")
            here = v
        visited = len({0, *walk})
        gold = _max_visited(d)
        ok = visited == gold
        return graded(
            ratio_reward(visited, gold, 3.0),
            ok,
            "correct" if ok else "more vertices can be visited",
        )

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, _best_walk(problem.data)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return ", ".join([answer.split(", ")[0]] * 2) if answer else "0"

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def _depths(data: Mapping[str, Any]) -> tuple[dict[int, int], dict[int, int]]:
    adj = adjacency(data["n"], data["edges"])
    depth, parent = {0: 0}, {0: -1}
    queue = [0]
    for v in queue:
        for w in adj[v]:
            if w not in depth:
                depth[w], parent[w] = depth[v] + 1, v
                queue.append(w)
    return depth, parent


def _max_visited(data: Mapping[str, Any]) -> int:
    """Going down the deepest branch costs one move per new vertex; any other vertex costs
    two (there and back): min(N, D + 1 + (M − D)//2) when M ≥ D, else M + 1."""
    depth, _ = _depths(data)
    deepest, m = max(depth.values()), data["m"]
    return m + 1 if m <= deepest else min(data["n"], deepest + 1 + (m - deepest) // 2)


def _best_walk(data: Mapping[str, Any]) -> list[int]:
    """Detours off the deepest path (in DFS order, each costing two moves) then the path."""
    depth, parent = _depths(data)
    adj = adjacency(data["n"], data["edges"])
    far = max(depth, key=lambda v: (depth[v], -v))
    path = [far]
    while path[-1] != 0:
        path.append(parent[path[-1]])
    path.reverse()
    on_path = set(path)
    m, steps = data["m"], len(path) - 1
    if m <= steps:
        return path[1 : m + 1]
    budget = min(data["n"] - len(path), (m - steps) // 2)
    walk: list[int] = []

    def detour(v: int, came: int) -> None:  # visit off-path vertices below v, come back
        nonlocal budget
        for w in adj[v]:
            if w != came and w not in on_path and budget > 0:
                budget -= 1
                walk.append(w)
                detour(w, v)
                walk.append(v)

    for i, v in enumerate(path):
        if i:
            walk.append(v)
        detour(v, path[i - 1] if i else -1)
    return walk


@ENVIRONMENTS.register("weighted_binary_tree")
class WeightedBinaryTree(Environment):
    """The binary tree over inorder 0..N-1 maximising score = left × right + root (empty = 1,
    a leaf = its own score); the answer is its preorder: (answer/gold)^5."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "N = 3 + d nodes; scores 1..5"
    size_measure = "nodes N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        scores = [rng.randint(1, 5) for _ in range(n)]
        prompt = (
            f"You are given a binary tree with {n} nodes labeled 0 to {n - 1} whose inorder "
            f"traversal is 0, 1, ..., {n - 1}; the shape is up to you. Node i has score "
            f"d[i], where d = {scores}. The score of a subtree is the score of its left subtree "
            "times the score of its right subtree, plus the score of its root; an empty subtree "
            "has score 1, and a leaf's score is its own d[i]. Build the tree with the largest "
            "score and give its preorder traversal (root, then left subtree, then right "
            "subtree), separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, _best_tree(scores))), {"scores": scores})

    def check(self, problem: Problem, answer: str) -> Verdict:
        scores = problem.data["scores"]
        pre = parse_int_list(answer)
        if sorted(pre) != list(range(len(scores))):
            return invalid(f"the preorder must list each node 0 to {len(scores) - 1} once")
        value = _preorder_score(pre, scores)
        if value is None:
            return invalid("no binary tree with inorder 0, 1, ... has this preorder")
        best = _best_value(scores)
        return graded(
            ratio_reward(value, best, 5.0),
            value == best,
            "correct" if value == best else "a higher-scoring tree exists",
        )

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, _best_tree(problem.data["scores"])))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return ", ".join(answer.split(", ")[:-1])

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["scores"]))

    def problem_space(self, difficulty: int) -> int | None:
        return min(10**9, 5 ** (3 + difficulty))


def _preorder_score(pre: list[int], scores: list[int]) -> int | None:
    """The score of the tree with preorder ``pre`` and inorder 0..n-1, or None: the root of
    keys lo..hi comes first, then exactly the keys below it, then those above it."""
    pos = 0

    def build(lo: int, hi: int) -> int | None:
        nonlocal pos
        if lo > hi:
            return 1
        root = pre[pos]
        if not lo <= root <= hi:
            return None
        pos += 1
        left = build(lo, root - 1)
        right = build(root + 1, hi) if left is not None else None
        if right is None or left is None:
            return None
        return scores[root] if lo == hi else left * right + scores[root]

    return build(0, len(scores) - 1)


def _best_value(scores: list[int]) -> int:
    return _interval_dp(scores)[0][(0, len(scores) - 1)]


def _interval_dp(
    scores: list[int],
) -> tuple[dict[tuple[int, int], int], dict[tuple[int, int], int]]:
    n = len(scores)
    best: dict[tuple[int, int], int] = {}
    root: dict[tuple[int, int], int] = {}
    for length in range(1, n + 1):
        for lo in range(n - length + 1):
            hi = lo + length - 1
            if lo == hi:
                best[(lo, hi)], root[(lo, hi)] = scores[lo], lo
                continue
            options = [
                (best.get((lo, r - 1), 1) * best.get((r + 1, hi), 1) + scores[r], -r)
                for r in range(lo, hi + 1)
            ]
            value, neg_r = max(options)
            best[(lo, hi)], root[(lo, hi)] = value, -neg_r
    return best, root


def _best_tree(scores: list[int]) -> list[int]:
    _, root = _interval_dp(scores)
    out: list[int] = []
    stack = [(0, len(scores) - 1)]
    while stack:
        lo, hi = stack.pop()
        if lo > hi:
            continue
        r = root[(lo, hi)]
        out.append(r)
        stack.append((r + 1, hi))
        stack.append((lo, r - 1))
    return out
