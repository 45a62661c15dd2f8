"""Per-step metrics: JSON lines in the run directory, one plain line per step in ``run.log``
(logger ``verirl.steps``; the console prints it too when it is not a terminal), and the
registered loggers of ``run.loggers`` (:mod:`verirl.train.loggers`)."""

from __future__ import annotations

import json
import logging
import math
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from verirl.train.loggers import MetricLogger
from verirl.types import Rollout

STEPS = logging.getLogger("verirl.steps")
"""Where :class:`MetricsLog` sends each training step's :func:`step_line` (level INFO; set
here so that the line reaches ``run.log`` whatever level the ``verirl`` logger has)."""
STEPS.setLevel(logging.INFO)

MAX_WINDOWS = 6
"""Up to this many environments, the step line lists each difficulty window; above, their
mean and largest top."""


class MetricsLog:
    """Appends ``{"step": s, "time": t, ...}`` lines to ``<run_dir>/metrics.jsonl``.

    On resume (``resume_step`` > 0) lines logged after the checkpoint's step — written by the
    killed process after its last save — are dropped, so the file reads as one clean run.
    Every row also goes to ``loggers`` (finite values only); :meth:`write_step` adds the
    step's line (:func:`step_line`, ``total_steps`` its denominator) to :data:`STEPS`.
    """

    def __init__(
        self,
        run_dir: Path,
        resume_step: int = 0,
        samples_per_step: int = 0,
        loggers: Sequence[MetricLogger] = (),
        total_steps: int = 0,
    ) -> None:
        self.path = run_dir / "metrics.jsonl"
        self.samples_path = run_dir / "samples.jsonl"
        self.samples_per_step = samples_per_step
        run_dir.mkdir(parents=True, exist_ok=True)
        if resume_step:
            for path in (self.path, self.samples_path):
                _truncate_after(path, resume_step)
        self._file = self.path.open("a")
        self.loggers = list(loggers)
        self.total_steps = total_steps
        # a run stopped by an exception still finishes its trackers' runs
        self._finalizer = weakref.finalize(self, _close, self._file, self.loggers)

    def write(self, step: int, metrics: dict[str, float]) -> None:
        """One row of ``metrics.jsonl`` (non-finite values as null), and to every logger."""
        clean = {k: _finite(v) for k, v in metrics.items()}
        self._file.write(json.dumps({"step": step, "time": time.time(), **clean}) + "\n")
        self._file.flush()
        finite = {k: v for k, v in clean.items() if v is not None}
        for logger in self.loggers:
            logger.log(step, finite)

    def write_step(self, step: int, metrics: dict[str, float]) -> None:
        """A training step: :meth:`write`, then its line to :data:`STEPS` (``run.log``)."""
        self.write(step, metrics)
        STEPS.info(step_line(step, self.total_steps, metrics))

    def write_samples(self, step: int, rollouts: Sequence[Rollout]) -> None:
        """A few rollouts of the step, one JSON line each (spread over the step's groups)."""
        if not self.samples_per_step or not rollouts:
            return
        stride = max(1, len(rollouts) // self.samples_per_step)
        with self.samples_path.open("a") as f:
            for r in list(rollouts)[::stride][: self.samples_per_step]:
                v = r.verdict
                row = {
                    "step": step,
                    "env": r.problem.env,
                    "difficulty": r.problem.difficulty,
                    "seed": r.problem.seed,
                    "prompt": r.problem.prompt,
                    "response": r.text,
                    "reward": None if v is None else _finite(v.reward),
                    "correct": None if v is None else v.correct,
                    "detail": None if v is None else v.detail,
                    "turns": len(r.turns),
                }
                f.write(json.dumps(row) + "\n")

    def close(self) -> None:
        self._finalizer()


def _close(file: Any, loggers: list[MetricLogger]) -> None:
    file.close()
    for logger in loggers:
        logger.close()


def step_line(step: int, total: int, metrics: Mapping[str, float]) -> str:
    """One step as ``key=value`` words, for a log file a person or a script reads::

        step=3/25 reward=+0.120 acc=0.333 windows=addition:0-1,gcd:0-0 step_s=12.4 ...

    then ``tokens_per_s`` and every ``memory/*`` metric under its own name, the section
    dropped (``peak_rss_mb=1234``). ``windows``: each environment's difficulty window
    ``low-h`` (``curriculum/<env>/low``, ``/h``); with more than :data:`MAX_WINDOWS`
    environments ``mean_h`` and ``max_h`` instead. A metric the step did not report is left
    out; values carry no units but their names'."""
    words = [f"step={step}/{total}" if total else f"step={step}"]

    def add(name: str, key: str, fmt: str) -> None:
        value = metrics.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            words.append(f"{name}={float(value):{fmt}}")

    add("reward", "rollout/reward", "+.3f")
    add("acc", "rollout/accuracy", ".3f")
    envs = [k[len("curriculum/") : -len("/h")] for k in metrics if _is_window_top(k)]
    if len(envs) > MAX_WINDOWS:
        add("mean_h", "curriculum/mean_h", ".2f")
        add("max_h", "curriculum/max_h", ".0f")
    elif envs:
        windows = []
        for env in envs:
            high = f"{metrics[f'curriculum/{env}/h']:.0f}"
            low = metrics.get(f"curriculum/{env}/low")
            windows.append(f"{env}:{low:.0f}-{high}" if low is not None else f"{env}:{high}")
        words.append("windows=" + ",".join(windows))
    add("step_s", "time/step_s", ".1f")
    add("tokens_per_s", "throughput/tokens_per_s", ".0f")
    for key in sorted(k for k in metrics if k.startswith("memory/")):
        add(key[len("memory/") :].replace("/", "_"), key, ".0f" if key.endswith("_mb") else ".4g")
    return " ".join(words)


def _is_window_top(key: str) -> bool:
    """``curriculum/<env>/h`` (an environment name may hold a ``/``: ``rg/<task>``)."""
    return (
        key.startswith("curriculum/")
        and key.endswith("/h")
        and not key.startswith("curriculum/last/")
    )


def _truncate_after(path: Path, step: int) -> None:
    """Drop the lines of ``path`` logged after ``step`` (by a process killed after its save)."""
    if not path.exists():
        return
    kept = [
        line
        for line in path.read_text().splitlines()
        if line.strip() and json.loads(line).get("step", 0) <= step
    ]
    path.write_text("".join(line + "\n" for line in kept))


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "metrics.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _finite(v: float) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None
