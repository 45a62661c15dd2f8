"""bench/gpu_check.py stays runnable: its CPU mode runs the same checks on a tiny model (the
CUDA-only ones reported as skipped) and prints the table; a failing check fails the script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "gpu_check.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--device", "cpu", *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.mark.slow
def test_cpu_mode_runs_the_checks_and_prints_the_table() -> None:
    res = _run(
        *("--only", "doctor", "grpo", "process_credit", "fsdp2", "logprob_memory"),
        *("checkpointing", "--timeout", "600"),
    )
    assert res.returncode == 0, res.stdout + res.stderr
    rows = {line.split()[0]: line for line in res.stdout.splitlines() if line.strip()}
    for name in ("grpo", "process_credit", "doctor", "logprob_memory", "checkpointing"):
        assert " ok" in rows[name], rows[name]
    assert "skipped (CUDA only)" in rows["fsdp2"]


def test_a_failing_check_exits_non_zero() -> None:
    res = _run("--only", "grpo", "--timeout", "0.01")
    assert res.returncode == 1
    assert "FAILED" in res.stdout and "timed out" in res.stderr
