"""Summarise experiments/tools_native.sh: per run, held-out task success and the rate of
well-formed tool calls before and after training (Wilson 95% intervals: success over the
held-out episodes, well-formed over their replies, accepted over their calls: a call is
refused when it names a tool the task does not offer or gives arguments of the wrong type),
the training steps and seconds per step; then each credit's mean over seeds with the range.

    python experiments/tools_native.py runs/tools_native
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from statistics import mean

import yaml

from verirl.evals.stats import wilson_interval


def _rows(run: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {"train": {}}
    steps = []
    for line in (run / "metrics.jsonl").read_text().splitlines():
        row = json.loads(line)
        for phase in ("eval_before", "eval_after"):
            if f"{phase}/accuracy" in row:
                out[phase] = row
        if "time/step_s" in row:
            steps.append(row["time/step_s"])
    out["train"] = {"steps": len(steps), "step_s": mean(steps) if steps else float("nan")}
    return out


def _interval(rate: float, n: int) -> str:
    k = round(rate * n)
    low, high = wilson_interval(k, n)
    return f"{rate:.3f} [{low:.2f}, {high:.2f}]"


def summarise(root: Path) -> list[dict[str, object]]:
    table = []
    for run in sorted(p for p in root.iterdir() if (p / "metrics.jsonl").exists()):
        cfg = yaml.safe_load((run / "config.yaml").read_text())
        episodes = len(cfg["eval"]["difficulties"]) * cfg["eval"]["problems"]
        rows = _rows(run)
        entry: dict[str, object] = {"run": run.name, "credit": cfg["credit"]["name"]}
        for phase in ("eval_before", "eval_after"):
            row = rows.get(phase)
            if row is None:
                continue
            turns = round(row[f"{phase}/episode/mean_turns"] * episodes)
            entry[f"{phase}/success"] = row[f"{phase}/accuracy"]
            entry[f"{phase}/wellformed"] = row[f"{phase}/episode/tools/wellformed_rate"]
            entry[f"{phase}/episodes"] = episodes
            entry[f"{phase}/turns"] = turns
            calls = round(row[f"{phase}/episode/tools/calls_per_turn"] * turns)
            entry[f"{phase}/accepted"] = 1.0 - row[f"{phase}/episode/tools/refused_call_rate"]
            entry[f"{phase}/calls"] = calls
        entry.update(rows["train"])
        table.append(entry)
    return table


def main(root: Path) -> None:
    table = summarise(root)
    print(
        "| run | credit | steps | s/step | success before | success after "
        "| well-formed before | well-formed after | calls accepted before | calls accepted after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for e in table:
        cells = [str(e["run"]), str(e["credit"]), str(e["steps"]), f"{e['step_s']:.0f}"]
        for key, n in (("success", "episodes"), ("wellformed", "turns"), ("accepted", "calls")):
            for phase in ("eval_before", "eval_after"):
                if f"{phase}/{key}" not in e:  # a run still training, or stopped before it
                    cells.append("—")
                    continue
                cells.append(_interval(float(e[f"{phase}/{key}"]), int(e[f"{phase}/{n}"])))
        print("| " + " | ".join(cells) + " |")
    print()
    for credit in sorted({str(e["credit"]) for e in table}):
        runs = [e for e in table if e["credit"] == credit and "eval_after/success" in e]
        if not runs:
            continue
        for key in ("eval_after/success", "eval_after/wellformed", "eval_after/accepted"):
            values = [float(e[key]) for e in runs]  # type: ignore[arg-type]
            print(
                f"{credit} {key}: mean {mean(values):.3f} over {len(values)} seeds "
                f"(range {min(values):.3f}-{max(values):.3f})"
            )


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "runs/tools_native"))
