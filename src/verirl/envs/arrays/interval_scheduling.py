"""Intervals and scheduling: a cheapest cover of a range by intervals, colouring overlapping
segments, matching points to segments, the King's game order, grouping plots of land, and
deciding game winners to keep the best player's score low.

Rows MinimumIntervalCoverage, MinimumChromaticNumber_SegmentOverlap,
MaximumPointSegmentMatching, KingSorting, LandAcquisition and KosDicing of the RLVE catalogue
(Zeng et al., *RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive
Verifiable Environments*, arXiv:2511.07317). Verifiers check the answer's constraints and
grade its objective against the optimum ((gold/answer)^5 when minimising, (answer/gold)^5 when
maximising, exact for KosDicing); the optimum comes from a DP, a greedy with an exchange
argument, or a flow, and ``solve`` reaches it by another algorithm (shortest paths, brute
force, binary search over flows).
"""

from __future__ import annotations

import functools
import heapq
import itertools
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
)
from verirl.envs.kit.graphs import parse_pairs
from verirl.envs.kit.size_ladder import grown
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict

TAGS = ("rlve", "intervals")


class _IntervalEnv(Environment):
    tags = TAGS
    size_measure = "number of items (intervals, points, players)"

    def size(self, problem: Problem) -> float:
        return float(len(problem.data[self.size_key or "intervals"]))


def _indices(answer: str, count: int) -> list[int] | Verdict:
    chosen = parse_int_list(answer) if answer.strip() else []
    if len(set(chosen)) != len(chosen) or any(not 0 <= i < count for i in chosen):
        return invalid("list distinct indices from the list")
    return chosen


# ---- cheapest cover of 1..M --------------------------------------------------------------
@ENVIRONMENTS.register("minimum_interval_coverage")
class MinimumIntervalCoverage(_IntervalEnv):
    """A cheapest set of intervals covering every integer point of [1, M]; (gold/cost)^5,
    a set that leaves a point uncovered is invalid."""

    difficulty_scales = "N = 3 + d intervals in [1, M], M ≈ N·(0.7..3); costs 1..10"
    size_key = "intervals"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        m = max(2, int(n * rng.choice([0.7, 1.0, 1.5, 2.0, 2.5, 3.0])))
        cuts = sorted(rng.sample(range(1, m), min(m - 1, max(0, n // 3))))
        bounds = [1, *[c + 1 for c in cuts], m + 1]
        intervals = [[a, b - 1, rng.randint(1, 10)] for a, b in itertools.pairwise(bounds)]
        while len(intervals) < n:  # a planted cover, then extra intervals
            a = rng.randint(1, m)
            b = rng.randint(a, min(m, a + max(1, m // 2)))
            intervals.append([a, b, rng.randint(1, 10)])
        rng.shuffle(intervals)
        listing = "\n".join(f"{i}: [{l}, {r}] cost {c}" for i, (l, r, c) in enumerate(intervals))
        prompt = (
            f"You are given {len(intervals)} intervals within [1, {m}]. Each interval is "
            "defined as [L[i], R[i]] with an associated cost C[i]:\n"
            f"{listing}\n\nSelect some intervals so that every integer from 1 to {m} lies in "
            "at least one selected interval, with the smallest total cost. Output the indices "
            "of the selected intervals separated by spaces; if several selections are optimal, "
            "any of them is accepted."
        )
        data = {"intervals": intervals, "m": m}
        return Instance(prompt, self._dijkstra(data)[1], data)

    @staticmethod
    def _dp(data: Mapping[str, Any]) -> int:
        """best[p]: cheapest cover of 1..p, over intervals by right end."""
        m = data["m"]
        inf = float("inf")
        best = [0.0] + [inf] * m
        for l, r, c in sorted(data["intervals"], key=lambda t: t[1]):
            cand = c + min(best[l - 1 : r])
            if cand < best[r]:
                best[r] = cand
        return int(min(best[m:]))

    @staticmethod
    def _dijkstra(data: Mapping[str, Any]) -> tuple[int, str]:
        """Shortest path 0 → M: interval i is an arc l-1 → r of cost c; free arcs x → x-1."""
        m = data["m"]
        g = nx.DiGraph()
        g.add_nodes_from(range(m + 1))
        for x in range(1, m + 1):
            g.add_edge(x, x - 1, weight=0, index=None)
        for i, (l, r, c) in enumerate(data["intervals"]):
            if not g.has_edge(l - 1, r) or g[l - 1][r]["weight"] > c:
                g.add_edge(l - 1, r, weight=c, index=i)
        path = nx.dijkstra_path(g, 0, m)
        chosen = [
            g[a][b]["index"] for a, b in itertools.pairwise(path) if g[a][b]["index"] is not None
        ]
        cost = sum(data["intervals"][i][2] for i in chosen)
        return cost, " ".join(map(str, sorted(chosen)))

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        chosen = _indices(answer, len(d["intervals"]))
        if isinstance(chosen, Verdict):
            return chosen
        covered: set[int] = set()
        for i in chosen:
            l, r, _ = d["intervals"][i]
            covered.update(range(l, r + 1))
        if not covered >= set(range(1, d["m"] + 1)):
            return invalid("some point is not covered")
        cost = sum(d["intervals"][i][2] for i in chosen)
        return optimum_verdict(cost, self._dp(d), "a cheaper cover exists", minimise=True)

    def solve(self, problem: Problem) -> str:
        return self._dijkstra(problem.data)[1]

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return f"{answer} {answer.split()[0]}"  # an index twice


# ---- colouring overlapping segments ------------------------------------------------------
@ENVIRONMENTS.register("minimum_chromatic_number_segment_overlap")
class MinimumChromaticNumberSegmentOverlap(_IntervalEnv):
    """Colour closed segments so that overlapping ones differ, with the fewest colours (the
    largest number of segments sharing a point); (gold/colours)^5 credit."""

    difficulty_scales = "N = 3 then int(1.1·N + 1) per level segments on [0, 3N]"
    size_key = "intervals"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(3, difficulty)
        segs = []
        for _ in range(n):
            a = rng.randint(0, 3 * n)
            segs.append([a, rng.randint(a, min(3 * n, a + n))])
        listing = "\n".join(f"{i}: [{a}, {b}]" for i, (a, b) in enumerate(segs))
        prompt = (
            f"There are {n} segments (closed intervals) on the x-axis, labeled from 0 to "
            f"{n - 1}:\n{listing}\n\nAssign each segment a colour (a non-negative integer) so "
            "that any two segments that overlap (share at least one point) get different "
            "colours, using as few distinct colours as possible. Output the colours of "
            f"segments 0 to {n - 1} separated by spaces."
        )
        return Instance(prompt, self._greedy(segs), {"intervals": segs})

    @staticmethod
    def _greedy(segs: list[list[int]]) -> str:
        """Sweep by left end; reuse the colour of a segment that already ended."""
        colour = [0] * len(segs)
        free: list[int] = []
        active: list[tuple[int, int]] = []  # (right end, colour)
        used = 0
        for i in sorted(range(len(segs)), key=lambda i: segs[i][0]):
            a, b = segs[i]
            while active and active[0][0] < a:
                heapq.heappush(free, heapq.heappop(active)[1])
            if free:
                colour[i] = heapq.heappop(free)
            else:
                colour[i], used = used, used + 1
            heapq.heappush(active, (b, colour[i]))
        return " ".join(map(str, colour))

    @staticmethod
    def _depth(segs: list[list[int]]) -> int:
        points = {x for s in segs for x in s}
        return max(sum(a <= x <= b for a, b in segs) for x in points)

    def check(self, problem: Problem, answer: str) -> Verdict:
        segs = problem.data["intervals"]
        colours = parse_int_list(answer)
        if len(colours) != len(segs) or any(c < 0 for c in colours):
            return invalid(f"give {len(segs)} non-negative colours")
        for i, j in itertools.combinations(range(len(segs)), 2):
            if colours[i] == colours[j] and max(segs[i][0], segs[j][0]) <= min(
                segs[i][1], segs[j][1]
            ):
                return invalid("two overlapping segments have the same colour")
        return optimum_verdict(
            len(set(colours)), self._depth(segs), "fewer colours suffice", minimise=True
        )

    def solve(self, problem: Problem) -> str:
        # Independent: first-fit in order of left ends (optimal for interval graphs).
        segs = problem.data["intervals"]
        colour: dict[int, int] = {}
        for i in sorted(range(len(segs)), key=lambda i: (segs[i][0], segs[i][1])):
            taken = {
                colour[j]
                for j in colour
                if max(segs[i][0], segs[j][0]) <= min(segs[i][1], segs[j][1])
            }
            colour[i] = next(c for c in itertools.count() if c not in taken)
        return " ".join(str(colour[i]) for i in range(len(segs)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rpartition(" ")[0]


# ---- matching points to segments ---------------------------------------------------------
@ENVIRONMENTS.register("maximum_point_segment_matching")
class MaximumPointSegmentMatching(_IntervalEnv):
    """Match points to segments containing them (each used at most once), as many pairs as
    possible; (pairs/gold)^5 credit."""

    difficulty_scales = "C, N up to 3 then int(1.1·x + 1) per level points and segments on [0, 4x]"
    size_key = "points"
    answer_kind = "text"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = grown(3, difficulty)
        c, n = rng.randint(1, top), rng.randint(1, top)
        points = [rng.randint(0, 4 * top) for _ in range(c)]
        segs = []
        for _ in range(n):
            a = rng.randint(0, 4 * top)
            segs.append([a, rng.randint(a, min(4 * top, a + top))])
        segs[0] = [max(0, points[0] - rng.randint(0, 2)), points[0] + rng.randint(0, 2)]
        prompt = (
            f"You are given {c} points, indexed from 0 to {c - 1}: "
            + ", ".join(f"P{i} = {x}" for i, x in enumerate(points))
            + f"\nand {n} segments, indexed from 0 to {n - 1}: "
            + ", ".join(f"S{j} = [{a}, {b}]" for j, (a, b) in enumerate(segs))
            + "\n\nMatch points to segments that contain them (a ≤ x ≤ b), each point and each "
            "segment used at most once, with as many matched pairs as possible. Output the "
            "pairs as (point index, segment index) separated by commas; if several matchings "
            "are optimal, any of them is accepted."
        )
        data = {"points": points, "intervals": segs}
        return Instance(prompt, self._greedy(data), data)

    @staticmethod
    def _greedy(data: Mapping[str, Any]) -> str:
        """Points left to right; each takes the open segment that ends first."""
        points, segs = data["points"], data["intervals"]
        order = sorted(range(len(segs)), key=lambda j: segs[j][0])
        heap: list[tuple[int, int]] = []
        pairs, k = [], 0
        for i in sorted(range(len(points)), key=points.__getitem__):
            x = points[i]
            while k < len(order) and segs[order[k]][0] <= x:
                heapq.heappush(heap, (segs[order[k]][1], order[k]))
                k += 1
            while heap and heap[0][0] < x:
                heapq.heappop(heap)
            if heap:
                pairs.append((i, heapq.heappop(heap)[1]))
        return ", ".join(f"({i}, {j})" for i, j in sorted(pairs))

    def check(self, problem: Problem, answer: str) -> Verdict:
        points, segs = problem.data["points"], problem.data["intervals"]
        pairs = parse_pairs(normalize.clean(answer)) if answer.strip() else []
        if len({i for i, _ in pairs}) != len(pairs) or len({j for _, j in pairs}) != len(pairs):
            return invalid("a point or a segment is used twice")
        if any(not (0 <= i < len(points) and 0 <= j < len(segs)) for i, j in pairs):
            return invalid("an index is out of range")
        if any(not segs[j][0] <= points[i] <= segs[j][1] for i, j in pairs):
            return invalid("a segment does not contain its point")
        g = nx.Graph()
        tops = [("p", i) for i in range(len(points))]
        g.add_nodes_from(tops)
        g.add_nodes_from(("s", j) for j in range(len(segs)))
        g.add_edges_from(
            (("p", i), ("s", j))
            for i, x in enumerate(points)
            for j, (a, b) in enumerate(segs)
            if a <= x <= b
        )
        best = len(nx.bipartite.hopcroft_karp_matching(g, top_nodes=tops)) // 2
        return optimum_verdict(len(pairs), best, "more pairs can be matched")

    def solve(self, problem: Problem) -> str:
        return self._greedy(problem.data)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return f"{answer}, {answer}" if answer else "(0, 0), (0, 0)"  # pairs used twice


# ---- the King's game ---------------------------------------------------------------------
def _king_max(pairs: list[list[int]], order: list[int]) -> int:
    """Largest reward: minister i gets ⌊(product of a over the king and those before)/b_i⌋."""
    product, worst = pairs[0][0], 0
    for i in order:
        a, b = pairs[i]
        worst = max(worst, product // b)
        product *= a
    return worst


@ENVIRONMENTS.register("king_sorting")
class KingSorting(_IntervalEnv):
    """Order the ministers behind the king to minimise the largest reward ⌊Π a_before / b⌋;
    (gold/answer)^5 credit (RLVE row KingSorting, the King's game)."""

    difficulty_scales = "N = 3 then int(1.1·N + 1) per level ministers; a, b in 1..10"
    size_key = "pairs"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(3, difficulty)
        pairs = [[rng.randint(1, 10), rng.randint(1, 10)] for _ in range(n + 1)]
        listing = "\n".join(f"({a}, {b})" for a, b in pairs)
        prompt = (
            f"You are given {n} + 1 = {n + 1} pairs of integers (A[i], B[i]), i = 0 to {n}:\n"
            f"{listing}\n\nPair 0 is the king, who always stands first; arrange the other {n} "
            "(the ministers) in a line behind him. A minister's reward is the product of the A "
            "values of everyone in front of him (the king included), divided by his own B and "
            "rounded down. Find an order that makes the largest reward as small as possible. "
            f"Output the order as the indices 1..{n} separated by spaces."
        )
        return Instance(prompt, self._exchange(pairs), {"pairs": pairs})

    @staticmethod
    def _exchange(pairs: list[list[int]]) -> str:
        """Sort by a·b (swapping two neighbours never helps when a·b is out of order)."""
        return " ".join(
            map(str, sorted(range(1, len(pairs)), key=lambda i: pairs[i][0] * pairs[i][1]))
        )

    def check(self, problem: Problem, answer: str) -> Verdict:
        pairs = problem.data["pairs"]
        order = parse_int_list(answer)
        if sorted(order) != list(range(1, len(pairs))):
            return invalid(f"the order must be a permutation of 1..{len(pairs) - 1}")
        got = _king_max(pairs, order)
        best = _king_max(pairs, list(map(int, self._exchange(pairs).split())))
        return optimum_verdict(
            got, best, "an order with a smaller top reward exists", minimise=True
        )

    def solve(self, problem: Problem) -> str:
        pairs = problem.data["pairs"]
        if len(pairs) > 8:
            return self._exchange(pairs)
        best = min(
            itertools.permutations(range(1, len(pairs))), key=lambda o: _king_max(pairs, list(o))
        )
        return " ".join(map(str, best))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rpartition(" ")[0]


# ---- grouping plots of land --------------------------------------------------------------
def _land_cost(items: list[list[int]], labels: list[int]) -> int:
    groups: dict[int, list[list[int]]] = {}
    for item, g in zip(items, labels, strict=True):
        groups.setdefault(g, []).append(item)
    return sum(max(w for w, _ in g) * max(l for _, l in g) for g in groups.values())


@ENVIRONMENTS.register("land_acquisition")
class LandAcquisition(_IntervalEnv):
    """Buy plots in groups; a group costs (largest W) × (largest L); minimise the total
    (RLVE row LandAcquisition); (gold/cost)^5 credit."""

    difficulty_scales = "N = 4 + d plots; W, L in 1..10·(1 + d//5)"
    size_key = "items"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        top = 10 * (1 + difficulty // 5)
        items = [[rng.randint(1, top), rng.randint(1, top)] for _ in range(n)]
        listing = " ".join(f"(W[{i}]={w}, L[{i}]={l})" for i, (w, l) in enumerate(items))
        prompt = (
            f"There are {n} items, and the i-th item has two attributes W[i] and L[i]: "
            f"{listing}\n\nDivide the items into groups (every item in exactly one group). The "
            "cost of a group is (the largest W in it) × (the largest L in it); minimise the "
            f"total cost. Output, for items 0 to {n - 1}, the number of its group (any "
            "non-negative integers; items with the same number form a group), separated by "
            "spaces."
        )
        return Instance(prompt, self._hull_dp(items)[1], {"items": items})

    @staticmethod
    def _hull_dp(items: list[list[int]]) -> tuple[int, str]:
        """Drop items dominated by another (both W and L no larger); the rest sorted by W
        rising have L falling, and groups are contiguous runs: best[i] = min over j of
        best[j] + W[i-1]·L[j]."""
        n = len(items)
        order = sorted(range(n), key=lambda i: (items[i][0], items[i][1]))
        frontier: list[int] = []
        for i in order:
            while frontier and items[frontier[-1]][1] <= items[i][1]:
                frontier.pop()
            frontier.append(i)
        k = len(frontier)
        best, arg = [0] + [0] * k, [0] * (k + 1)
        for i in range(1, k + 1):
            options = [
                (best[j] + items[frontier[i - 1]][0] * items[frontier[j]][1], j) for j in range(i)
            ]
            best[i], arg[i] = min(options)
        label, i, g = [0] * n, k, 0
        runs = []
        while i > 0:
            runs.append(frontier[arg[i] : i])
            i = arg[i]
        for g, run in enumerate(runs):
            for x in run:
                label[x] = g
        for x in range(n):  # a dominated item joins a group of an item dominating it
            if x not in frontier:
                dom = next(
                    y for y in frontier if items[y][0] >= items[x][0] and items[y][1] >= items[x][1]
                )
                label[x] = label[dom]
        return best[k], " ".join(map(str, label))

    def check(self, problem: Problem, answer: str) -> Verdict:
        items = problem.data["items"]
        labels = parse_int_list(answer)
        if len(labels) != len(items) or any(g < 0 for g in labels):
            return invalid(f"give {len(items)} non-negative group numbers")
        cost = _land_cost(items, labels)
        return optimum_verdict(
            cost, self._hull_dp(items)[0], "a cheaper grouping exists", minimise=True
        )

    def solve(self, problem: Problem) -> str:
        items = problem.data["items"]
        if len(items) > 8:
            return self._hull_dp(items)[1]

        @functools.cache
        def best(rest: frozenset[int]) -> tuple[int, tuple[frozenset[int], ...]]:
            """Brute force over set partitions: the group of the smallest remaining item."""
            if not rest:
                return 0, ()
            first, others = min(rest), sorted(rest - {min(rest)})
            options = []
            for r in range(len(others) + 1):
                for extra in itertools.combinations(others, r):
                    group = frozenset((first, *extra))
                    cost = max(items[i][0] for i in group) * max(items[i][1] for i in group)
                    tail, groups = best(rest - group)
                    options.append((cost + tail, (group, *groups)))
            return min(options, key=lambda t: t[0])

        groups = best(frozenset(range(len(items))))[1]
        best.cache_clear()
        label = [0] * len(items)
        for g, group in enumerate(groups):
            for i in group:
                label[i] = g
        return " ".join(map(str, label))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rpartition(" ")[0]


# ---- game winners with the lowest top score ----------------------------------------------
@ENVIRONMENTS.register("kos_dicing")
class KosDicing(_IntervalEnv):
    """Decide the winner of every game so that the most games won by any one player is as
    small as possible (binary reward: the maximum must be optimal)."""

    difficulty_scales = "N = 3 then int(1.1·N + 1) per level players (at most 40); 1.5N games"
    size_key = "games"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(3, difficulty, cap=40)
        games = [rng.sample(range(n), 2) for _ in range(max(2, int(1.5 * n)))]
        listing = "\n".join(f"round {k}: {a} vs {b}" for k, (a, b) in enumerate(games))
        prompt = (
            f"There are {n} players (labeled from 0 to {n - 1}) participating in a game "
            f"consisting of {len(games)} rounds; each round is played by two players and won by "
            f"one of them:\n{listing}\n\nChoose the winner of every round so that the largest "
            "number of rounds won by a single player is as small as possible. Output the "
            "winners of rounds 0, 1, ... in order, separated by spaces."
        )
        data = {"n": n, "games": games}
        return Instance(prompt, self._flow_winners(data, self._least_max(data)), data)

    @staticmethod
    def _flow_winners(data: Mapping[str, Any], cap: int) -> str:
        # integer nodes (source 0, sink 1, game k at 2 + k, player p after the games): string
        # nodes made the flow, and so the reference answer, depend on PYTHONHASHSEED
        games = data["games"]
        first_player = 2 + len(games)
        g = nx.DiGraph()
        for k, (a, b) in enumerate(games):
            g.add_edge(0, 2 + k, capacity=1)
            g.add_edge(2 + k, first_player + a, capacity=1)
            g.add_edge(2 + k, first_player + b, capacity=1)
        for p in range(data["n"]):
            g.add_edge(first_player + p, 1, capacity=cap)
        value, flow = nx.maximum_flow(g, 0, 1)
        if value < len(games):
            return ""
        return " ".join(
            str(a if flow[2 + k][first_player + a] else b) for k, (a, b) in enumerate(games)
        )

    @classmethod
    def _least_max(cls, data: Mapping[str, Any]) -> int:
        """The smallest cap for which a flow assigns every game (binary search)."""
        lo, hi = -(-len(data["games"]) // data["n"]), len(data["games"])  # wins sum to rounds
        while lo < hi:
            mid = (lo + hi) // 2
            if cls._flow_winners(data, mid):
                hi = mid
            else:
                lo = mid + 1
        return lo

    def check(self, problem: Problem, answer: str) -> Verdict:
        games = problem.data["games"]
        winners = parse_int_list(answer)
        if len(winners) != len(games):
            return invalid(f"give {len(games)} winners")
        if any(w not in pair for w, pair in zip(winners, games, strict=True)):
            return invalid("a winner did not play in that round")
        top = max(winners.count(p) for p in set(winners))
        ok = top == self._least_max(problem.data)
        return graded(0.0, ok, "correct" if ok else "some player wins more rounds than needed")

    def solve(self, problem: Problem) -> str:
        # Caps tried upwards one by one (no binary search), each checked by a flow.
        data = problem.data
        for cap in itertools.count(-(-len(data["games"]) // data["n"])):
            winners = self._flow_winners(data, cap)
            if winners:
                return winners
        raise AssertionError("unreachable")

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        games = problem.data["games"]
        winners = answer.split()
        best = max(sorted(set(winners)), key=winners.count)
        for k, (a, b) in enumerate(games):  # give one more round to a top player
            if best in (str(a), str(b)) and winners[k] != best:
                winners[k] = best
                return " ".join(winners)
        return answer.rpartition(" ")[0]
