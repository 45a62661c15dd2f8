"""Smoke run of ``bench/bench_coq_headers.py``: the header-keyed pool against coqc on a few
miniF2F-rocq theorems (live Coq; the benchmark copy from ``../shared``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.provers.coq.marks import needs_coq
from verirl.evals.benchmark_data import benchmark_dirs
from verirl.provers.coq.install import has_library

HAVE_MINIF2F = any((d / "minif2f-rocq" / "test").is_dir() for d in benchmark_dirs())
pytestmark = [
    pytest.mark.coq,
    pytest.mark.slow,
    needs_coq,
    pytest.mark.skipif(not HAVE_MINIF2F, reason="no minif2f-rocq copy in ../shared/benchmarks"),
    pytest.mark.skipif(not has_library("Coquelicot"), reason="libcoq-coquelicot not installed"),
]


def _load_bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "bench_coq_headers.py"
    spec = importlib.util.spec_from_file_location("bench_coq_headers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_bench_runs_small_and_the_backends_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERIRL_CACHE", str(tmp_path))
    bench = _load_bench()
    out = bench.main(["--theorems", "2", "--repeats", "1"])
    assert out["checks"] == 2 * len(bench.SCRIPTS)
    assert out["disagreements"] == 0
    assert set(out["rates"]) == {"coqc", "pool", "pool, no sharing"}
    assert len(out["ratios"]) == 1
    # the pool loads each header at most once per worker: fewer sentences than one per check
    assert out["sentences_loaded"][0] < out["checks"] * 2
