"""Constructions of sequences: numbers from their pairwise sums, permutations with distinct
prefix sums or products modulo N, a 0..3 sequence avoiding forbidden neighbours, and integer
polynomials (a remainder, an interpolation).

RLVE-Gym rows SquSquarks, PrefixSumMODDistinctPermutation,
PrefixProductMODDistinctPermutation, RangeFourSequenceConstruction, PolynomialRemainder and
PolynomialInterpolation (Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for
Language Models with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A).
Constructions are checked against the constraints (any valid answer is accepted) and scored
(satisfied/all)^β or (intersection/union)^5; polynomial coefficients get
mean([gold = answer])^10.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from fractions import Fraction

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    parse_int_list,
    satisfied_verdict,
    sequence_reward,
)
from verirl.envs.kit.numbers import is_prime
from verirl.types import Problem, Verdict

TAGS = ("rlve", "construction")


def _pair_sums(xs: list[int]) -> Counter[int]:
    return Counter(xs[i] + xs[j] for i in range(len(xs)) for j in range(i + 1, len(xs)))


@ENVIRONMENTS.register("squ_squarks")
class SquSquarks(Environment):
    """N distinct positive integers whose pairwise sums are a given multiset:
    (|intersection| / |union|)^5 of the sum multisets."""

    tags = TAGS
    answer_kind = "integer_set"
    difficulty_scales = "N = 3 + d numbers up to 10 + 5d"
    size_measure = "numbers N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        xs = sorted(rng.sample(range(1, 10 + 5 * difficulty + n), n))
        sums = sorted(_pair_sums(xs).elements())
        prompt = (
            f"Find {n} distinct positive integers such that the sums of all {n} × ({n} - 1) / 2 = "
            f"{len(sums)} pairs of them are exactly these numbers (in some order):\n"
            f"{' '.join(map(str, sums))}\nGive the {n} integers separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, xs)), {"sums": sums, "n": n})

    def check(self, problem: Problem, answer: str) -> Verdict:
        n = problem.data["n"]
        xs = parse_int_list(answer)
        if len(xs) != n or len(set(xs)) != n or any(x <= 0 for x in xs):
            return invalid(f"give {n} distinct positive integers")
        got, want = _pair_sums(xs), Counter(problem.data["sums"])
        inter, union = sum((got & want).values()), sum((got | want).values())
        ok = got == want
        return graded(
            (inter / union) ** 5, ok, "correct" if ok else "the pairwise sums do not match"
        )

    def solve(self, problem: Problem) -> str:
        """The two smallest sums are x1 + x2 and x1 + x3; try each other sum as x2 + x3, then
        peel the smallest remaining sum, which is always x1 + (the next number)."""
        sums = sorted(problem.data["sums"])
        n = problem.data["n"]
        for k in range(2, len(sums)):
            twice = sums[0] + sums[1] - sums[k]
            if twice <= 0 or twice % 2:
                continue
            xs = [twice // 2]
            left = Counter(sums)
            ok = True
            while len(xs) < n and ok:
                nxt = min(left) - xs[0]
                for x in xs:
                    if left[x + nxt] <= 0:
                        ok = False
                        break
                    left[x + nxt] -= 1
                    if not left[x + nxt]:
                        del left[x + nxt]
                xs.append(nxt)
            if ok and not left and len(set(xs)) == n and min(xs) > 0:
                return ", ".join(map(str, sorted(xs)))
        return ""

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        xs = parse_int_list(answer)
        xs[-1] += 1
        return ", ".join(map(str, xs))

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def _permutation_error(perm: list[int], n: int) -> str:
    return "" if sorted(perm) == list(range(1, n + 1)) else f"give a permutation of 1 to {n}"


@ENVIRONMENTS.register("prefix_sum_mod_distinct_permutation")
class PrefixSumModDistinctPermutation(Environment):
    """A permutation of 1..N (N even) whose N prefix sums are distinct modulo N:
    (distinct residues/N)^10."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "N even, up to 8·1.5^d (at most 300)"
    size_measure = "N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = int(min(300, 8 * 1.5**difficulty))
        n = 2 * rng.randint(max(1, top // 4), top // 2)
        prompt = (
            f"Find a permutation of the numbers 1 to {n} such that all {n} prefix sums (the sum of "
            f"the first i numbers, for i = 1 to {n}) are distinct modulo {n}. Give the "
            "permutation separated by commas."
        )
        return Instance(prompt, _zigzag(n), {"n": n})

    def check(self, problem: Problem, answer: str) -> Verdict:
        n = problem.data["n"]
        perm = parse_int_list(answer)
        if err := _permutation_error(perm, n):
            return invalid(err)
        seen, run = set(), 0
        for x in perm:
            run += x
            seen.add(run % n)
        ok = len(seen) == n
        return graded(
            (len(seen) / n) ** 10, ok, "correct" if ok else "some prefix sums agree modulo N"
        )

    def solve(self, problem: Problem) -> str:
        return _zigzag(problem.data["n"])

    def problem_space(self, difficulty: int) -> int | None:
        top = int(min(300, 8 * 1.5**difficulty))
        return min(10**9, top // 2 - max(1, top // 4) + 1)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        # identity: the prefix sums at i = N - 1 and i = N are both N/2 modulo N
        return ", ".join(str(x) for x in range(1, problem.data["n"] + 1))

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def _zigzag(n: int) -> str:
    """N, 1, N-2, 3, N-4, 5, ...: the prefix sums are 0, 1, -1, 2, -2, ... modulo N."""
    out = [n - i if i % 2 == 0 else i for i in range(n)]
    return ", ".join(map(str, out))


@ENVIRONMENTS.register("prefix_product_mod_distinct_permutation")
class PrefixProductModDistinctPermutation(Environment):
    """A permutation of 1..N (N prime or 4) whose N prefix products are distinct modulo N:
    (distinct residues/N)^10."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "N a prime (or 4) up to 8·1.5^d (at most 300)"
    size_measure = "N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = int(min(300, 8 * 1.5**difficulty))
        n = rng.choice(_prime_choices(top))
        prompt = (
            f"Find a permutation of the numbers 1 to {n} such that all {n} prefix products (the "
            f"product of the first i numbers, for i = 1 to {n}) are distinct modulo {n}. Give "
            "the permutation separated by commas."
        )
        return Instance(prompt, _ratios(n), {"n": n})

    def check(self, problem: Problem, answer: str) -> Verdict:
        n = problem.data["n"]
        perm = parse_int_list(answer)
        if err := _permutation_error(perm, n):
            return invalid(err)
        seen, run = set(), 1
        for x in perm:
            run = run * x % n
            seen.add(run)
        ok = len(seen) == n
        return graded(
            (len(seen) / n) ** 10, ok, "correct" if ok else "some prefix products agree modulo N"
        )

    def solve(self, problem: Problem) -> str:
        return _ratios(problem.data["n"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        n = problem.data["n"]
        return ", ".join(str(x) for x in [n, *range(1, n)])  # the product is 0 from the start

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])

    def problem_space(self, difficulty: int) -> int | None:
        top = int(min(300, 8 * 1.5**difficulty))
        return min(10**9, len(_prime_choices(top)))


def _prime_choices(top: int) -> list[int]:
    """The primes in [top/2, top] (and 4 while top is small): N grows with the difficulty."""
    return [p for p in range(max(3, top // 2), top + 1) if is_prime(p)] + ([4] if top < 12 else [])


def _ratios(n: int) -> str:
    """1, 2/1, 3/2, ..., (N-1)/(N-2), N modulo a prime N: prefix products 1, 2, ..., N-1, 0."""
    if n == 4:
        return "1, 3, 2, 4"
    out = [1] + [i * pow(i - 1, -1, n) % n for i in range(2, n)] + [n]
    return ", ".join(map(str, out))


@ENVIRONMENTS.register("range_four_sequence_construction")
class RangeFourSequenceConstruction(Environment):
    """A sequence over {0, 1, 2, 3} avoiding forbidden ordered neighbour pairs and matching
    fixed positions: (satisfied/all)^5."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "length 3 + d; 4..8 forbidden pairs; about one position in four fixed"
    size_measure = "length N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        hidden = [rng.randint(0, 3) for _ in range(n)]
        used = set(itertools.pairwise(hidden))
        free = [(a, b) for a in range(4) for b in range(4) if (a, b) not in used]
        forbidden = sorted(rng.sample(free, min(len(free), rng.randint(4, 8))))
        fixed = sorted(rng.sample(range(n), max(1, n // 4)))
        rules = ", ".join(f"({a}, {b})" for a, b in forbidden)
        pins = ", ".join(f"A[{i}] = {hidden[i]}" for i in fixed)
        prompt = (
            f"Find a sequence A[0], A[1], ..., A[{n - 1}] of {n} integers, each 0, 1, 2 or 3, such "
            f"that no two adjacent elements (A[i], A[i+1]) form any of the ordered pairs {rules}, "
            f"and {pins}. Give the sequence separated by commas."
        )
        data = {
            "n": n,
            "forbidden": [list(p) for p in forbidden],
            "fixed": [[i, hidden[i]] for i in fixed],
        }
        return Instance(prompt, ", ".join(map(str, hidden)), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        seq = parse_int_list(answer)
        if len(seq) != d["n"] or any(not 0 <= x <= 3 for x in seq):
            return invalid(f"give {d['n']} values, each 0, 1, 2 or 3")
        bad = {tuple(p) for p in d["forbidden"]}
        good = sum(1 for pair in itertools.pairwise(seq) if pair not in bad)
        good += sum(1 for i, v in d["fixed"] if seq[i] == v)
        return satisfied_verdict(good, d["n"] - 1 + len(d["fixed"]), "constraints are broken")

    def solve(self, problem: Problem) -> str:
        """DP over positions: which values can end a valid prefix, with back-pointers."""
        d = problem.data
        bad = {tuple(p) for p in d["forbidden"]}
        pinned = {i: v for i, v in d["fixed"]}
        allowed = [[pinned[i]] if i in pinned else list(range(4)) for i in range(d["n"])]
        back: list[dict[int, int]] = [dict.fromkeys(allowed[0], -1)]
        for i in range(1, d["n"]):
            back.append({b: a for b in allowed[i] for a in back[-1] if (a, b) not in bad})
        v = min(back[-1])
        out = [v]
        for i in range(d["n"] - 1, 0, -1):
            v = back[i][v]
            out.append(v)
        return ", ".join(map(str, reversed(out)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        i, v = problem.data["fixed"][0]
        seq = answer.split(", ")
        seq[i] = str((v + 1) % 4)
        return ", ".join(seq)

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def _poly_text(coeffs: list[int]) -> str:
    """Coefficients from the constant term up, as a human-readable polynomial."""
    terms = []
    for k in range(len(coeffs) - 1, -1, -1):
        c = coeffs[k]
        if c == 0:
            continue
        mag = abs(c)
        body = ("" if mag == 1 and k else str(mag)) + ("x" if k == 1 else f"x^{k}" if k else "")
        sign = "-" if c < 0 else "+"
        terms.append((sign, body))
    if not terms:
        return "0"
    first = ("-" if terms[0][0] == "-" else "") + terms[0][1]
    return first + "".join(f" {s} {b}" for s, b in terms[1:])


class _CoefficientTask(Environment):
    tags = ("rlve", "algebra")
    answer_kind = "integer_list"
    unique_answer = True

    def check(self, problem: Problem, answer: str) -> Verdict:
        got, gold = parse_int_list(answer), parse_int_list(self.solve(problem))
        if len(got) != len(gold):
            return invalid(f"expected {len(gold)} coefficients")
        ok = got == gold
        return graded(
            sequence_reward(got, gold, 10.0), ok, "correct" if ok else "some coefficients are wrong"
        )

    def count_answers(self, problem: Problem, limit: int = 2) -> int | None:
        return 1  # polynomial division and interpolation have one result


@ENVIRONMENTS.register("polynomial_remainder")
class PolynomialRemainder(_CoefficientTask):
    """The remainder of P(x) divided by a monic Q(x), as its coefficients."""

    difficulty_scales = "deg P = 3 + d//2; deg Q in 2..5 (below deg P); coefficients up to 5 + d"
    size_measure = "degree of P"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty // 2
        m = rng.randint(2, min(5, n - 1))
        top = 5 + difficulty
        q = [rng.randint(-top, top) for _ in range(m)] + [1]  # monic: integer quotient
        quotient = [rng.randint(-top, top) for _ in range(n - m)] + [rng.choice([-2, -1, 1, 2])]
        rem = [rng.randint(-top, top) for _ in range(m)]
        p = [0] * (n + 1)
        for i, a in enumerate(quotient):
            for j, b in enumerate(q):
                p[i + j] += a * b
        for i, r in enumerate(rem):
            p[i] += r
        prompt = (
            f"You are given two polynomials:\nP(x) = {_poly_text(p)}\nQ(x) = {_poly_text(q)}\n"
            f"Find the remainder R(x) of dividing P(x) by Q(x), the polynomial of degree less than "
            f"{m} with P(x) = Q(x)·S(x) + R(x) for some polynomial S(x). Give the {m} coefficients "
            f"of R from the constant term up to the x^{m - 1} term, separated by commas (write 0 "
            "for a missing term)."
        )
        return Instance(prompt, ", ".join(map(str, rem)), {"p": p, "q": q})

    def solve(self, problem: Problem) -> str:
        p, q = list(problem.data["p"]), problem.data["q"]
        m = len(q) - 1
        for top in range(len(p) - 1, m - 1, -1):  # long division, highest term first
            factor = p[top]  # Q is monic
            for j in range(m + 1):
                p[top - m + j] -= factor * q[j]
        return ", ".join(map(str, p[:m]))

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["p"]) - 1)


@ENVIRONMENTS.register("polynomial_interpolation")
class PolynomialInterpolation(_CoefficientTask):
    """The integer coefficients of the degree-N polynomial through N + 1 given points."""

    difficulty_scales = "degree N = 2 + d//3 (at most 10); coefficients up to 3 + d"
    size_measure = "degree N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(10, 2 + difficulty // 3)
        top = 3 + difficulty
        coeffs = [rng.randint(-top, top) for _ in range(n)] + [
            rng.choice([-1, 1]) * rng.randint(1, top)
        ]
        xs = sorted(rng.sample(range(-n - 2, n + 3), n + 1))
        ys = [sum(c * x**k for k, c in enumerate(coeffs)) for x in xs]
        points = ", ".join(f"f({x}) = {y}" for x, y in zip(xs, ys, strict=True))
        prompt = (
            f"f(x) = a_0 + a_1·x + ... + a_{n}·x^{n} is a polynomial of degree {n} with integer "
            f"coefficients, and {points}. Find its coefficients; give a_0, a_1, ..., a_{n} "
            "separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, coeffs)), {"xs": xs, "ys": ys})

    def solve(self, problem: Problem) -> str:
        """Newton's divided differences in exact fractions, expanded into coefficients."""
        xs, ys = problem.data["xs"], problem.data["ys"]
        table = [Fraction(y) for y in ys]
        newton = [table[0]]
        for level in range(1, len(xs)):
            table = [
                (table[i + 1] - table[i]) / (xs[i + level] - xs[i]) for i in range(len(table) - 1)
            ]
            newton.append(table[0])
        coeffs = [Fraction(0)] * len(xs)
        basis = [Fraction(1)]  # ∏ (x − x_j) for j < level
        for level, c in enumerate(newton):
            for k, b in enumerate(basis):
                coeffs[k] += c * b
            basis = [Fraction(0), *basis]
            for k in range(len(basis) - 1):
                basis[k] -= xs[level] * basis[k + 1]
        return ", ".join(str(int(c)) for c in coeffs)

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["xs"]) - 1)
