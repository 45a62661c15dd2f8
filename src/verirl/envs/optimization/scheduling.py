"""Scheduling and ordering: two-machine flow shop, the order to lead cows out of a garden,
the cheapest swaps that rearrange elephants, where to build warehouses, which lines are seen
from above, and how to batch tasks.

RLVE-Gym rows PipelineArrangement, ProtectingFlowers, SLOElephants, WarehouseConstruction,
VisibleLine and TaskArrangement (Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning
for Language Models with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A).
Verifiers evaluate the answer itself (any optimal answer is accepted) and score minimisation
by (gold/answer)^5 (^3 for the batches); the visible lines are scored
(|intersection|/|union|)^5.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    optimum_verdict,
    parse_int_list,
    ratio_reward,
)
from verirl.envs.kit.wording import plural
from verirl.types import Problem, Verdict

TAGS = ("rlve", "scheduling")


def _permutation(answer: str, n: int) -> list[int] | Verdict:
    perm = parse_int_list(answer)
    if sorted(perm) != list(range(n)):
        return invalid(f"give a permutation of 0 to {n - 1}")
    return perm


@ENVIRONMENTS.register("pipeline_arrangement")
class PipelineArrangement(Environment):
    """Order N products through machine A then machine B to minimise the finishing time
    (Johnson's two-machine flow shop): (gold/answer)^5."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "N = 3 + d products; times 1..10 + d"
    size_measure = "products N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 3 + difficulty, 10 + difficulty
        a = [rng.randint(1, top) for _ in range(n)]
        b = [rng.randint(1, top) for _ in range(n)]
        rows = "\n".join(f"product {i}: A takes {a[i]}, B takes {b[i]}" for i in range(n))
        prompt = (
            f"You need to process {n} products labeled 0 to {n - 1}. Each product is first "
            "processed on machine A and then on machine B; each machine handles one product at "
            "a time, both machines take the products in the same order, and B can start a "
            f"product only after A has finished it. The processing times are:\n{rows}\nChoose the "
            "order that makes the time at which B finishes the last product as small as "
            "possible. Give the order as product labels separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, _johnson(a, b))), {"a": a, "b": b})

    def check(self, problem: Problem, answer: str) -> Verdict:
        a, b = problem.data["a"], problem.data["b"]
        perm = _permutation(answer, len(a))
        if isinstance(perm, Verdict):
            return perm
        best = _makespan(a, b, _johnson(a, b))
        return optimum_verdict(_makespan(a, b, perm), best, "a faster order exists", minimise=True)

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, _johnson(problem.data["a"], problem.data["b"])))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer + ", 0"

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["a"]))


def _makespan(a: list[int], b: list[int], order: list[int]) -> int:
    end_a = end_b = 0
    for i in order:
        end_a += a[i]
        end_b = max(end_b, end_a) + b[i]
    return end_b


def _johnson(a: list[int], b: list[int]) -> list[int]:
    """Products faster on A first by increasing A time, then the rest by decreasing B time."""
    first = sorted((i for i in range(len(a)) if a[i] <= b[i]), key=lambda i: (a[i], i))
    last = sorted((i for i in range(len(a)) if a[i] > b[i]), key=lambda i: (-b[i], i))
    return first + last


@ENVIRONMENTS.register("protecting_flowers")
class ProtectingFlowers(Environment):
    """Lead cows away one by one (2·T[i] minutes each) while the waiting ones eat D[i] flowers
    a minute; minimise the flowers eaten: (gold/answer)^5."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "N = 3 + d cows; T in 1..10, D in 1..20"
    size_measure = "cows N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        t = [rng.randint(1, 10) for _ in range(n)]
        d = [rng.randint(1, 20) for _ in range(n)]
        prompt = (
            f"You are given two arrays T and D, each containing {n} integers:\nT = "
            f"{' '.join(map(str, t))}\nD = {' '.join(map(str, d))}\n{n} cows (labeled 0 to "
            f"{n - 1}) are in a garden. A farmer takes them back to the barn one at a time: "
            "taking cow i there and walking back takes 2 × T[i] minutes, and he starts with the "
            "next cow as soon as he is back. Until the farmer starts taking a cow away, it eats "
            "D[i] flowers per minute. Choose the order of the cows that minimises the total "
            "number of flowers eaten. Give the cow labels in that order, separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, _by_ratio(t, d))), {"t": t, "d": d})

    def check(self, problem: Problem, answer: str) -> Verdict:
        t, d = problem.data["t"], problem.data["d"]
        perm = _permutation(answer, len(t))
        if isinstance(perm, Verdict):
            return perm
        best = _eaten(t, d, _by_ratio(t, d))
        return optimum_verdict(
            _eaten(t, d, perm), best, "an order with fewer flowers eaten exists", minimise=True
        )

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, _by_ratio(problem.data["t"], problem.data["d"])))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.split(", ", 1)[1] if ", " in answer else "0, 0"

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["t"]))


def _eaten(t: list[int], d: list[int], order: list[int]) -> int:
    clock, total = 0, 0
    for i in order:
        total += d[i] * clock
        clock += 2 * t[i]
    return total


def _by_ratio(t: list[int], d: list[int]) -> list[int]:
    """Exchange argument: i before j when T[i]·D[j] < T[j]·D[i]."""

    def cmp(i: int, j: int) -> int:
        return (t[i] * d[j] > t[j] * d[i]) - (t[i] * d[j] < t[j] * d[i]) or (i > j) - (i < j)

    return sorted(range(len(t)), key=functools.cmp_to_key(cmp))


@ENVIRONMENTS.register("slo_elephants")
class SloElephants(Environment):
    """Swap elephants (cost: the sum of the two weights) until the line matches the target;
    (gold/answer)^5 for a swap list that reaches it."""

    tags = TAGS
    answer_kind = "text"
    difficulty_scales = "N = 3 + d elephants; weights 1..20 + 5d"
    size_measure = "elephants N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        weights = [rng.randint(1, 20 + 5 * difficulty) for _ in range(n)]
        start, target = list(range(n)), list(range(n))
        rng.shuffle(start)
        rng.shuffle(target)
        if start == target:
            start[0], start[1] = start[1], start[0]
        data = {"c": weights, "start": start, "target": target}
        prompt = (
            f"There are {n} items labeled 0 to {n - 1}; item i has cost C[i], with C = "
            f"{' '.join(map(str, weights))}. They stand in a line; position p (from 0) currently "
            f"holds item A[p], with A = {' '.join(map(str, start))}, and should hold item B[p], "
            f"with B = {' '.join(map(str, target))}. Swapping the positions of two items x and y "
            "costs C[x] + C[y]. Rearrange the line into B with the smallest total cost. Give the "
            'swaps in order as pairs of item labels, e.g. "(3, 1), (0, 2)".'
        )
        return Instance(prompt, _swap_text(_swaps(data)), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        n = len(d["c"])
        flat = parse_int_list(answer.replace("(", " ").replace(")", " ")) if answer.strip() else []
        if len(flat) % 2 or len(flat) > 4 * n:
            return invalid(f"give at most {2 * n} swaps as pairs of item labels")
        line = list(d["start"])
        where = {x: p for p, x in enumerate(line)}
        cost = 0
        for x, y in zip(flat[::2], flat[1::2], strict=True):
            if not (0 <= x < n and 0 <= y < n) or x == y:
                return invalid(f"each swap names two different items from 0 to {n - 1}")
            px, py = where[x], where[y]
            line[px], line[py], where[x], where[y] = y, x, py, px
            cost += d["c"][x] + d["c"][y]
        if line != d["target"]:
            return invalid("the swaps do not produce the target line")
        return optimum_verdict(cost, _cycle_cost(d), "a cheaper way exists", minimise=True)

    def solve(self, problem: Problem) -> str:
        return _swap_text(_swaps(problem.data))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rsplit(",", 2)[0] if answer.count("(") > 1 else "(0, 0)"

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["c"]))


def _cycles(data: Mapping[str, Any]) -> list[list[int]]:
    """Cycles of items: item x must move to the position where B holds x."""
    home = {x: p for p, x in enumerate(data["target"])}
    seen, out = set(), []
    for x in data["start"]:
        if x in seen:
            continue
        cycle, y = [], x
        while y not in seen:
            seen.add(y)
            cycle.append(y)
            y = data["start"][home[y]]
        if len(cycle) > 1:
            out.append(cycle)
    return out


def _cycle_cost(data: Mapping[str, Any]) -> int:
    """Per cycle: rotate with its lightest item (S + (L-2)·m) or borrow the globally lightest
    item (S + m + (L+1)·g)."""
    c, g = data["c"], min(data["c"])
    total = 0
    for cycle in _cycles(data):
        s, m, length = sum(c[x] for x in cycle), min(c[x] for x in cycle), len(cycle)
        total += min(s + (length - 2) * m, s + m + (length + 1) * g)
    return total


def _swaps(data: Mapping[str, Any]) -> list[tuple[int, int]]:
    c = data["c"]
    g = min(range(len(c)), key=lambda x: c[x])
    line = list(data["start"])
    where = {x: p for p, x in enumerate(line)}
    out: list[tuple[int, int]] = []

    def swap(x: int, y: int) -> None:
        px, py = where[x], where[y]
        line[px], line[py], where[x], where[y] = y, x, py, px
        out.append((x, y))

    for cycle in _cycles(data):
        s, m, length = sum(c[x] for x in cycle), min(c[x] for x in cycle), len(cycle)
        mover = min(cycle, key=lambda x: c[x])
        borrow = s + m + (length + 1) * c[g] < s + (length - 2) * m
        if borrow:
            swap(g, mover)  # g takes the cycle's lightest item's place
            runner = g
        else:
            runner = mover
        while True:  # put the item that belongs where the runner stands in place
            wanted = data["target"][where[runner]]
            if wanted == runner or (borrow and wanted == mover):
                break
            swap(runner, wanted)
        if borrow:
            swap(g, mover)
    return out


def _swap_text(swaps: list[tuple[int, int]]) -> str:
    return ", ".join(f"({x}, {y})" for x, y in swaps)


@ENVIRONMENTS.register("warehouse_construction")
class WarehouseConstruction(Environment):
    """Choose factories to build warehouses at; goods only move down the mountain to the
    nearest warehouse below: minimise building plus transport cost, (gold/answer)^5."""

    tags = TAGS
    answer_kind = "integer_set"
    difficulty_scales = "N = 4 + d factories; costs and amounts grow with d"
    size_measure = "factories N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        x = sorted(rng.sample(range(1, 10 * n), n))
        p = [rng.randint(0, 10) for _ in range(n)]
        c = [rng.randint(5, 40 + 5 * difficulty) for _ in range(n)]
        rows = "\n".join(
            f"factory {i}: distance {x[i]}, {plural(p[i], 'product')}, warehouse cost {c[i]}"
            for i in range(n)
        )
        prompt = (
            f"You are given {n} factories arranged from top to bottom along a mountain, indexed "
            f"0 to {n - 1}; factory i is at distance X[i] from the top, holds P[i] products, and "
            f"building a warehouse there costs C[i]:\n{rows}\nChoose factories to build "
            "warehouses at. Products can only be carried down the mountain: each factory's "
            "products go to the nearest warehouse at the same factory or below it, and moving one "
            "product costs the distance travelled. Every factory's products must be stored. "
            "Minimise the total cost (warehouses plus transport). Give the chosen factory "
            "indices separated by commas."
        )
        data = {"x": x, "p": p, "c": c}
        return Instance(prompt, ", ".join(map(str, _warehouses(data))), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        n = len(d["x"])
        chosen = parse_int_list(answer)
        if (
            not chosen
            or len(chosen) > n
            or len(set(chosen)) != len(chosen)
            or any(not 0 <= i < n for i in chosen)
        ):
            return invalid(f"give distinct factory indices from 0 to {n - 1}")
        if n - 1 not in chosen:
            return invalid("the products of the lowest factory have nowhere to go")
        best = _warehouse_cost(d, _warehouses(d))
        return optimum_verdict(
            _warehouse_cost(d, chosen), best, "a cheaper choice exists", minimise=True
        )

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, _warehouses(problem.data)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return "0"  # the lowest factory has no warehouse (n ≥ 4)

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["x"]))


def _warehouse_cost(data: Mapping[str, Any], chosen: list[int]) -> int:
    x, p, c = data["x"], data["p"], data["c"]
    built = set(chosen)
    total, nxt = sum(c[i] for i in built), None
    for i in range(len(x) - 1, -1, -1):
        if i in built:
            nxt = i
        total += p[i] * (x[nxt] - x[i]) if nxt is not None else 0
    return total


def _warehouses(data: Mapping[str, Any]) -> list[int]:
    """best[j] = the cheapest plan for factories 0..j with a warehouse at j."""
    x, p, c = data["x"], data["p"], data["c"]
    n = len(x)
    best, prev = [0] * n, [-1] * n
    for j in range(n):
        options = []
        for i in range(-1, j):  # previous warehouse at i; i+1..j ship to j
            ship = sum(p[k] * (x[j] - x[k]) for k in range(i + 1, j + 1))
            options.append(((best[i] if i >= 0 else 0) + ship + c[j], i))
        best[j], prev[j] = min(options)
    out, j = [], n - 1
    while j != -1:
        out.append(j)
        j = prev[j]
    return sorted(out)


@ENVIRONMENTS.register("visible_line")
class VisibleLine(Environment):
    """The lines y = A·x + B seen from y = +∞ (on top over an interval of positive length):
    (|intersection|/|union|)^5 against the true set."""

    tags = TAGS
    answer_kind = "integer_set"
    unique_answer = True
    difficulty_scales = "N = 3 + d lines; slopes and intercepts in -(5 + d)..5 + d"
    size_measure = "lines N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 3 + difficulty, 5 + difficulty
        lines: list[list[int]] = []
        while len(lines) < n:
            line = [rng.randint(-top, top), rng.randint(-top, top)]
            if line not in lines:
                lines.append(line)
        listing = "\n".join(
            f"line {i}: y = {a}x + {b}".replace("+ -", "- ") for i, (a, b) in enumerate(lines)
        )
        prompt = (
            f"You are given {n} lines in the plane:\n{listing}\nA line is visible when, looking "
            "down from y = +∞, some part of it of positive length lies above all the other lines "
            "(touching at a single point does not count). Give the labels of all visible lines "
            "separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, _envelope(lines))), {"lines": lines})

    def check(self, problem: Problem, answer: str) -> Verdict:
        got = parse_int_list(answer)
        n = len(problem.data["lines"])
        if len(got) > n or len(set(got)) != len(got) or any(not 0 <= i < n for i in got):
            return invalid(f"give distinct labels from 0 to {n - 1}")
        gold = set(map(int, self.solve(problem).split(", ")))
        inter, union = len(gold & set(got)), len(gold | set(got))
        ok = set(got) == gold
        return graded(
            (inter / union) ** 5, ok, "correct" if ok else "the set of visible lines is not right"
        )

    def solve(self, problem: Problem) -> str:
        """Line i is visible when the set of x where it is strictly highest is a proper
        interval: intersect (A_i − A_j)·x > B_j − B_i over all j."""
        lines = problem.data["lines"]
        out = []
        for i, (a, b) in enumerate(lines):
            lo, hi, ok = None, None, True
            for j, (c, d) in enumerate(lines):
                if j == i:
                    continue
                if a == c:
                    ok = ok and b > d
                    continue
                bound = Fraction(d - b, a - c)
                if a > c:  # x > bound
                    lo = bound if lo is None else max(lo, bound)
                else:  # x < bound
                    hi = bound if hi is None else min(hi, bound)
            if ok and (lo is None or hi is None or lo < hi):
                out.append(i)
        return ", ".join(map(str, out))

    def count_answers(self, problem: Problem, limit: int = 2) -> int | None:
        return 1

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        gold = set(map(int, answer.split(", ")))
        rest = [i for i in range(len(problem.data["lines"])) if i not in gold]
        return answer + f", {rest[0]}" if rest else ", ".join(map(str, sorted(gold)[1:])) or "0, 0"

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["lines"]))


def _envelope(lines: list[list[int]]) -> list[int]:
    """Upper envelope by slope order: keep the top line of each slope, drop a middle line
    when its neighbours meet at or above it."""
    best: dict[int, int] = {}
    for i, (a, b) in enumerate(lines):
        if a not in best or b > lines[best[a]][1]:
            best[a] = i
    hull: list[int] = []
    for i in sorted(best.values(), key=lambda k: lines[k][0]):
        while len(hull) >= 2:
            (a1, b1), (a2, b2), (a3, b3) = lines[hull[-2]], lines[hull[-1]], lines[i]
            # line 2 is useless when lines 1 and 3 meet at or above it
            if (b3 - b1) * (a2 - a1) >= (b2 - b1) * (a3 - a1):
                hull.pop()
            else:
                break
        hull.append(i)
    return sorted(hull)


@ENVIRONMENTS.register("task_arrangement")
class TaskArrangement(Environment):
    """Split tasks 1..N (kept in order) into consecutive batches; a batch starts after a
    setup time S and ends when all its tasks are done, and each task costs F[i] × the end
    time of its batch: minimise the total, (gold/answer)^3."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "N = 4 + d tasks; T and F in 1..10; S in 1..10 + d"
    size_measure = "tasks N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        t = [rng.randint(1, 10) for _ in range(n)]
        f = [rng.randint(1, 10) for _ in range(n)]
        s = rng.randint(1, 10 + difficulty)
        data = {"t": t, "f": f, "s": s}
        prompt = (
            f"You are given {n} tasks, numbered from 1 to {n}, to be done in this order on one "
            "machine. Task i takes T[i] time and has cost factor F[i]:\n"
            f"T = {' '.join(map(str, t))}\nF = {' '.join(map(str, f))}\n"
            "The tasks are split into consecutive batches. Before "
            f"each batch the machine needs a setup time of {s}; the batch then runs its tasks one "
            "after another, and every task of the batch counts as finished when the whole batch "
            "is finished. The cost of a task is F[i] times its finishing time (measured from time "
            "0). Minimise the total cost. Give the number of the last task of each batch, in "
            f"increasing order, separated by commas (the last number is {n})."
        )
        return Instance(prompt, ", ".join(map(str, _batches(data))), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        n = len(problem.data["t"])
        ends = parse_int_list(answer)
        if not ends or len(ends) > n or ends[-1] != n or any(not 1 <= e <= n for e in ends):
            return invalid(f"give increasing batch ends from 1 to {n}, the last one {n}")
        if any(a >= b for a, b in itertools.pairwise(ends)):
            return invalid("the batch ends must increase")
        best = _batch_cost(problem.data, _batches(problem.data))
        value = _batch_cost(problem.data, ends)
        ok = value == best
        return graded(
            ratio_reward(best, value, 3.0), ok, "correct" if ok else "a cheaper split exists"
        )

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, _batches(problem.data)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rsplit(", ", 1)[0] if ", " in answer else "1"

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["t"]))


def _batch_cost(data: Mapping[str, Any], ends: list[int]) -> int:
    t, f, s = data["t"], data["f"], data["s"]
    clock, total, start = 0, 0, 0
    for end in ends:
        clock += s + sum(t[start:end])
        total += clock * sum(f[start:end])
        start = end
    return total


def _batches(data: Mapping[str, Any]) -> list[int]:
    """best[i] = cheapest first i tasks, charging each setup to all later tasks at once:
    best[i] = min_j best[j] + T(1..i)·F(j+1..i) + S·F(j+1..N)."""
    t, f, s = data["t"], data["f"], data["s"]
    n = len(t)
    pt, pf = [0], [0]
    for a, b in zip(t, f, strict=True):
        pt.append(pt[-1] + a)
        pf.append(pf[-1] + b)
    best, prev = [0] + [0] * n, [0] * (n + 1)
    for i in range(1, n + 1):
        best[i], prev[i] = min(
            (best[j] + pt[i] * (pf[i] - pf[j]) + s * (pf[n] - pf[j]), j) for j in range(i)
        )
    ends, i = [], n
    while i:
        ends.append(i)
        i = prev[i]
    return ends[::-1]
