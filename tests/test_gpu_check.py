"""bench/gpu_check.py: a failing check fails the script. (Its CPU mode — every check on a tiny
model, the CUDA-only ones reported as skipped, the table printed — is its smoke run in
tests/bench/test_smoke.py.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_a_failing_check_exits_non_zero() -> None:
    res = _run("--only", "grpo", "--timeout", "0.01")
    assert res.returncode == 1
    assert "FAILED" in res.stdout and "timed out" in res.stderr
