"""Per-step metrics: JSON lines in the run directory (and TensorBoard when asked)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verirl.types import Rollout


class MetricsLog:
    """Appends ``{"step": s, "time": t, ...}`` lines to ``<run_dir>/metrics.jsonl``.

    On resume (``resume_step`` > 0) lines logged after the checkpoint's step — written by the
    killed process after its last save — are dropped, so the file reads as one clean run.
    """

    def __init__(
        self,
        run_dir: Path,
        tensorboard: bool = False,
        resume_step: int = 0,
        samples_per_step: int = 0,
    ) -> None:
        self.path = run_dir / "metrics.jsonl"
        self.samples_path = run_dir / "samples.jsonl"
        self.samples_per_step = samples_per_step
        run_dir.mkdir(parents=True, exist_ok=True)
        if resume_step:
            for path in (self.path, self.samples_path):
                _truncate_after(path, resume_step)
        self._file = self.path.open("a")
        self._tb: Any = None
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise RuntimeError(
                    "run.tensorboard=true needs the tensorboard package: "
                    "pip install 'verirl[tensorboard]'"
                ) from exc
            self._tb = SummaryWriter(str(run_dir / "tensorboard"))

    def write(self, step: int, metrics: dict[str, float]) -> None:
        clean = {k: _finite(v) for k, v in metrics.items()}
        self._file.write(json.dumps({"step": step, "time": time.time(), **clean}) + "\n")
        self._file.flush()
        if self._tb is not None:
            for k, v in clean.items():
                if v is not None:
                    self._tb.add_scalar(k, v, step)

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
        self._file.close()
        if self._tb is not None:
            self._tb.close()


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
