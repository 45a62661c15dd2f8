"""The table of experiments/process_coq_stdlib.sh and process_coq_generated.sh: held-out pass@k
of each run, with its 95% interval, and each arm's mean over its seeds.

Run: ``python experiments/process_tables.py runs/process_coq_stdlib`` (a benchmark's results,
``verirl eval --benchmark ... --out``) or ``runs/process_coq_generated`` (the environments',
``verirl eval --pass-k ... --out``: every environment's problems together).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def _entry(path: Path) -> dict:
    """``{"metrics": ..., "problems_evaluated": n}`` of one results file."""
    doc = json.loads(path.read_text())
    if "benchmarks" in doc:
        (entry,) = doc["benchmarks"].values()
        return entry
    envs = doc["environments"]
    metrics = doc["all"]["metrics"] if "all" in doc else next(iter(envs.values()))["metrics"]
    return {"metrics": metrics, "problems_evaluated": next(iter(metrics.values()))["problems"]}


def _ks(metrics: dict) -> list[int]:
    return sorted(int(m.split("@")[1]) for m in metrics if m.startswith("pass@"))


def _cells(metrics: dict, ks: list[int]) -> list[str]:
    """``value [low, high]`` of pass@k for each k."""
    out = []
    for k in ks:
        m = metrics[f"pass@{k}"]
        out.append(f"{m['value']:.3f} [{m['ci95'][0]:.3f}, {m['ci95'][1]:.3f}]")
    return out


def main(out: Path) -> None:
    rows = []
    for path in sorted(out.glob("*.json")):
        entry = _entry(path)
        metrics = entry["metrics"]
        ks = _ks(metrics)
        rows.append((path.stem, entry["problems_evaluated"], ks, _cells(metrics, ks), metrics))
    if not rows:
        raise SystemExit(f"no results in {out}")
    ks = rows[0][2]
    print("| run | problems | " + " | ".join(f"pass@{k} [95% CI]" for k in ks) + " |")
    print("|---|---|" + "---|" * len(ks))
    for name, n, _, cells, _ in rows:
        print(f"| {name} | {n} | " + " | ".join(cells) + " |")
    for arm in ("process", "outcome"):
        runs = [r for r in rows if r[0].startswith(arm + "-")]
        if runs:
            means = [statistics.mean(r[4][f"pass@{k}"]["value"] for r in runs) for k in ks]
            print(
                f"| {arm}, mean of {len(runs)} seeds | | "
                + " | ".join(f"{m:.3f}" for m in means)
                + " |"
            )


def per_environment(out: Path) -> None:
    """The environments' results (``verirl eval --pass-k ... --out``): pass@k of each
    environment and run, as a second table."""
    docs = {p.stem: json.loads(p.read_text()) for p in sorted(out.glob("*.json"))}
    docs = {name: doc for name, doc in docs.items() if "environments" in doc}
    if not docs:
        return
    first = next(iter(docs.values()))["environments"]
    ks = _ks(next(iter(first.values()))["metrics"])
    print("\n| run | environment | " + " | ".join(f"pass@{k} [95% CI]" for k in ks) + " |")
    print("|---|---|" + "---|" * len(ks))
    for name, doc in docs.items():
        for env, entry in doc["environments"].items():
            print(f"| {name} | {env} | " + " | ".join(_cells(entry["metrics"], ks)) + " |")


if __name__ == "__main__":
    where = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/process_coq_stdlib")
    main(where)
    per_environment(where)
