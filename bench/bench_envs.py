"""Problem throughput: generate + verify rate of every environment, next to reasoning-gym.

For each registered environment it times, over ``--reps`` repetitions, generating ``--n``
problems (difficulties cycling through ``--difficulties``, fresh seeds each repetition) and
verifying each problem's reference answer written as a model would (``\\boxed{answer}``), and
reports the median problems per second. Every reference answer must verify as correct; the
table counts those that did not.

For environments that have a counterpart in reasoning-gym (same name, or a pair in
:data:`COUNTERPARTS`; only pairs whose both sides exist at run time are used) it times the same
loop with reasoning-gym: ``dataset[i]`` (generation) plus ``dataset.score_answer`` on the
entry's own answer. Dataset construction is outside the timer (it is a one-off cost). It
prints the ratio ours / theirs per pair and the median ratio.

reasoning-gym is a bench-only dependency: ``pip install reasoning-gym==0.1.25``.

Run: ``python bench/bench_envs.py`` (full) or ``--n 20 --reps 2`` for a smoke run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import statistics
import time
from collections.abc import Callable
from typing import Any

# Our environment → the reasoning-gym dataset that poses the comparable task (names that are
# the same on both sides pair up automatically and need no entry here).
COUNTERPARTS: dict[str, str] = {
    "addition": "basic_arithmetic",
    "multiplication": "products",
    "sort_list": "number_sorting",
    "sorting": "number_sorting",
    "sort_numbers": "number_sorting",
    "graph_coloring": "graph_color",
    "linear_equation": "simple_equations",
    "linear_equations": "simple_equations",
    "water_jugs": "jugs",
    "word_sort": "word_sorting",
    "power": "power_function",
    "hanoi": "tower_of_hanoi",
    "nqueens": "n_queens",
    "knights_and_knaves": "knights_knaves",
    "reverse_words": "word_sequence_reversal",
    "polynomial_multiply": "polynomial_multiplication",
    "factorization": "prime_factorization",
    "prime_count": "count_primes",
    "count_ones": "count_bits",
    "game_of_24": "puzzle24",
    "hanoi_moves": "tower_of_hanoi",
    "caesar_decode": "caesar_cipher",
    "count_letter": "letter_counting",
    "reverse_string": "spell_backward",
}


def load_environments() -> tuple[list[str], list[str]]:
    """All registered environment names, and the family modules that failed to import
    (other work in progress must not stop the bench)."""
    import verirl.envs as envs

    try:
        return envs.env_names(), []
    except Exception:  # a half-written family module: import the others one by one
        broken = []
        for mod in pkgutil.iter_modules(envs.__path__):
            if mod.name in ("base", "answers") or mod.name.startswith("_"):
                continue
            try:
                importlib.import_module(f"verirl.envs.{mod.name}")
            except Exception as exc:
                broken.append(f"{mod.name} ({type(exc).__name__}: {exc})")
        return envs.ENVIRONMENTS.names(), broken


def median_rate(run_once: Callable[[int], int], n: int, reps: int) -> float:
    """Median over ``reps`` of ``n`` / seconds for ``run_once(rep)`` (which does ``n`` items)."""
    rates = []
    for rep in range(reps):
        start = time.perf_counter()
        run_once(rep)
        rates.append(n / max(time.perf_counter() - start, 1e-9))
    return statistics.median(rates)


def bench_ours(name: str, n: int, reps: int, difficulties: list[int]) -> dict[str, Any]:
    from verirl.envs import get_env

    env = get_env(name)
    failures = 0

    def run_once(rep: int) -> int:
        nonlocal failures
        for i in range(n):
            problem = env.generate(difficulties[i % len(difficulties)], rep * n + i)
            if not env.verify(problem, f"\\boxed{{{problem.answer}}}").correct:
                failures += 1
        return n

    return {"rate": median_rate(run_once, n, reps), "ref_failures": failures}


def bench_theirs(dataset_name: str, n: int, reps: int) -> dict[str, Any]:
    import reasoning_gym

    datasets = [reasoning_gym.create_dataset(dataset_name, size=n, seed=rep) for rep in range(reps)]
    failures = missing = 0

    def run_once(rep: int) -> int:
        nonlocal failures, missing
        ds = datasets[rep]
        for i in range(n):
            entry = ds[i]
            if entry["answer"] is None:  # several valid answers, none stored: nothing to verify
                missing += 1
            elif ds.score_answer(answer=entry["answer"], entry=entry) < 1.0:
                failures += 1
        return n

    rate = median_rate(run_once, n, reps)
    return {"rate": rate, "ref_failures": failures, "no_reference": missing}


def reasoning_gym_datasets() -> set[str] | None:
    try:
        from reasoning_gym.factory import DATASETS
    except ImportError:
        return None
    return set(DATASETS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200, help="problems per repetition")
    parser.add_argument("--reps", type=int, default=5, help="repetitions (median is reported)")
    parser.add_argument("--difficulties", default="0,1,2,3,4,5,6,7", help="cycled, ours only")
    parser.add_argument("--envs", default="", help="comma-separated subset (default: all)")
    parser.add_argument("--json", default="", help="also write the results to this file")
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

    rows: list[dict[str, Any]] = []
    for name in names:
        row: dict[str, Any] = {"env": name}
        try:
            row["ours"] = bench_ours(name, args.n, args.reps, difficulties)
        except Exception as exc:
            row["ours_error"] = f"{type(exc).__name__}: {exc}"
        counterpart = COUNTERPARTS.get(name, name)
        if theirs_all is not None and counterpart in theirs_all:
            row["theirs_name"] = counterpart
            try:
                row["theirs"] = bench_theirs(counterpart, args.n, args.reps)
            except Exception as exc:
                row["theirs_error"] = f"{type(exc).__name__}: {exc}"
        rows.append(row)
        print(_format_row(row), flush=True)

    ratios = [
        r["ours"]["rate"] / r["theirs"]["rate"] for r in rows if "ours" in r and "theirs" in r
    ]
    print(
        f"\n{len(rows)} environments; {len(ratios)} pairs with reasoning-gym; "
        f"median ratio ours/theirs: {statistics.median(ratios):.2f}"
        if ratios
        else f"\n{len(rows)} environments; no reasoning-gym pairs timed"
    )
    print(f"(n={args.n} problems x {args.reps} repetitions, difficulties {args.difficulties})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "args": vars(args),
                    "rows": rows,
                    "median_ratio": ratios and statistics.median(ratios),
                },
                f,
                indent=2,
            )


def _ratio(row: dict[str, Any]) -> float | None:
    """ours / theirs, or None when either side is missing or reasoning-gym stored no reference
    answer to verify (then its loop times generation only and is not comparable)."""
    ours, theirs = row.get("ours"), row.get("theirs")
    if not ours or not theirs or theirs["no_reference"]:
        return None
    return ours["rate"] / theirs["rate"]


def _format_row(row: dict[str, Any]) -> str:
    ours, theirs = row.get("ours"), row.get("theirs")
    text = f"{row['env']:<34}"
    text += f"{ours['rate']:9.0f}/s" if ours else f"error: {row['ours_error'][:60]}"
    if ours and ours["ref_failures"]:
        text += f" REFERENCE FAILED {ours['ref_failures']}x"
    if "theirs_name" in row:
        text += f"   rg:{row['theirs_name']:<24}"
    if theirs:
        text += f"{theirs['rate']:9.0f}/s"
        if theirs["ref_failures"]:
            text += f" ref-fail {theirs['ref_failures']}"
        ratio = _ratio(row)
        text += f"  ratio {ratio:6.2f}" if ratio is not None else "  (rg stores no answer)"
    elif "theirs_error" in row:
        text += f"error: {row['theirs_error'][:60]}"
    return text


if __name__ == "__main__":
    main()
