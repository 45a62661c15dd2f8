"""Evaluation results with intervals in a run directory: ``<run_dir>/evals/*.json``.

``verirl report`` shows every number found there with its interval. The reader is tolerant:
a file may hold any of these shapes (docs/run-health.md#evaluations-in-the-report), and what it
cannot read is reported as a warning, never an error:

1. one record, a list of records, or ``{"results": [records]}``, a record being::

       {"benchmark": "gsm8k", "metric": "accuracy", "value": 0.31,
        "low": 0.28, "high": 0.34,            # optional: the interval
        "confidence": 0.95, "method": "wilson", "n": 1319,   # optional
        "step": 25, "label": "after"}        # optional: which policy was evaluated

   (``ci95: [low, high]`` is read as ``low``/``high``; ``metric`` defaults to "value");
2. the document ``verirl eval --benchmark ... --out FILE`` writes:
   ``{"benchmarks": {name: {"metrics": {metric: {"value", "ci95": [low, high], "method",
   "problems"}}, ...}}, ...header}``; the header's ``step`` and ``label`` (else
   ``checkpoint``) name the policy, for every number of the file.

Values must be finite numbers; ``low <= value <= high`` is not enforced (a reader shows what
the writer wrote) but a missing bound leaves the interval out.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EVALS_DIR = "evals"


@dataclass(frozen=True)
class EvalRecord:
    """One reported number: ``value`` in ``[low, high]`` (None: no interval)."""

    benchmark: str
    metric: str
    value: float
    low: float | None = None
    high: float | None = None
    method: str | None = None
    n: int | None = None
    step: int | None = None
    label: str | None = None
    source: str = ""

    @property
    def policy(self) -> str:
        """Which policy: the label, else ``step N``, else the file name."""
        if self.label:
            return self.label
        return f"step {self.step}" if self.step is not None else self.source


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _int(v: Any) -> int | None:
    f = _num(v)
    return int(f) if f is not None and f == int(f) else None


def _text(v: Any) -> str | None:
    return str(v) if isinstance(v, str | int) and not isinstance(v, bool) and str(v) else None


def _bounds(rec: dict[str, Any]) -> tuple[float | None, float | None]:
    low, high = _num(rec.get("low")), _num(rec.get("high"))
    ci = rec.get("ci95", rec.get("ci"))
    if (low is None or high is None) and isinstance(ci, list | tuple) and len(ci) == 2:
        low, high = _num(ci[0]), _num(ci[1])
    return (low, high) if low is not None and high is not None else (None, None)


def _record(rec: Any, source: str, defaults: dict[str, Any]) -> EvalRecord | None:
    if not isinstance(rec, dict):
        return None
    value = _num(rec.get("value"))
    benchmark = _text(rec.get("benchmark", defaults.get("benchmark")))
    if value is None or benchmark is None:
        return None
    low, high = _bounds(rec)
    step = rec.get("step", defaults.get("step"))
    label = rec.get("label", defaults.get("label"))
    return EvalRecord(
        benchmark=benchmark,
        metric=_text(rec.get("metric", defaults.get("metric"))) or "value",
        value=value,
        low=low,
        high=high,
        method=_text(rec.get("method")),
        n=_int(rec.get("n", rec.get("problems"))),
        step=_int(step),
        label=_text(label),
        source=source,
    )


def parse_eval_file(doc: Any, source: str) -> tuple[list[EvalRecord], int]:
    """The records of one parsed file and how many entries were skipped as unreadable."""
    header: dict[str, Any] = {}
    entries: list[tuple[Any, dict[str, Any]]] = []
    if isinstance(doc, dict) and isinstance(doc.get("benchmarks"), dict):
        header = {"step": doc.get("step"), "label": doc.get("label", doc.get("checkpoint"))}
        for name, bench in doc["benchmarks"].items():
            metrics = bench.get("metrics") if isinstance(bench, dict) else None
            if not isinstance(metrics, dict):
                entries.append((None, {}))
                continue
            for metric, est in metrics.items():
                entries.append((est, {**header, "benchmark": name, "metric": metric}))
    elif isinstance(doc, dict) and isinstance(doc.get("results"), list):
        header = {"step": doc.get("step"), "label": doc.get("label")}
        entries = [(r, header) for r in doc["results"]]
    elif isinstance(doc, list):
        entries = [(r, {}) for r in doc]
    else:
        entries = [(doc, {})]
    out = [r for e, d in entries if (r := _record(e, source, d)) is not None]
    return out, len(entries) - len(out)


def read_eval_records(run_dir: str | Path) -> tuple[list[EvalRecord], list[str]]:
    """Every record of ``<run_dir>/evals/*.json`` (files in name order) and warnings about
    files or entries that could not be read."""
    folder = Path(run_dir) / EVALS_DIR
    if not folder.is_dir():
        return [], []
    records: list[EvalRecord] = []
    warnings: list[str] = []
    for path in sorted(folder.glob("*.json")):
        where = f"{EVALS_DIR}/{path.name}"
        try:
            doc = json.loads(path.read_text(errors="replace"))
        except (OSError, json.JSONDecodeError) as exc:
            warnings.append(f"{where}: not readable JSON ({exc})")
            continue
        found, skipped = parse_eval_file(doc, path.stem)
        records.extend(found)
        if skipped:
            warnings.append(
                f"{where}: skipped {skipped} entr{'y' if skipped == 1 else 'ies'} without a "
                "benchmark name and a finite value"
            )
    return records, warnings
