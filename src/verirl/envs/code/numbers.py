"""Program synthesis over integers (see
:mod:`verirl.envs.code.synthesis`): a pipeline of number steps, counting primes in a range,
counting digit sums, writing n in a base. Difficulty adds steps and variants and grows the
inputs; where a brute force exists, the large tests' CPU limit rules it out."""

from __future__ import annotations

import random
from typing import Any

from verirl.envs.base import ENVIRONMENTS
from verirl.envs.code.synthesis import ProgramSynthesis


def ref_number_pipeline(p: dict[str, Any], n: int) -> int:
    for op, k in p["steps"]:
        if op == "digit_sum":
            n = sum(int(c) for c in str(abs(n)))
        elif op == "reverse_digits":
            n = (-1 if n < 0 else 1) * int(str(abs(n))[::-1])
        elif op == "affine":
            n = n * k + 1
        elif op == "mod":
            n = n % k
        elif op == "collatz":
            steps, m = 0, abs(n)
            while m > 1:
                m = m // 2 if m % 2 == 0 else 3 * m + 1
                steps += 1
            n = steps
        elif op == "square":
            n = n * n
        elif op == "popcount":
            n = bin(abs(n)).count("1")
    return n


_NUMBER_STEPS = {
    "digit_sum": "replace n by the sum of the decimal digits of |n|",
    "reverse_digits": "reverse the decimal digits of |n| (leading zeros vanish), keeping n's sign",
    "affine": "replace n by n * {k} + 1",
    "mod": "replace n by n mod {k} (Python's %)",
    "collatz": "replace n by the number of Collatz steps (halve if even, else 3m + 1) that take "
    "|n| to 1 (0 for |n| <= 1)",
    "square": "square n",
    "popcount": "replace n by the number of set bits (ones) in the binary form of |n|",
}


@ENVIRONMENTS.register("code_number_pipeline")
class CodeNumberPipeline(ProgramSynthesis):
    difficulty_scales = "pipeline steps: 1 + difficulty // 3; larger inputs"
    signature = "def solve(n: int) -> int"
    reference = ref_number_pipeline

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        steps = [
            [rng.choice(sorted(_NUMBER_STEPS)), rng.randint(2, 19)]
            for _ in range(1 + difficulty // 3)
        ]
        return {"steps": steps}

    def spec(self, p: dict[str, Any]) -> str:
        lines = [
            f"{i + 1}. " + _NUMBER_STEPS[op].format(k=k) for i, (op, k) in enumerate(p["steps"])
        ]
        return "Starting from n it applies these steps, in order, and returns the result:\n" + (
            "\n".join(lines)
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        top = 10 ** (2 + difficulty // 4)
        return (
            [[rng.randint(1, 999)] for _ in range(3)]
            + [[0], [1], [-7]]
            + [[rng.randint(-top, top)] for _ in range(20)]
        )


def ref_count_primes(p: dict[str, Any], lo: int, hi: int) -> int:
    if hi < 2 or hi < lo:
        return 0
    sieve = bytearray([1]) * (hi + 1)
    sieve[0:2] = b"\x00\x00"
    for i in range(2, int(hi**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(range(i * i, hi + 1, i)))
    count = 0
    for q in range(max(lo, 2), hi + 1):
        if sieve[q] and (p["mod"] == 0 or q % p["mod"] == p["rem"]):
            count += 1
    return count


@ENVIRONMENTS.register("code_count_primes")
class CodeCountPrimes(ProgramSynthesis):
    difficulty_scales = "residue condition at d >= 3; ranges grow to 10^6 (trial division too slow)"
    signature = "def solve(lo: int, hi: int) -> int"
    reference = ref_count_primes

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        mod = rng.choice([3, 4, 5, 6, 10]) if difficulty >= 3 else 0
        rem = rng.randrange(1, mod) if mod else 0
        return {"mod": mod, "rem": rem, "steps": [1] * (1 + (mod > 0) + difficulty // 5)}

    def spec(self, p: dict[str, Any]) -> str:
        text = "It returns the number of primes q with lo <= q <= hi"
        if p["mod"]:
            text += f" and q % {p['mod']} == {p['rem']}"
        return text + " (0 when the range is empty)."

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        top = 50 * (1 + difficulty)
        out: list[list[Any]] = [[1, 30], [10, 50], [2, 2], [0, 1], [20, 10]]
        for _ in range(20):
            a = rng.randint(0, top)
            out.append([a, a + rng.randint(0, top)])
        return out

    def stress(self, p: dict[str, Any], difficulty: int) -> list[int]:
        return [] if difficulty < 6 else [min(1_000_000, 20_000 * 2 ** ((difficulty - 6) // 2))]

    def stress_args(self, p: dict[str, Any], n: int, seed: int) -> list[Any]:
        return [random.Random(seed).randint(0, n // 10), n]


def ref_digit_sum_count(p: dict[str, Any], n: int) -> int:
    from functools import cache

    digits = [int(c) for c in str(n)]
    k = p["k"]

    @cache
    def go(i: int, rem: int, tight: bool) -> int:
        if i == len(digits):
            return 1 if rem == 0 else 0
        top = digits[i] if tight else 9
        return sum(go(i + 1, (rem + d) % k, tight and d == top) for d in range(top + 1))

    return go(0, 0, True) - 1  # 0 itself has digit sum 0


@ENVIRONMENTS.register("code_digit_sum_count")
class CodeDigitSumCount(ProgramSynthesis):
    difficulty_scales = "n grows to 10^(3 + difficulty) (counting one by one is too slow past 10^7)"
    signature = "def solve(n: int) -> int"
    reference = ref_digit_sum_count

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {"k": rng.randint(2, 9 + difficulty), "steps": [1] * (1 + difficulty // 3)}

    def spec(self, p: dict[str, Any]) -> str:
        return (
            "n >= 0. It returns how many integers x with 1 <= x <= n have a decimal digit sum "
            f"divisible by {p['k']}."
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        top = 10 ** (3 + difficulty)
        return [[100], [57], [1000], [0], [9]] + [[rng.randint(0, top)] for _ in range(12)]


def ref_base_digits(p: dict[str, Any], n: int, base: int) -> str:
    alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
    if n == 0:
        return "0"
    sign = "-" if n < 0 else ""
    n = abs(n)
    out = []
    while n:
        out.append(alphabet[n % base])
        n //= base
    text = "".join(reversed(out))
    if p["group"]:
        groups = []
        while text:
            groups.append(text[-p["group"] :])
            text = text[: -p["group"]]
        text = "_".join(reversed(groups))
    return sign + text


@ENVIRONMENTS.register("code_base_digits")
class CodeBaseDigits(ProgramSynthesis):
    difficulty_scales = (
        "bases 2..10, then up to 36 (d >= 3), digit groups (d >= 6), negatives, larger n"
    )
    signature = "def solve(n: int, base: int) -> str"
    reference = ref_base_digits

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {
            "max_base": 10 if difficulty < 3 else 36,
            "group": rng.randint(2, 5) if difficulty >= 6 else 0,
            "steps": [1] * (1 + (difficulty >= 3) + (difficulty >= 6) + difficulty // 5),
        }

    def spec(self, p: dict[str, Any]) -> str:
        text = (
            f"2 <= base <= {p['max_base']}. It writes n in the given base with digits 0-9 then "
            "lowercase a-z, no leading zeros (\"0\" for zero), a leading '-' for negative n"
        )
        if p["group"]:
            text += (
                f"; the digits are split into groups of {p['group']} from the right, joined "
                "with '_' (the sign stays in front)"
            )
        return text + "."

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        top = 10 ** (3 + difficulty)
        out: list[list[Any]] = [[255, 2], [1000, 7], [-42, 3], [0, 5], [1, 2]]
        out += [[rng.randint(-top, top), rng.randint(2, p["max_base"])] for _ in range(20)]
        return out


__all__: list[str] = []
