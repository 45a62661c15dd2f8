"""Program synthesis: number functions, small dynamic programming and simulation (see
:mod:`verirl.envs.code.synthesis`). Difficulty adds steps and variants and grows the inputs;
where a brute force exists, the large tests' CPU limit rules it out."""

from __future__ import annotations

import random
from typing import Any

from verirl.envs.base import register_env
from verirl.envs.code.synthesis import ProgramSynthesis


# ---- number pipeline ------------------------------------------------------------------------
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


@register_env
class CodeNumberPipeline(ProgramSynthesis):
    name = "code_number_pipeline"
    family = "code_numbers"
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


@register_env
class CodeCountPrimes(ProgramSynthesis):
    name = "code_count_primes"
    family = "code_numbers"
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


@register_env
class CodeDigitSumCount(ProgramSynthesis):
    name = "code_digit_sum_count"
    family = "code_numbers"
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


@register_env
class CodeBaseDigits(ProgramSynthesis):
    name = "code_base_digits"
    family = "code_numbers"
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


# ---- small dynamic programming --------------------------------------------------------------
def ref_coin_ways(p: dict[str, Any], coins: list[int], amount: int) -> int:
    ways = [1] + [0] * amount
    for c in coins:
        for a in range(c, amount + 1):
            ways[a] = (ways[a] + ways[a - c]) % p["mod"]
    return ways[amount]


@register_env
class CodeCoinWays(ProgramSynthesis):
    name = "code_coin_ways"
    family = "code_dp"
    difficulty_scales = "more coin kinds, amounts grow to 10^5 (enumeration is too slow)"
    signature = "def solve(coins: list[int], amount: int) -> int"
    reference = ref_coin_ways

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {"mod": rng.choice([10**9 + 7, 998_244_353]), "steps": [1] * (1 + difficulty // 3)}

    def spec(self, p: dict[str, Any]) -> str:
        return (
            "coins are distinct positive integers, each usable any number of times. It returns "
            "the number of multisets of coins that sum to amount (order does not matter; 1 for "
            f"amount 0), modulo {p['mod']}."
        )

    def _coins(self, rng: random.Random, k: int) -> list[int]:
        return sorted(rng.sample(range(1, 4 + 2 * k), k))

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        k = 2 + difficulty // 3
        out: list[list[Any]] = [[[1, 2, 5], 11], [[2], 3], [[3, 7], 0]]
        out += [[self._coins(rng, k), rng.randint(0, 20 + 10 * difficulty)] for _ in range(15)]
        return out

    def stress(self, p: dict[str, Any], difficulty: int) -> list[int]:
        return [] if difficulty < 6 else [min(100_000, 5000 * (difficulty - 5))]

    def stress_args(self, p: dict[str, Any], n: int, seed: int) -> list[Any]:
        return [self._coins(random.Random(seed), 6), n]


def ref_edit_distance(p: dict[str, Any], a: str, b: str) -> int:
    ins, dele, sub = p["costs"]
    prev = [j * ins for j in range(len(b) + 1)]
    for i in range(1, len(a) + 1):
        cur = [i * dele] + [0] * len(b)
        for j in range(1, len(b) + 1):
            same = a[i - 1] == b[j - 1]
            cur[j] = min(prev[j] + dele, cur[j - 1] + ins, prev[j - 1] + (0 if same else sub))
        prev = cur
    return prev[len(b)]


@register_env
class CodeEditDistance(ProgramSynthesis):
    name = "code_edit_distance"
    family = "code_dp"
    difficulty_scales = (
        "unequal operation costs at d >= 3; longer strings (exhaustive search is hopeless)"
    )
    signature = "def solve(a: str, b: str) -> int"
    reference = ref_edit_distance

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        costs = [1, 1, 1] if difficulty < 3 else [rng.randint(1, 4) for _ in range(3)]
        return {"costs": costs, "steps": [1] * (1 + (difficulty >= 3) + difficulty // 4)}

    def spec(self, p: dict[str, Any]) -> str:
        ins, dele, sub = p["costs"]
        return (
            "It returns the cheapest cost of turning a into b, where inserting a character costs "
            f"{ins}, deleting one costs {dele} and replacing one by another costs {sub}."
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def w(n: int) -> str:
            return "".join(rng.choice("abcd") for _ in range(n))

        out: list[list[Any]] = [["kitten", "sitting"], [w(4), w(5)], ["", "abc"], ["ab", ""]]
        out += [
            [w(rng.randint(0, 4 + 3 * difficulty)), w(rng.randint(0, 4 + 3 * difficulty))]
            for _ in range(15)
        ]
        return out


def ref_knapsack(p: dict[str, Any], items: list[list[int]], capacity: int) -> int:
    best = [0] * (capacity + 1)
    for weight, value in items:
        rng = range(weight, capacity + 1) if p["unbounded"] else range(capacity, weight - 1, -1)
        for c in rng:
            best[c] = max(best[c], best[c - weight] + value)
    return best[capacity]


@register_env
class CodeKnapsack(ProgramSynthesis):
    name = "code_knapsack"
    family = "code_dp"
    difficulty_scales = "unbounded copies at d >= 4; more items (2^n subsets become too many)"
    signature = "def solve(items: list[list[int]], capacity: int) -> int"
    reference = ref_knapsack

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {"unbounded": difficulty >= 4, "steps": [1] * (1 + difficulty // 3)}

    def spec(self, p: dict[str, Any]) -> str:
        use = "any number of times" if p["unbounded"] else "at most once"
        return (
            f"items are [weight, value] pairs with positive weights; each item may be used {use}. "
            "It returns the largest total value with total weight <= capacity."
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def items(n: int) -> list[list[int]]:
            return [[rng.randint(1, 10), rng.randint(1, 30)] for _ in range(n)]

        out: list[list[Any]] = [[[[2, 3], [3, 4], [4, 5]], 5], [[], 10], [[[5, 10]], 4]]
        n = 3 + 2 * difficulty
        out += [[items(rng.randint(1, n)), rng.randint(0, 10 * n)] for _ in range(15)]
        return out


def ref_grid_paths(p: dict[str, Any], grid: list[str]) -> int:
    rows, cols = len(grid), len(grid[0])
    ways = [[0] * cols for _ in range(rows)]
    for r in range(rows):
        for c in range(cols):
            if grid[r][c] == "#":
                continue
            if r == 0 and c == 0:
                ways[r][c] = 1
                continue
            total = (ways[r - 1][c] if r else 0) + (ways[r][c - 1] if c else 0)
            if p["diagonal"] and r and c:
                total += ways[r - 1][c - 1]
            ways[r][c] = total % p["mod"]
    return ways[rows - 1][cols - 1]


@register_env
class CodeGridPaths(ProgramSynthesis):
    name = "code_grid_paths"
    family = "code_dp"
    difficulty_scales = "diagonal moves at d >= 4; grids grow (enumerating paths is too slow)"
    signature = "def solve(grid: list[str]) -> int"
    reference = ref_grid_paths

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {"diagonal": difficulty >= 4, "mod": 10**9 + 7, "steps": [1] * (1 + difficulty // 3)}

    def spec(self, p: dict[str, Any]) -> str:
        moves = "right, down or diagonally down-right" if p["diagonal"] else "right or down"
        return (
            "grid is a non-empty list of equal-length rows of '.' (free) and '#' (blocked). It "
            "returns the number of paths from the top-left to the bottom-right cell moving "
            f"{moves} "
            f"through free cells only (0 if either end is blocked), modulo {p['mod']}."
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def grid(r: int, c: int) -> list[str]:
            return ["".join("#" if rng.random() < 0.2 else "." for _ in range(c)) for _ in range(r)]

        out: list[list[Any]] = [[["...", "...", "..."]], [[".#", ".."]], [["#"]], [["."]]]
        top = 3 + 2 * difficulty
        out += [[grid(rng.randint(1, top), rng.randint(1, top))] for _ in range(15)]
        return out


# ---- simulation -----------------------------------------------------------------------------
def ref_robot(p: dict[str, Any], moves: str) -> list[int]:
    x = y = 0
    seen = {(0, 0)}
    dirs = {"U": (0, 1), "D": (0, -1), "L": (-1, 0), "R": (1, 0)}
    for m in moves:
        dx, dy = dirs[m]
        nx, ny = x + dx, y + dy
        if p["size"]:
            nx, ny = nx % p["size"], ny % p["size"]
        if [nx, ny] in p["walls"]:
            continue
        x, y = nx, ny
        seen.add((x, y))
    return [x, y, len(seen)] if p["count"] else [x, y]


@register_env
class CodeRobotWalk(ProgramSynthesis):
    name = "code_robot_walk"
    family = "code_simulation"
    difficulty_scales = (
        "walls, then visited-cell count (d >= 3), then a wrapping board (d >= 6); longer programs"
    )
    signature = "def solve(moves: str) -> list[int]"
    reference = ref_robot

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        size = rng.randint(4, 9) if difficulty >= 6 else 0
        walls = [[rng.randint(-3, 3), rng.randint(-3, 3)] for _ in range(min(12, difficulty))]
        walls = [w for w in walls if w != [0, 0]]
        if size:
            walls = [[a % size, b % size] for a, b in walls if (a % size, b % size) != (0, 0)]
        return {
            "size": size,
            "walls": walls,
            "count": difficulty >= 3,
            "steps": [1] * (1 + len(walls) // 2 + (difficulty >= 3) + (difficulty >= 6)),
        }

    def spec(self, p: dict[str, Any]) -> str:
        text = (
            "A robot starts at (0, 0). Each character of moves is U (y + 1), D (y - 1), L (x - 1) "
            "or R (x + 1)"
        )
        if p["size"]:
            text += f"; the board wraps: coordinates are taken modulo {p['size']} after every move"
        if p["walls"]:
            text += f". A move into a wall cell is skipped; the walls are {p['walls']}"
        if p["count"]:
            text += (
                ". It returns [x, y, v]: the final position and the number of distinct cells "
                "visited (the start included)."
            )
        else:
            text += ". It returns the final position [x, y]."
        return text

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def prog(n: int) -> str:
            return "".join(rng.choice("UDLR") for _ in range(n))

        return [[prog(6)], [prog(8)], [""], ["UUUU"]] + [
            [prog(rng.randint(0, 10 + 5 * difficulty))] for _ in range(15)
        ]


def ref_stack_machine(p: dict[str, Any], program: list[str]) -> list[int]:
    stack: list[int] = []
    for ins in program:
        op, *arg = ins.split()
        if op == "push":
            stack.append(int(arg[0]))
        elif op == "pop":
            if stack:
                stack.pop()
        elif op in ("add", "mul", "sub"):
            if len(stack) >= 2:
                b, a = stack.pop(), stack.pop()
                stack.append(a + b if op == "add" else a * b if op == "mul" else a - b)
        elif op == "dup":
            if stack:
                stack.append(stack[-1])
        elif op == "swap":
            if len(stack) >= 2:
                stack[-1], stack[-2] = stack[-2], stack[-1]
        elif op == "mod" and stack:
            stack[-1] %= p["mod"]
    return stack


_STACK_OPS = ["push", "pop", "add", "dup", "swap", "mul", "sub", "mod"]


@register_env
class CodeStackMachine(ProgramSynthesis):
    name = "code_stack_machine"
    family = "code_simulation"
    difficulty_scales = (
        "instruction set grows (3 + difficulty // 2 kinds, up to 8); longer programs"
    )
    signature = "def solve(program: list[str]) -> list[int]"
    reference = ref_stack_machine

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        ops = _STACK_OPS[: min(len(_STACK_OPS), 3 + difficulty // 2)]
        return {"ops": ops, "mod": rng.randint(5, 50), "steps": ops}

    def spec(self, p: dict[str, Any]) -> str:
        what = {
            "push": "'push X' pushes the integer X",
            "pop": "'pop' removes the top (nothing happens on an empty stack)",
            "add": "'add' pops b then a and pushes a + b",
            "dup": "'dup' pushes a copy of the top",
            "swap": "'swap' exchanges the top two",
            "mul": "'mul' pops b then a and pushes a * b",
            "sub": "'sub' pops b then a and pushes a - b",
            "mod": f"'mod' replaces the top x by x % {p['mod']}",
        }
        lines = "\n".join(f"- {what[op]}" for op in p["ops"])
        return (
            "It runs a stack machine on the instructions in program, starting from an empty "
            "stack, and returns the final stack (bottom first). An instruction that needs more "
            "items than the stack holds does nothing. Instructions:\n" + lines
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def prog(n: int) -> list[str]:
            out = []
            for _ in range(n):
                op = rng.choice(p["ops"])
                out.append(f"push {rng.randint(-9, 9)}" if op == "push" else op)
            return out

        fixed: list[list[Any]] = [[prog(5)], [prog(7)], [[]], [["pop", "add"]]]
        return fixed + [[prog(rng.randint(1, 6 + 3 * difficulty))] for _ in range(15)]


def ref_ledger(p: dict[str, Any], events: list[list[Any]]) -> dict[str, int]:
    balances: dict[str, int] = {}
    for ev in events:
        kind = ev[0]
        if kind == "open":
            balances.setdefault(ev[1], 0)
        elif kind == "deposit" and ev[1] in balances:
            balances[ev[1]] += ev[2]
        elif kind == "withdraw" and ev[1] in balances:
            cost = ev[2] + p["fee"]
            if balances[ev[1]] >= cost:
                balances[ev[1]] -= cost
        elif kind == "transfer" and ev[1] in balances and ev[2] in balances:
            if ev[1] != ev[2] and balances[ev[1]] >= ev[3]:
                balances[ev[1]] -= ev[3]
                balances[ev[2]] += ev[3]
        elif kind == "close" and ev[1] in balances and balances[ev[1]] == 0:
            del balances[ev[1]]
    return dict(sorted(balances.items()))


@register_env
class CodeLedger(ProgramSynthesis):
    name = "code_ledger"
    family = "code_simulation"
    difficulty_scales = "event kinds grow (withdrawal fee, transfers, closing); longer event logs"
    signature = "def solve(events: list[list]) -> dict[str, int]"
    reference = ref_ledger

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        kinds = ["open", "deposit", "withdraw"]
        if difficulty >= 2:
            kinds.append("transfer")
        if difficulty >= 5:
            kinds.append("close")
        return {"kinds": kinds, "fee": rng.randint(1, 3) if difficulty >= 3 else 0, "steps": kinds}

    def spec(self, p: dict[str, Any]) -> str:
        fee = f" plus a fee of {p['fee']}" if p["fee"] else ""
        what = {
            "open": "['open', name] opens an account with balance 0 (no effect if it exists)",
            "deposit": "['deposit', name, x] adds x",
            "withdraw": f"['withdraw', name, x] takes x{fee}, only if the balance covers it",
            "transfer": "['transfer', a, b, x] moves x from a to b, only if a != b and a's "
            "balance covers x",
            "close": "['close', name] removes the account, only if its balance is 0",
        }
        lines = "\n".join(f"- {what[k]}" for k in p["kinds"])
        return (
            "It replays bank events in order and returns the open accounts' balances as a dict "
            "sorted by name. Events naming an account that is not open are ignored.\n" + lines
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        names = ["ann", "bob", "cy", "dee"]

        def log(n: int) -> list[list[Any]]:
            out: list[list[Any]] = []
            for _ in range(n):
                k = rng.choice(p["kinds"])
                if k in ("open", "close"):
                    out.append([k, rng.choice(names)])
                elif k == "transfer":
                    out.append([k, rng.choice(names), rng.choice(names), rng.randint(1, 30)])
                else:
                    out.append([k, rng.choice(names), rng.randint(1, 30)])
            return out

        fixed: list[list[Any]] = [[log(6)], [log(8)], [[]]]
        return fixed + [[log(rng.randint(1, 8 + 3 * difficulty))] for _ in range(15)]


def ref_life(p: dict[str, Any], grid: list[str], steps: int) -> list[str]:
    rows, cols = len(grid), len(grid[0])
    cells = [[ch == "#" for ch in row] for row in grid]
    for _ in range(steps):
        nxt = [[False] * cols for _ in range(rows)]
        for r in range(rows):
            for c in range(cols):
                n = 0
                for dr in (-1, 0, 1):
                    for dc in (-1, 0, 1):
                        if dr or dc:
                            rr, cc = r + dr, c + dc
                            if p["wrap"]:
                                rr, cc = rr % rows, cc % cols
                            if 0 <= rr < rows and 0 <= cc < cols and cells[rr][cc]:
                                n += 1
                nxt[r][c] = n in p["born"] if not cells[r][c] else n in p["survive"]
        cells = nxt
    return ["".join("#" if v else "." for v in row) for row in cells]


@register_env
class CodeCellularAutomaton(ProgramSynthesis):
    name = "code_cellular_automaton"
    family = "code_simulation"
    difficulty_scales = (
        "wrapping edges at d >= 3, other birth/survival rules at d >= 6; bigger grids, more steps"
    )
    signature = "def solve(grid: list[str], steps: int) -> list[str]"
    reference = ref_life

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        born, survive = [3], [2, 3]
        if difficulty >= 6:
            born = sorted(rng.sample(range(1, 9), 2))
            survive = sorted(rng.sample(range(1, 9), 3))
        return {
            "wrap": difficulty >= 3,
            "born": born,
            "survive": survive,
            "steps": [1] * (1 + (difficulty >= 3) + (difficulty >= 6) + difficulty // 4),
        }

    def spec(self, p: dict[str, Any]) -> str:
        edge = (
            "the grid wraps around (a torus)"
            if p["wrap"]
            else "cells outside the grid count as dead"
        )
        return (
            "grid is a non-empty list of equal-length rows of '#' (alive) and '.' (dead). Every "
            "step updates all cells at once from their 8 neighbours: a dead cell becomes alive "
            f"when its live-neighbour count is in {p['born']}, a live cell stays alive when it "
            f"is in {p['survive']}; {edge}. It returns the grid after the given number of steps."
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def grid(r: int, c: int) -> list[str]:
            return [
                "".join("#" if rng.random() < 0.35 else "." for _ in range(c)) for _ in range(r)
            ]

        top = 4 + difficulty
        out: list[list[Any]] = [[[".#.", ".#.", ".#."], 1], [grid(4, 5), 2], [["#"], 3]]
        out += [
            [grid(rng.randint(1, top), rng.randint(1, top)), rng.randint(0, 2 + difficulty)]
            for _ in range(12)
        ]
        return out


__all__: list[str] = []
