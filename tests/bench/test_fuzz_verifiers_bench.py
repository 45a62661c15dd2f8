"""Smoke test of ``bench/fuzz_verifiers.py`` at tiny sizes: a fuzz run that saves its slowest
calls, then those calls and one named output timed in reference units."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ISSUE_34 = '\\boxed{１２Redirect "x" Print nat.27x^2 + 4x - 1Admitted.27x^2 + 4x - 1}'


def _load_bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "fuzz_verifiers.py"
    spec = importlib.util.spec_from_file_location("bench_fuzz_verifiers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load_bench()


def test_fuzz_then_time_the_slowest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved, rows = tmp_path / "slow.json", tmp_path / "rows.json"
    envs = "equivalent_expression,derivative"
    code = bench.main(["--count", "40", "--envs", envs, "--top", "3", "--save-slowest", str(saved)])
    out = capsys.readouterr().out
    assert code == 0 and "0 failures" in out, out
    assert "40 outputs over 2 environments" in out and "reference workload" in out
    cases = json.loads(saved.read_text())
    assert len(cases) == 3
    assert {c["env"] for c in cases} <= set(envs.split(","))
    assert all(set(c) == {"env", "difficulty", "seed", "output"} for c in cases)

    case = f"equivalent_expression={ISSUE_34}"
    code = bench.main(["--time", str(saved), "--case", case, "--repeat", "2", "--out", str(rows)])
    out = capsys.readouterr().out
    assert code == 0 and "reference workload" in out
    timed = json.loads(rows.read_text())
    assert [r["output"] for r in timed[:3]] == [c["output"] for c in cases]
    issue = timed[3]
    assert issue["env"] == "equivalent_expression" and issue["reward"] == -0.5
    for r in timed:
        assert 0 < r["min_s"] <= r["median_s"] <= r["max_s"]
        assert r["median_units"] > 0 and r["cold_units"] > 0
