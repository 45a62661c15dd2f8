"""Helpers of the RLVE experiment scripts (Zeng et al. 2025, "RLVE: Scaling Up Reinforcement
Learning for Language Models with Adaptive Verifiable Environments", arXiv:2511.07317).

``collections K``   the nested training collection C_K (C1 ⊂ C4 ⊂ C16 ⊂ C64 ⊂ ...), one name
                    per line: C1 = {multiplication}, C4 adds division, euclid_game and sort_list
                    (the paper's C4), larger ones add environments in a fixed shuffled order;
                    never a held-out or a proof environment.
``held_out``        the held-out environments, never trained on.
``summary DIR``     a Markdown table over the runs under DIR (``<arm>_s<seed>``): held-out
                    accuracy before and after training (mean ± standard deviation over seeds)
                    and the mean effective prompt ratio measured in training.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
from pathlib import Path

HELD_OUT = [
    "addition",
    "digit_sum",
    "gcd",
    "count_letter",
    "median",
    "popcount_range_sum",
    "kth_smallest",
    "lcm",
]
C4 = ["multiplication", "division", "euclid_game", "sort_list"]


def collection(k: int) -> list[str]:
    from verirl.envs import env_names, get_env

    pool = sorted(
        n for n in env_names() if n not in HELD_OUT and n not in C4 and get_env(n).prover is None
    )
    random.Random("verirl/rlve-collections").shuffle(pool)
    names = (C4 + pool)[:k]
    if len(names) < k:
        raise SystemExit(f"only {len(names)} environments are available for C{k}")
    return names


def _runs(directory: Path) -> dict[str, list[dict[str, float]]]:
    arms: dict[str, list[dict[str, float]]] = {}
    for run in sorted(p for p in directory.iterdir() if (p / "metrics.jsonl").is_file()):
        arm = run.name.rsplit("_s", 1)[0]
        merged: dict[str, float] = {}
        ratios = []
        for line in (run / "metrics.jsonl").read_text().splitlines():
            row = json.loads(line)
            merged.update({k: v for k, v in row.items() if isinstance(v, int | float)})
            if "rollout/effective_prompt_ratio" in row:
                ratios.append(row["rollout/effective_prompt_ratio"])
        merged["mean_effective_prompt_ratio"] = statistics.fmean(ratios) if ratios else float("nan")
        arms.setdefault(arm, []).append(merged)
    return arms


def _spread(values: list[float]) -> str:
    if not values:
        return "n/a"
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.3f} ± {sd:.3f}"


def summary(directory: Path) -> str:
    lines = [
        "| arm | seeds | held-out accuracy before | after | plain prompt before | after | "
        "effective prompt ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    arms = _runs(directory)

    def order(arm: str) -> tuple[str, int]:  # c1, c4, c16, c64; then by name
        digits = "".join(ch for ch in arm if ch.isdigit())
        return (arm.rstrip("0123456789"), int(digits) if arm[1:].isdigit() else 0)

    for arm in sorted(arms, key=order):
        runs = arms[arm]

        def col(key: str, runs: list[dict[str, float]] = runs) -> str:
            return _spread([r[key] for r in runs if key in r and r[key] == r[key]])  # no NaN

        lines.append(
            f"| {arm} | {len(runs)} | {col('eval_before/accuracy')} | "
            f"{col('eval_after/accuracy')} | {col('eval_before_plain/accuracy')} | "
            f"{col('eval_after_plain/accuracy')} | "
            f"{col('mean_effective_prompt_ratio')} |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    if argv[:1] == ["collections"] and len(argv) == 2:
        print(",".join(collection(int(argv[1]))))
    elif argv == ["held_out"]:
        print(",".join(HELD_OUT))
    elif argv[:1] == ["summary"] and len(argv) == 2:
        print(summary(Path(argv[1])))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
