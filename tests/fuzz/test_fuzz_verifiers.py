"""Fuzz every registered environment and both proof filters with hostile outputs.

The counted run verifies ``VERIRL_FUZZ_COUNT`` outputs (default 10,000) spread over all
registered environments (the registry is iterated: new environments are fuzzed with no change
here); ``VERIRL_FUZZ_BUDGET_S`` is the per-call budget (default 1 s). For a large run use
``bench/fuzz_verifiers.py``.
"""

from __future__ import annotations

import os
import time

from hypothesis import HealthCheck, given, settings

from tests.fuzz.hostile import hostile_texts
from tests.fuzz.runner import fuzz_environments
from verirl.envs import env_names, get_env
from verirl.provers.coq.attempt import prepare_attempt
from verirl.provers.lean.safety import lean_proof_violation, locate_lean_proof

COUNT = int(os.environ.get("VERIRL_FUZZ_COUNT", "10000"))
BUDGET_S = float(os.environ.get("VERIRL_FUZZ_BUDGET_S", "1.0"))


def test_every_environment_survives_hostile_outputs() -> None:
    report = fuzz_environments(COUNT, budget_s=BUDGET_S)
    assert report.environments == len(env_names()) >= 90
    # only prover-backed environments may be skipped (no Lean here; no Coq on a bare machine)
    assert all(get_env(n).prover is not None for n in report.skipped), report.skipped
    assert report.outputs >= 0.9 * COUNT * (1 - 4 / report.environments)
    assert not report.failures, "\n".join(report.failures[:40])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_texts())
def test_proof_filters_never_raise_and_are_fast(text: str) -> None:
    t0 = time.perf_counter()
    reason = lean_proof_violation(text)
    loc = locate_lean_proof(text, "theorem t : 1 = 1 := by", "import Mathlib")
    att = prepare_attempt(text)
    assert time.perf_counter() - t0 < BUDGET_S
    assert reason is None or isinstance(reason, str)
    assert 0 <= loc.proof_start <= len(text)
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        assert reason is not None and att.rejection is not None  # not text: never run
