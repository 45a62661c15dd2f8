"""Problem throughput: generate + verify rate of every environment, next to reasoning-gym.

For each registered environment it times, over ``--reps`` repetitions, generating ``--n``
problems (difficulties cycling through ``--difficulties``, fresh seeds each repetition) and
verifying each problem's reference answer written as a model would (``\\boxed{answer}``), and
reports the median problems per second. Every reference answer must verify as correct; the
table counts those that did not.

Then it compares the same loop against reasoning-gym **at matched difficulty**: every entry of
:data:`PAIRS` names one of our environments at one difficulty and a reasoning-gym dataset with
the config that poses problems of the same size (same number of digits, list length, grid or
graph size; what is matched is written next to each entry). Per pair, both sides generate
``--n`` problems and verify each one's own reference answer (reasoning-gym: ``dataset[i]``
plus ``dataset.score_answer(reference, entry)``), over ``--reps`` repetitions with fresh
seeds; dataset construction is outside the timer. It prints ours/s, theirs/s and the ratio per
pair, and the median and geometric-mean ratio over the pairs where both sides scored every
reference answer as correct (pairs where either side failed are listed, not counted).

How it is timed, so that a loaded machine does not decide the result: by default with this
process's **CPU time** (``time.process_time``; ``--clock wall`` for the wall clock), which
other processes move far less than the wall clock. The two sides of a pair are **interleaved**
(repetition k of ours, then of theirs; the order reversed on odd repetitions), so a pair's
ratio is taken per repetition, between two runs timed next to each other. Per pair it prints
the median rate of each side and the **median ratio over the repetitions with its min-max**;
the summary is the median (and geometric mean) over the pairs of those per-pair medians,
and, as its spread, the median over the pairs computed for each repetition separately
(one value per repetition, with their min, median and max). ``--json`` keeps every
repetition's rates and ratios.
``--show`` prints a sample prompt of each side of every pair instead, to check the match.
Pairs considered and dropped are in :data:`DROPPED`, with the reason.

reasoning-gym is a bench-only dependency: ``pip install reasoning-gym==0.1.25``.

Run: ``python bench/bench_envs.py`` (full), ``--pairs-only`` (only the matched pairs),
``--n 20 --reps 2`` for a smoke run, ``--show`` to print the matched prompts.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MatchedPair:
    """One of our environments at one difficulty next to a reasoning-gym dataset configured to
    pose problems of the same size (``matched`` says what is equal, printed by ``--show``)."""

    difficulty: int
    config: dict[str, Any]
    matched: str


# (ours, reasoning-gym dataset) -> our difficulty and the reasoning-gym config that poses the
# same task at the same size. ``matched`` names the size parameters that are equal on both
# sides and the differences that remain; ``--show`` prints a sample prompt of each side.
PAIRS: dict[tuple[str, str], MatchedPair] = {
    # two 3-digit operands, + only (ours: 1 + d//2 digits, a third operand only from d 5;
    # theirs: operands below 10^3)
    ("addition", "basic_arithmetic"): MatchedPair(
        4,
        dict(
            min_terms=2,
            max_terms=2,
            min_digits=3,
            max_digits=3,
            operators=("+",),
            allow_parentheses=False,
            allow_negation=False,
        ),
        "2 operands of (up to) 3 digits, + only",
    ),
    # 5 terms of 2 digits joined by + and - (ours: 3 + d//2 terms, 1 + d//3 digits)
    ("chain_sum", "chain_sum"): MatchedPair(
        4,
        dict(min_terms=5, max_terms=5, min_digits=2, max_digits=2),
        "5 terms of 2 digits, + and -",
    ),
    # two 3-digit factors (ours: 1 + (d+1)//2 and 1 + d//2 digits)
    ("multiplication", "products"): MatchedPair(
        4,
        dict(min_terms=2, max_terms=2, min_digits=3, max_digits=3),
        "2 factors of 3 digits",
    ),
    # 7 integers in 0..29 (ours: 3 + d numbers within 9 + 10·(d//2), non-negative below d 5;
    # both ask ascending or descending order)
    ("sort_list", "number_sorting"): MatchedPair(
        4,
        dict(
            min_numbers=7, max_numbers=7, min_decimals=0, max_decimals=0, min_value=0, max_value=29
        ),
        "7 integers in 0..29, ascending or descending",
    ),
    # 20 vertices, 4 colours, about 45 edges (ours: 5 + d vertices, 3 + d//8 colours,
    # 3n/2 + d edges = 45 of 190 pairs; theirs: edge probability 45/190)
    ("graph_coloring", "graph_color"): MatchedPair(
        15,
        dict(num_colors=4, min_num_vertices=20, max_num_vertices=20, edge_probability=45 / 190),
        "20 vertices, 4 colours, ~45 edges",
    ),
    # 3 jugs, short solutions (ours: 2 + d//10 jugs of capacity 3..14 + d, the target from a
    # random walk of 3 + d moves, whose shortest solution has a median of 2 moves (max 6 over
    # 200 seeds); theirs: one knob, `difficulty` = k, sets both the capacities 3..3 + k and the
    # least number of moves, >= k; k = 3 gives references of median 4 moves (max 8). Matched
    # on solution length; capacities differ (ours up to 24, theirs up to 6). It refuses fewer
    # than 3 jugs, ours has 3 from d 10)
    ("jug_puzzle", "jugs"): MatchedPair(
        10,
        dict(num_jugs=3, difficulty=3),
        "3 jugs, solutions of a few moves (capacities: ours up to 24, theirs up to 6)",
    ),
    # 4 disks, 3 pegs (ours: 2 + floor(log2(d + 1)) disks from a random legal position,
    # so our optimal move lists are shorter than theirs, which start from one full peg)
    ("hanoi_moves", "tower_of_hanoi"): MatchedPair(
        3,
        dict(min_disks=4, max_disks=4, min_pegs=3, max_pegs=3),
        "4 disks, 3 pegs (ours from a random legal position)",
    ),
    # 8 × 8 board with 2 queens given (ours: side 4 + d//2, min(1 + d//8, n//4) fixed queens;
    # theirs: 8 - max_remove queens left on the board)
    ("n_queens", "n_queens"): MatchedPair(
        8,
        dict(n=8, min_remove=6, max_remove=6),
        "8 x 8 board, 2 queens given",
    ),
    # 3 islanders (ours: 2 + d//3, all statement kinds from d 3)
    ("knights_knaves", "knights_knaves"): MatchedPair(
        3,
        dict(n_people=3, depth_constraint=2, width_constraint=2),
        "3 islanders",
    ),
    # a product of 2 linear binomials with small coefficients (ours: 2 + d//4 factors,
    # coefficients up to 2 + d//3; theirs: 2 polynomials of 2 monomials from {1, x}; with
    # min_degree=1 it draws monomials of degree exactly 1 and poses a product of monomials;
    # when it draws a constant factor, sympy folds it into the other one)
    ("polynomial_expand", "polynomial_multiplication"): MatchedPair(
        3,
        dict(
            min_terms=2,
            max_terms=2,
            min_value=1,
            max_value=3,
            min_degree=0,
            max_degree=1,
            min_polynomials=2,
            max_polynomials=2,
        ),
        "2 linear binomials, coefficients up to 3",
    ),
    # integers up to 34^3 = 39304 (ours: 3 prime factors of at most 34; theirs: a uniform
    # integer in the same range, so its factor count varies)
    ("prime_factorization", "prime_factorization"): MatchedPair(
        4,
        dict(min_value=2, max_value=34**3),
        "numbers up to 39304 (ours: exactly 3 prime factors)",
    ),
    # values up to 1024, any bases 2..16 (ours: value up to 2^(4 + d), any bases from d 6)
    ("base_conversion", "base_conversion"): MatchedPair(
        6,
        dict(min_base=2, max_base=16, min_value=0, max_value=1024),
        "values up to 1024, bases 2..16",
    ),
    # 2 numbers of up to 4 digits (ours: 2-digit common factor times 2-digit cofactors)
    ("gcd", "gcd"): MatchedPair(
        4,
        dict(min_numbers=2, max_numbers=2, min_value=10, max_value=99 * 99),
        "2 numbers up to 9801",
    ),
    # 2 numbers of at most 22 (ours: 2 + d//8 numbers, each at most 6 + 4d)
    ("lcm", "lcm"): MatchedPair(
        4,
        dict(min_numbers=2, max_numbers=2, min_value=1, max_value=22),
        "2 numbers in 1..22",
    ),
    # 3 words, shift 1..25 (ours: 1 + d//3 words, shift 1..25 from d 3)
    ("caesar_decode", "caesar_cipher"): MatchedPair(
        6,
        dict(min_words=3, max_words=3, min_rotation=1, max_rotation=25),
        "3 words, shift 1..25",
    ),
    # a text of ~25 characters (ours: 5 + 2d random letters; theirs: 5 English words)
    ("count_letter", "letter_counting"): MatchedPair(
        10,
        dict(min_words=5, max_words=5),
        "~25 characters (ours random letters, theirs 5 words)",
    ),
    # 7 letters (ours: a random string of 3 + d letters; theirs: an English word)
    ("reverse_string", "spell_backward"): MatchedPair(
        4,
        dict(min_word_len=7, max_word_len=7),
        "7 letters",
    ),
    # 9 × 9 with 31 empty cells (ours: boxes 3 × 3 from d 8, empty share 0.3 + 0.01d = 0.38)
    ("sudoku", "sudoku"): MatchedPair(
        8,
        dict(min_empty=31, max_empty=31),
        "9 x 9, 31 empty cells",
    ),
    # 4 × 4 with 5 empty cells (ours: boxes 2 × 2 below d 4, empty share 0.3)
    ("sudoku", "mini_sudoku"): MatchedPair(
        0,
        dict(min_empty=5, max_empty=5),
        "4 x 4, 5 empty cells",
    ),
    # 4 × 4 grid (ours: (3 + d//3) × (3 + d//4))
    ("kakurasu", "kakurasu"): MatchedPair(
        4,
        dict(min_rows=4, max_rows=4, min_cols=4, max_cols=4),
        "4 x 4 grid",
    ),
    # 4 × 4 board (ours: side 3 + d//3, about N²/3 givens and N + d inequalities)
    ("futoshiki_puzzle", "futoshiki"): MatchedPair(
        3,
        dict(min_board_size=4, max_board_size=4),
        "4 x 4 board",
    ),
    # sides 2..5 (ours: an M × N matrix, M, N in 2..3 + d//2; theirs: square n × n)
    ("spiral_matrix", "spiral_matrix"): MatchedPair(
        4,
        dict(min_n=2, max_n=5),
        "sides 2..5 (ours rectangular, theirs square)",
    ),
    # 5 × 5 grid, distance of every cell to the nearest marked cell (ours: side 3 + d//3,
    # with walls; theirs: distance to the nearest 0, no walls)
    ("grid_bfs", "binary_matrix"): MatchedPair(
        6,
        dict(min_n=5, max_n=5),
        "5 x 5 grid, nearest-cell distances (ours with walls)",
    ),
    # 7 × 7 grid, the moves of a shortest path (ours: side 5 then int(1.1·N + 1) per level)
    ("maze", "shortest_path"): MatchedPair(
        2,
        dict(min_rows=7, max_rows=7, min_cols=7, max_cols=7),
        "7 x 7 grid, a shortest path as moves",
    ),
    # 5 × 5 grid, size of the largest 4-connected component (ours: side 4 + d//3, a 1 with
    # probability 0.35..0.6, i.e. 9-15 ones; theirs: 2-4 islands of 2-6 cells; its default
    # allows zero islands, an all-water grid)
    ("grid_component", "largest_island"): MatchedPair(
        3,
        dict(
            min_rows=5,
            max_rows=5,
            min_cols=5,
            max_cols=5,
            min_num_islands=2,
            max_num_islands=4,
            min_island_size=2,
            max_island_size=6,
        ),
        "5 x 5 grid, ~10 land cells, largest component",
    ),
    # 4 numbers in 1..22 and an exact target (ours: 3 + d//6 numbers, each 1..10 + 2d, the
    # target the value of a random expression tree over them; theirs: a random expression
    # whose value lies in the target range, set here to 10..500)
    ("countdown_equal", "countdown"): MatchedPair(
        6,
        dict(
            min_numbers=4, max_numbers=4, min_value=1, max_value=22, min_target=10, max_target=500
        ),
        "4 numbers in 1..22, an exact target",
    ),
    # a board of up to 3 × 3 with 3 empty cells (ours: M, N in 2..3 + d//6, 2 + d//3 empty
    # cells; theirs: board_size counts the row and column of sums, so 4 is 3 × 3)
    ("survo_puzzle", "survo"): MatchedPair(
        3,
        dict(min_board_size=4, max_board_size=4, min_empty=3, max_empty=3),
        "up to 3 x 3 unknowns, 3 empty cells",
    ),
    # matrices with sides up to 6, kernel 2..3 (ours: max pooling with stride 1; theirs:
    # max or average pooling with stride = kernel)
    ("matrix_pooling", "pool_matrix"): MatchedPair(
        2,
        dict(min_rows=2, max_rows=6, min_cols=2, max_cols=6, min_pool_size=2, max_pool_size=3),
        "sides up to 6, kernel 2..3 (strides differ)",
    ),
    # A::B programs of 10 tokens (ours: 4 + 2d tokens)
    ("ab_program_simulation", "ab"): MatchedPair(
        3,
        dict(length=10),
        "programs of 10 tokens",
    ),
    # 4 people in a row (ours: 3 + d//3 people, one attribute: the seat; theirs: 4 houses
    # and 2 characteristics, the smallest zebra puzzle it builds with more than the name)
    ("seating_order", "zebra_puzzles"): MatchedPair(
        3,
        dict(num_people=4, num_characteristics=2),
        "4 people / houses",
    ),
    # evaluate boolean formulas of 8 leaves in total (ours: 1 + d//4 expressions of 2 + d//2
    # leaves over 3 variables; theirs: a circuit of 4 gates of 2 inputs each)
    ("boolean_eval", "circuit_logic"): MatchedPair(
        4,
        dict(min_terms=4, max_terms=4, min_inputs=2, max_inputs=2),
        "8 leaves in all (ours 2 formulas of 4, theirs 4 gates of 2)",
    ),
    # an offset of up to 95 days forward or back from a date (ours: the date; theirs: the
    # weekday)
    ("date_offset", "calendar_arithmetic"): MatchedPair(
        3,
        dict(tasks=["weekday_offset"], offset_upper_bound=95),
        "offset up to 95 days from a date (theirs asks the weekday)",
    ),
    # antiderivative of a 2-term polynomial of degree 1 (ours: 2 + d//3 terms, polynomial
    # kinds at d 0)
    ("antiderivative", "simple_integration"): MatchedPair(
        0,
        dict(min_terms=2, max_terms=2, min_degree=1, max_degree=1),
        "2 terms, degree 1",
    ),
    # real roots of a quadratic (ours: 2 distinct integer roots in -3..3; theirs: degree 2
    # with random coefficients, roots as decimals)
    ("polynomial_roots", "polynomial_equations"): MatchedPair(
        0,
        dict(min_degree=2, max_degree=2, min_terms=2, max_terms=3),
        "degree 2",
    ),
    # the next term after 4 shown (ours: values of a degree-2 polynomial; theirs: a rule of
    # up to 2 combined operations)
    ("polynomial_sequence_next", "number_sequence"): MatchedPair(
        0,
        dict(min_terms=4, max_terms=4, max_complexity=2),
        "4 terms shown, next term",
    ),
}


# Pairs looked at and left out, with the reason (printed by every run).
DROPPED: dict[tuple[str, str], str] = {
    ("cryptarithmetic", "cryptarithm"): "ours is a base-N digit puzzle whose base and addend "
    "length grow together: base 10 (theirs) comes at d 21 with 7-digit addends, theirs has "
    "3-5 letter words; no difficulty matches both",
    ("fraction_forms", "fraction_simplification"): "not the same task: ours asks percentages "
    "and 'what fraction of', theirs only reduces a fraction",
    ("division", "basic_arithmetic"): "with operators=('/',) and 2 terms theirs poses e.g. "
    "'Calculate 261 / 120.' with the reference 3 (neither the quotient nor its floor): "
    "nothing sound to match ours (floor division) against",
    ("countdown_equal", "puzzle24"): "theirs allows values up to 10 only, with 4 numbers; ours "
    "has 4 numbers only from d 6, with values up to 22",
    ("linear_system", "simple_equations"): "theirs has one unknown, ours at least two",
    ("palindrome_partition_counting", "palindrome_partitioning"): "not the same task: ours "
    "counts the partitions, theirs lists them all",
}

# The name of the reasoning-gym dataset each of our environments is compared with (kept for
# callers of the old table; the matched pairs are :data:`PAIRS`).
COUNTERPARTS: dict[str, str] = {ours: theirs for ours, theirs in PAIRS}


def reasoning_gym_reference(dataset_name: str, entry: dict[str, Any]) -> str | None:
    """The reference answer of a reasoning-gym entry, as its ``score_answer`` reads it.

    ``graph_color`` stores ``answer=None`` (several colourings are valid) but keeps the one it
    found in ``metadata['possible_answer']``; its ``score_answer`` reads a JSON map from vertex
    to colour, so that is the reference written in its own format."""
    if dataset_name == "graph_color" and entry["answer"] is None:
        return json.dumps(entry["metadata"]["possible_answer"])
    answer = entry["answer"]
    return None if answer is None else str(answer)


def load_environments() -> tuple[list[str], list[str]]:
    """All registered environment names, and the family modules that failed to import
    (other work in progress must not stop the bench)."""
    import verirl.envs as envs

    try:
        return envs.env_names(), []
    except Exception:  # a half-written family module: import the others one by one
        broken = []
        for name in envs.family_modules():
            try:
                importlib.import_module(name)
            except Exception as exc:
                broken.append(f"{name} ({type(exc).__name__}: {exc})")
        return envs.ENVIRONMENTS.names(), broken


CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


def _rates(
    runs: list[Callable[[int], int]], n: int, reps: int, clock: str = "cpu"
) -> list[list[float]]:
    """``n`` / seconds of every ``runs[k](rep)`` for each repetition, the runs interleaved
    (rep 0 of each, then rep 1 of each, ...; the order reversed on odd repetitions) so that a
    change in the machine's load hits every side alike. ``clock`` is ``"cpu"`` (this
    process's CPU time, :func:`time.process_time`: other processes on a loaded machine move
    it far less than the wall clock) or ``"wall"`` (:func:`time.perf_counter`)."""
    now = CLOCKS[clock]
    rates: list[list[float]] = [[] for _ in runs]
    for rep in range(reps):
        order = list(enumerate(runs))
        for k, run_once in order if rep % 2 == 0 else order[::-1]:
            start = now()
            run_once(rep)
            rates[k].append(n / max(now() - start, 1e-9))
    return rates


@dataclass
class _Side:
    """One side's timed loop (``run_once(rep)`` does ``n`` problems) and what it found."""

    run_once: Callable[[int], int]
    warm_up: Callable[[], None]
    failures: list[str]
    missing: list[int]

    def result(self, rates: list[float]) -> dict[str, Any]:
        """The median rate and every repetition's rate (in the order they ran)."""
        return {
            "rate": statistics.median(rates),
            "rates": rates,
            "ref_failures": len(self.failures),
            "failed": self.failures[:3],
            "no_reference": len(self.missing),
        }


def _our_side(name: str, n: int, difficulties: list[int]) -> _Side:
    """Our side: generate ``n`` problems (difficulties cycled, seeds ``rep * n + i``) and
    verify each one's reference answer written as ``\\boxed{answer}``."""
    from verirl.envs import get_env

    env = get_env(name)
    failures: list[str] = []

    def one(difficulty: int, seed: int) -> bool:
        problem = env.generate(difficulty, seed)
        return env.verify(problem, f"\\boxed{{{problem.answer}}}").correct

    def run_once(rep: int) -> int:
        for i in range(n):
            difficulty, seed = difficulties[i % len(difficulties)], rep * n + i
            if not one(difficulty, seed):
                failures.append(f"d={difficulty} seed={seed}")
        return n

    def warm_up() -> None:  # an untimed problem outside the timed seeds
        one(difficulties[0], 10**6)

    return _Side(run_once, warm_up, failures, [])


def _their_side(
    dataset_name: str, n: int, reps: int, config: dict[str, Any] | None = None
) -> _Side:
    """reasoning-gym's side: ``dataset[i]`` plus ``score_answer`` on the entry's own reference
    (:func:`reasoning_gym_reference`), one dataset per repetition (seed ``rep * n``, so the
    repetitions see different problems), built before the timer starts."""
    import reasoning_gym

    config = config or {}
    datasets = [
        reasoning_gym.create_dataset(dataset_name, size=n, seed=rep * n, **config)
        for rep in range(reps)
    ]
    warm = reasoning_gym.create_dataset(dataset_name, size=1, seed=10**6, **config)
    failures: list[str] = []
    missing: list[int] = []

    def one(ds: Any, i: int) -> float | None:
        entry = ds[i]
        reference = reasoning_gym_reference(dataset_name, entry)
        if reference is None:  # several valid answers, none stored: nothing to verify
            return None
        return float(ds.score_answer(answer=reference, entry=entry))

    def run_once(rep: int) -> int:
        for i in range(n):
            score = one(datasets[rep], i)
            if score is None:
                missing.append(i)
            elif score < 1.0:
                failures.append(f"seed={rep * n} i={i} scored {score}")
        return n

    def warm_up() -> None:
        one(warm, 0)

    return _Side(run_once, warm_up, failures, missing)


def bench_ours(
    name: str, n: int, reps: int, difficulties: list[int], clock: str = "cpu"
) -> dict[str, Any]:
    """Our side alone: problems/s of each of ``reps`` repetitions and their median (after one
    untimed warm-up problem)."""
    side = _our_side(name, n, difficulties)
    side.warm_up()
    return side.result(_rates([side.run_once], n, reps, clock)[0])


def bench_theirs(
    dataset_name: str,
    n: int,
    reps: int,
    config: dict[str, Any] | None = None,
    clock: str = "cpu",
) -> dict[str, Any]:
    """reasoning-gym's side alone (see :func:`_their_side`)."""
    side = _their_side(dataset_name, n, reps, config)
    side.warm_up()
    return side.result(_rates([side.run_once], n, reps, clock)[0])


def reasoning_gym_datasets() -> set[str] | None:
    try:
        from reasoning_gym.factory import DATASETS
    except ImportError:
        return None
    return set(DATASETS)


def geometric_mean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def bench_pair(ours: str, theirs: str, n: int, reps: int, clock: str = "cpu") -> dict[str, Any]:
    """One matched pair: both sides at :data:`PAIRS`' difficulty and config, each warmed up
    with one untimed problem, their repetitions interleaved; every repetition's rate of each
    side, and the ratio of each repetition (ours / theirs of the two runs timed next to each
    other): its median is the pair's ratio, its min and max the spread."""
    pair = PAIRS[(ours, theirs)]
    row: dict[str, Any] = {"env": ours, "theirs_name": theirs, "difficulty": pair.difficulty}
    sides: dict[str, _Side] = {}
    for key, build in (
        ("ours", lambda: _our_side(ours, n, [pair.difficulty])),
        ("theirs", lambda: _their_side(theirs, n, reps, pair.config)),
    ):
        try:
            sides[key] = build()
            sides[key].warm_up()
        except Exception as exc:
            row[f"{key}_error"] = f"{type(exc).__name__}: {exc}"
    if len(sides) == 2:
        try:
            rates = _rates([sides["ours"].run_once, sides["theirs"].run_once], n, reps, clock)
            row["ours"] = sides["ours"].result(rates[0])
            row["theirs"] = sides["theirs"].result(rates[1])
        except Exception as exc:
            row["pair_error"] = f"{type(exc).__name__}: {exc}"
    row["ratios"] = _ratios(row)
    row["ratio"] = None if row["ratios"] is None else statistics.median(row["ratios"])
    return row


def show_pairs(pairs: list[tuple[str, str]], chars: int) -> None:
    """Print, per pair, what is matched and one sample prompt and reference of each side (and
    whether each side scores its own reference as correct)."""
    import reasoning_gym

    from verirl.envs import get_env

    for ours, theirs in pairs:
        pair = PAIRS[(ours, theirs)]
        print(f"{'=' * 100}\n{ours} (d={pair.difficulty})  vs  rg:{theirs} {pair.config}")
        print(f"matched: {pair.matched}")
        env = get_env(ours)
        problem = env.generate(pair.difficulty, 0)
        ok = env.verify(problem, f"\\boxed{{{problem.answer}}}").correct
        print(f"--- ours ---\n{problem.prompt[:chars]}\n>>> reference {problem.answer!r} -> {ok}")
        try:
            ds = reasoning_gym.create_dataset(theirs, size=1, seed=0, **pair.config)
            entry = ds[0]
            reference = reasoning_gym_reference(theirs, entry)
            score = None if reference is None else ds.score_answer(reference, entry)
            print(
                f"--- theirs ---\n{entry['question'][:chars]}\n"
                f">>> reference {reference!r} -> {score}"
            )
        except Exception as exc:
            print(f"--- theirs --- error: {type(exc).__name__}: {exc}")
    for (ours, theirs), reason in DROPPED.items():
        print(f"dropped {ours} vs rg:{theirs}: {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200, help="problems per repetition")
    parser.add_argument("--reps", type=int, default=5, help="repetitions (median is reported)")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="cpu: this process's CPU time (steady on a loaded machine); wall: wall clock",
    )
    parser.add_argument("--difficulties", default="0,1,2,3,4,5,6,7", help="cycled, ours only")
    parser.add_argument("--envs", default="", help="comma-separated subset (default: all)")
    parser.add_argument("--json", default="", help="also write the results to this file")
    parser.add_argument(
        "--pairs-only", action="store_true", help="time only the matched reasoning-gym pairs"
    )
    parser.add_argument(
        "--show", action="store_true", help="print a sample prompt of each side of every pair"
    )
    parser.add_argument("--show-chars", type=int, default=1200, help="prompt characters shown")
    args = parser.parse_args()
    difficulties = [int(d) for d in args.difficulties.split(",")]

    names, broken = load_environments()
    if args.envs:
        wanted = args.envs.split(",")
        unknown = [w for w in wanted if w not in names]
        if unknown:
            raise SystemExit(f"unknown environment(s): {', '.join(unknown)}")
        names = wanted
    theirs_all = reasoning_gym_datasets()
    if theirs_all is None:
        print("reasoning-gym is not installed: only our environments are timed")
    for b in broken:
        print(f"skipped family module {b}")
    pairs = [
        (ours, theirs)
        for ours, theirs in PAIRS
        if ours in names and theirs_all is not None and theirs in theirs_all
    ]
    if args.show:
        if theirs_all is None:
            raise SystemExit("--show needs reasoning-gym (pip install reasoning-gym==0.1.25)")
        show_pairs(pairs, args.show_chars)
        return

    rows: list[dict[str, Any]] = []
    if not args.pairs_only:
        for name in names:
            row: dict[str, Any] = {"env": name}
            try:
                row["ours"] = bench_ours(name, args.n, args.reps, difficulties, args.clock)
            except Exception as exc:
                row["ours_error"] = f"{type(exc).__name__}: {exc}"
            rows.append(row)
            print(_format_row(row), flush=True)
        print(
            f"\n{len(rows)} environments (n={args.n} x {args.reps} reps, "
            f"difficulties {args.difficulties}, {args.clock} time)"
        )

    pair_rows: list[dict[str, Any]] = []
    if pairs:
        print(
            f"\nmatched pairs with reasoning-gym (n={args.n} problems x {args.reps} reps, "
            f"{args.clock} time; ratio = median over the repetitions [min-max]):"
        )
        for ours, theirs in pairs:
            row = bench_pair(ours, theirs, args.n, args.reps, args.clock)
            pair_rows.append(row)
            print(_format_row(row), flush=True)
    for (ours, theirs), reason in DROPPED.items():
        print(f"dropped {ours} vs rg:{theirs}: {reason}")
    for r in pair_rows:
        if r["ratio"] is None:
            print(f"not counted: {r['env']} vs rg:{r['theirs_name']} ({_why_not(r)})")
    summary = summarise(pair_rows)
    if summary["pair_count"]:
        spread = summary["per_rep_median"]
        print(
            f"\n{summary['pair_count']} matched pairs (of {len(pair_rows)} timed): median ratio "
            f"ours/theirs {summary['median_ratio']:.2f}, geometric mean "
            f"{summary['geomean_ratio']:.2f}; ours faster on {summary['faster']}, theirs on "
            f"{summary['slower']}\nmedian over the pairs per repetition: "
            + ", ".join(f"{x:.2f}" for x in spread)
            + f" (min {min(spread):.2f}, median {statistics.median(spread):.2f}, "
            f"max {max(spread):.2f})"
        )
    elif theirs_all is not None:
        print("\nno matched reasoning-gym pairs timed")
    print(f"(n={args.n} problems x {args.reps} repetitions, {args.clock} time)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"args": vars(args), "rows": rows, "pairs": pair_rows, **summary},
                f,
                indent=2,
                default=str,
            )


def _ratio(row: dict[str, Any]) -> float | None:
    """ours / theirs of the median rates, or None when either side is missing, either side
    failed to verify one of its own reference answers, or reasoning-gym stored no reference
    answer to verify (then its loop times generation only and is not comparable)."""
    ours, theirs = row.get("ours"), row.get("theirs")
    if not ours or not theirs or theirs["no_reference"]:
        return None
    if ours["ref_failures"] or theirs["ref_failures"]:
        return None
    return float(ours["rate"] / theirs["rate"])


def _ratios(row: dict[str, Any]) -> list[float] | None:
    """ours / theirs of each repetition (the two sides' runs of one repetition are timed next
    to each other), or None where :func:`_ratio` is None."""
    if _ratio(row) is None:
        return None
    ours, theirs = row["ours"], row["theirs"]
    pairs = zip(
        ours.get("rates", [ours["rate"]]), theirs.get("rates", [theirs["rate"]]), strict=True
    )
    return [float(o / t) for o, t in pairs]


def summarise(pair_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The median and geometric mean over the counted pairs of each pair's median ratio, and
    the spread of the median across repetitions: for repetition k, the median over the pairs
    of their k-th ratio (``per_rep_median``: one value per repetition)."""
    counted = [r for r in pair_rows if r.get("ratio") is not None]
    ratios = [r["ratio"] for r in counted]
    summary: dict[str, Any] = {"pair_count": len(ratios)}
    if not ratios:
        return summary
    summary["median_ratio"] = statistics.median(ratios)
    summary["geomean_ratio"] = geometric_mean(ratios)
    reps = min(len(r["ratios"]) for r in counted)
    summary["per_rep_median"] = [
        statistics.median(r["ratios"][k] for r in counted) for k in range(reps)
    ]
    summary["faster"] = sum(x > 1 for x in ratios)
    summary["slower"] = sum(x < 1 for x in ratios)
    return summary


def _why_not(row: dict[str, Any]) -> str:
    if "pair_error" in row:
        return f"while timing: {row['pair_error'][:80]}"
    if "ours_error" in row:
        return f"ours: {row['ours_error'][:80]}"
    if "theirs_error" in row:
        return f"theirs: {row['theirs_error'][:80]}"
    if row["theirs"]["no_reference"]:
        return f"theirs stored no reference {row['theirs']['no_reference']}x"
    return (
        f"references failed: ours {row['ours']['ref_failures']} {row['ours']['failed']}, "
        f"theirs {row['theirs']['ref_failures']} {row['theirs']['failed']}"
    )


def _format_row(row: dict[str, Any]) -> str:
    ours, theirs = row.get("ours"), row.get("theirs")
    label = row["env"] if "difficulty" not in row else f"{row['env']} d={row['difficulty']}"
    text = f"{label:<34}"
    text += f"{ours['rate']:9.0f}/s" if ours else f"error: {row['ours_error'][:60]}"
    if ours and ours["ref_failures"]:
        text += f" REFERENCE FAILED {ours['ref_failures']}x"
    if "theirs_name" in row:
        text += f"   rg:{row['theirs_name']:<26}"
    if theirs:
        text += f"{theirs['rate']:9.0f}/s"
        if theirs["ref_failures"]:
            text += f" REFERENCE FAILED {theirs['ref_failures']}x"
        ratio = row.get("ratio")
        if ratio is not None:
            text += f"  ratio {ratio:7.2f}"
            if len(row["ratios"]) > 1:
                text += f" [{min(row['ratios']):.2f}-{max(row['ratios']):.2f}]"
        elif theirs["no_reference"]:
            text += "  (rg stores no answer)"
    elif "theirs_error" in row:
        text += f"error: {row['theirs_error'][:60]}"
    return text


if __name__ == "__main__":
    main()
