"""The per-step record (verirl.train.metrics): metrics.jsonl rows and the plain step line that
run.log and a console that is not a terminal get."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from verirl.train.metrics import MAX_WINDOWS, MetricsLog, read_metrics, step_line

STEP = {
    "rollout/reward": -0.25,
    "rollout/accuracy": 0.5,
    "curriculum/addition/low": 0.0,
    "curriculum/addition/h": 2.0,
    "curriculum/rg/leg_counting/h": 1.0,  # an on-demand environment's name holds a '/'
    "curriculum/last/rollouts": 9.0,
    "curriculum/mean_h": 1.5,
    "time/step_s": 12.345,
    "throughput/tokens_per_s": 310.4,
}


def test_a_step_line_names_every_figure() -> None:
    assert step_line(3, 25, STEP) == (
        "step=3/25 reward=-0.250 acc=0.500 windows=addition:0-2,rg/leg_counting:1 "
        "step_s=12.3 tokens_per_s=310"
    )


def test_memory_figures_are_added_when_the_step_has_them() -> None:
    line = step_line(1, 0, {**STEP, "memory/peak_rss_mb": 1234.6, "memory/cuda/peak_mb": 99.2})
    assert line.startswith("step=1 reward=")  # no total: no denominator
    assert line.endswith("tokens_per_s=310 cuda_peak_mb=99 peak_rss_mb=1235")
    assert "mb" not in step_line(1, 0, STEP)


def test_many_environments_are_summarised() -> None:
    many = {f"curriculum/env{i}/h": float(i % 3) for i in range(MAX_WINDOWS + 1)}
    line = step_line(2, 4, {**many, "curriculum/mean_h": 1.0, "curriculum/max_h": 2.0})
    assert line == "step=2/4 mean_h=1.00 max_h=2"


def test_missing_and_non_finite_figures() -> None:
    assert step_line(1, 2, {}) == "step=1/2"
    assert step_line(1, 2, {"rollout/reward": float("nan")}) == "step=1/2 reward=+nan"


def test_metrics_log_writes_the_row_and_the_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = MetricsLog(tmp_path, total_steps=2)
    with caplog.at_level(logging.INFO, logger="verirl.steps"):
        log.write(0, {"eval_before/overall": 0.5})  # an evaluation row: no step line
        log.write_step(1, {"rollout/reward": 0.5, "train/loss": float("inf")})
    log.close()
    rows = read_metrics(tmp_path)
    assert [r["step"] for r in rows] == [0, 1] and rows[1]["train/loss"] is None
    assert [r.getMessage() for r in caplog.records] == ["step=1/2 reward=+0.500"]
    assert json.loads((tmp_path / "metrics.jsonl").read_text().splitlines()[1])["step"] == 1
