"""Per-step metrics: JSON lines in the run directory (and TensorBoard when asked)."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any


class MetricsLog:
    """Appends ``{"step": s, "time": t, ...}`` lines to ``<run_dir>/metrics.jsonl``.

    On resume (``resume_step`` > 0) lines logged after the checkpoint's step — written by the
    killed process after its last save — are dropped, so the file reads as one clean run.
    """

    def __init__(self, run_dir: Path, tensorboard: bool = False, resume_step: int = 0) -> None:
        self.path = run_dir / "metrics.jsonl"
        run_dir.mkdir(parents=True, exist_ok=True)
        if resume_step and self.path.exists():
            kept = [
                line
                for line in self.path.read_text().splitlines()
                if line.strip() and json.loads(line).get("step", 0) <= resume_step
            ]
            self.path.write_text("".join(line + "\n" for line in kept))
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

    def close(self) -> None:
        self._file.close()
        if self._tb is not None:
            self._tb.close()


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "metrics.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _finite(v: float) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None
