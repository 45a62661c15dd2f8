"""Trees, counting and traversal: orderings consistent with a tree of constraints, equidistant
triples, the expected length of random subtree deletion, rebuilding a binary tree from two
traversals, the hitting time of a random walk, and the best orientation of the edges.

RLVE-Gym rows TreeTopologicalSequenceCounting, Tree_DistanceEqualTriad_Counting,
TreeElimination_Expectation, PreorderTraversal, TreeRandomWalkExpectation and POLPolarization
(Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive
Verifiable Environments", arXiv:2511.07317, Appendix A). Rewards follow the rows: exact counts
and expectations are binary or (min/max)^10, the traversal gets mean([gold = answer])^10.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import deque
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    IntegerAnswer,
    graded,
    invalid,
    parse_int,
    parse_int_list,
    sequence_reward,
)
from verirl.envs.kit.fractions import fraction_text, parse_fraction
from verirl.envs.kit.graphs import adjacency, bfs_distances, random_tree_edges
from verirl.types import Problem, Verdict

TAGS = ("rlve", "trees")


@ENVIRONMENTS.register("tree_topological_sequence_counting")
class TreeTopologicalSequenceCounting(IntegerAnswer):
    """Permutations p of 0..N-1 with p[u] < p[v] for each directed tree edge u → v."""

    tags = TAGS
    difficulty_scales = "N = 3 + d vertices"
    size_measure = "vertices N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        arcs = [e if rng.random() < 0.5 else e[::-1] for e in random_tree_edges(rng, n)]
        rules = "\n".join(f"p[{u}] < p[{v}]" for u, v in arcs)
        prompt = (
            f"Count the permutations p[0], p[1], ..., p[{n - 1}] of the integers 0 to {n - 1} "
            f"that satisfy all of the following {n - 1} constraints:\n{rules}"
        )
        data = {"n": n, "arcs": arcs}
        return Instance(prompt, str(_linear_extensions(data)), data)

    def solve_int(self, problem: Problem) -> int:
        return _linear_extensions(problem.data)

    binary = True  # RLVE's row is binary
    wrong_detail = "the count is not right"

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])

    def problem_space(self, difficulty: int) -> int | None:
        n = 3 + difficulty
        return min(10**9, n ** (n - 2) * 2 ** (n - 1) * math.factorial(n - 1))


def _linear_extensions(data: Mapping[str, Any]) -> int:
    """Tree DP: ways[v][i] = orderings of v's subtree with v at rank i (0-based); a child
    is merged by choosing how many of its elements go before v."""
    n = data["n"]
    before = {(u, v) for u, v in data["arcs"]}  # p[u] < p[v]
    adj = adjacency(n, data["arcs"])
    order, parent = [0], {0: -1}
    for v in order:
        for w in adj[v]:
            if w not in parent:
                parent[w] = v
                order.append(w)
    ways: dict[int, list[int]] = {}
    for v in reversed(order):
        cur = [1]
        for c in adj[v]:
            if c == parent[v]:
                continue
            child = ways.pop(c)
            s1, s2 = len(cur), len(child)
            # pre[t] = child orderings with c at rank < t
            pre = [0]
            for x in child:
                pre.append(pre[-1] + x)
            merged = [0] * (s1 + s2)
            for i, w1 in enumerate(cur):
                if not w1:
                    continue
                for t in range(s2 + 1):  # t child elements end up before v
                    # v before c: c's rank within the child ≥ t; v after c: rank < t
                    good = pre[s2] - pre[t] if (v, c) in before else pre[t]
                    if good:
                        k = i + t
                        merged[k] += (
                            w1 * good * math.comb(k, i) * math.comb(s1 + s2 - 1 - k, s1 - 1 - i)
                        )
            cur = merged
        ways[v] = cur
    return sum(ways[0])


@ENVIRONMENTS.register("tree_distance_equal_triad_counting")
class TreeDistanceEqualTriadCounting(IntegerAnswer):
    """Unordered triples of vertices that are pairwise at the same distance."""

    tags = TAGS
    difficulty_scales = "N = 4 + d vertices"
    size_measure = "vertices N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        edges = random_tree_edges(rng, n, base=1)
        adj = adjacency(n, edges, base=1)
        dist = {v: bfs_distances(adj, v) for v in adj}
        count = sum(
            1
            for a, b, c in itertools.combinations(range(1, n + 1), 3)
            if dist[a][b] == dist[a][c] == dist[b][c]
        )
        prompt = (
            f"You are given a tree (a connected undirected graph with no cycles) with {n} "
            f"vertices labeled 1 to {n} and these edges:\n"
            + "\n".join(f"{u} - {v}" for u, v in edges)
            + "\n\nCount the unordered triples {x, y, z} of distinct vertices such that the "
            "distances dist(x, y), dist(x, z) and dist(y, z) (numbers of edges on the paths) "
            "are all equal."
        )
        return Instance(prompt, str(count), {"n": n, "edges": edges})

    def solve_int(self, problem: Problem) -> int:
        """Such a triple has a centre at distance r from all three, in three different
        branches: for each centre and r, the elementary symmetric sum e3 of the branch
        counts."""
        adj = adjacency(problem.data["n"], problem.data["edges"], base=1)
        total = 0
        for c in adj:
            per_depth: dict[int, list[int]] = {}
            for start in adj[c]:
                for depth, k in _branch_depths(adj, start, c).items():
                    per_depth.setdefault(depth, []).append(k)
            for counts in per_depth.values():
                e1 = e2 = e3 = 0
                for k in counts:
                    e3 += e2 * k
                    e2 += e1 * k
                    e1 += k
                total += e3
        return total

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])

    def problem_space(self, difficulty: int) -> int | None:
        n = 4 + difficulty
        return min(10**9, n ** (n - 2) * math.factorial(n - 1))


def _branch_depths(adj: dict[int, list[int]], start: int, blocked: int) -> dict[int, int]:
    """How many vertices of the branch through ``start`` (away from ``blocked``) lie at each
    distance from ``blocked``."""
    out: dict[int, int] = {}
    queue = deque([(start, blocked, 1)])
    while queue:
        v, came, depth = queue.popleft()
        out[depth] = out.get(depth, 0) + 1
        queue.extend((w, v, depth + 1) for w in adj[v] if w != came)
    return out


@ENVIRONMENTS.register("tree_elimination_expectation")
class TreeEliminationExpectation(Environment):
    """Expected number of rounds when each round deletes a uniformly random remaining vertex
    together with its subtree; Σ_v 1/depth(v). Binary reward on the exact fraction."""

    tags = TAGS
    answer_kind = "text"
    difficulty_scales = "N = 3 + d vertices"
    size_measure = "vertices N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        parents = [0, 0] + [rng.randint(1, v - 1) for v in range(2, n + 1)]  # parents[v] < v
        depth = [0, 1]
        for v in range(2, n + 1):
            depth.append(depth[parents[v]] + 1)
        value = sum((Fraction(1, depth[v]) for v in range(1, n + 1)), Fraction(0))
        listing = ", ".join(f"parent({v}) = {parents[v]}" for v in range(2, n + 1))
        prompt = (
            f"You are given a rooted tree with {n} vertices labeled 1 to {n}; vertex 1 is the "
            f"root and the other vertices' parents are: {listing}. In each round, one of the "
            "remaining vertices is chosen uniformly at random and removed together with all of "
            "its remaining descendants. The process stops when no vertex is left. What is the "
            "expected number of rounds? Give it as a fraction p/q in lowest terms (or an integer)."
        )
        return Instance(prompt, fraction_text(value), {"parents": parents[2:]})

    def _value(self, problem: Problem) -> Fraction:
        """Vertex v is chosen itself exactly when it comes before all its ancestors in a random
        order of the vertices: probability 1/(number of ancestors including v)."""
        parents = [0, 0, *problem.data["parents"]]
        total = Fraction(0)
        for v in range(1, len(parents)):
            chain, u = 1, v
            while u != 1:
                u, chain = parents[u], chain + 1
            total += Fraction(1, chain)
        return total

    def check(self, problem: Problem, answer: str) -> Verdict:
        ok = parse_fraction(answer) == self._value(problem)
        return graded(0.0, ok, "correct" if ok else "the expected value is not right")

    def solve(self, problem: Problem) -> str:
        return fraction_text(self._value(problem))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return fraction_text(self._value(problem) + Fraction(1, 2))

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["parents"]) + 1)

    def problem_space(self, difficulty: int) -> int | None:
        return min(10**9, math.factorial(2 + difficulty))


@ENVIRONMENTS.register("preorder_traversal")
class PreorderTraversal(Environment):
    """The preorder of a binary tree given its inorder and postorder:
    mean([gold = answer])^10 for a permutation of the right length."""

    tags = TAGS
    answer_kind = "integer_list"
    unique_answer = True
    difficulty_scales = "N = 3 + d nodes"
    size_measure = "nodes N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        labels = list(range(n))
        rng.shuffle(labels)
        left: dict[int, int] = {}
        right: dict[int, int] = {}
        for v in labels[1:]:  # random insertion position under an existing node
            while True:
                u = rng.choice(labels[: labels.index(v)])
                side = left if rng.random() < 0.5 else right
                if u not in side:
                    side[u] = v
                    break
        root = labels[0]
        inorder, postorder, preorder = [], [], []

        def walk(v: int | None) -> None:
            if v is None:
                return
            preorder.append(v)
            walk(left.get(v))
            inorder.append(v)
            walk(right.get(v))
            postorder.append(v)

        walk(root)
        prompt = (
            f"You are given a binary tree with nodes labeled 0 to {n - 1}. Its inorder traversal "
            f"is {' '.join(map(str, inorder))} and its postorder traversal is "
            f"{' '.join(map(str, postorder))}. Give its preorder traversal (node, then left "
            "subtree, then right subtree), separated by commas."
        )
        return Instance(
            prompt, ", ".join(map(str, preorder)), {"inorder": inorder, "postorder": postorder}
        )

    def check(self, problem: Problem, answer: str) -> Verdict:
        got = parse_int_list(answer)
        n = len(problem.data["inorder"])
        if sorted(got) != list(range(n)):
            return invalid(f"the answer must list each of the nodes 0 to {n - 1} once")
        gold = parse_int_list(self.solve(problem))
        return graded(
            sequence_reward(got, gold, 10.0),
            got == gold,
            "correct" if got == gold else "the order is not right",
        )

    def solve(self, problem: Problem) -> str:
        inorder, post = problem.data["inorder"], problem.data["postorder"]
        where = {v: i for i, v in enumerate(inorder)}
        out: list[int] = []
        stack = [(0, len(inorder) - 1, 0, len(post) - 1)]
        while stack:  # the root is the last of the postorder; split the inorder around it
            lo, hi, plo, phi = stack.pop()
            if lo > hi:
                continue
            root = post[phi]
            out.append(root)
            k = where[root] - lo
            stack.append((where[root] + 1, hi, plo + k, phi - 1))  # right, popped second
            stack.append((lo, where[root] - 1, plo, plo + k - 1))
        return ", ".join(map(str, out))

    def count_answers(self, problem: Problem, limit: int = 2) -> int | None:
        return 1  # inorder + postorder with distinct labels determine the tree

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        items = answer.split(", ")
        return ", ".join(items[1:] + items[:1])

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["inorder"]))

    def problem_space(self, difficulty: int) -> int | None:
        n = 3 + difficulty
        return min(10**9, math.comb(2 * n, n) // (n + 1) * math.factorial(n))


@ENVIRONMENTS.register("tree_random_walk_expectation")
class TreeRandomWalkExpectation(IntegerAnswer):
    """Expected number of steps of a random walk on a tree from U until it first reaches V
    (always an integer on a tree); binary reward."""

    tags = TAGS
    difficulty_scales = "N = 3 + d vertices"
    size_measure = "vertices N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        edges = random_tree_edges(rng, n)
        u, v = rng.sample(range(n), 2)
        adj = adjacency(n, edges)
        # crossing an edge x → y towards V takes 2·(vertices on x's side) − 1 steps on average
        parent = {v: -1}
        order = [v]
        for x in order:
            for y in adj[x]:
                if y not in parent:
                    parent[y] = x
                    order.append(y)
        size = dict.fromkeys(range(n), 1)
        for x in reversed(order[1:]):
            size[parent[x]] += size[x]
        steps, x = 0, u
        while x != v:
            steps += 2 * size[x] - 1
            x = parent[x]
        prompt = (
            f"You are given a tree with {n} vertices labeled 0 to {n - 1} and these edges:\n"
            + "\n".join(f"{a} - {b}" for a, b in edges)
            + f"\n\nA random walk starts at vertex {u}; at each step it moves to a neighbour of "
            "the current vertex chosen uniformly at random. What is the expected number of steps "
            f"until it first reaches vertex {v}?"
        )
        return Instance(prompt, str(steps), {"n": n, "edges": edges, "u": u, "v": v})

    def solve_int(self, problem: Problem) -> int:
        """Solve E[x] = 1 + mean of E over x's neighbours (E[V] = 0) by elimination from the
        leaves of the tree rooted at V: E[x] = a[x] + b[x]·E[parent(x)], exactly."""
        d = problem.data
        adj = adjacency(d["n"], d["edges"])
        parent, order = {d["v"]: -1}, [d["v"]]
        for x in order:
            for y in adj[x]:
                if y not in parent:
                    parent[y] = x
                    order.append(y)
        a: dict[int, Fraction] = {}
        b: dict[int, Fraction] = {}
        for x in reversed(order[1:]):
            kids = [y for y in adj[x] if y != parent[x]]
            deg = len(adj[x])
            # deg·E[x] = deg + E[p] + Σ (a[c] + b[c]·E[x])
            denom = Fraction(deg) - sum((b[c] for c in kids), Fraction(0))
            a[x] = (deg + sum(a[c] for c in kids)) / denom
            b[x] = Fraction(1) / denom
        value, x = Fraction(0), d["u"]
        chain = []
        while x != d["v"]:
            chain.append(x)
            x = parent[x]
        for x in reversed(chain):  # from the vertex next to V back to U
            value = a[x] + b[x] * value
        return int(value) if value.denominator == 1 else -1

    binary = True  # RLVE's row is binary
    wrong_detail = "the expected number of steps is not right"

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])

    def problem_space(self, difficulty: int) -> int | None:
        n = 3 + difficulty
        return min(10**9, n ** (n - 2) * math.factorial(n - 1) * n * (n - 1))


@ENVIRONMENTS.register("pol_polarization")
class PolPolarization(IntegerAnswer):
    """Orient every edge of a tree to maximise the number of ordered pairs (u, v) with a
    directed path from u to v; the maximum (binary reward)."""

    tags = TAGS
    difficulty_scales = "N = 4 + d//2 vertices (at most 30)"
    size_measure = "vertices N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(30, 4 + difficulty // 2)
        edges = random_tree_edges(rng, n)
        prompt = (
            f"You are given a tree (a connected undirected graph with no cycles) with {n} "
            f"vertices labeled 0 to {n - 1} and these edges:\n"
            + "\n".join(f"{u} - {v}" for u, v in edges)
            + "\n\nGive every edge a direction. Then count the ordered pairs of distinct "
            "vertices (u, v) such that v can be reached from u by following edges in their "
            "directions. What is the largest possible count?"
        )
        data = {"n": n, "edges": edges}
        return Instance(prompt, str(_polarization(data)), data)

    def solve_int(self, problem: Problem) -> int:
        """Every orientation, counting reachable pairs by search (small trees); larger trees
        use the root-and-split formula that the tests check against this search."""
        n, edges = problem.data["n"], problem.data["edges"]
        if n > 10:
            return _polarization(problem.data)
        best = 0
        for mask in range(1 << len(edges)):
            out: dict[int, list[int]] = {v: [] for v in range(n)}
            for k, (u, v) in enumerate(edges):
                out[u if mask >> k & 1 else v].append(v if mask >> k & 1 else u)
            pairs = 0
            for s in range(n):
                seen, stack = {s}, [s]
                while stack:
                    for y in out[stack.pop()]:
                        if y not in seen:
                            seen.add(y)
                            stack.append(y)
                pairs += len(seen) - 1
            best = max(best, pairs)
        return best

    def check(self, problem: Problem, answer: str) -> Verdict:
        ok = parse_int(answer) == _polarization(problem.data)  # RLVE's row is binary
        return graded(0.0, ok, "correct" if ok else "the count is not right")

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])

    def problem_space(self, difficulty: int) -> int | None:
        n = min(30, 4 + difficulty // 2)
        return min(10**9, n ** (n - 2) * math.factorial(n - 1))


def _polarization(data: Mapping[str, Any]) -> int:
    """Root the tree at r and send each child subtree of r wholly towards r or wholly away:
    Σ depth(v) pairs along root paths, plus A·B for the A vertices that flow into r and the
    B that flow out; maximise A·B by subset sums of the child subtree sizes, over all r."""
    n = data["n"]
    adj = adjacency(n, data["edges"])
    best = 0
    for r in range(n):
        depth, parent, order = {r: 0}, {r: -1}, [r]
        for x in order:
            for y in adj[x]:
                if y not in depth:
                    depth[y], parent[y] = depth[x] + 1, x
                    order.append(y)
        size = dict.fromkeys(range(n), 1)
        for x in reversed(order[1:]):
            size[parent[x]] += size[x]
        sums = {0}
        for y in adj[r]:
            sums |= {s + size[y] for s in sums}
        best = max(best, sum(depth.values()) + max(a * (n - 1 - a) for a in sums))
    return best
