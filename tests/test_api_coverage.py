"""The lowest-versions stage's selection (tests/api_coverage.py): the tracer records what
verirl's own frames call in a tracked package and nothing else; the greedy cover covers every
API; every listed test still exists."""

from __future__ import annotations

import ast
import sys

import pytest

from tests.api_coverage import ROOT, Tracer, listed, select


def test_the_tracer_keeps_calls_from_verirl_into_a_tracked_package_only() -> None:
    import numpy as np

    from verirl.evals.stats import wilson_interval  # calls nothing tracked itself

    tracer = Tracer({"numpy", "yaml"})
    sys.setprofile(tracer)
    try:
        np.zeros(3)  # from this test's frame: not verirl's
        from verirl.config import load_config

        load_config(None, ["run.steps=2"])  # verirl's frames call yaml and pydantic
        wilson_interval(3, 10)
    finally:
        sys.setprofile(None)
    assert tracer.seen, "verirl calls yaml when it reads a config"
    assert all(api.split(":")[0] in {"numpy", "yaml"} for api in tracer.seen)
    assert "numpy:zeros" not in tracer.seen


def test_the_greedy_cover_covers_every_api_with_the_cheapest_tests() -> None:
    per_test = {
        "a": {"x:f", "x:g"},
        "b": {"x:f"},
        "c": {"x:h"},
        "slow": {"x:f", "x:g", "x:h"},
    }
    seconds = {"a": 0.1, "b": 0.1, "c": 0.1, "slow": 60.0}
    chosen = select(per_test, seconds)
    assert chosen == ["a", "c"]
    assert set().union(*(per_test[t] for t in chosen)) == set().union(*per_test.values())


def test_every_listed_test_exists() -> None:
    """A renamed or moved test would silently leave its APIs untested at their lowest
    versions: rerun ``python -m tests.api_coverage select`` (see its docstring)."""
    ids = listed()
    if not ids:
        pytest.skip("tests/lowest_versions.txt is empty")
    missing = []
    for test_id in ids:
        path, _, name = test_id.partition("::")
        func = name.split("[")[0].split("::")[-1]
        file = ROOT / path
        if not file.is_file():
            missing.append(test_id)
            continue
        names = {
            n.name for n in ast.walk(ast.parse(file.read_text())) if isinstance(n, ast.FunctionDef)
        }
        if func not in names:
            missing.append(test_id)
    assert missing == [], f"listed but gone: {missing[:5]}"
