"""Bitwise XOR optimisation: the largest XOR of a subset, the closest pair in XOR, the largest
XOR walk in a graph, the largest XOR path in a tree, and the first move of New Nim.

Rows MaxXorSet, MinXorPair, MaxXorPath, MaxTreeXorPath and NewNimGame of the RLVE catalogue
(Zeng et al., *RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive
Verifiable Environments*, arXiv:2511.07317). Witness answers (indices, a pair of vertices) are
checked and their XOR graded against the optimum, (answer/gold)^5 when maximising and
(gold/answer)^5 when minimising; the walk value is exact (binary); New Nim's removal is graded
(gold/removed)^3. Optima come from a linear basis over GF(2) or from sorting; ``solve`` uses a
different method (search over (vertex, value) states, brute force over pairs or subsets) so
the two cross-check each other.
"""

from __future__ import annotations

import itertools
import random
from collections import deque
from collections.abc import Mapping
from functools import reduce
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    optimum_verdict,
    parse_int,
    parse_int_list,
    ratio_reward,
)
from verirl.envs.kit.graphs import add_random_pairs, random_tree
from verirl.envs.kit.size_ladder import grown
from verirl.envs.kit.wording import indexed
from verirl.types import Problem, Verdict

TAGS = ("rlve", "bitwise")


def _ladder(difficulty: int, start: int, slack: int) -> tuple[int, int]:
    """RLVE's N = int(1.1·N + 1) per level with the bit length raised until 2^B - slack ≥ 2N."""
    n, bits = grown(start, difficulty, 200), 3
    while difficulty and 2**bits - slack < 2 * n:  # n only grows: the last level decides
        bits += 1
    return n, bits


def xor_basis(values: list[int]) -> list[int]:
    """A reduced linear basis of ``values`` over GF(2), one vector per leading bit."""
    basis: list[int] = []
    for v in values:
        for b in basis:
            v = min(v, v ^ b)
        if v:
            basis.append(v)
            basis.sort(reverse=True)
    return basis


def max_xor(values: list[int], start: int = 0) -> int:
    """The largest ``start`` XOR (a XOR of some of ``values``), greedily over the basis."""
    best = start
    for b in xor_basis(values):
        best = max(best, best ^ b)
    return best


@ENVIRONMENTS.register("max_xor_set")
class MaxXorSet(Environment):
    """A non-empty subset of an array with the largest XOR; (xor/gold)^5 credit."""

    tags = TAGS
    difficulty_scales = "N = 3 then int(1.1·N + 1) per level; bit length B with 2^B - 2 ≥ 2N"
    size_measure = "length N of the array"
    size_key = "values"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, bits = _ladder(difficulty, 3, 2)
        values = [rng.randint(1, 2**bits - 1) for _ in range(n)]
        prompt = (
            f"You are given an array A of {n} positive integers: {indexed(values)}\n\n"
            "Choose a non-empty set of distinct indices so that the bitwise XOR of the chosen "
            "values is as large as possible. Give the indices separated by spaces; if several "
            "sets reach the largest XOR, any of them is accepted."
        )
        return Instance(prompt, self._witness(values), {"values": values})

    @staticmethod
    def _witness(values: list[int]) -> str:
        """Indices reaching the maximum: a basis that remembers which indices make each
        vector."""
        basis: list[tuple[int, int]] = []  # (vector, index mask)
        for i, v in enumerate(values):
            mask = 1 << i
            for b, bm in basis:
                if v ^ b < v:
                    v, mask = v ^ b, mask ^ bm
            if v:
                basis.append((v, mask))
                basis.sort(reverse=True)
        best, mask = 0, 0
        for b, bm in basis:
            if best ^ b > best:
                best, mask = best ^ b, mask ^ bm
        return " ".join(str(i) for i in range(len(values)) if mask >> i & 1)

    def check(self, problem: Problem, answer: str) -> Verdict:
        values = problem.data["values"]
        chosen = parse_int_list(answer)
        if not chosen or len(set(chosen)) != len(chosen):
            return invalid("choose a non-empty set of distinct indices")
        if any(not 0 <= i < len(values) for i in chosen):
            return invalid("an index is out of range")
        got = reduce(lambda a, b: a ^ b, (values[i] for i in chosen))
        return optimum_verdict(got, max_xor(values), "a set with a larger XOR exists")

    def solve(self, problem: Problem) -> str:
        values = problem.data["values"]
        if len(values) > 12:
            return self._witness(values)
        best = max(  # brute force over every non-empty subset
            (
                (reduce(lambda a, b: a ^ b, (values[i] for i in c)), c)
                for r in range(1, len(values) + 1)
                for c in itertools.combinations(range(len(values)), r)
            ),
            key=lambda t: t[0],
        )
        return " ".join(map(str, best[1]))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return f"{answer} {answer.split()[0]}"  # an index twice


@ENVIRONMENTS.register("min_xor_pair")
class MinXorPair(Environment):
    """Two positions of an array of distinct values whose XOR is smallest; (gold/xor)^5."""

    tags = TAGS
    difficulty_scales = "N = 3 then int(1.1·N + 1) per level; values below 2^B with 2^B > 2N"
    size_measure = "length N of the array"
    size_key = "values"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, bits = _ladder(difficulty, 3, 1)
        values = rng.sample(range(2 ** (bits + 1)), n)
        prompt = (
            f"Given an array of length {n} (index starting from 0): {indexed(values)}\n\n"
            "Find two different indices i and j such that A[i] XOR A[j] (bitwise exclusive or) "
            "is as small as possible. Give i and j separated by a space; if several pairs are "
            "optimal, any of them is accepted."
        )
        order = sorted(range(n), key=values.__getitem__)
        i, j = min(itertools.pairwise(order), key=lambda p: values[p[0]] ^ values[p[1]])
        return Instance(prompt, f"{min(i, j)} {max(i, j)}", {"values": values})

    @staticmethod
    def _best(values: list[int]) -> int:
        """The smallest XOR of two values: always between neighbours in sorted order."""
        ordered = sorted(values)
        return min(a ^ b for a, b in itertools.pairwise(ordered))

    def check(self, problem: Problem, answer: str) -> Verdict:
        values = problem.data["values"]
        pair = parse_int_list(answer)
        if len(pair) != 2 or pair[0] == pair[1]:
            return invalid("give two different indices")
        if any(not 0 <= i < len(values) for i in pair):
            return invalid("an index is out of range")
        got = values[pair[0]] ^ values[pair[1]]
        return optimum_verdict(
            got, self._best(values), "a pair with a smaller XOR exists", minimise=True
        )

    def solve(self, problem: Problem) -> str:
        values = problem.data["values"]
        i, j = min(
            itertools.combinations(range(len(values)), 2),
            key=lambda p: values[p[0]] ^ values[p[1]],
        )
        return f"{i} {j}"

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        i = answer.split()[0]
        return f"{i} {i}"


def _weighted_graph(rng: random.Random, n: int, extra: int, bits: int) -> list[list[int]]:
    verts = list(range(n))
    pairs = add_random_pairs(rng, random_tree(rng, verts), verts, extra)
    edges = [[u, v, rng.randint(0, 2**bits - 1)] for u, v in pairs]
    rng.shuffle(edges)
    return edges


def _edge_text(edges: list[list[int]]) -> str:
    return "\n".join(f"({u}, {v}, {w})" for u, v, w in edges)


@ENVIRONMENTS.register("max_xor_path")
class MaxXorPath(Environment):
    """The largest XOR of the edge weights along a walk from 0 to N-1 (edges may repeat and
    count each time). Binary reward."""

    tags = TAGS
    difficulty_scales = "N = 4 then int(1.1·N + 1) per level; weights below 2^B, 2^B ≥ 2N"
    size_measure = "vertices plus edges"
    answer_kind = "integer"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, bits = _ladder(difficulty, 4, 0)
        edges = _weighted_graph(rng, n, max(1, n // 2), bits)
        prompt = (
            f"You are given an undirected graph with {n} vertices, labeled from 0 to {n - 1}. "
            "The graph contains the following undirected edges, each given as (u, v, w), an "
            f"edge between u and v with weight w:\n{_edge_text(edges)}\n\nFind a walk from "
            f"vertex 0 to vertex {n - 1} (vertices and edges may be repeated; an edge used "
            "several times contributes its weight each time) whose XOR of edge weights is as "
            "large as possible, and output that maximum XOR value as a single integer."
        )
        data = {"n": n, "edges": edges}
        return Instance(prompt, str(self._by_basis(data)), data)

    @staticmethod
    def _by_basis(data: Mapping[str, Any]) -> int:
        """XOR of a tree path, improved by the basis of the cycle values."""
        n = data["n"]
        adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for u, v, w in data["edges"]:
            adj[u].append((v, w))
            adj[v].append((u, w))
        dist = [-1] * n
        dist[0] = 0
        cycles, queue = [], deque([0])
        while queue:
            u = queue.popleft()
            for v, w in adj[u]:
                if dist[v] < 0:
                    dist[v] = dist[u] ^ w
                    queue.append(v)
                else:
                    cycles.append(dist[u] ^ dist[v] ^ w)
        return max_xor(cycles, dist[n - 1])

    def check(self, problem: Problem, answer: str) -> Verdict:
        ok = parse_int(answer) == self._by_basis(problem.data)
        return graded(0.0, ok, "correct" if ok else "that is not the largest XOR")

    def solve(self, problem: Problem) -> str:
        # Independent: breadth-first search over (vertex, XOR so far) states.
        n = problem.data["n"]
        adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for u, v, w in problem.data["edges"]:
            adj[u].append((v, w))
            adj[v].append((u, w))
        seen = {(0, 0)}
        queue = deque([(0, 0)])
        while queue:
            u, x = queue.popleft()
            for v, w in adj[u]:
                if (v, x ^ w) not in seen:
                    seen.add((v, x ^ w))
                    queue.append((v, x ^ w))
        return str(max(x for v, x in seen if v == n - 1))

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"] + len(problem.data["edges"]))


@ENVIRONMENTS.register("max_tree_xor_path")
class MaxTreeXorPath(Environment):
    """Two vertices of a weighted tree whose path has the largest XOR; (xor/gold)^5."""

    tags = TAGS
    difficulty_scales = "N = 4 then int(1.1·N + 1) per level; weights below 2^B, 2^B ≥ 2N"
    size_measure = "vertices of the tree"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, bits = _ladder(difficulty, 4, 0)
        edges = _weighted_graph(rng, n, 0, bits)
        prompt = (
            f"You are given a tree (i.e., a connected undirected graph with no cycles) with {n} "
            f"vertices, labeled from 0 to {n - 1}. Its edges are given as (u, v, w), an edge "
            f"between u and v with weight w:\n{_edge_text(edges)}\n\nFind two vertices u and v "
            "such that the bitwise XOR of the weights on the path between them is as large as "
            "possible. Give u and v separated by a space; if several pairs are optimal, any of "
            "them is accepted."
        )
        data = {"n": n, "edges": edges}
        root = self._root_xor(data)
        u, v = max(itertools.combinations(range(n), 2), key=lambda p: root[p[0]] ^ root[p[1]])
        return Instance(prompt, f"{u} {v}", data)

    @staticmethod
    def _root_xor(data: Mapping[str, Any]) -> list[int]:
        """XOR from vertex 0 to every vertex: the path XOR of u, v is root[u] ^ root[v]."""
        n = data["n"]
        adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for u, v, w in data["edges"]:
            adj[u].append((v, w))
            adj[v].append((u, w))
        root = [-1] * n
        root[0] = 0
        stack = [0]
        while stack:
            u = stack.pop()
            for v, w in adj[u]:
                if root[v] < 0:
                    root[v] = root[u] ^ w
                    stack.append(v)
        return root

    def check(self, problem: Problem, answer: str) -> Verdict:
        n = problem.data["n"]
        pair = parse_int_list(answer)
        if len(pair) != 2:
            return invalid("give exactly two vertices")
        if any(not 0 <= v < n for v in pair):
            return invalid("a vertex is not in the tree")
        root = self._root_xor(problem.data)
        best = max(a ^ b for a in root for b in root)
        got = root[pair[0]] ^ root[pair[1]]
        return optimum_verdict(got, best, "another pair has a larger path XOR")

    def solve(self, problem: Problem) -> str:
        # Independent: walk the path XORs from every start vertex.
        n = problem.data["n"]
        adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for u, v, w in problem.data["edges"]:
            adj[u].append((v, w))
            adj[v].append((u, w))
        best = (-1, 0, 0)
        for s in range(n):
            xor = {s: 0}
            stack = [s]
            while stack:
                u = stack.pop()
                for v, w in adj[u]:
                    if v not in xor:
                        xor[v] = xor[u] ^ w
                        stack.append(v)
            t = max(xor, key=xor.__getitem__)
            best = max(best, (xor[t], s, t))
        return f"{best[1]} {best[2]}"

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return f"{answer} 0"  # three vertices

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def _independent(values: list[int]) -> bool:
    """No non-empty subset XORs to zero (the values are linearly independent over GF(2))."""
    return len(xor_basis(values)) == len(values)


def _kept_by_greedy(heaps: list[int]) -> list[int]:
    """Largest heaps first into a linear basis (greedy is optimal on this matroid)."""
    kept: list[int] = []
    basis: list[int] = []
    for i in sorted(range(len(heaps)), key=lambda i: -heaps[i]):
        if len(xor_basis([*basis, heaps[i]])) > len(basis):
            basis.append(heaps[i])
            kept.append(i)
    return kept


@ENVIRONMENTS.register("new_nim_game")
class NewNimGame(Environment):
    """New Nim: remove whole heaps in the first move so that no non-empty set of the
    remaining heaps XORs to 0 (then the first player wins), removing as few matches as
    possible; (gold/removed)^3 credit, a losing or empty position is invalid."""

    tags = (*TAGS, "games")
    difficulty_scales = "N = 3 + d heaps of up to 2^(3 + d//3) - 1 matches"
    size_measure = "number of heaps"
    size_key = "heaps"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        top = 2 ** (3 + difficulty // 3) - 1
        while True:
            heaps = [rng.randint(1, top) for _ in range(n)]
            if not _independent(heaps):  # something has to be removed
                break
        listing = " ".join(f"H[{i}]={h}" for i, h in enumerate(heaps))
        prompt = (
            f"You are given a Nim-like game with heaps of matches: {listing}\n\nIn the first "
            "move the first player removes some whole heaps (not all of them); then the "
            "second player may remove some whole heaps too (not all of the remaining ones); "
            "after that they play ordinary Nim (take any positive number of matches from one "
            "heap; who cannot move loses), the first player moving first. The first player "
            "wins for sure exactly when no non-empty set of the heaps left after his first "
            "move has bitwise XOR 0. Choose the heaps to remove so that the first player is "
            "sure to win and the total number of matches removed is as small as possible. "
            "Output the indices of the removed heaps separated by spaces."
        )
        kept = set(_kept_by_greedy(heaps))
        removed = [i for i in range(n) if i not in kept]
        return Instance(prompt, " ".join(map(str, removed)), {"heaps": heaps})

    def check(self, problem: Problem, answer: str) -> Verdict:
        heaps = problem.data["heaps"]
        removed = parse_int_list(answer)
        if len(set(removed)) != len(removed) or any(not 0 <= i < len(heaps) for i in removed):
            return invalid("list distinct heap indices")
        left = [h for i, h in enumerate(heaps) if i not in set(removed)]
        if not left:
            return invalid("not every heap may be removed")
        if not _independent(left):
            return invalid("the remaining heaps contain a set with XOR 0: the second player wins")
        got = sum(heaps[i] for i in removed)
        best = sum(heaps) - sum(heaps[i] for i in _kept_by_greedy(heaps))
        return graded(ratio_reward(best, got, 3.0), got == best, "fewer matches can be removed")

    def solve(self, problem: Problem) -> str:
        heaps = problem.data["heaps"]
        n = len(heaps)
        if n > 12:
            kept = set(_kept_by_greedy(heaps))
            return " ".join(str(i) for i in range(n) if i not in kept)
        best = min(  # brute force over every set of heaps to keep
            (
                (sum(heaps) - sum(heaps[i] for i in keep), keep)
                for r in range(1, n + 1)
                for keep in itertools.combinations(range(n), r)
                if _independent([heaps[i] for i in keep])
            ),
        )
        return " ".join(str(i) for i in range(n) if i not in best[1])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rpartition(" ")[0]  # keeps a heap that makes a zero-XOR set
