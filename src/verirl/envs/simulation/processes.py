"""Simulating a described process: token rewriting, elimination circles, a Fibonacci train,
a dance stage, FBI trees and the most frequent value (RLVE catalogue rows ABProgramSimulation,
Josephus, Fibtrain, CowDanceShow, FBI_BinaryTree, BucketSorting; Zeng et al. 2025, "RLVE:
Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A).

Each verifier recomputes the outcome one way (a stack, a closed form, an event queue) and
``solve`` another (literal step-by-step simulation), so the two cross-check in the tests.
Rewards follow the rows: right or wrong, or mean(answer_i = gold_i)^β for element-wise
sequences, where a sequence of the wrong length or alphabet is invalid (−0.5).
"""

from __future__ import annotations

import heapq
import random
import re
from collections import Counter
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    IntegerAnswer,
    graded,
    invalid,
    parse_int_list,
    sequence_reward,
)
from verirl.envs.kit.wording import plural
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict

TAGS = ("rlve", "simulation")
_TOKENS = ("A#", "#A", "B#", "#B")


class _ExactInteger(IntegerAnswer):
    """An integer answer scored right or wrong; :meth:`fast` is the verifier's method."""

    tags = TAGS

    def fast(self, data: dict[str, Any]) -> int:
        raise NotImplementedError

    def check(self, problem: Problem, answer: str) -> Verdict:
        ok = normalize.parse_integer(answer) == self.fast(dict(problem.data))
        return graded(0.0, ok, "correct" if ok else self.wrong_detail)


@ENVIRONMENTS.register("ab_program_simulation")
class ABProgramSimulation(Environment):
    """The A::B rewriting system: A# #A and B# #B vanish, A# #B becomes #B A#, B# #A becomes
    #A B# (RLVE ABProgramSimulation); give the final program. Right or wrong. The verifier
    sends each #X left past the X'# stack (or annihilates it); ``solve`` rewrites the leftmost
    redex until none is left."""

    tags = TAGS
    difficulty_scales = "program length 4 + 2d tokens"
    size_measure = "program length in tokens"
    size_key = "program"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        program = [rng.choice(_TOKENS) for _ in range(4 + 2 * difficulty)]
        prompt = (
            "A::B is a system with 4 tokens: A#, #A, B# and #B. A program is a sequence of "
            "tokens, rewritten by these rules wherever two neighbouring tokens match:\n"
            "A# #A becomes nothing\nB# #B becomes nothing\nA# #B becomes #B A#\n"
            "B# #A becomes #A B#\n\nRewriting goes on until no rule applies (the result does "
            f"not depend on the order).\n\nProgram: {' '.join(program)}\n\nWhat is the final "
            "program? Give its tokens separated by spaces, or the word empty if no token is "
            "left."
        )
        data = {"program": program}
        return Instance(prompt, self._render(self._normal_form(program)), data)

    @staticmethod
    def _normal_form(program: list[str]) -> list[str]:
        left: list[str] = []  # the #X tokens that reached the front
        right: list[str] = []  # X# tokens, in order
        for tok in program:
            if tok.endswith("#"):
                right.append(tok)
                continue
            partner = tok[1] + "#"
            for i in range(len(right) - 1, -1, -1):
                if right[i] == partner:  # passes the others, vanishes with this one
                    del right[i]
                    break
            else:
                left.append(tok)
        return left + right

    @staticmethod
    def _render(tokens: list[str]) -> str:
        return " ".join(tokens) if tokens else "empty"

    def check(self, problem: Problem, answer: str) -> Verdict:
        t = normalize.clean(answer)
        t = re.sub(r"\\#", "#", t).replace(",", " ")
        tokens = [] if t.strip().lower() in ("empty", "") else t.split()
        if len(tokens) > 10_000 or any(tok not in _TOKENS for tok in tokens):
            return invalid("the answer must be tokens A#, #A, B#, #B (or empty)")
        ok = tokens == self._normal_form(list(problem.data["program"]))
        return graded(0.0, ok, "correct" if ok else "that is not the final program")

    def solve(self, problem: Problem) -> str:
        rules = {
            ("A#", "#A"): (),
            ("B#", "#B"): (),
            ("A#", "#B"): ("#B", "A#"),
            ("B#", "#A"): ("#A", "B#"),
        }
        tokens = list(problem.data["program"])
        changed = True
        while changed:
            changed = False
            for i in range(len(tokens) - 1):
                pair = (tokens[i], tokens[i + 1])
                if pair in rules:
                    tokens[i : i + 2] = list(rules[pair])
                    changed = True
                    break
        return self._render(tokens)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return "#A" if answer == "empty" else ("empty" if " " not in answer else answer[3:])

    def surface_forms(self, problem: Problem) -> list[str]:
        s = self.solve(problem)
        if s == "empty":
            return ["empty", "Empty", "\\text{empty}"]
        return [s, s.replace(" ", ", "), s.replace("#", "\\#"), f" {s} "]


@ENVIRONMENTS.register("josephus")
class Josephus(Environment):
    """N people in a circle, every K-th is eliminated; give the elimination order (RLVE
    Josephus). Not a permutation of 1..N → invalid; else mean(answer_i = gold_i)^10. The
    verifier pops from a list by index arithmetic; ``solve`` counts around the circle."""

    tags = TAGS
    difficulty_scales = "N = 3 + d people, step K in 1..2N"
    size_measure = "number of people N"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        k = rng.randint(1, 2 * n)
        prompt = (
            f"{n} people stand in a circle, labeled 1 to {n} clockwise. Starting from person 1, "
            f"count clockwise 1, 2, ..., {k}; the person counted {k} leaves the circle, and "
            "counting restarts at 1 with the next person clockwise. This repeats until "
            "everyone has left. Give the labels in the order in which people leave, separated "
            "by commas."
        )
        return Instance(prompt, ", ".join(map(str, self._order(n, k))), {"n": n, "k": k})

    def problem_space(self, difficulty: int) -> int:
        return 2 * (3 + difficulty)

    @staticmethod
    def _order(n: int, k: int) -> list[int]:
        people, pos, out = list(range(1, n + 1)), 0, []
        while people:
            pos = (pos + k - 1) % len(people)
            out.append(people.pop(pos))
        return out

    def check(self, problem: Problem, answer: str) -> Verdict:
        n = problem.data["n"]
        order = parse_int_list(answer)
        if sorted(order) != list(range(1, n + 1)):
            return invalid(f"give each label 1..{n} exactly once")
        gold = self._order(n, problem.data["k"])
        ok = order == gold
        return graded(sequence_reward(order, gold, 10.0), ok, "correct" if ok else "wrong order")

    def solve(self, problem: Problem) -> str:
        n, k = problem.data["n"], problem.data["k"]
        alive, out, at = [True] * n, [], -1
        for _ in range(n):
            counted = 0
            while counted < k:
                at = (at + 1) % n
                counted += alive[at]
            alive[at] = False
            out.append(at + 1)
        return ", ".join(map(str, out))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        items = answer.split(", ")
        return ", ".join([items[-1], *items[1:-1], items[0]]) if len(items) > 1 else "0"

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def _fib(i: int) -> int:
    a, b = 0, 1
    for _ in range(i):
        a, b = b, a + b
    return a


@ENVIRONMENTS.register("fibtrain")
class Fibtrain(_ExactInteger):
    """The Fibonacci train (NOIP "station"): boardings follow a Fibonacci rule with an unknown
    second term x; given the total at the last station, how many are aboard after station X?
    (RLVE Fibtrain). Verifier: aboard after station i = (1 + F(i−2))·a + (F(i−1) − 1)·x,
    solved for x; ``solve``: tries x = 0, 1, … and simulates."""

    difficulty_scales = "N = 5 + d stations, a ≤ 10 + d, unknown x ≤ 10 + 2d"
    size_measure = "number of stations N"
    wrong_detail = "that is not the number aboard"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + difficulty
        a, x = rng.randint(1, 10 + difficulty), rng.randint(0, 10 + 2 * difficulty)
        m = self._aboard(n - 1, a, x)
        station = rng.randint(3, n - 1)
        prompt = (
            f"A train runs through stations 1 to {n}. At station 1, {plural(a, 'passenger')} board"
            ". At "
            "station 2 some passengers board and the same number get off, so the number "
            f"aboard does not change. At every later station i (3 ≤ i < {n}), the number "
            "boarding equals the sum of the numbers that boarded at stations i − 1 and i − 2, "
            "and the number getting off equals the number that boarded at station i − 1. At "
            f"the last station {n}, all {m} passengers still aboard get off. How many "
            f"passengers are aboard when the train leaves station {station}?"
        )
        data = {"n": n, "a": a, "m": m, "station": station}
        return Instance(prompt, str(self._aboard(station, a, x)), data)

    @staticmethod
    def _aboard(i: int, a: int, x: int) -> int:
        return a if i <= 2 else (1 + _fib(i - 2)) * a + (_fib(i - 1) - 1) * x

    def fast(self, data: dict[str, Any]) -> int:
        n, a, m = data["n"], data["a"], data["m"]
        x = (m - (1 + _fib(n - 3)) * a) // (_fib(n - 2) - 1)
        return self._aboard(data["station"], a, x)

    def solve_int(self, problem: Problem) -> int:
        d = problem.data
        for x in range(d["m"] + 1):
            boarded, aboard, history = [d["a"], x], d["a"], [d["a"], d["a"]]
            for _ in range(3, d["n"]):
                boarded.append(boarded[-1] + boarded[-2])
                aboard += boarded[-1] - boarded[-2]
                history.append(aboard)
            if aboard == d["m"]:
                return history[d["station"] - 1]
        raise ValueError("no consistent second boarding")


@ENVIRONMENTS.register("cow_dance_show")
class CowDanceShow(_ExactInteger):
    """The smallest stage size K such that N cows dancing in order (a waiting cow enters as
    soon as a place frees) finish within T (RLVE CowDanceShow, USACO). Verifier: an event
    queue per K; ``solve``: a unit-time simulation per K."""

    difficulty_scales = "N = 4 + d cows, dance times 1..10 + d"
    size_measure = "number of cows N"
    wrong_detail = "that is not the smallest stage size"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        times = [rng.randint(1, 10 + difficulty) for _ in range(n)]
        k0 = rng.randint(1, n)
        limit = self._finish(times, k0)
        prompt = (
            f"There are {n} cows, labeled 1 to {n}; cow i dances for d[i] units of time, with "
            f"d = {times}. At most K cows can be on the stage at once. At time 0, cows 1..K "
            "start dancing (all of them if K ≥ N); whenever a cow finishes, the next cow in "
            "label order that has not danced yet enters at that same moment. The show ends "
            f"when the last cow finishes. What is the smallest K for which the show ends by "
            f"time {limit}?"
        )
        return Instance(
            prompt,
            str(self.fast({"times": times, "limit": limit})),
            {"times": times, "limit": limit},
        )

    @staticmethod
    def _finish(times: list[int], k: int) -> int:
        stage = list(times[:k])
        heapq.heapify(stage)
        for t in times[k:]:
            heapq.heappush(stage, heapq.heappop(stage) + t)
        return max(stage)

    def fast(self, data: dict[str, Any]) -> int:
        times = data["times"]
        return next(k for k in range(1, len(times) + 1) if self._finish(times, k) <= data["limit"])

    def solve_int(self, problem: Problem) -> int:
        times, limit = problem.data["times"], problem.data["limit"]
        for k in range(1, len(times) + 1):
            left: list[int] = []  # remaining time of the cows on stage
            nxt, now = 0, 0
            while nxt < len(times) or left:
                while len(left) < k and nxt < len(times):
                    left.append(times[nxt])
                    nxt += 1
                now += 1
                left = [r - 1 for r in left if r > 1]
            if now <= limit:
                return k
        raise ValueError("K = N always finishes in time")

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["times"]))


@ENVIRONMENTS.register("fbi_binary_tree")
class FbiBinaryTree(Environment):
    """The FBI tree of a binary string of length 2^N (all-0 → B, all-1 → I, mixed → F, split
    in halves down to single characters); give its post-order traversal (RLVE FBI_BinaryTree).
    Wrong length or letters → invalid; else mean(answer_i = gold_i)^5."""

    tags = TAGS
    difficulty_scales = "string length 2^N with N = 1 + d//5 (at most 7)"
    size_measure = "string length 2^N"
    size_key = "s"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(7, 1 + difficulty // 5)
        bias = rng.choice([0.2, 0.5, 0.8])
        s = "".join("1" if rng.random() < bias else "0" for _ in range(2**n))
        prompt = (
            "Binary strings are of three types: B if all characters are 0, I if all are 1, and "
            "F if they contain both. The FBI tree of a string S of length 2^N has a root of "
            "S's type; if S has length greater than 1, its left subtree is the FBI tree of the "
            "first half of S and its right subtree that of the second half.\n\nS = "
            f"{s}\n\nGive the post-order traversal of the FBI tree of S (left subtree, right "
            "subtree, then the root), as one string of the letters F, B and I."
        )
        return Instance(prompt, self._postorder(s), {"s": s})

    def problem_space(self, difficulty: int) -> int:
        return 2 ** (2 ** min(7, 1 + difficulty // 5))

    @staticmethod
    def _postorder(s: str) -> str:
        kind = "B" if "1" not in s else ("I" if "0" not in s else "F")
        if len(s) == 1:
            return kind
        half = len(s) // 2
        return FbiBinaryTree._postorder(s[:half]) + FbiBinaryTree._postorder(s[half:]) + kind

    def check(self, problem: Problem, answer: str) -> Verdict:
        s = problem.data["s"]
        got = re.sub(r"[\s,]", "", normalize.clean(answer)).upper()
        if len(got) != 2 * len(s) - 1 or set(got) - set("FBI"):
            return invalid(f"give {2 * len(s) - 1} letters F, B or I")
        gold = self._postorder(s)
        ok = got == gold
        return graded(sequence_reward(list(got), list(gold), 5.0), ok, "correct" if ok else "wrong")

    def solve(self, problem: Problem) -> str:
        s = problem.data["s"]
        levels = [[s]]  # iterative: build the tree level by level, then emit post-order
        while len(levels[-1][0]) > 1:
            levels.append(
                [h for part in levels[-1] for h in (part[: len(part) // 2], part[len(part) // 2 :])]
            )

        def kind(t: str) -> str:
            return "B" if set(t) == {"0"} else ("I" if set(t) == {"1"} else "F")

        def emit(level: int, idx: int) -> str:
            if level == len(levels) - 1:
                return kind(levels[level][idx])
            return (
                emit(level + 1, 2 * idx) + emit(level + 1, 2 * idx + 1) + kind(levels[level][idx])
            )

        return emit(0, 0)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        i = rng.randrange(len(answer))
        swap = {"F": "B", "B": "I", "I": "F"}
        return answer[:i] + swap[answer[i]] + answer[i + 1 :]

    def surface_forms(self, problem: Problem) -> list[str]:
        s = self.solve(problem)
        return [s, s.lower(), " ".join(s), f"\\text{{{s}}}"]


@ENVIRONMENTS.register("bucket_sorting")
class BucketSorting(_ExactInteger):
    """The value that appears most often in an array (unique by construction; RLVE
    BucketSorting). Right or wrong. Verifier: a counter; ``solve``: sort and scan runs."""

    difficulty_scales = "array length 5 + 2d, values 0..2 + d"
    size_measure = "array length"
    size_key = "array"
    wrong_detail = "that is not the most frequent value"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + 2 * difficulty
        while True:
            array = [rng.randint(0, 2 + difficulty) for _ in range(n)]
            top = Counter(array).most_common(2)
            if len(top) == 1 or top[0][1] > top[1][1]:
                break
        prompt = (
            f"You are given the array: {', '.join(map(str, array))}\n\nWhich number appears "
            "most often in the array? (Exactly one number does.)"
        )
        return Instance(prompt, str(top[0][0]), {"array": array})

    def fast(self, data: dict[str, Any]) -> int:
        return Counter(data["array"]).most_common(1)[0][0]

    def solve_int(self, problem: Problem) -> int:
        xs = sorted(problem.data["array"])
        best, best_len, i = xs[0], 0, 0
        while i < len(xs):
            j = i
            while j < len(xs) and xs[j] == xs[i]:
                j += 1
            if j - i > best_len:
                best, best_len = xs[i], j - i
            i = j
        return best


@ENVIRONMENTS.register("face_right_way")
class FaceRightWay(Environment):
    """Cows face forward (F) or backward (B); a machine set to a length K turns K consecutive
    cows around. Choose K to make all cows face forward with the fewest operations M, the
    smallest such K on ties; answer "K, M" (RLVE FaceRightWay, POJ 3276). A false M for that K
    (or an impossible K) scores 0; a true one ((M* + 1)/(M + 1))^5 · (min(K, K*)/max(K, K*))^5,
    RLVE's two ratios combined, correct only at (K*, M*). Verifier: the left-to-right greedy
    per K; ``solve``: every set of turn positions per K."""

    tags = TAGS
    difficulty_scales = "N = 4 + d cows"
    size_measure = "number of cows N"
    size_key = "cows"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        cows = "".join(rng.choice("FB") for _ in range(n))
        if "B" not in cows:
            i = rng.randrange(n)
            cows = cows[:i] + "B" + cows[i + 1 :]
        k, m = self._best(cows)
        prompt = (
            f"{n} cows stand in a row; each faces forward (F) or backward (B): {cows}. A "
            "machine, set once to a length K (1 ≤ K ≤ N), turns around K consecutive cows in "
            "one operation (F becomes B and B becomes F). Choose K so that all cows can be "
            "made to face forward with as few operations M as possible; if several K reach "
            "that minimum, take the smallest K. Give K and M, separated by a comma."
        )
        return Instance(prompt, f"{k}, {m}", {"cows": cows})

    def problem_space(self, difficulty: int) -> int:
        return 2 ** (4 + difficulty) - 1

    @staticmethod
    def _greedy(cows: str, k: int) -> int | None:
        state, ops = [c == "B" for c in cows], 0
        for i in range(len(state) - k + 1):
            if state[i]:
                ops += 1
                for j in range(i, i + k):
                    state[j] = not state[j]
        return None if any(state) else ops

    def _best(self, cows: str) -> tuple[int, int]:
        options = [
            (m, k) for k in range(1, len(cows) + 1) if (m := self._greedy(cows, k)) is not None
        ]
        m, k = min(options)
        return k, m

    def check(self, problem: Problem, answer: str) -> Verdict:
        cows = problem.data["cows"]
        values = parse_int_list(answer, ("K", "M"))
        if len(values) != 2 or not 1 <= values[0] <= len(cows) or values[1] < 0:
            return invalid(f"give K (1..{len(cows)}) and M")
        k, m = values
        if self._greedy(cows, k) != m:
            return graded(0.0, False, "that K does not need exactly that many operations")
        best_k, best_m = self._best(cows)
        ok = (k, m) == (best_k, best_m)
        score = ((best_m + 1) / (m + 1)) ** 5 * (min(k, best_k) / max(k, best_k)) ** 5
        return graded(score, ok, "correct" if ok else "a better K exists")

    def solve(self, problem: Problem) -> str:
        cows = problem.data["cows"]
        n = len(cows)
        target = sum(1 << i for i, c in enumerate(cows) if c == "B")
        best: tuple[int, int] | None = None
        for k in range(1, n + 1):
            windows = [((1 << k) - 1) << s for s in range(n - k + 1)]
            fewest = None
            for chosen in range(1 << len(windows)):
                flips = 0
                for s, w in enumerate(windows):
                    if chosen >> s & 1:
                        flips ^= w
                if flips == target:
                    count = chosen.bit_count()
                    fewest = count if fewest is None else min(fewest, count)
            if fewest is not None and (best is None or fewest < best[1]):
                best = (k, fewest)
        assert best is not None
        return f"{best[0]}, {best[1]}"

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        k, m = parse_int_list(answer)
        return f"{k}, {m + 1}"
