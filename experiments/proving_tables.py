"""Markdown tables of proving-benchmark results (the JSON files of ``verirl eval --benchmark
minif2f-rocq|coq-stdlib --out``): one row per prover or model — theorems proved of the
benchmark's count, the share of the evaluated ones with its 95% interval, pass@k when there
were several samples, wall seconds and the budget.

Run: ``python experiments/proving_tables.py results/*.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def rows(paths: list[Path]) -> list[str]:
    out = []
    for path in paths:
        for label, entry in json.loads(path.read_text())["benchmarks"].items():
            metrics = entry["metrics"]
            cells = []
            for name in sorted(metrics, key=lambda m: (m.split("@")[0], int(m.split("@")[1]))):
                if name == "pass@1" and any(m.startswith("avg@") for m in metrics):
                    continue  # pass@1 is avg@n
                m = metrics[name]
                cells.append(f"{name} {m['value']:.3f} [{m['ci95'][0]:.3f}, {m['ci95'][1]:.3f}]")
            out.append(
                f"| {entry.get('prover', label)} | {entry['proved']} / {entry['theorems']} "
                f"| {entry['problems_evaluated']} | {'; '.join(cells)} | {entry['seconds']:.0f} "
                f"| {entry['budget_text']} |"
            )
    return out


def main(argv: list[str]) -> None:
    print("| prover | proved / theorems | evaluated | share [95% CI] | seconds | budget |")
    print("|---|---|---|---|---|---|")
    for row in rows([Path(a) for a in argv]):
        print(row)


if __name__ == "__main__":
    main(sys.argv[1:])
